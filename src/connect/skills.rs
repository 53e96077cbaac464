//! `skills/list` on a live server that declares the Skills extension
//! (`io.modelcontextprotocol/skills` under `capabilities.extensions`),
//! paged like `tools/list` and within the same bounds.
//!
//! The request goes out as a plain request and whatever comes back is read
//! by the tolerant reader of `wire.rs` ([`ServerSnapshot::push_skills_page`]):
//! an entry rmcp's own types would refuse is skipped and reported there,
//! not lost with its page.

use rmcp::model::{ClientRequest, CustomRequest, ServerResult};
use rmcp::service::{Peer, RoleClient};

use crate::limits::{Limit, LimitHit, Limits};
use crate::model::ServerSnapshot;

/// Reads every `skills/list` page into `snapshot`, within `limits` (at
/// most [`Limits::max_tool_pages`] pages, [`Limits::max_skills`] skills
/// plus a page). An error answer is kept in
/// [`ServerSnapshot::skills_error`]; a transport failure or an answer that
/// does not read ends the listing with what was read.
pub(super) async fn list_skills(
    peer: &Peer<RoleClient>,
    snapshot: &mut ServerSnapshot,
    limits: &Limits,
) {
    let declared = peer
        .peer_info()
        .is_some_and(|info| info.capabilities.supports_skills());
    if !declared {
        return;
    }
    let mut cursor: Option<String> = None;
    for page_number in 1.. {
        let params = match &cursor {
            Some(c) => serde_json::json!({ "cursor": c }),
            None => serde_json::json!({}),
        };
        let request = ClientRequest::CustomRequest(CustomRequest::new("skills/list", Some(params)));
        let page = match peer.send_request(request).await {
            Ok(result) => result_value(result),
            Err(rmcp::ServiceError::McpError(e)) => {
                snapshot.skills_error = Some(crate::error::RpcError {
                    method: "skills/list".into(),
                    code: i64::from(e.code.0),
                    message: e.message.to_string(),
                });
                return;
            }
            Err(e) => {
                tracing::debug!(error = %e, "skills/list failed");
                return;
            }
        };
        cursor = match snapshot.push_skills_page(&page) {
            Ok(next) => next,
            Err(e) => {
                snapshot
                    .skills_skipped
                    .push(format!("a skills/list page did not read: {e}"));
                return;
            }
        };
        if snapshot.skills.len() > limits.max_skills() {
            let hit = LimitHit::new(Limit::Skills, limits.max_skills(), snapshot.skills.len());
            snapshot.limits.push(hit);
            snapshot.skills.truncate(limits.max_skills());
            return;
        }
        if cursor.is_none() {
            return;
        }
        if page_number >= limits.max_tool_pages() {
            let hit = LimitHit::new(Limit::SkillPages, limits.max_tool_pages(), page_number + 1);
            snapshot.limits.push(hit);
            return;
        }
    }
}

/// The result as JSON, whichever of rmcp's result types it was read as.
fn result_value(result: ServerResult) -> serde_json::Value {
    match result {
        ServerResult::CustomResult(custom) => custom.0,
        other => serde_json::to_value(other).unwrap_or_default(),
    }
}
