//! The gateway targets' rig (`serve_host`, `serve_upstream`, `serve_names`):
//! a [`Gateway`] in this process in front of a [`Hub`] whose servers the
//! input writes, a host speaking JSON-RPC to it over an in-memory pipe
//! (rmcp's own stdio framing, one message a line), and the oracles every
//! served `tools/list` must meet.
//!
//! Nothing of the gateway is stubbed: the host's bytes go through rmcp's
//! server side into the gateway's handlers, and upstream changes go through
//! the hub's assembly into the view the gateway serves. Upstreams have no
//! live connection here, so a forwarded `tools/call` ends in the gateway's
//! "not connected" error (the forwarding itself is measured by
//! `benches/serve.rs` and counted by the instruction guard).

use std::collections::{BTreeMap, BTreeSet};

use arbitrary::Arbitrary;
use mcp_preamble::hub::Hub;
use mcp_preamble::rmcp::ServiceExt;
use mcp_preamble::rmcp::model::Tool as WireTool;
use mcp_preamble::rmcp::service::{RoleClient, RunningService};
use mcp_preamble::serve::{Gateway, ServeAs};
use mcp_preamble::{Assembler, ServerSnapshot, Tool};
use serde_json::{Value, json};

use crate::targets::serve_names::{NameOp, NamesInput};
use crate::targets::serve_upstream::{UpstreamInput, UpstreamOp};
use crate::{QuarterCounter, Seed, assert_no_hidden};

/// Aliases the targets' upstreams take: two of them make one safe prefix
/// (`github__work_…`), the third has a character the scheme replaces.
pub const ALIASES: [&str; 3] = ["github", "github (work)", "a b"];

/// Whether the names contract of issue 35 item 1 (a name the host has seen
/// for a tool never moves to another tool while both exist) is checked:
/// `serve_names` finds the takeover of its finding within seconds on a
/// gateway without the contract.
pub const NAMES_CONTRACT: bool = true;

/// Whether schemas are checked for hidden characters like names and
/// descriptions (issue 35 item 3).
pub const SCHEMAS_SANITIZED: bool = true;

/// A gateway (claude-code's fit, token counts by [`QuarterCounter`]: the
/// targets check names and structure, not counts) over a fresh hub.
pub fn gateway() -> Gateway {
    let assembler = Assembler::new().token_counter(QuarterCounter);
    Gateway::new(assembler, ServeAs::ClaudeCode).expect("the gateway's scheme fits")
}

/// A current-thread runtime with timers, one per input.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime")
}

/// One tool as a hostile upstream lists it.
#[derive(Arbitrary, Debug, Clone, PartialEq, Eq)]
pub struct ToolSpec {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    /// Property names and their descriptions, defaults and enum values.
    pub properties: Vec<(String, Option<String>, Option<String>)>,
}

impl ToolSpec {
    /// The tool as it appears in a `tools/list` result.
    pub fn wire(&self) -> Value {
        let mut properties = serde_json::Map::new();
        for (name, description, default) in self.properties.iter().take(4) {
            let mut p = json!({"type": "string"});
            if let Some(d) = description {
                p["description"] = json!(d);
            }
            if let Some(d) = default {
                p["default"] = json!(d);
                p["enum"] = json!([d]);
            }
            properties.insert(name.clone(), p);
        }
        let mut tool = json!({
            "name": self.name,
            "inputSchema": {"type": "object", "properties": properties},
        });
        if let Some(t) = &self.title {
            tool["title"] = json!(t);
        }
        if let Some(d) = &self.description {
            tool["description"] = json!(d);
        }
        tool
    }
}

/// A `tools/list` result read as the gateway's connections read one:
/// rmcp's typed result, then the crate's page reader. `None` for a result
/// a connection would fail on (the server keeps its tools).
pub fn read_tools(result: &Value) -> Option<Vec<Tool>> {
    let typed: mcp_preamble::rmcp::model::ListToolsResult =
        serde_json::from_value(result.clone()).ok()?;
    let tools = serde_json::to_value(&typed.tools).ok()?;
    let mut scratch = ServerSnapshot::new("");
    scratch.push_tools_page(&json!({ "tools": tools })).ok()?;
    Some(scratch.tools)
}

/// Gives `alias` these tools: a new server (a connection's first
/// snapshot), or its tools replaced (what `list_changed` does).
pub fn set_tools(hub: &Hub, alias: &str, tools: Vec<Tool>) {
    if hub.snapshot(alias).is_some() {
        let _ = hub.update_tools(alias, tools);
    } else {
        let mut snapshot = ServerSnapshot::new(alias).with_alias(alias);
        snapshot.tools = tools;
        let _ = hub.upsert(alias, snapshot);
    }
}

/// What a host has been shown: each `(alias, tool)`'s name, both ways.
#[derive(Debug, Default)]
pub struct Seen {
    names: BTreeMap<(String, String), String>,
}

impl Seen {
    /// Checks a `tools/list` the host got against the gateway's names and
    /// the hub, and remembers it.
    pub fn check(&mut self, gateway: &Gateway, tools: &[WireTool]) {
        check_tools(tools);
        let table = gateway.tool_names();
        let hub = gateway.hub();
        let mut now = BTreeMap::new();
        for tool in tools {
            let name = tool.name.as_ref();
            if name == table.reader() {
                continue;
            }
            let (alias, own) = table
                .upstream(name)
                .unwrap_or_else(|| panic!("{name:?} is listed but names no upstream tool"));
            let exists = hub
                .snapshot(alias)
                .is_some_and(|s| s.tools.iter().any(|t| t.name == own));
            assert!(
                exists,
                "{name:?} names {alias:?}'s {own:?}, which it does not list"
            );
            now.insert((alias.to_string(), own.to_string()), name.to_string());
        }
        if NAMES_CONTRACT {
            self.contract(&now);
        }
        self.names.extend(now);
    }

    /// A name seen for one tool is not given to another tool while the
    /// first is listed, and a listed tool keeps the name it was seen under.
    fn contract(&self, now: &BTreeMap<(String, String), String>) {
        for (tool, name) in now {
            if let Some(before) = self.names.get(tool) {
                assert_eq!(before, name, "{tool:?} was renamed while listed");
            }
        }
        for (tool, name) in &self.names {
            let taken = now.iter().find(|(t, n)| *n == name && *t != tool);
            if let (Some((other, _)), true) = (taken, now.contains_key(tool)) {
                panic!("{name:?}, seen for {tool:?}, now names {other:?}");
            }
        }
    }
}

/// Every `tools/list`: names unique, within the character set and length
/// model APIs accept, never empty; names, titles and descriptions free of
/// what sanitizing removes (schemas too once they are sanitized); the
/// reader listed once at most.
pub fn check_tools(tools: &[WireTool]) {
    let mut names = BTreeSet::new();
    for tool in tools {
        let name = tool.name.as_ref();
        assert!(names.insert(name), "{name:?} is listed twice");
        assert!(
            !name.is_empty()
                && name.len() <= 64
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
            "{name:?} is not a name model APIs accept"
        );
        if let Some(title) = &tool.title {
            assert_no_hidden(title, "a served title");
        }
        if let Some(description) = &tool.description {
            assert_no_hidden(description, "a served description");
        }
        if SCHEMAS_SANITIZED {
            let schema = serde_json::to_string(&tool.input_schema).unwrap_or_default();
            assert_no_hidden(&schema, "a served schema");
        }
    }
}

/// A host session with `gateway` over an in-memory pipe (rmcp on both
/// ends, as a host and `serve` on stdio); the gateway's side runs as a task
/// of the current runtime until the host closes.
pub async fn host(gateway: &Gateway) -> RunningService<RoleClient, ()> {
    let (host_end, gateway_end) = tokio::io::duplex(1 << 16);
    let server = gateway.clone();
    tokio::spawn(async move {
        if let Ok(running) = server.serve(gateway_end).await {
            let _ = running.waiting().await;
        }
    });
    ().serve(host_end)
        .await
        .expect("the gateway answers a host's handshake")
}

/// The tools the host is served now.
pub async fn list(session: &RunningService<RoleClient, ()>) -> Vec<WireTool> {
    session
        .list_all_tools()
        .await
        .expect("the gateway answers tools/list")
}

// ---- seeds ------------------------------------------------------------------

/// Writes the discriminant `arbitrary`'s derive reads as variant `k` of `n`
/// (a little-endian `u32` scaled by `n`).
pub(crate) fn put_variant(e: &mut crate::Encoder, k: u64, n: u64) {
    let x = u32::try_from((k << 32).div_ceil(n)).unwrap_or(u32::MAX);
    e.front(&x.to_le_bytes());
}

impl Seed for (String, Option<String>, Option<String>) {
    fn put(&self, e: &mut crate::Encoder) {
        self.0.put(e);
        self.1.put(e);
        self.2.put(e);
    }
}

impl Seed for ToolSpec {
    fn put(&self, e: &mut crate::Encoder) {
        self.name.put(e);
        self.title.put(e);
        self.description.put(e);
        self.properties.put(e);
    }
}

impl Seed for NameOp {
    fn put(&self, e: &mut crate::Encoder) {
        match self {
            NameOp::Add { server, tool } => {
                put_variant(e, 0, 5);
                server.put(e);
                tool.put(e);
            }
            NameOp::Remove { server, tool } => {
                put_variant(e, 1, 5);
                server.put(e);
                tool.put(e);
            }
            NameOp::Rename { server, tool, to } => {
                put_variant(e, 2, 5);
                server.put(e);
                tool.put(e);
                to.put(e);
            }
            NameOp::Reverse { server } => {
                put_variant(e, 3, 5);
                server.put(e);
            }
            NameOp::Gone { server } => {
                put_variant(e, 4, 5);
                server.put(e);
            }
        }
    }
}

impl Seed for NamesInput {
    fn put(&self, e: &mut crate::Encoder) {
        self.ops.put(e);
    }
    fn put_last(&self, e: &mut crate::Encoder) {
        self.ops.put_last(e);
    }
}

impl Seed for UpstreamOp {
    fn put(&self, e: &mut crate::Encoder) {
        match self {
            UpstreamOp::Result { server, result } => {
                put_variant(e, 0, 6);
                server.put(e);
                result.put(e);
            }
            UpstreamOp::Tools { server, tools } => {
                put_variant(e, 1, 6);
                server.put(e);
                tools.put(e);
            }
            UpstreamOp::Instructions { server, text } => {
                put_variant(e, 2, 6);
                server.put(e);
                text.put(e);
            }
            UpstreamOp::Gone { server } => {
                put_variant(e, 3, 6);
                server.put(e);
            }
            UpstreamOp::Read { server } => {
                put_variant(e, 4, 6);
                server.put(e);
            }
            UpstreamOp::Call { tool } => {
                put_variant(e, 5, 6);
                tool.put(e);
            }
        }
    }
}

impl Seed for UpstreamInput {
    fn put(&self, e: &mut crate::Encoder) {
        self.ops.put(e);
    }
    fn put_last(&self, e: &mut crate::Encoder) {
        self.ops.put_last(e);
    }
}
