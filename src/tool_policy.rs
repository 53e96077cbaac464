//! The operator's rules for one server's tools: which the model is sent
//! (`[servers.<alias>.tools]` `allow` / `deny` globs), what it is told about
//! them (`[servers.<alias>.tool.<name>]` overrides of description, title and
//! annotations), and which are never deferred (`always_load`).
//!
//! Filtering comes first and is what pins see: a tool the operator hides
//! is not the server's drift. Overrides come after the pin check: the
//! model, the tool list and de-duplication see the overridden text, the
//! lock keeps what the server sent.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::{ServerSnapshot, ToolAnnotations};
use crate::sanitize;
use crate::support::lookalike::lookalike;
use crate::visibility::glob;

/// `[servers.<alias>.tools]`: the tools of a server the model is sent, by
/// name pattern (`*` any run of characters, `?` one character).
///
/// A tool is sent when `allow` is empty or one of its patterns matches the
/// name as the server sent it, and no `deny` pattern matches (deny wins).
/// `deny` matches the name by what a reader sees, too: both the pattern and
/// the name are compared by their forms (compatibility forms and case
/// folded, invisible characters dropped, look-alike letters read as Latin,
/// every run of separators one `_`), so `deny = ["delete_file"]` also hides
/// `delete.file`, `Delete-File`, `delete\u{200b}file` and `dеlete_file`
/// with a Cyrillic `е`: whatever name a host shows for them, the model is
/// never sent one, and the gateway never calls one.
///
/// ```
/// use mcp_preamble::settings::ToolFilter;
/// let f = ToolFilter::new().allow("get_*").deny("get_secret*");
/// assert!(f.sends("get_invoice"));
/// assert!(!f.sends("get_secret_key"));
/// assert!(!f.sends("void_invoice"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ToolFilter {
    /// Patterns of the tools sent (empty: every tool).
    #[serde(default)]
    pub allow: Vec<String>,
    /// Patterns of the tools never sent.
    #[serde(default)]
    pub deny: Vec<String>,
}

impl ToolFilter {
    /// A filter that sends every tool.
    pub fn new() -> ToolFilter {
        ToolFilter::default()
    }

    /// Sends only tools matching this pattern (or another `allow` one).
    pub fn allow(mut self, pattern: impl Into<String>) -> ToolFilter {
        self.allow.push(pattern.into());
        self
    }

    /// Never sends tools matching this pattern.
    pub fn deny(mut self, pattern: impl Into<String>) -> ToolFilter {
        self.deny.push(pattern.into());
        self
    }

    /// Whether the tool named `name` is sent.
    pub fn sends(&self, name: &str) -> bool {
        if !(self.allow.is_empty() || self.allow.iter().any(|p| glob(p, name))) {
            return false;
        }
        if self.deny.is_empty() {
            return true;
        }
        // An invisible character is dropped by sanitizing and a separator
        // in hosts' name rules: both readings are checked.
        let forms = [name_form(name, false), name_form(name, true)];
        !self.deny.iter().any(|p| {
            let p_form = name_form(p, false);
            glob(p, name) || forms.iter().any(|f| glob(&p_form, f))
        })
    }

    /// Whether the filter sends every tool.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.deny.is_empty()
    }

    /// `server` without the tools the filter hides.
    pub fn apply(&self, server: &ServerSnapshot) -> ServerSnapshot {
        let mut kept = server.clone();
        kept.tools.retain(|t| self.sends(&t.name));
        kept
    }
}

/// How a tool name reads, for the `deny` rules: NFKC, invisible characters
/// dropped (or, with `hidden_gap`, read as a separator), look-alike letters
/// as the Latin one, combining marks dropped, lower case, and every run of
/// other characters but `*` and `?` (the patterns' wildcards) one `_`, none
/// at either end.
fn name_form(name: &str, hidden_gap: bool) -> String {
    use unicode_normalization::UnicodeNormalization as _;
    use unicode_normalization::char::is_combining_mark;
    let mut out = String::with_capacity(name.len());
    let mut gap = false;
    let letters = name
        .nfkc()
        .filter(|c| hidden_gap || sanitize::hidden(*c).is_none())
        .map(|c| lookalike(c).map_or(c, |(l, _)| l))
        .nfd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase);
    for c in letters {
        let hidden = sanitize::hidden(c).is_some();
        if !hidden && (c.is_alphanumeric() || matches!(c, '*' | '?')) {
            if gap && !out.is_empty() {
                out.push('_');
            }
            gap = false;
            out.push(c);
        } else {
            gap = true;
        }
    }
    out
}

/// `[servers.<alias>.tool.<name>]`: what the operator says about one tool
/// instead of what the server says, and whether it is always loaded.
///
/// Overridden text is sanitized and escaped like server text. The model
/// sees it (the host must send the same override: mcp-preamble renders the
/// section, it does not send tools), and de-duplication compares
/// instructions with it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ToolOverride {
    /// The description the model sees.
    pub description: Option<String>,
    /// The title the model sees.
    pub title: Option<String>,
    /// The annotations the model sees (MCP's names: `readOnlyHint`, …).
    pub annotations: Option<ToolAnnotations>,
    /// Never deferred behind tool search (see the crate docs, "Deferred tools").
    pub always_load: Option<bool>,
}

impl ToolOverride {
    /// No override.
    pub fn new() -> ToolOverride {
        ToolOverride::default()
    }

    /// The description the model sees.
    pub fn description(mut self, text: impl Into<String>) -> ToolOverride {
        self.description = Some(text.into());
        self
    }

    /// The title the model sees.
    pub fn title(mut self, text: impl Into<String>) -> ToolOverride {
        self.title = Some(text.into());
        self
    }

    /// The annotations the model sees.
    pub fn annotations(mut self, annotations: ToolAnnotations) -> ToolOverride {
        self.annotations = Some(annotations);
        self
    }

    /// Whether the tool is never deferred.
    pub fn always_load(mut self, yes: bool) -> ToolOverride {
        self.always_load = Some(yes);
        self
    }
}

/// Which of a server's tool rules a pattern or name comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolRuleKind {
    /// `[servers.<alias>.tools] allow`.
    Allow,
    /// `[servers.<alias>.tools] deny`.
    Deny,
    /// `[servers.<alias>.tool.<name>]`, an override of one tool.
    Override,
}

impl ToolRuleKind {
    /// Every [`ToolRuleKind::code`], in declaration order: a public format
    /// (the `rule` of an `unmatched_tool_rule` diagnostic).
    pub const CODES: &'static [&'static str] = &["allow", "deny", "override"];

    /// `allow`, `deny` or `override`.
    pub fn code(self) -> &'static str {
        match self {
            ToolRuleKind::Allow => "allow",
            ToolRuleKind::Deny => "deny",
            ToolRuleKind::Override => "override",
        }
    }
}

/// A server's tool rules, as the assembler holds them per alias.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct ToolRules {
    pub filter: ToolFilter,
    pub overrides: BTreeMap<String, ToolOverride>,
    pub always_load: Option<bool>,
}

impl ToolRules {
    /// `s` without the tools the filter hides, and their names (in the
    /// server's order); `None` when it hides none.
    pub fn filter(&self, s: &ServerSnapshot) -> Option<(ServerSnapshot, Vec<String>)> {
        if self.filter.is_empty() || s.tools.iter().all(|t| self.filter.sends(&t.name)) {
            return None;
        }
        let mut kept = s.clone();
        let (sent, hidden): (Vec<_>, Vec<_>) = s
            .tools
            .iter()
            .cloned()
            .partition(|t| self.filter.sends(&t.name));
        kept.tools = sent;
        Some((kept, hidden.into_iter().map(|t| t.name).collect()))
    }

    /// `s` with the overrides applied.
    pub fn overridden(&self, mut s: ServerSnapshot) -> ServerSnapshot {
        for t in &mut s.tools {
            let Some(o) = self.overrides.get(&t.name) else {
                continue;
            };
            if let Some(d) = &o.description {
                t.description = Some(d.clone());
            }
            if let Some(x) = &o.title {
                t.title = Some(x.clone());
            }
            if let Some(a) = &o.annotations {
                t.annotations = Some(a.clone());
            }
        }
        s
    }

    /// The rules that match none of `names` (the tools the server lists),
    /// in the order allow, deny, overrides: each a stale or misspelt rule
    /// that filters or overrides nothing.
    pub fn unmatched<'a>(&'a self, names: &[&str]) -> Vec<(ToolRuleKind, &'a str)> {
        let none = |p: &str| !names.iter().any(|n| glob(p, n));
        let f = &self.filter;
        let allow = f.allow.iter().map(|p| (ToolRuleKind::Allow, p));
        let deny = f.deny.iter().map(|p| (ToolRuleKind::Deny, p));
        let own = self.overrides.keys().map(|p| (ToolRuleKind::Override, p));
        allow
            .chain(deny)
            .filter(|(_, p)| none(p))
            .chain(own.filter(|(_, n)| !names.contains(&n.as_str())))
            .map(|(k, p)| (k, p.as_str()))
            .collect()
    }

    /// Whether the tool named `name` is never deferred: its own
    /// `always_load`, else the server's.
    pub fn always_loads(&self, name: &str) -> bool {
        self.overrides
            .get(name)
            .and_then(|o| o.always_load)
            .or(self.always_load)
            .unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Tool;

    #[test]
    fn deny_wins_and_allow_narrows() {
        let f = ToolFilter::new().deny("void_*");
        assert!(f.sends("get_invoice"));
        assert!(!f.sends("void_invoice"));
        let f = f.allow("*_invoice");
        assert!(!f.sends("list_periods"));
        assert!(ToolFilter::new().sends("anything"));
    }

    #[test]
    fn name_forms_fold_what_a_reader_cannot_tell_apart() {
        for name in [
            "delete_file",
            "delete.file",
            "Delete-File",
            "DELETE FILE",
            "d\u{435}lete_file",
            "delete_f\u{456}le",
            "\u{ff44}elete_file",
            "delete__file_",
            "dele\u{301}te/file",
        ] {
            assert_eq!(name_form(name, false), "delete_file", "{name:?}");
        }
        assert_eq!(name_form("delete\u{200b}file", true), "delete_file");
        assert_eq!(name_form("delete\u{200b}file", false), "deletefile");
        assert_eq!(name_form("delete_*", false), "delete_*");
        assert_ne!(name_form("deletefile", false), "delete_file");
    }

    #[test]
    fn rules_filter_override_and_load() {
        let s = ServerSnapshot::new("x")
            .with_tool(Tool::new("a", "A."))
            .with_tool(Tool::new("b", "B."));
        let mut rules = ToolRules::default();
        assert!(rules.filter(&s).is_none());
        rules.filter = ToolFilter::new().deny("b");
        let (kept, hidden) = rules.filter(&s).unwrap();
        assert_eq!(kept.tools.len(), 1);
        assert_eq!(hidden, ["b"]);
        rules.overrides.insert(
            "a".into(),
            ToolOverride::new().description("Own.").always_load(true),
        );
        let o = rules.overridden(kept);
        assert_eq!(o.tools[0].description.as_deref(), Some("Own."));
        assert!(rules.always_loads("a"));
        assert!(!rules.always_loads("b"));
        rules.always_load = Some(true);
        assert!(rules.always_loads("b"));
    }
}
