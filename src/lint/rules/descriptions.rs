//! Rules on tool descriptions, each finding naming its tool: hidden
//! characters (MCP011), text that acts on the host (MCP012: the error
//! patterns of MCP006, authority and injection, and tool-poisoning tags
//! such as `<IMPORTANT>`; MCP006's steering warnings are left out, since a
//! description that prefers its tool over others is doing its job), secrets (MCP013)
//! and descriptions over the tool token threshold (MCP014).

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use super::hidden::count_hidden;
use super::host::{Finder, HostPattern, worst_match};
use crate::lint::pass::Pass;
use crate::lint::{LintCode, Severity};
use crate::redact::scan::find_secrets;
use crate::sanitize;
use crate::segment;

impl Pass<'_> {
    /// Every rule on every tool's description.
    pub(super) fn tool_descriptions(&mut self) {
        let server = self.server;
        for tool in &server.tools {
            let Some(raw) = tool.description.as_deref() else {
                continue;
            };
            let name = tool.name.as_str();
            if let Some((n, found, severity)) = count_hidden(raw) {
                self.push_tool(
                    LintCode::ToolHiddenCharacters,
                    severity,
                    format!(
                        "description of tool `{name}` holds {n} hidden {} ({found}) that nobody reading it sees",
                        if n == 1 { "character" } else { "characters" }
                    ),
                    name,
                    None,
                    LintCode::ToolHiddenCharacters.fix().to_string(),
                );
            }
            let text = sanitize::text(raw);
            // One finding per kind of phrase per tool: `<IMPORTANT>…</IMPORTANT>` is one.
            let mut said = BTreeSet::new();
            for unit in segment::units(&text) {
                let unit_text = unit.text(&text);
                if let Some((p, phrase)) = worst_match(unit_text, &TOOL_PATTERNS, Severity::Error)
                    && said.insert(p.what)
                {
                    self.push_tool(
                        LintCode::ToolActsOnHost,
                        LintCode::ToolActsOnHost.default_severity(),
                        format!(
                            "description of tool `{name}` {}: \"{phrase}\"",
                            verb(p.what)
                        ),
                        name,
                        Some(unit_text),
                        LintCode::ToolActsOnHost.fix().to_string(),
                    );
                }
            }
            let mut seen = BTreeSet::new();
            for secret in find_secrets(&text) {
                if seen.insert(secret.redacted.clone()) {
                    self.push_tool(
                        LintCode::ToolSecret,
                        LintCode::ToolSecret.default_severity(),
                        format!(
                            "description of tool `{name}` contains what looks like {} ({})",
                            secret.kind, secret.redacted
                        ),
                        name,
                        None,
                        LintCode::ToolSecret.fix().to_string(),
                    );
                }
            }
            let tokens = self.linter.counter.count(&text);
            if tokens > self.linter.max_tool_tokens {
                self.push_tool(
                    LintCode::ToolDescriptionTooLong,
                    LintCode::ToolDescriptionTooLong.default_severity(),
                    format!(
                        "description of tool `{name}` is {tokens} tokens, over the tool threshold of {}",
                        self.linter.max_tool_tokens
                    ),
                    name,
                    None,
                    LintCode::ToolDescriptionTooLong.fix().to_string(),
                );
            }
        }
    }
}

/// "tell the model…" as said of a description: "tells the model…".
fn verb(what: &str) -> String {
    let (first, rest) = what.split_once(' ').unwrap_or((what, ""));
    let third = match first {
        "give" | "tell" | "claim" | "steer" | "refer" | "reach" | "direct" | "wrap" => {
            format!("{first}s")
        }
        other => other.to_string(),
    };
    if rest.is_empty() {
        third
    } else {
        format!("{third} {rest}")
    }
}

/// Tool-poisoning shapes beyond MCP006's: tags that claim importance or
/// secrecy, which a model reads as markup and a user never sees rendered.
/// (Not `<secret>` or `<system>`-like placeholders: `--client-secret
/// <secret>` is a command line; `<system>` is MCP006's already.)
static TOOL_PATTERNS: LazyLock<Vec<HostPattern>> = LazyLock::new(|| {
    vec![HostPattern {
        severity: Severity::Error,
        what: "wrap text in a tag that claims authority",
        finder: Finder::Regex(
            Regex::new(r"(?i)<\s*/?\s*(?:important|instructions?|hidden|override)\s*>")
                .expect("static regex"),
        ),
        reject: None,
        lines: false,
    }]
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs_agree() {
        assert_eq!(
            verb("tell the model to ignore other instructions"),
            "tells the model to ignore other instructions"
        );
        assert_eq!(
            verb("wrap text in a tag that claims authority"),
            "wraps text in a tag that claims authority"
        );
    }
}
