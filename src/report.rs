//! What an assembly tells the host: the section and, per server, what was
//! kept, removed and why.
//!
//! The JSON of [`Assembly::to_json`] is a public format: field names, their
//! order and the spelling of every enum value are kept byte-identical across
//! releases unless CHANGELOG.md says otherwise; [`REPORT_FORMAT_VERSION`]
//! is its `format`. Match on the enums ([`ServerReport::notes`],
//! [`Assembly::notes`]) or, in the JSON, on each diagnostic's `code`; never
//! on the prose ([`ServerReport::diagnostics`], a diagnostic's `message`).

use serde::Serialize;

use crate::model::{Era, InstructionsState};
use crate::pin::{Effect, Pin, PinState};
use crate::redact;
use crate::support::string_enum;
use crate::text::json_safe;
use crate::tokens::Counting;
use crate::tool_names::NameTable;

mod diagnostic;
mod exposure;

pub use crate::limits::{Limit, LimitHit};
pub use crate::rewrite::{Form, HiddenMention, Rewrite};
pub use crate::sanitize::HiddenChars;
pub use crate::tool_policy::ToolRuleKind;
pub use crate::visibility::DeferReason;
pub use diagnostic::{
    AliasSetting, AppliedPolicy, ConfigDiagnostic, Omission, PinRendering, PolicyAction,
    ServerDiagnostic,
};
pub(crate) use exposure::{ExposedSkill, ExposedTool, Exposure};

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
        /// Every tool it names is one the operator's filter hides from the
        /// model (see [`Removal::tool`]).
        MentionsHiddenTool => "mentions_hidden_tool",
    }
    /// The name used in the JSON report: `restates_tool`, `repeated`,
    /// `same_as_server`, `budget`, `policy` or `mentions_hidden_tool`.
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
    /// For a removed unit of the instructions (a sentence, list item,
    /// heading…, or the cut tail of one), its index among the units of the
    /// instructions the block started from (after the policy, before
    /// de-duplication); `None` for other removals. Not in the JSON.
    #[serde(skip)]
    pub unit: Option<usize>,
}

impl Removal {
    /// A removal with no tool or server attached.
    pub(crate) fn new(reason: RemovalReason, text: impl Into<String>) -> Removal {
        Removal {
            text: text.into(),
            reason,
            tool: None,
            server: None,
            unit: None,
        }
    }

    /// The same removal, of unit `k` of the instructions.
    pub(crate) fn of_unit(mut self, k: usize) -> Removal {
        self.unit = Some(k);
        self
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

/// A server's block as a namespace description: self-contained text under
/// a character cap, constraints first ([`Assembler::namespace_chars`](crate::Assembler::namespace_chars)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Namespace {
    /// The description.
    pub text: String,
    /// Its length in characters (Unicode scalar values).
    pub chars: usize,
    /// The cap it was fitted to.
    pub max_chars: usize,
    /// Units of the instructions left out to fit the cap.
    pub units_left_out: usize,
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
    /// The operator policy that applied, if any. In the JSON (and as its
    /// `Display` and `Deref<Target = str>`) the line it was as a string:
    /// `excluded`, `instructions replaced`, `weight 2`, joined by `; `.
    pub policy: Option<AppliedPolicy>,
    /// How the server compares with the [`Lock`](crate::pin::Lock) (its own text,
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
    /// also a [`ServerDiagnostic::LimitHit`] of [`ServerReport::notes`]. In
    /// the JSON only when there are any.
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
    /// Tools the operator's filter hides from the model, in the server's
    /// order (in the JSON only when there are some).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hidden_tools: Vec<String>,
    /// Every reference to one of the server's tools rewritten to the name
    /// the model sees (in the JSON only when there are some).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rewrites: Vec<Rewrite>,
    /// Units kept although they name hidden tools, because they also name
    /// tools the model is sent (in the JSON only when there are some).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hidden_mentions: Vec<HiddenMention>,
    /// The block as a namespace description, when the assembler was asked
    /// for one (in the JSON only then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<Namespace>,
    /// Problems with the server's data (blank instructions, a failed
    /// `tools/list`, the omission…), typed. In the JSON, `diagnostics`: one
    /// object per entry with its `code`, fields and `message` (see
    /// [`ServerDiagnostic::CODES`]); [`ServerReport::diagnostics`] gives the
    /// lines.
    #[serde(rename = "diagnostics")]
    pub notes: Vec<ServerDiagnostic>,
    /// Why the server has no block, when it has none (also a
    /// [`ServerDiagnostic::Omitted`] of [`ServerReport::notes`]; not a field
    /// of its own in the JSON).
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

    /// Problems with the server's data as lines for people: the `Display`
    /// of each of [`ServerReport::notes`], in the same order, made on each
    /// call. For people only; programs match on the notes.
    pub fn diagnostics(&self) -> Vec<String> {
        self.notes.iter().map(ToString::to_string).collect()
    }

    /// Records a diagnostic.
    pub(crate) fn note(&mut self, note: ServerDiagnostic) {
        self.notes.push(note);
    }

    /// Records limits the server reached, each with its diagnostic.
    pub(crate) fn limit_hits(&mut self, hits: Vec<LimitHit>) {
        for hit in hits {
            self.note(ServerDiagnostic::LimitHit(hit));
            self.limits.push(hit);
        }
    }

    /// Records the server's pin, with a diagnostic when it is new or
    /// changed saying what was rendered.
    pub(crate) fn pinned(&mut self, pin: Pin, effect: &Effect) {
        if matches!(pin.state, PinState::New | PinState::Changed) {
            let rendering = match (effect, pin.on_change) {
                (Effect::AsIs, Some(_)) => PinRendering::Accepted,
                (Effect::AsIs, None) => PinRendering::PendingReview,
                (Effect::Hold { text: Some(_), .. }, _) => PinRendering::Held,
                (Effect::Hold { text: None, .. }, _) => PinRendering::NothingToHold,
                (Effect::Drop, _) => PinRendering::Dropped,
            };
            self.note(ServerDiagnostic::Pin {
                state: pin.state,
                summary: pin.summary(),
                rendering,
            });
        }
        self.pin = pin;
    }

    /// Records why the server has no block, once.
    pub(crate) fn omit(&mut self, why: Omission) {
        let note = ServerDiagnostic::Omitted(why);
        if !self.notes.contains(&note) {
            self.note(note);
        }
        self.omitted = Some(why);
    }

    /// Takes back an [`Omission::OverBudget`] before the block is fitted again.
    pub(crate) fn unomit_over_budget(&mut self) {
        if let Some(why @ Omission::OverBudget { .. }) = self.omitted {
            let gone = ServerDiagnostic::Omitted(why);
            self.notes.retain(|note| *note != gone);
            self.omitted = None;
        }
    }
}

/// The version of the JSON report ([`Assembly::to_json`]'s `format`): 6
/// since `preview --json` puts what survives each host under `hosts` (was
/// `as`: `preview --as HOST` now fits to the host as `wrap --as` does); 5
/// since a server's diagnostics have the code `skills_skipped` and a pin
/// the fields `skills_added`, `skills_removed` and `skills_changed`; 4
/// since a server's diagnostics have the codes `duplicate_tools`,
/// `tool_name_over_cap` and `unmatched_tool_rule`; 3
/// since each diagnostic is an object (`code`, its fields, `message`)
/// instead of a line; 2 since the report says what counted it
/// (`counting`); reports without `format` are version 1.
pub const REPORT_FORMAT_VERSION: u32 = 6;

/// The assembled section and its report.
#[derive(Debug, Clone, Serialize)]
pub struct Assembly {
    format: u32,
    encoding: String,
    counting: Counting,
    template: String,
    text: String,
    total_tokens: usize,
    servers: Vec<ServerReport>,
    #[serde(rename = "diagnostics", skip_serializing_if = "Vec::is_empty")]
    notes: Vec<ConfigDiagnostic>,
    /// Per server (as `servers`): what the model is sent.
    #[serde(skip)]
    exposures: Vec<std::sync::Arc<Exposure>>,
    /// Every tool's name, as the scheme's table gave them (kept with the
    /// exposures: a gateway's hub keeps the names it served).
    #[serde(skip)]
    names: Option<std::sync::Arc<NameTable>>,
}

impl Assembly {
    pub(crate) fn new(
        counting: Counting,
        template: &str,
        text: String,
        total_tokens: usize,
        servers: Vec<ServerReport>,
    ) -> Assembly {
        Assembly {
            format: REPORT_FORMAT_VERSION,
            encoding: counting.counter.clone(),
            counting,
            template: template.to_string(),
            text,
            total_tokens,
            servers,
            notes: Vec::new(),
            exposures: Vec::new(),
            names: None,
        }
    }

    /// The same assembly, with the table of every tool's name.
    pub(crate) fn with_names(mut self, names: std::sync::Arc<NameTable>) -> Assembly {
        self.names = Some(names);
        self
    }

    /// The table of every tool's name, when the assembler keeps exposures.
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub(crate) fn names(&self) -> Option<&std::sync::Arc<NameTable>> {
        self.names.as_ref()
    }

    /// The same assembly, with what each server exposes (one per server,
    /// in the order of [`Assembly::servers`]).
    pub(crate) fn with_exposures(mut self, exposures: Vec<std::sync::Arc<Exposure>>) -> Assembly {
        self.exposures = exposures;
        self
    }

    /// Per server, in the order of [`Assembly::servers`]: the tools the
    /// model is sent under the names it sees, and the instructions before
    /// de-duplication and budgets (what the gateway serves). Empty unless
    /// the assembler keeps them (`Assembler::exposing`).
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub(crate) fn exposures(&self) -> &[std::sync::Arc<Exposure>] {
        &self.exposures
    }

    pub(crate) fn with_notes(mut self, notes: Vec<ConfigDiagnostic>) -> Assembly {
        self.notes = notes;
        self
    }

    /// Problems of the configuration rather than of one server, as lines
    /// for people: a budget or policy for an alias no server has (with the
    /// closest alias). The `Display` of each of [`Assembly::notes`], in the
    /// same order, made on each call. Programs match on the notes instead.
    pub fn diagnostics(&self) -> Vec<String> {
        self.notes.iter().map(ToString::to_string).collect()
    }

    /// Problems of the configuration, typed. In the JSON, `diagnostics`
    /// (only when there are some): one object per entry with its `code`,
    /// fields and `message` (see [`ConfigDiagnostic::CODES`]).
    pub fn notes(&self) -> &[ConfigDiagnostic] {
        &self.notes
    }

    /// The section, ready to go into a system prompt.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Tokens of [`Assembly::text`].
    pub fn total_tokens(&self) -> usize {
        self.total_tokens
    }

    /// The counter the counts are in, e.g. `"o200k_base"`, a model name
    /// (`"claude-sonnet-4"`) or a tokenizer file's
    /// (`"tokenizer.json sha256:…"`); see [`Assembly::counting`].
    pub fn encoding(&self) -> &str {
        &self.encoding
    }

    /// What the counts are: the counter, whether they are exact, and for an
    /// estimate its factors and margin. An estimated counter's budgets hold
    /// on the estimate (see the crate docs, "Model profiles").
    pub fn counting(&self) -> &Counting {
        &self.counting
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

    /// The report exactly as `mcp-preamble preview --json` prints it for
    /// capture and snapshot files: this assembly and no connection rows,
    /// through [`printed_json`]. The Python and Node packages' `to_json`.
    ///
    /// ```
    /// use mcp_preamble::{Assembler, files::load_server_file};
    /// let server = load_server_file("tests/corpus/seed-invoice-server.json")?;
    /// let json = Assembler::new().assemble(&[server])?.to_preview_json();
    /// assert!(json.starts_with("{\n  \"assembly\": {") && json.ends_with("\"connections\": []\n}\n"));
    /// # Ok::<(), mcp_preamble::Error>(())
    /// ```
    pub fn to_preview_json(&self) -> String {
        printed_json(serde_json::json!({ "assembly": self, "connections": [] }))
    }
}

/// A JSON report as the CLI prints it: secret-shaped strings redacted,
/// pretty-printed with a final newline, terminal-acting characters escaped
/// ([`json_safe`]) and secret-shaped text redacted once more (an escape
/// may have joined one).
pub fn printed_json(mut report: serde_json::Value) -> String {
    redact::json_strings(&mut report, redact::secrets);
    let pretty = serde_json::to_string_pretty(&report).unwrap_or_default() + "\n";
    redact::secrets(&json_safe(&pretty)).into_owned()
}
