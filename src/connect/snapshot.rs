//! Reading a connected client into a [`ServerSnapshot`].

use rmcp::model::{
    CacheScope, ClientCapabilities, DiscoverResult, ProtocolVersion, RequestMetaObject,
};
use rmcp::service::{RoleClient, RunningService};

use super::connect_error;
use super::handshake::client_config;
use crate::error::Result;
use crate::model::{CacheHints, Era, Instructions, ServerInfo, ServerSnapshot};

/// Reads what a connected rmcp client knows about its server: the
/// handshake (era, negotiated version, `serverInfo`, instructions), every
/// `tools/list` page, and, in the 2026-07-28 era, the cache hints of the
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
    let mut snapshot = ServerSnapshot {
        alias: None,
        server_info,
        instructions: Instructions::from_raw(info.instructions.as_deref()),
        tools: Vec::new(),
        era,
        protocol_version: version.clone(),
        cache: None,
        tools_cache: None,
        tools_error: None,
    };
    if era == Era::Modern {
        let meta = discover_meta(info.protocol_version.clone());
        if let Ok(found) = client.discover(meta).await {
            snapshot.cache = Some(discover_hints(&found));
        }
    }
    match client.list_all_tools_with_cache_hint().await {
        Ok(list) => {
            snapshot.tools = tools_from_rmcp(&list.items)?;
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
    Ok(snapshot)
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
