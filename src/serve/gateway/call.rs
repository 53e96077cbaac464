//! A `tools/call` as the upstream gets it (under its own name) and as the
//! host gets its answer back.

use std::collections::BTreeMap;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, ClientJsonRpcMessage, ClientRequest,
    JsonObject, RequestMetaObject, ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::json;

use crate::serve::gateway::Gateway;
use crate::serve::gateway::names::GatewayNames;
use crate::serve::upstream::asking::fulfil;
use crate::serve::upstream::progress::ProgressTo;
use crate::serve::upstream::sealed::{Kind, Seal};
use crate::serve::upstream::send::{Subject, host_meta, unexpected_result};
use crate::support::lock;

/// Where a `tools/call` over HTTP tells the front which tool it called
/// (the front puts one in each request; rmcp hands the request's parts to
/// the handler): the access log's `tool` for hosts that send no `Mcp-Name`.
#[cfg(feature = "serve-http")]
#[derive(Debug, Clone, Default)]
pub(crate) struct Called(pub(crate) std::sync::Arc<std::sync::Mutex<Option<String>>>);

#[cfg(feature = "serve-http")]
impl Called {
    /// Tells `context`'s request, when it carries one, that it called `tool`.
    pub(crate) fn tell(
        context: &rmcp::service::RequestContext<rmcp::service::RoleServer>,
        tool: &str,
    ) {
        let parts = context.extensions.get::<http::request::Parts>();
        if let Some(called) = parts.and_then(|p| p.extensions.get::<Called>()) {
            *crate::support::lock(&called.0) = Some(tool.to_string());
        }
    }

    /// The tool told, if any.
    pub(crate) fn tool(&self) -> Option<String> {
        crate::support::lock(&self.0).clone()
    }
}

/// The host's answer from the upstream's result of a call of `tool`.
pub(crate) fn response(
    alias: &str,
    tool: &str,
    answer: ServerResult,
) -> Result<CallToolResponse, McpError> {
    let unexpected = || unexpected_result(alias, Subject::Tool(tool));
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
            .map_err(|_| unexpected()),
        _ => Err(unexpected()),
    }
}

/// A call's answer as the host gets it: a task's id and an input-required
/// result's `requestState` sealed to `alias`, the upstream that sent it.
pub(crate) fn sealed(seal: &Seal, alias: &str, answer: CallToolResponse) -> CallToolResponse {
    match answer {
        CallToolResponse::Task(mut task) => {
            task.task.task_id = seal.seal(Kind::Task, alias, &task.task.task_id);
            CallToolResponse::Task(task)
        }
        CallToolResponse::InputRequired(r) => {
            CallToolResponse::InputRequired(seal.sealed_state(alias, r))
        }
        other => other,
    }
}

/// The request `_meta` of a host's request as the gateway reads it.
pub(crate) fn meta_of(context: &RequestContext<RoleServer>) -> RequestMetaObject {
    host_meta(
        &context.meta,
        context.client_capabilities(),
        context.protocol_version(),
    )
}

impl Gateway {
    /// The request `_meta` of a host's request ([`meta_of`]), with the log
    /// level its session set when the request names none.
    pub(super) fn meta_for(&self, context: &RequestContext<RoleServer>) -> RequestMetaObject {
        let mut meta = meta_of(context);
        if let (None, Some(level)) = (meta.log_level(), *lock(&self.level)) {
            meta.set_log_level(level);
        }
        meta
    }

    /// A host session's `tools/call`. A 2025-era host cannot read an
    /// input-required result, so while its call's upstream answers one the
    /// gateway asks the host each input request itself (`asking::fulfil`)
    /// and calls again with the answers and the state, at most
    /// [`DEFAULT_MRTR_MAX_ROUNDS`](rmcp::model::DEFAULT_MRTR_MAX_ROUNDS) times.
    pub(super) async fn call(
        &self,
        mut params: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // What the host declared travels with its call (see `told_by`).
        params.meta = Some(self.meta_for(&context));
        #[cfg(feature = "serve-http")]
        Called::tell(&context, &params.name);
        // The upstream's own requests meanwhile go to this host session.
        let upstream = (self.view().names.upstream(&params.name)).map(|(a, _)| a.to_string());
        let asking = self.inner.surfaces.upstreams().asking();
        let session = in_session(&context);
        let host = session.then(|| context.peer.clone());
        let _in_call = (upstream.as_ref()).map(|alias| asking.enter(alias, host));
        let modern = (context.protocol_version())
            .is_some_and(|v| v.as_str() >= rmcp::model::ProtocolVersion::V_2026_07_28.as_str());
        let asked = !modern && session;
        let forward = forwarded(&context);
        for _ in 0..rmcp::model::DEFAULT_MRTR_MAX_ROUNDS {
            // The host's token stays with the host; see `progress`.
            let host = (context.meta.get_progress_token())
                .map(|token| (ProgressTo::Peer(context.peer.clone()), token));
            let ct = context.ct.clone();
            let cancelled = async move { ct.cancelled().await };
            let (again, forward) = (params.clone(), forward.clone());
            let answer = self.call_tool_as(again, host, forward, asked, cancelled);
            let asks = match answer.await? {
                CallToolResponse::InputRequired(asks) if asked => asks,
                answer => return Ok(answer),
            };
            let alias = upstream.as_deref().unwrap_or_default();
            let requests = asks.input_requests.unwrap_or_default();
            let answers = fulfil(&context.peer, alias, requests).await?;
            params.input_responses = (!answers.is_empty()).then_some(answers);
            params.request_state = asks.request_state;
        }
        let rounds = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;
        let why = format!(
            "the upstream of tool {:?} still asked for input after {rounds} rounds",
            params.name.as_ref()
        );
        tracing::warn!("call failed: {why}");
        Err(McpError::internal_error(why, None))
    }
}

/// Whether the host of `context` can be sent requests: a stdio host, or
/// an HTTP session's (a stateless request has nowhere to be asked from).
fn in_session(context: &RequestContext<RoleServer>) -> bool {
    #[cfg(feature = "serve-http")]
    if let Some(parts) = context.extensions.get::<hyper::http::request::Parts>() {
        return parts.headers.contains_key("mcp-session-id");
    }
    let _ = context;
    true
}

/// The host's headers a direct post passes on (none but over HTTP).
fn forwarded(context: &RequestContext<RoleServer>) -> crate::serve::upstream::Forward {
    #[cfg(feature = "serve-http")]
    if let Some(parts) = context.extensions.get::<hyper::http::request::Parts>() {
        return crate::serve::upstream::direct::forwarded(&parts.headers);
    }
    let _ = context;
    Vec::new()
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
    let (result, _) = serde_json::from_str::<ServerJsonRpcMessage>(answer)
        .ok()?
        .into_result()?;
    let back = match result.and_then(|r| response(alias, tool, r).map(ServerResult::from)) {
        Ok(result) => ServerJsonRpcMessage::response(result, id),
        Err(e) => ServerJsonRpcMessage::error(e, Some(id)),
    };
    Some([sent, serde_json::to_string(&back).ok()?])
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
