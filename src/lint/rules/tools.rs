//! Rules that compare the instructions with the server's tools: restates a
//! tool (MCP002), unknown tool (MCP003), tool descriptions only (MCP007).

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use crate::dedup::{self, Priority};
use crate::lint::pass::Pass;
use crate::lint::{LintCode, Severity};
use crate::segment::{Unit, UnitKind};

use super::names::{ServerFacts, unknown_mentions};

impl Pass<'_> {
    /// `MCP002`; returns, per unit, the tool it restates.
    pub(super) fn restatements(&mut self, text: &str, units: &[Unit]) -> Vec<Option<String>> {
        let tools: Vec<_> = self
            .server
            .tools
            .iter()
            .filter_map(|t| {
                Some(
                    self.linter
                        .tool_texts
                        .get(&t.name, t.description.as_deref()?),
                )
            })
            .collect();
        let restated = dedup::restatements(text, units, &tools, self.linter.similarity);
        let mut out = Vec::with_capacity(units.len());
        for (unit, tool) in units.iter().zip(restated) {
            let unit_text = unit.text(text);
            let restated = tool.map(str::to_string);
            if let Some(tool) = &restated {
                self.push(
                    LintCode::RestatesTool,
                    format!("sentence restates the description of tool `{tool}`"),
                    Some((text, unit_text, unit)),
                    Some(tool.clone()),
                    format!(
                        "Delete the sentence, or keep only what it adds to the description of `{tool}` (an order, a limit, what an identifier means)."
                    ),
                );
            }
            out.push(restated);
        }
        out
    }

    pub(super) fn unknown_tools(&mut self, text: &str, units: &[Unit]) {
        let facts = ServerFacts::new(self.server);
        let mut reported = BTreeSet::new();
        for unit in units {
            if matches!(unit.kind, UnitKind::Code) {
                continue;
            }
            let unit_text = unit.text(text);
            self.hidden_tools(text, unit, &mut reported);
            for name in unknown_mentions(unit_text, &facts) {
                if !reported.insert(name.clone()) {
                    continue;
                }
                let closest = facts.closest(&name).map(|(t, _)| t);
                // "X requires client sampling capability": registered only
                // sometimes, and the sentence says so.
                let conditional = CONDITION.is_match(unit_text);
                let (message, fix) = match (&closest, conditional) {
                    (Some(c), false) => (
                        format!(
                            "instructions mention `{name}`, which is not one of the server's tools; did you mean `{c}`?"
                        ),
                        format!("Replace `{name}` with `{c}`, the tool's current name."),
                    ),
                    (_, true) => (
                        format!(
                            "instructions mention `{name}`, which is not one of the server's tools, in a sentence that makes it conditional"
                        ),
                        format!(
                            "Leave the sentence about `{name}` out when the tool is not registered: build the instructions from the tools the server registers."
                        ),
                    ),
                    (None, false) => (
                        format!(
                            "instructions mention `{name}`, which is not one of the server's tools, and no tool has a similar name"
                        ),
                        format!(
                            "Remove `{name}` from the instructions, or register it; if it is registered only under some conditions, say which."
                        ),
                    ),
                };
                let severity = if conditional {
                    Severity::Warning
                } else {
                    LintCode::UnknownTool.default_severity()
                };
                self.push_with(
                    LintCode::UnknownTool,
                    severity,
                    message,
                    Some((text, unit_text, unit)),
                    closest,
                    fix,
                );
            }
        }
    }

    pub(super) fn descriptions_only(
        &mut self,
        text: &str,
        units: &[Unit],
        restated: &[Option<String>],
    ) {
        let names: std::collections::HashSet<String> = self
            .server
            .tools
            .iter()
            .map(|t| dedup::normalize(&t.name))
            .filter(|n| !n.is_empty())
            .collect();
        // Framing (an intro naming the server, a line ending in ':') is
        // neither here nor there; anything else that is not a one-tool
        // sentence means the instructions say more than descriptions would.
        let (mut content, mut single, mut other) = (0, 0, 0);
        for (unit, restates) in units.iter().zip(restated) {
            if !matches!(unit.kind, UnitKind::Sentence | UnitKind::ListItem) {
                continue;
            }
            let unit_text = unit.text(text);
            let norm = dedup::normalize(unit_text);
            if norm.is_empty() {
                continue;
            }
            content += 1;
            let named: BTreeSet<&str> = norm.split(' ').filter(|w| names.contains(*w)).collect();
            let guidance = dedup::priority(unit, unit_text, &names) >= Priority::Constraint
                || named.len() >= 2;
            let framing = norm.contains("this server")
                || norm.contains("this mcp server")
                || unit_text.trim_end().ends_with(':');
            if guidance {
                return;
            } else if named.len() == 1 || restates.is_some() {
                single += 1;
            } else if !framing {
                other += 1;
            }
        }
        if single > 0 && other == 0 {
            self.push(
                LintCode::ToolDescriptionsOnly,
                format!(
                    "instructions only describe single tools ({single} of {content} {}) and say nothing about order, identifiers or scope",
                    if content == 1 { "sentence" } else { "sentences" }
                ),
                None,
                None,
                LintCode::ToolDescriptionsOnly.fix().to_string(),
            );
        }
    }
}

/// A sentence that says a tool exists only sometimes.
static CONDITION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:only\s+(?:if|when)|(?:if|when)\s+(?:the\s+)?client|capabilit(?:y|ies)|(?:if|when)\s+(?:enabled|available|supported|configured)|depending\s+on|registers?|registered|dynamically|will\s+(?:be\s+)?(?:available|added|registered|appear))\b")
        .expect("static regex")
});

impl Pass<'_> {
    /// `MCP003` for each tool the operator's filter hides that the unit
    /// names (by the rewriting rule: code, calls, identifiers); each name
    /// once, recorded in `reported`.
    fn hidden_tools(&mut self, text: &str, unit: &Unit, reported: &mut BTreeSet<String>) {
        if self.hidden.is_empty() {
            return;
        }
        let unit_text = unit.text(text);
        let hidden = &self.hidden;
        let refs = crate::rewrite::references(unit_text, |n| hidden.iter().any(|h| h == n));
        for r in refs {
            let name = unit_text[r.start..r.end].to_string();
            if !reported.insert(name.clone()) {
                continue;
            }
            self.push_with(
                LintCode::UnknownTool,
                LintCode::UnknownTool.default_severity(),
                format!(
                    "instructions mention `{name}`, which the operator's filter hides from the model"
                ),
                Some((text, unit_text, unit)),
                None,
                format!(
                    "Leave `{name}` out of what the model reads (the assembler removes sentences that name only hidden tools), or let the tool through the filter ([servers.<alias>.tools])."
                ),
            );
        }
    }
}
