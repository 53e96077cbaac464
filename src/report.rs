//! What an assembly tells the host: the section and, per server, what was
//! kept, removed and why.
//!
//! The JSON of [`Assembly::to_json`] is a public format: field names, their
//! order and the spelling of every enum value are kept byte-identical across
//! releases unless CHANGELOG.md says otherwise. Match on the enums, never on
//! [`ServerReport::diagnostics`] prose.

use std::fmt;

use serde::Serialize;

use crate::limits::LimitHit;
use crate::model::{Era, InstructionsState};
use crate::pin::{Effect, Pin, PinState};
use crate::sanitize::HiddenChars;
use crate::support::string_enum;
use crate::visibility::DeferReason;

string_enum! {
    /// Why a piece of a server's block was removed.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
    #[serde(rename_all = "snake_case")]
    #[non_exhaustive]
    pub enum RemovalReason {
        /// It restates one of the server's own tool descriptions (see [`Removal::tool`]).
        RestatesTool => "restates_tool",
        /// It repeats an earlier unit of the same instructions.
        Repeated => "repeated",
        /// The whole instructions equal an earlier server's (see [`Removal::server`]).
        SameAsServer => "same_as_server",
        /// The block was over its token budget.
        Budget => "budget",
        /// The operator's policy excluded the server or replaced its text.
        Policy => "policy",
    }
    /// The name used in the JSON report: `restates_tool`, `repeated`,
    /// `same_as_server`, `budget` or `policy`.
    fn as_str;
}

/// One removal from a server's block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Removal {
    /// The text removed.
    pub text: String,
    /// Why it was removed.
    pub reason: RemovalReason,
    /// The tool whose description it restates, for [`RemovalReason::RestatesTool`];
    /// the deferred tool whose summary went, for a summary cut by the budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The server it duplicates, for [`RemovalReason::SameAsServer`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
}

impl Removal {
    /// A removal with no tool or server attached.
    pub(crate) fn new(reason: RemovalReason, text: impl Into<String>) -> Removal {
        Removal {
            text: text.into(),
            reason,
            tool: None,
            server: None,
        }
    }
}

/// A server's deferred tools: its tool index and what the index changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Deferral {
    /// Why the server has deferred tools.
    pub reason: DeferReason,
    /// The deferred tools by shown name, in the server's order (the index's order).
    pub tools: Vec<String>,
    /// Tools whose summary the budget cut from the index (each also a
    /// [`RemovalReason::Budget`] removal naming the tool).
    pub summaries_cut: Vec<String>,
    /// Tools the budget left out of the index; the block counts them instead.
    pub names_cut: Vec<String>,
    /// Sentences de-duplication kept because the tool description they
    /// restate is deferred, so the model does not see it.
    pub restatements_kept: Vec<Restatement>,
}

/// An instruction unit that restates a tool's description.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Restatement {
    /// The unit's text.
    pub text: String,
    /// The tool whose description it restates.
    pub tool: String,
}

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

/// What happened to one server.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ServerReport {
    /// The name shown in the section.
    pub name: String,
    /// The host's alias, when given.
    pub alias: Option<String>,
    /// `serverInfo.name`, sanitized.
    pub server_name: String,
    /// `serverInfo.version`, sanitized.
    pub version: String,
    /// The handshake used (`"legacy"` or `"modern"` in the JSON).
    pub era: Era,
    /// The negotiated protocol version.
    pub protocol_version: String,
    /// Whether the server sent instructions (`"present"`, `"absent"` or `"blank"` in the JSON).
    pub instructions: InstructionsState,
    /// How many tools the server has.
    pub tools: usize,
    /// The operator policy that applied (`excluded`, `instructions replaced`, `weight 2`), if any.
    pub policy: Option<String>,
    /// How the server compares with the [`Lock`](crate::Lock) (its own text,
    /// also when the operator replaced it); `{"state": "unpinned"}` without one.
    pub pin: Pin,
    /// Whether the server has a block in the section.
    pub included: bool,
    /// The server's block, exactly as it stands in the section (empty when not included).
    pub text: String,
    /// Byte range of [`ServerReport::text`] in [`Assembly::text`].
    pub span: Option<(usize, usize)>,
    /// The token budget the block was fitted to (its own budget, or its
    /// share of the total when that is smaller); `None` when unlimited.
    pub budget: Option<usize>,
    /// Tokens of the server's block before de-duplication and trimming.
    pub tokens_before: usize,
    /// Tokens of [`ServerReport::text`].
    pub tokens: usize,
    /// What was removed from the block, and why.
    pub removed: Vec<Removal>,
    /// Hidden characters sanitizing removed from the server's text, by kind
    /// (`hidden_characters` in the JSON, only when there were any).
    #[serde(skip_serializing_if = "HiddenChars::is_empty")]
    pub hidden_characters: HiddenChars,
    /// Whether the block was cut with a marker.
    pub truncated: bool,
    /// Limits the server's data reached ([`Limits`](crate::Limits)); each is
    /// also a line of [`ServerReport::diagnostics`]. In the JSON only when
    /// there are any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<LimitHit>,
    /// Tokens of the server's tool definitions, when
    /// [`Assembler::defer_when`](crate::Assembler::defer_when) measured them
    /// (in the JSON only then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_tokens: Option<usize>,
    /// The server's tools behind tool search, when it has any (in the JSON
    /// only then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deferred: Option<Deferral>,
    /// Problems with the server's data, as lines for people (blank
    /// instructions, a failed `tools/list`, the omission…).
    pub diagnostics: Vec<String>,
    /// Why the server has no block, when it has none (also a line of
    /// [`ServerReport::diagnostics`]; not a field of its own in the JSON).
    #[serde(skip)]
    pub omitted: Option<Omission>,
    /// The server's position in the input of [`Assembler::assemble`](crate::Assembler::assemble)
    /// (not in the JSON, which stays the same whatever the input order).
    #[serde(skip)]
    pub index: usize,
}

impl ServerReport {
    /// Whether the budget changed the block: a removal for the budget, or a cut.
    pub fn trimmed(&self) -> bool {
        self.truncated
            || self
                .removed
                .iter()
                .any(|r| r.reason == RemovalReason::Budget)
    }

    /// Records limits the server reached, each with its diagnostic line.
    pub(crate) fn limit_hits(&mut self, hits: Vec<LimitHit>) {
        for hit in hits {
            self.diagnostics.push(hit.to_string());
            self.limits.push(hit);
        }
    }

    /// Records the server's pin, with a diagnostic line when it is new or
    /// changed saying what was rendered.
    pub(crate) fn pinned(&mut self, pin: Pin, effect: &Effect) {
        if matches!(pin.state, PinState::New | PinState::Changed) {
            let what = pin.summary();
            let rendered = match (effect, pin.on_change) {
                (Effect::AsIs, Some(_)) => "rendered as sent (on_change = accept)".to_string(),
                (Effect::AsIs, None) => "rendered as sent; pending review".to_string(),
                (Effect::Hold { text: Some(_), .. }, _) => {
                    "the pinned instructions are rendered (on_change = hold)".to_string()
                }
                (Effect::Hold { text: None, .. }, _) => {
                    "no pinned instructions to hold; none rendered (on_change = hold)".to_string()
                }
                (Effect::Drop, _) => "instructions not rendered (on_change = drop)".to_string(),
            };
            self.diagnostics.push(format!("pin: {what}; {rendered}"));
        }
        self.pin = pin;
    }

    /// Records why the server has no block, once.
    pub(crate) fn omit(&mut self, why: Omission) {
        let line = why.to_string();
        if !self.diagnostics.contains(&line) {
            self.diagnostics.push(line);
        }
        self.omitted = Some(why);
    }

    /// Takes back an [`Omission::OverBudget`] before the block is fitted again.
    pub(crate) fn unomit_over_budget(&mut self) {
        if let Some(why @ Omission::OverBudget { .. }) = self.omitted {
            let line = why.to_string();
            self.diagnostics.retain(|d| *d != line);
            self.omitted = None;
        }
    }
}

/// The assembled section and its report.
#[derive(Debug, Clone, Serialize)]
pub struct Assembly {
    encoding: String,
    template: String,
    text: String,
    total_tokens: usize,
    servers: Vec<ServerReport>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    diagnostics: Vec<String>,
}

impl Assembly {
    pub(crate) fn new(
        encoding: &str,
        template: &str,
        text: String,
        total_tokens: usize,
        servers: Vec<ServerReport>,
    ) -> Assembly {
        Assembly {
            encoding: encoding.to_string(),
            template: template.to_string(),
            text,
            total_tokens,
            servers,
            diagnostics: Vec::new(),
        }
    }

    pub(crate) fn with_diagnostics(mut self, diagnostics: Vec<String>) -> Assembly {
        self.diagnostics = diagnostics;
        self
    }

    /// Problems of the configuration rather than of one server: a budget
    /// or policy for an alias no server has (with the closest alias). In
    /// the JSON only when there are some.
    pub fn diagnostics(&self) -> &[String] {
        &self.diagnostics
    }

    /// The empty section of `assembler` (no servers).
    #[cfg(feature = "hub")]
    pub(crate) fn empty(assembler: &crate::Assembler) -> Assembly {
        assembler.empty_assembly()
    }

    /// The section, ready to go into a system prompt.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Tokens of [`Assembly::text`].
    pub fn total_tokens(&self) -> usize {
        self.total_tokens
    }

    /// The encoding the counts are in, e.g. `"o200k_base"`.
    pub fn encoding(&self) -> &str {
        &self.encoding
    }

    /// The template's name.
    pub fn template(&self) -> &str {
        &self.template
    }

    /// One report per input server, in section order.
    pub fn servers(&self) -> &[ServerReport] {
        &self.servers
    }

    /// The report as pretty JSON (a public format; see the module docs).
    pub fn to_json(&self) -> String {
        // Serializing plain strings and numbers cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}
