//! What a report says, typed: per server ([`ServerDiagnostic`], the
//! applied [`AppliedPolicy`], the [`Omission`]) and about the
//! configuration ([`ConfigDiagnostic`]).
//!
//! Each type's `Display` is the line a person reads; programs match on the
//! variants instead. In the JSON report a diagnostic is an object: its
//! stable `code` ([`ServerDiagnostic::CODES`], [`ConfigDiagnostic::CODES`]),
//! its fields, and `message`, the line, derived from the value:
//!
//! ```json
//! {"code": "unknown_alias", "setting": "budget", "alias": "biling", "closest": "billing",
//!  "message": "budget for \"biling\": no server has this alias (did you mean \"billing\"?)"}
//! ```

use std::fmt;
use std::ops::Deref;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use crate::limits::LimitHit;
use crate::pin::PinState;
use crate::tool_policy::ToolRuleKind;

mod config;
pub use config::{AliasSetting, ConfigDiagnostic};

/// Serializes a value as its `Display` line.
macro_rules! serialize_as_line {
    ($($ty:ty),*) => {$(
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self)
            }
        }
    )*};
}

serialize_as_line!(AppliedPolicy, Omission);

/// Why a server has no block in the section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Omission {
    /// The operator's policy excluded it.
    Excluded,
    /// It has no instructions and no tools.
    Empty,
    /// It has only tools, and [`Assembler::list_tool_only_servers`](crate::Assembler::list_tool_only_servers) is off.
    ToolOnly,
    /// Not even its heading fits its budget (in tokens).
    OverBudget {
        /// The budget the heading did not fit.
        budget: usize,
    },
    /// The section was over its total budget and this block could not shrink.
    OverTotal,
    /// Not even its heading renders within the template's fuel.
    RenderFuel,
}

impl Omission {
    /// Every [`Omission::code`], in declaration order: a public format (the
    /// `reason` of an `omitted` diagnostic in the JSON report).
    pub const CODES: &'static [&'static str] = &[
        "excluded",
        "empty",
        "tool_only",
        "over_budget",
        "over_total",
        "render_fuel",
    ];

    /// The omission's stable name, e.g. `over_budget`.
    pub fn code(&self) -> &'static str {
        match self {
            Omission::Excluded => "excluded",
            Omission::Empty => "empty",
            Omission::ToolOnly => "tool_only",
            Omission::OverBudget { .. } => "over_budget",
            Omission::OverTotal => "over_total",
            Omission::RenderFuel => "render_fuel",
        }
    }
}

/// The diagnostic line that reports the omission.
impl fmt::Display for Omission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Omission::Excluded => f.write_str("omitted: excluded by policy"),
            Omission::Empty => f.write_str("omitted: no instructions and no tools"),
            Omission::ToolOnly => {
                f.write_str("omitted: no instructions, and servers with only tools are not listed")
            }
            Omission::OverBudget { budget } => write!(
                f,
                "omitted: its heading alone is over the budget of {budget} tokens"
            ),
            Omission::OverTotal => f.write_str("omitted: the section is over its total budget"),
            Omission::RenderFuel => {
                f.write_str("omitted: not even its heading renders within the template's fuel")
            }
        }
    }
}

/// One thing a server's report says about it: an entry of
/// [`ServerReport::notes`](crate::ServerReport::notes). Its `Display` is the
/// line of [`ServerReport::diagnostics`](crate::ServerReport::diagnostics);
/// in the JSON report it is an object with its [`code`](ServerDiagnostic::code),
/// its fields and that line as `message` (see [`ServerDiagnostic::CODES`]).
///
/// ```
/// use mcp_preamble::{Assembler, ServerSnapshot};
/// use mcp_preamble::report::ServerDiagnostic;
/// let blank = ServerSnapshot::new("x").with_instructions("   ");
/// let assembly = Assembler::new().assemble(&[blank]).unwrap();
/// let report = &assembly.servers()[0];
/// assert!(matches!(report.notes[0], ServerDiagnostic::BlankInstructions { chars: 3 }));
/// assert_eq!(report.diagnostics()[0], report.notes[0].to_string());
/// let json: serde_json::Value = serde_json::from_str(&assembly.to_json()).unwrap();
/// assert_eq!(json["servers"][0]["diagnostics"][0]["code"], "blank_instructions");
/// assert_eq!(json["servers"][0]["diagnostics"][0]["chars"], 3);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerDiagnostic {
    /// Another server has the name; this one is shown under another.
    Renamed {
        /// The name both servers have.
        original: String,
        /// The name this server is shown as, e.g. `billing (2)`.
        shown: String,
    },
    /// The instructions are whitespace or invisible text only; not rendered.
    BlankInstructions {
        /// Their length in characters.
        chars: usize,
    },
    /// `tools/list` failed; the server is listed without tools.
    ToolsListFailed {
        /// The JSON-RPC error code.
        code: i64,
        /// The server's error message, sanitized to one line.
        message: String,
    },
    /// Tools whose name is empty once sanitized; they are not listed.
    UnnamedTools {
        /// How many.
        count: usize,
    },
    /// The server's data reached a [`Limit`](crate::report::Limit) (also in
    /// [`ServerReport::limits`](crate::ServerReport::limits)).
    LimitHit(LimitHit),
    /// The server is new to the [`Lock`](crate::pin::Lock), or changed since it
    /// was pinned (the whole comparison is [`ServerReport::pin`](crate::ServerReport::pin)).
    Pin {
        /// [`PinState::New`] or [`PinState::Changed`].
        state: PinState,
        /// What changed, as [`Pin::summary`](crate::pin::Pin::summary) says it.
        summary: String,
        /// What was rendered.
        rendering: PinRendering,
    },
    /// The server has no block (also [`ServerReport::omitted`](crate::ServerReport::omitted)).
    Omitted(Omission),
    /// Tools listed under the name of an earlier tool of the same server:
    /// only the first of each name is listed (and served by a gateway), as
    /// model APIs refuse two tools under one name.
    DuplicateTools {
        /// How many later tools were left out.
        count: usize,
        /// Each repeated name once, in order, sanitized to one line.
        names: Vec<String>,
    },
    /// Under a host's tool names ([`ToolNames::host`](crate::ToolNames::host)),
    /// a tool's name is past the host's cap and the host sends it whole
    /// ([`Fit::OverCap`](crate::tool_names::Fit::OverCap)): the model API
    /// rejects every request that carries it (Claude Code: 64 characters).
    ToolNameOverCap {
        /// The tool's own name.
        tool: String,
        /// The name the host sends.
        name: String,
        /// Its length in characters.
        chars: usize,
        /// The cap.
        cap: usize,
    },
    /// A tool rule of the server's policy matches none of the tools it
    /// lists: it filters or overrides nothing (a denied name is still left
    /// out of the instructions).
    UnmatchedToolRule {
        /// Which rule: `allow`, `deny` or an override.
        rule: ToolRuleKind,
        /// The pattern (or, for an override, the tool name) as configured.
        pattern: String,
        /// The listed tool closest to it, when one is close.
        closest: Option<String>,
    },
    /// Skills the server lists (`skills/list`) that are not shown: entries
    /// that do not read, a URI an earlier skill has (the first is shown),
    /// a name empty once sanitized; or `skills/list` failed.
    SkillsSkipped {
        /// How many skills were left out.
        count: usize,
        /// Why, one line each, sanitized.
        reasons: Vec<String>,
    },
}

impl ServerDiagnostic {
    /// Every [`ServerDiagnostic::code`], in declaration order. A public
    /// format: a code is never renamed or reused. The JSON object of each:
    ///
    /// | `code` | fields besides `code` and `message` |
    /// |---|---|
    /// | `renamed` | `original`, `shown` |
    /// | `blank_instructions` | `chars` |
    /// | `tools_list_failed` | `error`: `{"code", "message"}` (the JSON-RPC error; `message` sanitized to one line) |
    /// | `unnamed_tools` | `count` |
    /// | `limit_hit` | `limit` ([`Limit`](crate::report::Limit)'s name), `allowed`, `sent`, `count` |
    /// | `pin` | `state` (`new` or `changed`), `summary`, `rendering` ([`PinRendering::CODES`]) |
    /// | `omitted` | `reason` ([`Omission::CODES`]), and `budget` for `over_budget` |
    /// | `duplicate_tools` | `count`, `names` |
    /// | `tool_name_over_cap` | `tool`, `name`, `chars`, `cap` (report format 4) |
    /// | `unmatched_tool_rule` | `rule` ([`ToolRuleKind::CODES`]), `pattern`, and `closest` when one is close (report format 4) |
    /// | `skills_skipped` | `count`, `reasons` (report format 5) |
    pub const CODES: &'static [&'static str] = &[
        "renamed",
        "blank_instructions",
        "tools_list_failed",
        "unnamed_tools",
        "limit_hit",
        "pin",
        "omitted",
        "duplicate_tools",
        "tool_name_over_cap",
        "unmatched_tool_rule",
        "skills_skipped",
    ];

    /// The diagnostic's stable snake_case name, e.g. `blank_instructions`
    /// (the JSON object's `code`).
    pub fn code(&self) -> &'static str {
        match self {
            ServerDiagnostic::Renamed { .. } => "renamed",
            ServerDiagnostic::BlankInstructions { .. } => "blank_instructions",
            ServerDiagnostic::ToolsListFailed { .. } => "tools_list_failed",
            ServerDiagnostic::UnnamedTools { .. } => "unnamed_tools",
            ServerDiagnostic::LimitHit(_) => "limit_hit",
            ServerDiagnostic::Pin { .. } => "pin",
            ServerDiagnostic::Omitted(_) => "omitted",
            ServerDiagnostic::DuplicateTools { .. } => "duplicate_tools",
            ServerDiagnostic::ToolNameOverCap { .. } => "tool_name_over_cap",
            ServerDiagnostic::UnmatchedToolRule { .. } => "unmatched_tool_rule",
            ServerDiagnostic::SkillsSkipped { .. } => "skills_skipped",
        }
    }
}

/// `{"code", …its fields, "message"}`: the fields typed, the message its `Display`.
impl Serialize for ServerDiagnostic {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        /// The JSON-RPC error of a failed `tools/list`.
        #[derive(Serialize)]
        struct RpcFields<'a> {
            code: i64,
            message: &'a str,
        }
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("code", self.code())?;
        match self {
            ServerDiagnostic::Renamed { original, shown } => {
                map.serialize_entry("original", original)?;
                map.serialize_entry("shown", shown)?;
            }
            ServerDiagnostic::BlankInstructions { chars } => map.serialize_entry("chars", chars)?,
            ServerDiagnostic::ToolsListFailed { code, message } => {
                let error = RpcFields {
                    code: *code,
                    message,
                };
                map.serialize_entry("error", &error)?;
            }
            ServerDiagnostic::UnnamedTools { count } => map.serialize_entry("count", count)?,
            ServerDiagnostic::LimitHit(hit) => {
                map.serialize_entry("limit", &hit.limit)?;
                map.serialize_entry("allowed", &hit.allowed)?;
                map.serialize_entry("sent", &hit.sent)?;
                map.serialize_entry("count", &hit.count)?;
            }
            ServerDiagnostic::Pin {
                state,
                summary,
                rendering,
            } => {
                map.serialize_entry("state", state)?;
                map.serialize_entry("summary", summary)?;
                map.serialize_entry("rendering", rendering.code())?;
            }
            ServerDiagnostic::Omitted(why) => {
                map.serialize_entry("reason", why.code())?;
                if let Omission::OverBudget { budget } = why {
                    map.serialize_entry("budget", budget)?;
                }
            }
            ServerDiagnostic::DuplicateTools { count, names } => {
                map.serialize_entry("count", count)?;
                map.serialize_entry("names", names)?;
            }
            ServerDiagnostic::SkillsSkipped { count, reasons } => {
                map.serialize_entry("count", count)?;
                map.serialize_entry("reasons", reasons)?;
            }
            ServerDiagnostic::ToolNameOverCap {
                tool,
                name,
                chars,
                cap,
            } => {
                map.serialize_entry("tool", tool)?;
                map.serialize_entry("name", name)?;
                map.serialize_entry("chars", chars)?;
                map.serialize_entry("cap", cap)?;
            }
            ServerDiagnostic::UnmatchedToolRule {
                rule,
                pattern,
                closest,
            } => {
                map.serialize_entry("rule", rule.code())?;
                map.serialize_entry("pattern", pattern)?;
                if let Some(c) = closest {
                    map.serialize_entry("closest", c)?;
                }
            }
        }
        map.serialize_entry("message", &self.to_string())?;
        map.end()
    }
}

impl fmt::Display for ServerDiagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerDiagnostic::Renamed { original, shown } => write!(
                f,
                "another server has the name {original:?}; shown as {shown:?}"
            ),
            ServerDiagnostic::BlankInstructions { chars } => write!(
                f,
                "instructions are blank ({chars} characters of whitespace or invisible text); not rendered"
            ),
            ServerDiagnostic::ToolsListFailed { code, message } => {
                write!(f, "tools/list failed with {code}: {message}")
            }
            ServerDiagnostic::UnnamedTools { count } => {
                write!(f, "{count} tool(s) with an empty name not listed")
            }
            ServerDiagnostic::LimitHit(hit) => hit.fmt(f),
            ServerDiagnostic::Pin {
                summary, rendering, ..
            } => write!(f, "pin: {summary}; {rendering}"),
            ServerDiagnostic::Omitted(why) => why.fmt(f),
            ServerDiagnostic::DuplicateTools { count, names } => {
                let names: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
                write!(
                    f,
                    "{count} tool(s) with the name of an earlier tool not listed: {}",
                    names.join(", ")
                )
            }
            ServerDiagnostic::ToolNameOverCap {
                tool,
                name,
                chars,
                cap,
            } => write!(
                f,
                "tool {tool:?} is sent as {name:?}, {chars} characters, past the host's cap of {cap}: the model API rejects every request with it"
            ),
            ServerDiagnostic::UnmatchedToolRule {
                rule,
                pattern,
                closest,
            } => {
                let what = match rule {
                    ToolRuleKind::Allow => "tools allow",
                    ToolRuleKind::Deny => "tools deny",
                    ToolRuleKind::Override => "tool override",
                };
                write!(f, "{what} {pattern:?} matches no tool the server lists")?;
                if let Some(c) = closest {
                    write!(f, " (did you mean {c:?}?)")?;
                }
                if *rule == ToolRuleKind::Deny {
                    f.write_str("; the name is still left out of the instructions")?;
                }
                Ok(())
            }
            ServerDiagnostic::SkillsSkipped { count, reasons } => {
                write!(f, "{count} skill(s) not listed: {}", reasons.join("; "))
            }
        }
    }
}

/// What was rendered for a server that is new to the lock or changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PinRendering {
    /// As sent, and accepted (`on_change` set, not `hold` or `drop`).
    Accepted,
    /// As sent, pending the operator's review (no `on_change`).
    PendingReview,
    /// The pinned instructions (`on_change = "hold"`).
    Held,
    /// Nothing: `on_change = "hold"` and nothing pinned to hold.
    NothingToHold,
    /// No instructions (`on_change = "drop"`).
    Dropped,
}

impl PinRendering {
    /// Every [`PinRendering::code`], in declaration order: a public format
    /// (the `rendering` of a `pin` diagnostic in the JSON report).
    pub const CODES: &'static [&'static str] = &[
        "accepted",
        "pending_review",
        "held",
        "nothing_to_hold",
        "dropped",
    ];

    /// The rendering's stable name, e.g. `pending_review`.
    pub fn code(&self) -> &'static str {
        match self {
            PinRendering::Accepted => "accepted",
            PinRendering::PendingReview => "pending_review",
            PinRendering::Held => "held",
            PinRendering::NothingToHold => "nothing_to_hold",
            PinRendering::Dropped => "dropped",
        }
    }
}

impl fmt::Display for PinRendering {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PinRendering::Accepted => "rendered as sent (on_change = accept)",
            PinRendering::PendingReview => "rendered as sent; pending review",
            PinRendering::Held => "the pinned instructions are rendered (on_change = hold)",
            PinRendering::NothingToHold => {
                "no pinned instructions to hold; none rendered (on_change = hold)"
            }
            PinRendering::Dropped => "instructions not rendered (on_change = drop)",
        })
    }
}

/// What the operator's policy did to one server: [`ServerReport::policy`](crate::ServerReport::policy).
///
/// It displays, serializes and dereferences to the report's line
/// (`instructions replaced; weight 2`), so code written when the field
/// was an `Option<String>` (`policy.as_deref() == Some("excluded")`)
/// keeps working; new code asks [`AppliedPolicy::actions`].
#[derive(Debug, Clone, PartialEq)]
pub struct AppliedPolicy {
    actions: Vec<PolicyAction>,
    line: String,
}

impl AppliedPolicy {
    /// The actions, `None` when there are none.
    pub(crate) fn new(actions: Vec<PolicyAction>) -> Option<AppliedPolicy> {
        if actions.is_empty() {
            return None;
        }
        let line = actions
            .iter()
            .map(PolicyAction::to_string)
            .collect::<Vec<_>>()
            .join("; ");
        Some(AppliedPolicy { actions, line })
    }

    /// What applied, in the order of the report's line.
    pub fn actions(&self) -> &[PolicyAction] {
        &self.actions
    }

    /// Whether the policy excluded the server.
    pub fn excluded(&self) -> bool {
        self.actions.contains(&PolicyAction::Excluded)
    }

    /// Whether the operator's text replaced the instructions.
    pub fn instructions_replaced(&self) -> bool {
        self.actions.contains(&PolicyAction::InstructionsReplaced)
    }

    /// The fair-share weight, when not the default 1.
    pub fn weight(&self) -> Option<f64> {
        self.actions.iter().find_map(|a| match a {
            PolicyAction::Weight(w) => Some(*w),
            _ => None,
        })
    }

    /// The report's line, e.g. `excluded`.
    pub fn as_str(&self) -> &str {
        &self.line
    }
}

impl fmt::Display for AppliedPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.line)
    }
}

/// The report's line, for code written against the former `String`.
impl Deref for AppliedPolicy {
    type Target = str;

    fn deref(&self) -> &str {
        &self.line
    }
}

impl AsRef<str> for AppliedPolicy {
    fn as_ref(&self) -> &str {
        &self.line
    }
}

/// One thing the operator's [`Policy`](crate::Policy) did to a server.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum PolicyAction {
    /// Its instructions were replaced with the operator's text.
    InstructionsReplaced,
    /// It was excluded from the section.
    Excluded,
    /// Its fair share is weighted (a weight other than 1).
    Weight(f64),
}

impl fmt::Display for PolicyAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicyAction::InstructionsReplaced => f.write_str("instructions replaced"),
            PolicyAction::Excluded => f.write_str("excluded"),
            PolicyAction::Weight(w) => write!(f, "weight {w}"),
        }
    }
}

#[cfg(test)]
mod tests;
