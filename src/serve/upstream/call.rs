//! A `tools/call` forwarded to the upstream that owns the tool, and the
//! errors that keep a fault with its upstream.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CancelledNotificationParam,
    ClientJsonRpcMessage, ClientRequest, ErrorCode, JsonObject, ProgressNotificationParam,
    RequestId, ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};
use serde_json::json;

use crate::hub::ServerState;
use crate::serve::gateway::names::GatewayNames;
use crate::serve::upstream::progress::{HostProgress, Relay, Relays, relay_to};

/// One upstream as a call finds it.
pub(crate) struct Upstream {
    alias: String,
    state: ServerState,
    peer: Option<Peer<RoleClient>>,
    /// Its calls posted without rmcp, when it takes them (`crate::serve::upstream::direct`).
    #[cfg(feature = "serve-http")]
    direct: Option<Arc<crate::serve::upstream::direct::Direct>>,
}

impl Upstream {
    pub(crate) fn new(alias: &str, state: ServerState, peer: Option<Peer<RoleClient>>) -> Upstream {
        Upstream {
            alias: alias.to_string(),
            state,
            peer,
            #[cfg(feature = "serve-http")]
            direct: None,
        }
    }

    /// Its calls posted through `direct` (falling back to rmcp when
    /// declined).
    #[cfg(feature = "serve-http")]
    pub(crate) fn direct(
        mut self,
        direct: Option<Arc<crate::serve::upstream::direct::Direct>>,
    ) -> Upstream {
        self.direct = direct;
        self
    }

    /// Whether a connection to the upstream is there to call.
    pub(crate) fn has_peer(&self) -> bool {
        self.peer.is_some()
    }

    /// The connection, when the upstream can take a request now; else the
    /// error the host gets (restarting, not connected), logged.
    pub(crate) fn ready(self) -> Result<Peer<RoleClient>, McpError> {
        match (&self.state, self.peer.clone()) {
            (ServerState::Connected, Some(peer)) => Ok(peer),
            (ServerState::Reconnecting, _) => {
                Err(self.unavailable("", "is restarting; try again shortly"))
            }
            _ => Err(self.unavailable("", "is not connected")),
        }
    }

    /// Calls `tool` with the host's arguments; the host's cancellation
    /// (and `timeout`) cancels the upstream request. With a `host`
    /// progress token, the upstream's progress for this call goes to the
    /// host under that token, in order, each before the answer.
    pub(crate) async fn call(
        self,
        tool: String,
        params: CallToolRequestParams,
        host: HostProgress,
        relays: &Arc<Relays>,
        cancelled: impl Future<Output = ()>,
        timeout: Option<Duration>,
    ) -> Result<CallToolResponse, McpError> {
        let peer = match (&self.state, self.peer.clone()) {
            (ServerState::Connected, Some(peer)) => peer,
            (ServerState::Reconnecting, _) => {
                return Err(self.unavailable(&tool, "is restarting; try again shortly"));
            }
            _ => return Err(self.unavailable(&tool, "is not connected")),
        };
        // The host's cancel or the timeout, whichever comes first.
        let stop = async {
            let limit = async {
                match timeout {
                    Some(t) => tokio::time::sleep(t).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                () = cancelled => self.cancelled(&tool),
                () = limit => self.late(&tool, timeout),
            }
        };
        tokio::pin!(stop);
        let request = upstream_request(&tool, params);
        // serve-http hook: a stateless HTTP upstream's call posted directly.
        #[cfg(feature = "serve-http")]
        let request = match self
            .post_directly(&tool, request, &host, stop.as_mut())
            .await
        {
            Ok(answered) => return answered,
            Err(declined) => declined,
        };
        let handle = peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| self.failed(&tool, e))?;
        // Opened with no wait after the request was queued: the upstream
        // would have to answer within that instant for its first
        // notification to find no relay (and be dropped, never misrouted).
        let mut relay = host
            .as_ref()
            .map(|_| relays.open(&self.alias, handle.progress_token.clone()));
        // Dropped before the answer (cancelled, timed out): the upstream
        // is told to cancel.
        let abandoned = Abandoned(Some((peer, handle.id.clone())));
        let answer = handle.await_response();
        tokio::pin!(answer);
        // In this order: a cancel or the timeout even while progress
        // floods in, and progress before the answer it preceded.
        let answer = loop {
            tokio::select! {
                biased;
                stopped = &mut stop => return Err(stopped),
                Some(p) = next(&mut relay) => relay_to(&host, p).await,
                answer = &mut answer => break answer,
            }
        };
        abandoned.disarm();
        // What the upstream sent before its answer (all read before it)
        // goes to the host first; nothing sent after.
        let before = relay.as_mut().map(Relay::received).unwrap_or_default();
        drop(relay);
        for p in before {
            relay_to(&host, p).await;
        }
        let answer = answer.map_err(|e| self.failed(&tool, e))?;
        self.response(&tool, answer)
    }

    /// The call posted directly when the upstream takes it (`stop` ends
    /// it with its error); else the request, for rmcp.
    #[cfg(feature = "serve-http")]
    async fn post_directly(
        &self,
        tool: &str,
        request: ClientRequest,
        host: &HostProgress,
        stop: std::pin::Pin<&mut impl Future<Output = McpError>>,
    ) -> Result<Result<CallToolResponse, McpError>, ClientRequest> {
        let Some(direct) = self.direct.clone() else {
            return Err(request);
        };
        let posted = tokio::select! {
            biased;
            stopped = stop => return Ok(Err(stopped)),
            posted = direct.call(tool, request, host) => posted,
        };
        match posted {
            crate::serve::upstream::direct::Posted::Answered(answer) => Ok((*answer)
                .map_err(|e| self.failed(tool, e))
                .and_then(|answer| self.response(tool, answer))),
            crate::serve::upstream::direct::Posted::Declined(request) => Err(*request),
        }
    }

    /// The error of a call the host cancelled.
    fn cancelled(&self, tool: &str) -> McpError {
        McpError::new(
            ErrorCode::INTERNAL_ERROR,
            format!(
                "the call to {tool:?} of upstream {:?} was cancelled",
                self.alias
            ),
            Some(json!({"upstream": self.alias})),
        )
    }

    /// The error of a call not answered within `timeout`.
    fn late(&self, tool: &str, timeout: Option<Duration>) -> McpError {
        let within = timeout.unwrap_or_default().as_secs_f64();
        let why = format!("did not answer {tool:?} within {within} s (the call was cancelled)");
        self.unavailable(tool, &why)
    }

    /// The host's answer from the upstream's result.
    pub(crate) fn response(
        &self,
        tool: &str,
        answer: ServerResult,
    ) -> Result<CallToolResponse, McpError> {
        match answer {
            ServerResult::CallToolResult(r) => Ok(CallToolResponse::Complete(r)),
            ServerResult::InputRequiredResult(r) => Ok(CallToolResponse::InputRequired(r)),
            ServerResult::CreateTaskResult(r) => Ok(CallToolResponse::Task(r)),
            // A result without `content` decodes as one of these; rmcp's
            // call_tool_once reads them as an empty result too.
            other @ (ServerResult::EmptyResult(_)
            | ServerResult::TaskAckResult(_)
            | ServerResult::CustomResult(_)) => serde_json::to_value(other)
                .and_then(serde_json::from_value)
                .map(CallToolResponse::Complete)
                .map_err(|_| self.failed(tool, ServiceError::UnexpectedResponse)),
            _ => Err(self.failed(tool, ServiceError::UnexpectedResponse)),
        }
    }

    /// The upstream cannot take the call (logged: one line per failed call).
    fn unavailable(&self, tool: &str, why: &str) -> McpError {
        tracing::warn!(upstream = %self.alias, tool = %tool, "call failed: upstream {:?} {why}", self.alias);
        McpError::new(
            ErrorCode::INTERNAL_ERROR,
            format!("upstream {:?} {why}", self.alias),
            Some(json!({"upstream": self.alias, "state": self.state.to_string()})),
        )
    }

    /// The call went out and failed: the upstream's own error is passed
    /// on as it is; a lost connection is the gateway's error.
    fn failed(&self, tool: &str, error: ServiceError) -> McpError {
        let e = self.failure(tool, error);
        tracing::warn!(
            upstream = %self.alias,
            tool = %tool,
            "call failed: {} (JSON-RPC error {})",
            e.message,
            e.code.0
        );
        e
    }

    fn failure(&self, tool: &str, error: ServiceError) -> McpError {
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
                    "upstream {:?} failed the call to {tool:?}: {}",
                    self.alias,
                    crate::connect::plain(&other.to_string())
                ),
                Some(json!({"upstream": self.alias})),
            ),
        }
    }
}

/// The request the upstream gets for the host's call of its `tool`: the
/// host's arguments, input responses and request state, under the
/// upstream's own name.
pub(crate) fn upstream_request(tool: &str, params: CallToolRequestParams) -> ClientRequest {
    let mut upstream = CallToolRequestParams::new(tool.to_string());
    upstream.arguments = params.arguments;
    upstream.input_responses = params.input_responses;
    upstream.request_state = params.request_state;
    ClientRequest::CallToolRequest(CallToolRequest::new(upstream))
}

/// One forwarded call's work inside the gateway, with no process or
/// transport: the host's request line read as rmcp reads it, its name
/// mapped to the upstream's tool, the upstream's request written, the
/// upstream's answer line read and mapped back, and the host's answer
/// written. `None` when `host` is not a `tools/call` of a tool of `names`
/// or `answer` is not an answer. For the instruction-count guard
/// (`benches/instructions.rs`), which counts this path of each call.
#[doc(hidden)]
pub fn forward_in_process(names: &GatewayNames, host: &str, answer: &str) -> Option<[String; 2]> {
    let (request, id) = serde_json::from_str::<ClientJsonRpcMessage>(host)
        .ok()?
        .into_request()?;
    let ClientRequest::CallToolRequest(call) = request else {
        return None;
    };
    let (alias, tool) = names.upstream(&call.params.name)?;
    let sent = ClientJsonRpcMessage::request(upstream_request(tool, call.params), id.clone());
    let sent = serde_json::to_string(&sent).ok()?;
    let upstream = Upstream::new(alias, ServerState::Connected, None);
    let (result, _) = serde_json::from_str::<ServerJsonRpcMessage>(answer)
        .ok()?
        .into_result()?;
    let back = match result.and_then(|r| upstream.response(tool, r).map(ServerResult::from)) {
        Ok(result) => ServerJsonRpcMessage::response(result, id),
        Err(e) => ServerJsonRpcMessage::error(e, Some(id)),
    };
    Some([sent, serde_json::to_string(&back).ok()?])
}

/// The next notification of a relay; never, without one.
async fn next(relay: &mut Option<Relay>) -> Option<ProgressNotificationParam> {
    match relay {
        Some(r) => r.next().await,
        None => std::future::pending().await,
    }
}

/// Tells the upstream to cancel a request abandoned before its answer.
struct Abandoned(Option<(Peer<RoleClient>, RequestId)>);

impl Abandoned {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        let Some((peer, id)) = self.0.take() else {
            return;
        };
        let why =
            CancelledNotificationParam::new(Some(id), Some("the host no longer waits".into()));
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = peer.notify_cancelled(why).await;
            });
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
