//! `serve_upstream`: what hostile upstreams send the gateway — `tools/list`
//! results as raw JSON and as hostile tools (names that collide once made
//! safe, hidden characters in names, titles, descriptions and schemas),
//! `list_changed` (the tools replaced), new instructions, a server gone —
//! each published by the hub as a connection publishes it, and what a host
//! then gets from the gateway: `tools/list`, the reader tool, a forwarded
//! call.
//!
//! Oracles: every `tools/list` as in `serve_names` ([`Seen::check`]); the
//! instructions served and the reader's text free of what sanitizing
//! removes; the reader answers for a server with instructions and refuses
//! others; a call to an upstream tool (no live upstream here) is the
//! gateway's JSON-RPC error naming that upstream, never a result.
//!
//! [`Seen::check`]: crate::gateway::Seen::check

use arbitrary::Arbitrary;
use mcp_preamble::ServerSnapshot;
use mcp_preamble::rmcp::model::{CallToolRequestParams, ContentBlock};
use mcp_preamble::rmcp::service::{RoleClient, RunningService, ServiceError};
use serde_json::{Value, json};

use crate::assert_no_hidden;
use crate::gateway::{
    ALIASES, Seen, ToolSpec, gateway, host, list, read_tools, runtime, set_tools,
};

/// Most messages per input, tools per message, and bytes of a raw result
/// or instructions (target's own bounds).
const MAX_OPS: usize = 16;
const MAX_TOOLS: usize = 8;
const MAX_TEXT: usize = 16 * 1024;

/// One message of an upstream, or one request of the host (`server` is
/// taken mod 3).
#[derive(Arbitrary, Debug, Clone, PartialEq, Eq)]
pub enum UpstreamOp {
    /// A `tools/list` result as sent (JSON text).
    Result { server: u8, result: String },
    /// A `tools/list` result of these tools (after `list_changed`, or first).
    Tools { server: u8, tools: Vec<ToolSpec> },
    /// New instructions (a new handshake), the tools kept.
    Instructions { server: u8, text: String },
    /// The server is gone.
    Gone { server: u8 },
    /// The host calls the reader tool for the server.
    Read { server: u8 },
    /// The host calls the `tool`-th listed tool.
    Call { tool: u8 },
}

/// Input of the `serve_upstream` target.
#[derive(Arbitrary, Debug, Clone, PartialEq, Eq)]
pub struct UpstreamInput {
    pub ops: Vec<UpstreamOp>,
}

/// One input of the target (what libFuzzer's `fuzz_target!` passes).
pub fn run(input: UpstreamInput) {
    runtime().block_on(async {
        let gateway = gateway();
        let session = host(&gateway).await;
        let mut seen = Seen::default();
        for op in input.ops.iter().take(MAX_OPS) {
            upstream(&gateway, op);
            let tools = list(&session).await;
            seen.check(&gateway, &tools);
            assert_no_hidden(&gateway.instructions(), "the served instructions");
            match op {
                UpstreamOp::Read { server } => read(&gateway, &session, *server).await,
                UpstreamOp::Call { tool } if !tools.is_empty() => {
                    let name = tools[usize::from(*tool) % tools.len()].name.to_string();
                    call(&gateway, &session, &name).await;
                }
                _ => {}
            }
        }
        let _ = session.cancel().await;
    });
}

/// The hub as an upstream's message leaves it.
fn upstream(gateway: &mcp_preamble::serve::Gateway, op: &UpstreamOp) {
    let hub = gateway.hub();
    let alias = |s: &u8| ALIASES[usize::from(*s) % ALIASES.len()];
    match op {
        UpstreamOp::Result { server, result } => {
            let parsed = serde_json::from_str::<Value>(crate::clip(result, MAX_TEXT));
            if let Some(tools) = parsed.ok().as_ref().and_then(read_tools) {
                set_tools(hub, alias(server), tools);
            }
        }
        UpstreamOp::Tools { server, tools } => {
            let wire: Vec<Value> = tools.iter().take(MAX_TOOLS).map(ToolSpec::wire).collect();
            let tools = read_tools(&json!({ "tools": wire })).unwrap_or_default();
            set_tools(hub, alias(server), tools);
        }
        UpstreamOp::Instructions { server, text } => {
            let alias = alias(server);
            let tools = hub.snapshot(alias).map(|s| s.tools).unwrap_or_default();
            let mut snapshot = ServerSnapshot::new(alias)
                .with_alias(alias)
                .with_instructions(crate::clip(text, MAX_TEXT));
            snapshot.tools = tools;
            let _ = hub.upsert(alias, snapshot);
        }
        UpstreamOp::Gone { server } => {
            let _ = hub.remove(alias(server));
        }
        UpstreamOp::Read { .. } | UpstreamOp::Call { .. } => {}
    }
}

/// The reader tool for `server`: its text sanitized when the gateway holds
/// instructions for it, invalid params when not.
async fn read(
    gateway: &mcp_preamble::serve::Gateway,
    session: &RunningService<RoleClient, ()>,
    server: u8,
) {
    let alias = ALIASES[usize::from(server) % ALIASES.len()];
    let reader = gateway.tool_names().reader().to_string();
    let mut params = CallToolRequestParams::new(reader);
    params.arguments = json!({ "server": alias }).as_object().cloned();
    match session.call_tool(params).await {
        Ok(result) => {
            for content in result.content {
                if let ContentBlock::Text(text) = &content {
                    assert_no_hidden(&text.text, "the reader's text");
                }
            }
        }
        Err(ServiceError::McpError(e)) => assert_eq!(e.code.0, -32602, "{e:?}"),
        Err(e) => panic!("the reader failed: {e}"),
    }
}

/// A listed upstream tool, called with no upstream connected: the
/// gateway's error naming the upstream, or the reader's answer.
async fn call(
    gateway: &mcp_preamble::serve::Gateway,
    session: &RunningService<RoleClient, ()>,
    name: &str,
) {
    let names = gateway.tool_names();
    let answer = session
        .call_tool(CallToolRequestParams::new(name.to_string()))
        .await;
    if name == names.reader() {
        return;
    }
    let (alias, _) = names
        .upstream(name)
        .unwrap_or_else(|| panic!("{name:?} is listed and names no tool"));
    match answer {
        Err(ServiceError::McpError(e)) => {
            let upstream = e.data.as_ref().and_then(|d| d.get("upstream"));
            assert_eq!(upstream, Some(&json!(alias)), "{e:?}");
        }
        other => panic!("a call with no upstream connected answered {other:?}"),
    }
}
