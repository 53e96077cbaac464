//! What `wrap` changes in what its one upstream sends: the instructions
//! (the assembly's section for that server: sanitized, de-duplicated,
//! pinned, fitted) and each `tools/list` page (the policy's filter and
//! overrides, descriptions and schemas sanitized). Everything comes from
//! the same assembly the gateway serves ([`crate::report::Exposure`]);
//! nothing is decided here. Fields the library does not read (`_meta`,
//! `outputSchema`, `icons`, `execution`, …) stay as sent.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::assemble::Assembler;
use crate::error::Result;
use crate::hosts::Host;
use crate::model::ServerSnapshot;
use crate::report::ServerReport;
use crate::report::{ExposedTool, Exposure, RemovalReason};
use crate::serve::wrap::describe::Describer;
use crate::serve::wrap::reader::Reader;
use crate::server_key::ServerKey;

/// The assembler (fitted to the host) and the alias the policy knows the
/// upstream by.
#[derive(Debug, Clone)]
pub(crate) struct Shaper {
    pub assembler: Assembler,
    pub alias: Option<String>,
    /// Fits each description to the host's per-description cap, when the
    /// host has one.
    pub describer: Option<Describer>,
    /// The host reads instructions nowhere: the reader tool's description
    /// carries them.
    pub delivers: bool,
    /// The host's row (`wrap --as`), if any.
    pub host: Option<Host>,
}

impl Shaper {
    /// The key the policy knows `base`'s server by: the alias, else its
    /// `serverInfo.name`.
    pub(crate) fn key_of(&self, base: &ServerSnapshot) -> String {
        match &self.alias {
            Some(alias) => alias.clone(),
            None => ServerKey::of(base).into_string(),
        }
    }

    /// Whether the policy's filter hides `tool` of the server `key`.
    pub(crate) fn hides(&self, key: &str, tool: &str) -> bool {
        (self.assembler.tool_filter_of(Some(key))).is_some_and(|f| !f.sends(tool))
    }

    /// `snapshot` under the alias, assembled: the text, its one exposure,
    /// and whether its instructions were shortened.
    fn assemble(&self, snapshot: ServerSnapshot) -> Result<(String, Exposure, bool)> {
        let snapshot = match &self.alias {
            Some(alias) => snapshot.with_alias(alias.clone()),
            None => snapshot,
        };
        let assembly = self.assembler.assemble(&[snapshot])?;
        let exposure = (assembly.exposures().first())
            .map(|e| e.as_ref().clone())
            .unwrap_or_default();
        // As the gateway judges it: lost to the budget, cut or left out.
        let cut = assembly.servers().iter().any(|s| {
            s.truncated
                || !s.included
                || s.omitted.is_some()
                || (s.removed.iter()).any(|r| r.reason == RemovalReason::Budget && r.unit.is_some())
        });
        Ok((assembly.text().to_string(), exposure, cut))
    }

    /// The instructions to serve for `snapshot` (its handshake and every
    /// tool listed), `None` when nothing is left of them; and the reader
    /// tool, when the host does not read them whole there.
    pub(crate) fn instructions(
        &self,
        snapshot: ServerSnapshot,
    ) -> Result<(Option<String>, Option<Reader>)> {
        let (text, exposure, cut) = self.assemble(snapshot)?;
        let text = (!text.trim().is_empty()).then_some(text);
        let reader = match (&exposure.instructions, &text) {
            (Some(full), Some(text)) if self.delivers => Some(Reader {
                full: full.clone(),
                described: Some(text.trim_end().to_string()),
            }),
            (Some(full), _) if cut => Some(Reader {
                full: full.clone(),
                described: None,
            }),
            _ => None,
        };
        Ok((text, reader))
    }

    /// The report of `snapshot`'s one block (what was removed, and why).
    pub(crate) fn report(&self, snapshot: ServerSnapshot) -> Result<Vec<ServerReport>> {
        let snapshot = match &self.alias {
            Some(alias) => snapshot.with_alias(alias.clone()),
            None => snapshot,
        };
        Ok(self.assembler.assemble(&[snapshot])?.servers().to_vec())
    }

    /// `snapshot`'s tools as `tools/list` serves them: the policy's, each
    /// description fitted to the host's cap.
    pub(crate) fn tools(&self, snapshot: &ServerSnapshot) -> Result<Vec<(String, Option<String>)>> {
        let (_, exposure, _) = self.assemble(snapshot.clone())?;
        let fit = |t: &ExposedTool| match (t.description(), &self.describer) {
            (Some(d), Some(fit)) => fit.fit(&t.own, d),
            (d, _) => d.map(str::to_string),
        };
        Ok(exposure
            .tools
            .iter()
            .map(|t| (t.own.clone(), fit(t)))
            .collect())
    }

    /// Reshapes one `tools/list` result in place: tools the policy hides
    /// (or that the limits or sanitizing left out) leave it, the others
    /// get the assembly's description, title, annotations and schema.
    /// Returns whether anything changed.
    pub(crate) fn page(
        &self,
        base: &ServerSnapshot,
        result: &mut Map<String, Value>,
    ) -> Result<bool> {
        let mut snapshot = base.clone();
        snapshot.tools.clear();
        snapshot.push_tools_page(&Value::Object(result.clone()))?;
        let (_, exposure, _) = self.assemble(snapshot)?;
        let served: BTreeMap<&str, &ExposedTool> = exposure
            .tools
            .iter()
            .map(|t| (t.own.as_str(), t))
            .rev()
            .collect();
        let mut changed = false;
        if let Some(Value::Array(tools)) = result.get_mut("tools") {
            let before = tools.len();
            tools.retain_mut(|raw| {
                let name = raw.get("name").and_then(Value::as_str).unwrap_or_default();
                match (served.get(name), raw.as_object_mut()) {
                    (Some(tool), Some(raw)) => {
                        changed |= shape_tool(raw, tool, self.describer.as_ref());
                        true
                    }
                    _ => false,
                }
            });
            changed |= tools.len() != before;
        }
        Ok(changed)
    }
}

/// Sets `raw`'s description (fitted to the host's cap), title, annotations
/// and schema to the assembly's; returns whether any changed.
fn shape_tool(raw: &mut Map<String, Value>, tool: &ExposedTool, fit: Option<&Describer>) -> bool {
    let description = match (tool.description(), fit) {
        (Some(d), Some(fit)) => fit.fit(&tool.own, d),
        (d, _) => d.map(str::to_string),
    };
    let mut changed = set(raw, "description", description.map(Value::from));
    changed |= set(raw, "title", tool.title.clone().map(Value::from));
    if let Some(Value::Object(wanted)) = tool
        .annotations
        .as_ref()
        .and_then(|a| serde_json::to_value(a).ok())
    {
        // Keys the library does not know stay as sent.
        match raw.get_mut("annotations") {
            Some(Value::Object(have)) => {
                for (key, value) in wanted {
                    changed |= set(have, &key, Some(value));
                }
            }
            _ => changed |= set(raw, "annotations", Some(Value::Object(wanted))),
        }
    }
    let schema = match tool.served_schema() {
        Value::Object(o) if !o.is_empty() => Value::Object(o.clone()),
        // MCP wants an object schema (as the gateway serves it).
        _ => json!({"type": "object"}),
    };
    changed | set(raw, "inputSchema", Some(schema))
}

/// `raw[key]` made `want` (removed for `None`); whether it changed.
fn set(raw: &mut Map<String, Value>, key: &str, want: Option<Value>) -> bool {
    match want {
        Some(v) if raw.get(key) != Some(&v) => {
            raw.insert(key.to_string(), v);
            true
        }
        Some(_) => false,
        None => raw.remove(key).is_some(),
    }
}
