//! Reading a connected client into a [`ServerSnapshot`].

use rmcp::model::{
    CacheScope, ClientCapabilities, DiscoverResult, PaginatedRequestParams, ProtocolVersion,
    RequestMetaObject,
};
use rmcp::service::{Peer, RoleClient, RunningService};

use super::connect_error;
use super::handshake::client_config;
use crate::error::Result;
use crate::limits::{Limit, LimitHit, Limits};
use crate::model::{CacheHints, Era, Instructions, ServerInfo, ServerSnapshot};

/// Reads what a connected rmcp client knows about its server: the
/// handshake (era, negotiated version, `serverInfo`, instructions), every
/// `tools/list` page, every `skills/list` page when the server declares the
/// Skills extension, and, in the 2026-07-28 era, the cache hints of the
/// discover result (asked for again: rmcp keeps the rest of it only).
///
/// An error of `tools/list` is kept in [`ServerSnapshot::tools_error`].
pub async fn snapshot_of<S>(client: &RunningService<RoleClient, S>) -> Result<ServerSnapshot>
where
    S: rmcp::Service<RoleClient>,
{
    let info = client
        .peer_info()
        .ok_or_else(|| connect_error("the client has no handshake result"))?;
    let version = info.protocol_version.to_string();
    let era = if version.as_str() >= "2026-07-28" {
        Era::Modern
    } else {
        Era::Legacy
    };
    let server_info = info
        .server_info
        .as_ref()
        .map(|i| ServerInfo {
            name: i.name.clone(),
            version: i.version.clone(),
            title: i.title.clone(),
        })
        .unwrap_or_default();
    let mut snapshot = ServerSnapshot::handshake(
        server_info,
        Instructions::from_raw(info.instructions.as_deref()),
        era,
        version.clone(),
    );
    if era == Era::Modern {
        let meta = discover_meta(info.protocol_version.clone());
        if let Ok(found) = client.discover(meta).await {
            snapshot.cache = Some(discover_hints(&found));
        }
    }
    match list_tools(client.peer(), &Limits::default()).await {
        Ok(list) => {
            snapshot.tools = tools_from_rmcp(&list.tools)?;
            snapshot.limits = list.hits;
            if list.ttl_ms.is_some() || list.cache_scope.is_some() {
                snapshot.tools_cache = Some(CacheHints {
                    ttl_ms: list.ttl_ms,
                    cache_scope: list.cache_scope.as_ref().map(|s| scope_name(s).to_string()),
                });
            }
        }
        Err(rmcp::ServiceError::McpError(e)) => {
            snapshot.tools_error = Some(crate::error::RpcError {
                method: "tools/list".into(),
                code: i64::from(e.code.0),
                message: e.message.to_string(),
            });
        }
        Err(e) => return Err(connect_error(format!("tools/list failed: {e}"))),
    }
    super::skills::list_skills(client.peer(), &mut snapshot, &Limits::default()).await;
    Ok(snapshot)
}

/// Every `tools/list` page, within the limits on pages and tools.
pub(super) struct ToolList {
    pub tools: Vec<rmcp::model::Tool>,
    /// The shortest `ttlMs` of the pages.
    pub ttl_ms: Option<u64>,
    /// `private` if any page said so, `public` if all did.
    pub cache_scope: Option<CacheScope>,
    pub hits: Vec<LimitHit>,
}

/// Pages through `tools/list` until the last page, or until a limit: a
/// server sending a new cursor forever (or the same one) costs at most
/// [`Limits::tool_pages`] requests and [`Limits::tools`] tools plus a page.
pub(super) async fn list_tools(
    peer: &Peer<RoleClient>,
    limits: &Limits,
) -> std::result::Result<ToolList, rmcp::ServiceError> {
    let mut list = ToolList {
        tools: Vec::new(),
        ttl_ms: None,
        cache_scope: None,
        hits: Vec::new(),
    };
    let mut cursor = None;
    for page_number in 1.. {
        let page = peer
            .list_tools(Some(PaginatedRequestParams::default().with_cursor(cursor)))
            .await?;
        list.ttl_ms = match (list.ttl_ms, page.ttl_ms) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        list.cache_scope = match (page_number, list.cache_scope.take(), page.cache_scope) {
            (1, _, scope) => scope,
            (_, Some(CacheScope::Private), _) | (_, _, Some(CacheScope::Private)) => {
                Some(CacheScope::Private)
            }
            (_, Some(CacheScope::Public), Some(CacheScope::Public)) => Some(CacheScope::Public),
            _ => None,
        };
        list.tools.extend(page.tools);
        if list.tools.len() > limits.max_tools() {
            let hit = LimitHit::new(Limit::Tools, limits.max_tools(), list.tools.len());
            list.hits.push(hit);
            list.tools.truncate(limits.max_tools());
            break;
        }
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
        if page_number >= limits.max_tool_pages() {
            let hit = LimitHit::new(Limit::ToolPages, limits.max_tool_pages(), page_number + 1);
            list.hits.push(hit);
            break;
        }
    }
    Ok(list)
}

/// The `_meta` of a `server/discover` request at `version`.
pub(super) fn discover_meta(version: ProtocolVersion) -> RequestMetaObject {
    RequestMetaObject::with_client_context(
        version,
        client_config().client_info,
        ClientCapabilities::default(),
    )
}

/// The cache hints of a `server/discover` result.
pub(super) fn discover_hints(found: &DiscoverResult) -> CacheHints {
    CacheHints {
        ttl_ms: Some(found.ttl_ms),
        cache_scope: Some(scope_name(&found.cache_scope).to_string()),
    }
}

/// rmcp's tools as this crate's, read the way a `tools/list` page is.
pub(super) fn tools_from_rmcp(items: &[rmcp::model::Tool]) -> Result<Vec<crate::model::Tool>> {
    let tools = serde_json::to_value(items)
        .map_err(|e| connect_error(format!("tools/list result: {e}")))?;
    let mut scratch = ServerSnapshot::new("");
    scratch.push_tools_page(&serde_json::json!({ "tools": tools }))?;
    Ok(scratch.tools)
}

fn scope_name(scope: &CacheScope) -> &'static str {
    match scope {
        CacheScope::Public => "public",
        CacheScope::Private => "private",
        _ => "unknown",
    }
}
