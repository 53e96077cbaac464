//! A `tools/call` forwarded to the upstream that owns the tool, and the
//! errors that keep a fault with its upstream.

use std::collections::BTreeMap;
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolRequestParams, CallToolResponse, ErrorCode, JsonObject};
use rmcp::service::{Peer, RoleClient, ServiceError};
use serde_json::json;

use crate::hub::ServerState;

/// One upstream as a call finds it.
pub(crate) struct Upstream {
    alias: String,
    state: ServerState,
    peer: Option<Peer<RoleClient>>,
}

impl Upstream {
    pub(crate) fn new(alias: &str, state: ServerState, peer: Option<Peer<RoleClient>>) -> Upstream {
        Upstream {
            alias: alias.to_string(),
            state,
            peer,
        }
    }

    /// Calls `tool` with the host's arguments; the host's cancellation
    /// (and `timeout`) cancels the upstream request.
    pub(crate) async fn call(
        self,
        tool: String,
        params: CallToolRequestParams,
        cancelled: impl Future<Output = ()>,
        timeout: Option<Duration>,
    ) -> Result<CallToolResponse, McpError> {
        let peer = match (&self.state, self.peer.clone()) {
            (ServerState::Connected, Some(peer)) => peer,
            (ServerState::Reconnecting, _) => {
                return Err(self.unavailable("is restarting; try again shortly"));
            }
            _ => return Err(self.unavailable("is not connected")),
        };
        let mut upstream = CallToolRequestParams::new(tool.clone());
        upstream.arguments = params.arguments;
        upstream.input_responses = params.input_responses;
        upstream.request_state = params.request_state;
        // Dropping the request future tells the upstream to cancel it.
        let request = peer.call_tool_once(upstream);
        let limit = async {
            match timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            answer = request => answer.map_err(|e| self.failed(&tool, e)),
            _ = cancelled => Err(McpError::new(
                ErrorCode::INTERNAL_ERROR,
                format!("the call to {:?} of upstream {:?} was cancelled", tool, self.alias),
                Some(json!({"upstream": self.alias})),
            )),
            _ = limit => Err(self.unavailable(&format!(
                "did not answer {tool:?} within {} s (the call was cancelled)",
                timeout.unwrap_or_default().as_secs_f64()
            ))),
        }
    }

    /// The upstream cannot take the call.
    fn unavailable(&self, why: &str) -> McpError {
        McpError::new(
            ErrorCode::INTERNAL_ERROR,
            format!("upstream {:?} {why}", self.alias),
            Some(json!({"upstream": self.alias, "state": self.state.to_string()})),
        )
    }

    /// The call went out and failed: the upstream's own error is passed
    /// on as it is; a lost connection is the gateway's error.
    fn failed(&self, tool: &str, error: ServiceError) -> McpError {
        match error {
            ServiceError::McpError(e) => e,
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => McpError::new(
                ErrorCode::INTERNAL_ERROR,
                format!(
                    "upstream {:?} closed its connection during the call to {tool:?}; it is restarted if its policy allows",
                    self.alias
                ),
                Some(json!({"upstream": self.alias})),
            ),
            other => McpError::new(
                ErrorCode::INTERNAL_ERROR,
                format!(
                    "upstream {:?} failed the call to {tool:?}: {other}",
                    self.alias
                ),
                Some(json!({"upstream": self.alias})),
            ),
        }
    }
}

/// The gateway's own tool: the full text held for the server named by
/// the `server` argument.
pub(crate) fn read_instructions(
    full: &BTreeMap<String, String>,
    arguments: Option<&JsonObject>,
) -> Result<String, McpError> {
    let server = arguments
        .and_then(|a| a.get("server"))
        .and_then(|s| s.as_str())
        .ok_or_else(|| McpError::invalid_params("give the server's alias as `server`", None))?;
    full.get(server).cloned().ok_or_else(|| {
        let known: Vec<&String> = full.keys().collect();
        McpError::invalid_params(
            format!("no instructions to read for server {server:?}"),
            Some(json!({"servers": known})),
        )
    })
}
