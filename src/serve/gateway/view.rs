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
    /// Served names of tools whose `x-mcp-header` annotations break the
    /// 2026-07-28 rules: a Streamable HTTP client must drop such a tool,
    /// so the gateway does not list it over HTTP.
    #[cfg_attr(not(feature = "serve-http"), allow(dead_code))]
    pub header_invalid: BTreeSet<String>,
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

/// Why `schema`'s `x-mcp-header` annotations break the rules of the
/// 2026-07-28 revision (each a non-empty HTTP token, unique ignoring case,
/// on a string, integer or boolean property reached from the root through
/// `properties` alone), if they do.
fn invalid_annotations(schema: &Value) -> Option<String> {
    if schema.get("x-mcp-header").is_some() {
        return Some("an annotation on the schema root".into());
    }
    let mut seen = BTreeSet::new();
    annotations_below(schema, true, &mut seen, 0)
}

/// [`invalid_annotations`] of the subschemas of `node` (`on_chain`: it is
/// reached from the root through `properties` alone).
fn annotations_below(
    node: &Value,
    on_chain: bool,
    seen: &mut BTreeSet<String>,
    depth: usize,
) -> Option<String> {
    // Schemas are bounded by the limits already; this bounds the stack.
    if depth > 64 {
        return Some("a schema nested too deep to check".into());
    }
    let below = |child: &Value, on: bool, seen: &mut BTreeSet<String>| {
        annotations_below(child, on, seen, depth + 1)
    };
    match node {
        Value::Array(items) => items.iter().find_map(|i| below(i, false, seen)),
        Value::Object(keys) => keys.iter().find_map(|(key, value)| match key.as_str() {
            "properties" => match value {
                Value::Object(props) => props.values().find_map(|p| {
                    annotation(p, on_chain, seen).or_else(|| below(p, on_chain, seen))
                }),
                other => below(other, false, seen),
            },
            // Instance data, not schemas.
            "default" | "const" | "enum" | "examples" => None,
            "x-mcp-header" if !on_chain => Some("an annotation off a properties-only path".into()),
            "x-mcp-header" => None,
            _ => below(value, false, seen),
        }),
        _ => None,
    }
}

/// Why the annotation of property schema `prop` (if any) is invalid.
fn annotation(prop: &Value, on_chain: bool, seen: &mut BTreeSet<String>) -> Option<String> {
    let header = prop.get("x-mcp-header")?;
    if !on_chain {
        return Some("an annotation off a properties-only path".into());
    }
    let Some(name) = header.as_str().filter(|n| !n.is_empty()) else {
        return Some("an annotation that is not a non-empty string".into());
    };
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if !name.bytes().all(token) {
        return Some(format!("{name:?} is not an HTTP token"));
    }
    if !seen.insert(name.to_ascii_lowercase()) {
        return Some(format!("{name:?} is used twice"));
    }
    match prop.get("type").and_then(Value::as_str) {
        Some("string" | "integer" | "boolean") => None,
        _ => Some(format!("{name:?} is not on a string, integer or boolean")),
    }
}

/// The tools whose arguments go in headers, as a view gathers them.
#[derive(Default)]
struct Headers {
    routed: BTreeSet<String>,
    declared: BTreeMap<String, Vec<ParamHeader>>,
    invalid: BTreeSet<String>,
}

impl Headers {
    /// Notes `tool` of `alias`, served as `name`.
    fn note(&mut self, alias: &str, tool: &ExposedTool, name: &str) {
        let schema = tool.input_schema.as_value();
        let Some(declared) = declared_headers(schema) else {
            return;
        };
        self.routed.insert(name.to_string());
        match invalid_annotations(schema) {
            None => drop(self.declared.insert(name.to_string(), declared)),
            Some(why) => {
                tracing::warn!(upstream = %alias, tool = %tool.own, "tool not listed over HTTP: its x-mcp-header annotations are invalid ({why})");
                self.invalid.insert(name.to_string());
            }
        }
    }
}

impl View {
    pub(crate) fn of(hub: &Hub, host: ServeAs) -> View {
        let section = hub.section();
        let assembly = section.assembly();
        let (mut table, mut tools) = (NameTable::default(), Vec::new());
        let (mut full, mut hidden) = (BTreeMap::new(), Vec::new());
        let mut headers = Headers::default();
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
                    headers.note(alias, tool, name.as_str());
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
            param_headers: headers.routed,
            param_declared: headers.declared,
            header_invalid: headers.invalid,
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
    fn an_x_mcp_header_annotation_is_a_unique_token_on_a_primitive_reached_by_properties() {
        let prop = |header: Value, kind: &str| json!({"type": kind, "x-mcp-header": header});
        let object = |props: Value| json!({"type": "object", "properties": props});
        let valid = [
            object(json!({"region": prop(json!("Region"), "string")})),
            object(json!({"a": prop(json!("A"), "integer"), "b": prop(json!("B"), "boolean")})),
            object(json!({"opts": object(json!({"tenant": prop(json!("Tenant-Id"), "string")}))})),
            // Instance data that holds the key is not an annotation.
            object(json!({"x": {"type": "string", "default": {"x-mcp-header": 1}}})),
        ];
        for schema in valid {
            assert_eq!(invalid_annotations(&schema), None, "{schema}");
        }
        let invalid = [
            json!({"type": "object", "x-mcp-header": "Root"}),
            object(json!({"r": prop(json!(""), "string")})),
            object(json!({"r": prop(json!("Re gion"), "string")})),
            object(json!({"r": prop(json!(7), "string")})),
            object(json!({"r": prop(json!("N"), "number")})),
            object(json!({"r": prop(json!("O"), "object")})),
            object(json!({"a": prop(json!("Dup"), "string"), "b": prop(json!("dup"), "string")})),
            object(json!({"list": {"type": "array", "items": prop(json!("I"), "string")}})),
            json!({"type": "object", "anyOf": [object(json!({"r": prop(json!("R"), "string")}))]}),
            json!({"$defs": {"d": object(json!({"r": prop(json!("R"), "string")}))}}),
        ];
        for schema in invalid {
            assert!(invalid_annotations(&schema).is_some(), "{schema}");
        }
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
