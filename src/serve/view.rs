//! What the gateway serves at one moment: the instructions, the exposed
//! tools and their names, made from the hub's current section and
//! snapshots (never re-assembled here: the section comes from the hub's
//! memo).

use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::model::Tool as WireTool;
use serde_json::{Value, json};

use super::fit::{ServeAs, within};
use super::names::{GatewayNames, exposed_name};
use crate::hub::Hub;
use crate::model::{ServerSnapshot, Tool};
use crate::pin::OnChange;
use crate::sanitize;
use crate::support::hash::fnv1a64;

/// The gateway's own tool: one server's full, sanitized instructions.
pub const READER: &str = "mcp_preamble__instructions";

/// The line appended to the instructions when [`READER`] is listed (its
/// length is reserved when the text is fitted to a host).
pub const NOTE: &str =
    "Full instructions of one server above: call `mcp_preamble__instructions` with its alias.\n";

/// One moment of the gateway.
#[derive(Debug, Default)]
pub(crate) struct View {
    /// The hub section's digest this view was made from.
    pub digest: String,
    /// Changes whenever what a host sees (tools or instructions) changes.
    pub stamp: u64,
    pub names: GatewayNames,
    pub tools: Arc<Vec<WireTool>>,
    pub instructions: String,
    /// By alias: the text [`READER`] answers with.
    pub full: BTreeMap<String, String>,
    /// The names tools the policy's filter hides would have: a call to
    /// one is refused as hidden, not as unknown.
    pub hidden: BTreeMap<String, (String, String)>,
}

impl View {
    pub(crate) fn of(hub: &Hub, host: ServeAs) -> View {
        let section = hub.section();
        let assembly = section.assembly();
        // Servers the policy excludes are not served at all; a server whose
        // instructions the operator replaced has no other text to read.
        let policy = |excluded: bool| -> Vec<&str> {
            assembly
                .servers()
                .iter()
                .filter(|s| {
                    s.policy.as_ref().is_some_and(|p| {
                        if excluded {
                            p.excluded()
                        } else {
                            p.instructions_replaced()
                        }
                    })
                })
                .filter_map(|s| s.alias.as_deref())
                .collect()
        };
        let (excluded, replaced) = (policy(true), policy(false));
        // Each server as the model is sent it: the policy's tool filter and
        // overrides applied, as in the section.
        let mut hidden_tools = Vec::new();
        let servers: Vec<(String, ServerSnapshot)> = hub
            .aliases()
            .into_iter()
            .filter(|a| !excluded.contains(&a.as_str()))
            .filter_map(|a| {
                let (sent, hidden) = hub.sent(&a)?;
                hidden_tools.extend(hidden.into_iter().map(|t| (a.clone(), t)));
                Some((a, sent))
            })
            .collect();
        let full = full_texts(hub, &servers, &replaced);
        let pairs = servers
            .iter()
            .flat_map(|(a, s)| s.tools.iter().map(move |t| (a.as_str(), t.name.as_str())));
        let names = GatewayNames::new(pairs, READER);
        let hidden = hidden_tools
            .into_iter()
            .map(|(a, t)| (exposed_name(&a, &t), (a, t)))
            .filter(|(n, _)| names.upstream(n).is_none() && n != names.reader())
            .collect();
        let mut tools = Vec::new();
        for (alias, snapshot) in &servers {
            for tool in &snapshot.tools {
                let name = names.exposed(alias, &tool.name).unwrap_or_default();
                tools.push(wire_tool(name, tool));
            }
        }
        let mut instructions = section.text().to_string();
        if !full.is_empty() {
            let aliases: Vec<&String> = full.keys().collect();
            tools.push(reader_tool(names.reader(), &aliases));
            instructions.push_str(&NOTE.replace(READER, names.reader()));
        }
        let instructions = within(host, &instructions);
        let stamp = fnv1a64(
            serde_json::to_string(&(&tools, &instructions))
                .unwrap_or_default()
                .as_bytes(),
        );
        View {
            digest: section.digest().to_string(),
            stamp,
            names,
            tools: Arc::new(tools),
            instructions,
            full,
            hidden,
        }
    }
}

/// By alias, the text [`READER`] answers with: the sanitized instructions,
/// or for a server held for review the reviewed text; none for a server
/// whose instructions the operator replaced or whose change is dropped.
fn full_texts(
    hub: &Hub,
    servers: &[(String, ServerSnapshot)],
    replaced: &[&str],
) -> BTreeMap<String, String> {
    let lock = hub.lock();
    let pending = hub.pending();
    let mut full = BTreeMap::new();
    for (alias, snapshot) in servers {
        let on_change = pending.get(alias).and_then(|p| p.on_change);
        let text = if replaced.contains(&alias.as_str()) || on_change == Some(OnChange::Drop) {
            None
        } else if on_change == Some(OnChange::Hold) {
            // Held for review: the reviewed text, as the section has it.
            lock.as_ref()
                .and_then(|l| l.get(crate::server_key::ServerKey::alias(alias).as_str()))
                .and_then(|e| e.instructions.as_ref())
                .map(|i| i.text())
        } else {
            snapshot.instructions.raw().map(sanitize::text)
        };
        if let Some(text) = text.filter(|t| !t.is_empty()) {
            full.insert(alias.clone(), text);
        }
    }
    full
}

/// An upstream tool as the gateway lists it: its exposed name, its title
/// and description sanitized (hidden characters out), schema and
/// annotations as sent.
fn wire_tool(name: &str, tool: &Tool) -> WireTool {
    let schema = match tool.input_schema.as_value() {
        Value::Object(o) => o.clone(),
        _ => object_schema(json!({"type": "object"})),
    };
    let mut wire = WireTool::new(name.to_string(), String::new(), schema);
    wire.description = tool
        .description
        .as_deref()
        .map(|d| sanitize::text(d).into());
    wire.title = tool.title.as_deref().map(sanitize::line);
    // Hints only; one the SDK cannot read is left out rather than guessed.
    wire.annotations = tool
        .annotations
        .as_ref()
        .and_then(|a| serde_json::to_value(a).ok())
        .and_then(|a| serde_json::from_value(a).ok());
    wire
}

fn object_schema(value: Value) -> serde_json::Map<String, Value> {
    match value {
        Value::Object(o) => o,
        _ => serde_json::Map::new(),
    }
}

/// [`READER`] (named `name`), for the servers in `aliases`.
fn reader_tool(name: &str, aliases: &[&String]) -> WireTool {
    let schema = object_schema(json!({
        "type": "object",
        "properties": {"server": {"type": "string", "enum": aliases}},
        "required": ["server"],
    }));
    let mut tool = WireTool::new(
        name.to_string(),
        "The full instructions of one MCP server behind this gateway (the system prompt may hold a shortened version).",
        schema,
    );
    tool.annotations =
        serde_json::from_value(json!({"readOnlyHint": true, "openWorldHint": false})).ok();
    tool
}
