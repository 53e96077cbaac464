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

use crate::serve::gateway::names::GatewayNames;
use crate::serve::upstream::sealed::{Kind, Seal};
use crate::serve::upstream::send::{Subject, host_meta, unexpected_result};

/// The host's `Mcp-Param-*` headers of a call (`forward`) the called
/// tool does not declare (`declared`): the ones carried on upstream.
pub(crate) fn undeclared(
    forward: crate::serve::upstream::Forward,
    declared: Option<&Vec<crate::serve::gateway::view::ParamHeader>>,
) -> crate::serve::upstream::Forward {
    let declares = |name: &str| {
        let name = name.strip_prefix("mcp-param-").unwrap_or(name);
        declared.is_some_and(|d| d.iter().any(|p| p.name.eq_ignore_ascii_case(name)))
    };
    forward.into_iter().filter(|(n, _)| !declares(n)).collect()
}

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
    // Written as the stdio pipe and the direct post write a call.
    let mut sent = upstream_request(tool, call.params);
    let sent = crate::serve::upstream::piped::call_line(1, &mut sent)?;
    let sent = String::from_utf8(sent).ok()?;
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
