//! What the gateway serves at one moment: the instructions, the exposed
//! tools and their names, mapped to the wire from one hub section (its
//! text, and per server what the assembly exposed: the tools the model is
//! sent, under the names the section uses, their text sanitized once, and
//! the instructions the reader tool returns). Nothing is decided here: no
//! filter, name, override or sanitizing of its own, so `tools/list`, the
//! section and the reader cannot disagree.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rmcp::model::Tool as WireTool;
use serde_json::{Value, json};

use crate::hub::{Hub, Section};
use crate::report::{ExposedTool, RemovalReason};
use crate::serve::gateway::fit::{ServeAs, within};
use crate::serve::gateway::names::{GatewayNames, served_scheme};
use crate::support::hash::fnv1a64;
use crate::tool_names::{ExposedName, NameTable, ToolNames};

/// The gateway's own tool: one server's full, sanitized instructions.
pub const READER: &str = "mcp_preamble__instructions";

/// The line appended to the instructions when a server's text in them is
/// shortened, naming [`READER`] as the host shows it (its length is
/// reserved when the text is fitted to a host).
pub const NOTE: &str =
    "Full instructions of one server above: call `mcp_preamble__instructions` with its alias.\n";

/// One moment of the gateway.
#[derive(Debug)]
pub(crate) struct View {
    /// The hub section this view was made from (a new one, even with the
    /// same text, can expose other tools: a schema changed, say).
    pub section: Arc<Section>,
    /// Changes whenever what a host sees (tools or instructions) changes.
    pub stamp: u64,
    pub names: GatewayNames,
    /// The upstream tools, as listed.
    pub tools: Arc<Vec<WireTool>>,
    /// [`READER`], listed to a host that did not read some server's full
    /// text in the instructions ([`View::tools_for`]).
    reader: Option<WireTool>,
    pub instructions: String,
    /// By alias: the text [`READER`] answers with.
    pub full: BTreeMap<String, String>,
    /// By alias, a digest of each full text [`View::instructions`] holds
    /// whole (its block not shortened).
    whole: BTreeMap<String, u64>,
    /// The names tools the policy's filter hides would have: a call to
    /// one is refused as hidden, not as unknown.
    pub hidden: BTreeMap<String, (String, String)>,
    /// Served names of tools whose upstream schema puts an argument in an
    /// HTTP header (`x-mcp-header`): rmcp's client writes those headers.
    #[cfg_attr(not(feature = "serve-http"), allow(dead_code))]
    pub param_headers: BTreeSet<String>,
    /// By served name: each argument a header carries (its path in
    /// `arguments`, the header's name after `Mcp-Param-`, the schema's type).
    #[cfg_attr(not(feature = "serve-http"), allow(dead_code))]
    pub param_declared: BTreeMap<String, Vec<ParamHeader>>,
    /// Tools not served for their name (`--prefix never`).
    pub refused: Vec<RefusedName>,
}

/// One `x-mcp-header` declaration of a tool's input schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParamHeader {
    /// The argument's path in `arguments` (nested object properties).
    pub path: Vec<String>,
    /// The header is `Mcp-Param-{name}`.
    pub name: String,
    /// The property's `type`, when it says one.
    pub kind: Option<String>,
}

/// The `x-mcp-header` declarations of `schema`, when it has any.
fn declared_headers(schema: &Value) -> Option<Vec<ParamHeader>> {
    if !has_key(schema, "x-mcp-header") {
        return None;
    }
    let mut declared = Vec::new();
    param_headers_of(schema, &mut Vec::new(), &mut declared);
    Some(declared)
}

/// The `x-mcp-header` declarations of `schema`'s properties, nested ones
/// too (at most 8 levels: a schema is bounded already).
fn param_headers_of(schema: &Value, path: &mut Vec<String>, out: &mut Vec<ParamHeader>) {
    let Some(Value::Object(props)) = schema.get("properties") else {
        return;
    };
    for (key, prop) in props {
        path.push(key.clone());
        if let Some(name) = prop.get("x-mcp-header").and_then(Value::as_str) {
            out.push(ParamHeader {
                path: path.clone(),
                name: name.to_string(),
                kind: prop.get("type").and_then(Value::as_str).map(str::to_string),
            });
        }
        if path.len() < 8 {
            param_headers_of(prop, path, out);
        }
        path.pop();
    }
}

impl View {
    pub(crate) fn of(hub: &Hub, host: ServeAs) -> View {
        let section = hub.section();
        let assembly = section.assembly();
        let (mut table, mut tools) = (NameTable::default(), Vec::new());
        let (mut full, mut hidden) = (BTreeMap::new(), Vec::new());
        let (mut param_headers, mut param_declared) = (BTreeSet::new(), BTreeMap::new());
        let (scheme, mut refused) = (served_scheme(hub), Vec::new());
        // Servers in section order; a server the policy excludes exposes nothing.
        for exposure in assembly.exposures() {
            let Some(alias) = exposure.alias.as_deref() else {
                continue;
            };
            for tool in &exposure.tools {
                // Unnamed only under the plain scheme, which the gateway
                // replaces with its own (`Hub::name_tools`) before serving.
                let Some(name) = &tool.exposed else { continue };
                if let Some(wanted) = unnamable(&scheme, alias, &tool.own, name) {
                    refused.push((alias.to_string(), tool.own.clone(), wanted));
                } else if table.push(alias, &tool.own, name.clone()) {
                    tools.push(wire_tool(tool));
                    if let Some(declared) = declared_headers(tool.input_schema.as_value()) {
                        param_headers.insert(name.to_string());
                        param_declared.insert(name.to_string(), declared);
                    }
                }
            }
            hidden.extend(
                (exposure.hidden.iter())
                    .map(|(own, name)| (name.clone(), (alias.to_string(), own.clone()))),
            );
            if let Some(text) = &exposure.instructions {
                full.insert(alias.to_string(), text.clone());
            }
        }
        let refused = refused_of(refused, &table);
        let names = GatewayNames::of_table(table, READER);
        let hidden = hidden
            .into_iter()
            .filter(|(n, _)| names.upstream(n).is_none() && n != names.reader())
            .collect();
        let shortened = shortened(assembly);
        let mut instructions = section.text().to_string();
        if full.keys().any(|a| shortened.contains(a)) {
            let reader = hub.shown_name(names.reader());
            instructions.push_str(&NOTE.replace(READER, &reader));
        }
        let fitted = within(host, &instructions);
        let whole = match fitted.len() == instructions.len() {
            true => (full.iter())
                .filter(|(a, _)| !shortened.contains(*a))
                .map(|(a, t)| (a.clone(), fnv1a64(t.as_bytes())))
                .collect(),
            // Cut past the fitting: no text can be told whole.
            false => BTreeMap::new(),
        };
        let reader = (!full.is_empty()).then(|| {
            let aliases: Vec<&String> = full.keys().collect();
            reader_tool(names.reader(), &aliases)
        });
        let stamp = fnv1a64(
            (serde_json::to_string(&(&tools, &reader, &fitted, &whole)).unwrap_or_default())
                .as_bytes(),
        );
        View {
            refused,
            section,
            stamp,
            names,
            tools: Arc::new(tools),
            reader,
            instructions: fitted,
            full,
            whole,
            hidden,
            param_headers,
            param_declared,
        }
    }

    /// The tools listed to a host that read `read`'s instructions (the
    /// view served at its `initialize`): the upstream tools, and
    /// [`READER`] when some server's full text is not what the host read
    /// whole there (shortened, changed since, or a server that joined
    /// later). Without `read`, the reader is listed whenever it can answer.
    pub(crate) fn tools_for(&self, read: Option<&View>) -> Vec<WireTool> {
        let mut tools = self.tools.as_ref().clone();
        let needed = |read: &View| {
            (self.full.iter()).any(|(a, t)| read.whole.get(a) != Some(&fnv1a64(t.as_bytes())))
        };
        if let Some(reader) = &self.reader
            && read.is_none_or(needed)
        {
            tools.push(reader.clone());
        }
        tools
    }
}

/// Under a scheme that cannot tell servers apart (`--prefix never`), the
/// name `own` of `alias` wants when the assembly had to give it another
/// (an earlier tool holds it): such a tool is not served.
fn unnamable(scheme: &ToolNames, alias: &str, own: &str, given: &ExposedName) -> Option<String> {
    let wanted = scheme.exposed(alias, own).into_string();
    (!scheme.tells_servers_apart() && given.as_str() != wanted).then_some(wanted)
}

/// The tools not served for their name, each with the alias of the tool
/// served under it (in `table`), logged once per view.
fn refused_of(refused: Vec<(String, String, String)>, table: &NameTable) -> Vec<RefusedName> {
    (refused.into_iter())
        .map(|(alias, tool, name)| {
            let holder = table.resolve(&name).map(|(a, _)| a.to_string());
            tracing::error!(
                upstream = %alias,
                holder = holder.as_deref().unwrap_or("?"),
                "tool {name:?} of {alias:?} is not served: another upstream's tool has that name, and names are never prefixed (--prefix never)"
            );
            RefusedName {
                alias,
                tool,
                name,
                holder,
            }
        })
        .collect()
}

/// An upstream tool the gateway does not serve because its name is
/// another upstream's and names are never prefixed ([`Prefix::Never`](crate::serve::Prefix::Never)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RefusedName {
    /// The upstream whose tool is not served.
    pub alias: String,
    /// The tool's own name.
    pub tool: String,
    /// The name it would have been served under.
    pub name: String,
    /// The upstream whose tool is served under that name.
    pub holder: Option<String>,
}

/// The aliases whose instructions the budget or the host's cap shortened
/// in `assembly` (units dropped or cut, or the block left out).
fn shortened(assembly: &crate::report::Assembly) -> std::collections::BTreeSet<String> {
    (assembly.servers().iter())
        .filter(|s| {
            s.truncated
                || !s.included
                || s.omitted.is_some()
                || (s.removed.iter()).any(|r| r.reason == RemovalReason::Budget && r.unit.is_some())
        })
        .filter_map(|s| s.alias.clone())
        .collect()
}

/// An upstream tool as the gateway lists it: the assembly's name, title,
/// description, annotations and schema, as they are (the schema's strings
/// stripped of hidden characters, as the description was sanitized).
fn wire_tool(tool: &ExposedTool) -> WireTool {
    // MCP wants an object schema: one the server did not send as one, or
    // that the limits emptied, is served as the empty object schema.
    let schema = match tool.served_schema() {
        Value::Object(o) if !o.is_empty() => o.clone(),
        _ => object_schema(json!({"type": "object"})),
    };
    let name = tool.exposed.as_ref().map_or(&tool.name[..], |n| n.as_str());
    let mut wire = WireTool::new(name.to_string(), String::new(), schema);
    wire.description = tool.description().map(|d| d.to_string().into());
    wire.title = tool.title.clone();
    // Hints only; one the SDK cannot read is left out rather than guessed.
    wire.annotations = tool
        .annotations
        .as_ref()
        .and_then(|a| serde_json::to_value(a).ok())
        .and_then(|a| serde_json::from_value(a).ok());
    // The host's SDK checks structured results against it; 2025 hosts
    // take object schemas only (the era conversion drops the others).
    wire.output_schema = match tool.served_output_schema() {
        Some(Value::Object(o)) => Some(Arc::new(o.clone())),
        _ => None,
    };
    // As a prompt's or a resource's: as sent, or left out when the SDK cannot read them.
    wire.icons = (tool.icons.clone()).and_then(|i| serde_json::from_value(i).ok());
    wire.meta = (tool.meta.clone()).and_then(|m| serde_json::from_value(m).ok());
    wire
}

/// Whether `key` is a key of some object in `value`.
fn has_key(value: &Value, key: &str) -> bool {
    match value {
        Value::Object(o) => o.contains_key(key) || o.values().any(|v| has_key(v, key)),
        Value::Array(a) => a.iter().any(|v| has_key(v, key)),
        _ => false,
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Assembler;
    use crate::model::{ServerSnapshot, Tool};
    use crate::serve::Gateway;

    fn billing(text: &str) -> ServerSnapshot {
        ServerSnapshot::new("billing")
            .with_instructions(text)
            .with_tool(Tool::new("get_invoice", "One invoice."))
    }

    fn lists_reader(view: &View, read: &View) -> bool {
        view.tools_for(Some(read)).iter().any(|t| t.name == READER)
    }

    #[test]
    fn the_reader_is_listed_only_for_text_the_host_did_not_read_whole() {
        let gateway = Gateway::new(Assembler::new(), ServeAs::Plain).unwrap();
        let hub = gateway.hub().clone();
        hub.upsert("billing", billing("Call get_invoice with an id."))
            .unwrap();
        let read = gateway.view();
        assert!(!lists_reader(&read, &read), "read whole");
        assert!(!read.instructions.contains(READER), "no note");
        // A server that joins after the host read the instructions.
        let hub = gateway.hub();
        hub.upsert("audit", billing("Audit invoices only."))
            .unwrap();
        let joined = gateway.view();
        assert!(lists_reader(&joined, &read));
        assert!(!lists_reader(&joined, &joined));
        // A text that changed since.
        hub.upsert("billing", billing("Call get_invoice with a period id."))
            .unwrap();
        let changed = gateway.view();
        assert!(lists_reader(&changed, &joined));
        assert!(!lists_reader(&changed, &changed));
        // A text the budget shortened: listed, and the note names it.
        let small = crate::serve::prepare(Assembler::new().budget(12), ServeAs::Plain).unwrap();
        hub.reconfigure(small).unwrap();
        let shortened = gateway.view();
        assert!(shortened.instructions.ends_with(&NOTE.to_string()));
        assert!(lists_reader(&shortened, &shortened));
    }

    #[test]
    fn the_reader_text_is_the_sections_with_no_budget() {
        let gateway = Gateway::new(Assembler::new(), ServeAs::Plain).unwrap();
        let restating = "Get one invoice by its id. Call list_periods before get_invoice.";
        let server = ServerSnapshot::new("billing")
            .with_instructions(restating)
            .with_tool(Tool::new("list_periods", "Periods."))
            .with_tool(Tool::new("get_invoice", "Get one invoice by its id."));
        gateway.hub().upsert("billing", server).unwrap();
        let view = gateway.view();
        // De-duplicated as the section is: the restating sentence is out.
        let full = &view.full["billing"];
        assert_eq!(
            full,
            "Call billing__list_periods before billing__get_invoice."
        );
        assert!(view.instructions.contains(full.as_str()));
    }
}
