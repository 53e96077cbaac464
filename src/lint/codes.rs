//! Lint codes and severities, and the tables behind them: code, name,
//! summary, explanation, fix and default severity.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::error::{Error, ErrorKind, Result};

/// How serious a [`Finding`](super::Finding) is. Ordered: `Note < Warning < Error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; costs tokens or clarity, breaks nothing.
    Note,
    /// Likely to mislead the model or to be trimmed or removed by hosts.
    Warning,
    /// Wrong: the model is sent to a tool that does not exist, a secret is
    /// published, or the text attacks the host's prompt.
    Error,
}

impl Severity {
    /// `"note"`, `"warning"` or `"error"` (also the SARIF `level`).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Severity {
    type Err = Error;

    /// Parses `note`, `warning` or `error`; anything else is an
    /// [`ErrorKind::InvalidConfig`] error.
    fn from_str(s: &str) -> Result<Severity> {
        match s {
            "note" => Ok(Severity::Note),
            "warning" => Ok(Severity::Warning),
            "error" => Ok(Severity::Error),
            _ => Err(Error::new(
                ErrorKind::InvalidConfig,
                format!("unknown severity {s:?} (use note, warning or error)"),
            )),
        }
    }
}

/// What a finding is about. Each has a stable code (`MCP001`…) and name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum LintCode {
    /// `MCP001` `blank-instructions`: the instructions are whitespace or invisible characters only.
    BlankInstructions,
    /// `MCP002` `restates-tool`: a sentence says again what a tool description says.
    RestatesTool,
    /// `MCP003` `unknown-tool`: a tool name the server does not have.
    UnknownTool,
    /// `MCP004` `too-long`: the instructions are over the token threshold.
    TooLong,
    /// `MCP005` `secret`: something shaped like a credential.
    Secret,
    /// `MCP006` `acts-on-host`: text that addresses the host, other servers or the system.
    ActsOnHost,
    /// `MCP007` `tool-descriptions-only`: only per-tool descriptions, nothing on order, identifiers or scope.
    ToolDescriptionsOnly,
    /// `MCP008` `wasted-whitespace`: indentation, blank lines or invisible characters that cost tokens.
    WastedWhitespace,
    /// `MCP009` `hidden-characters`: characters nobody reading the text can see (format,
    /// private-use, unassigned, variation selectors outside emoji, other default-ignorables).
    HiddenCharacters,
    /// `MCP010` `lost-under-host-cut`: a constraint sentence a known host cuts off
    /// (only with [`Linter::hosts`](super::Linter::hosts)).
    LostUnderHostCut,
    /// `MCP011` `tool-hidden-characters`: a tool description holds characters nobody can see.
    ToolHiddenCharacters,
    /// `MCP012` `tool-acts-on-host`: a tool description claims authority, tells the
    /// model to ignore other instructions or hides things from the user.
    ToolActsOnHost,
    /// `MCP013` `tool-secret`: something shaped like a credential in a tool description.
    ToolSecret,
    /// `MCP014` `tool-description-too-long`: a tool description over the tool token threshold.
    ToolDescriptionTooLong,
    /// `MCP015` `era-drift`: `initialize` and `server/discover` give different instructions
    /// or tools (only with [`Linter::check_connects`](super::Linter::check_connects)).
    EraDrift,
    /// `MCP016` `unstable-text`: instructions or tools differ between two connects in the
    /// same era (only with [`Linter::check_connects`](super::Linter::check_connects)).
    UnstableText,
    /// `MCP017` `unknown-policy-alias`: the policy file has a `[servers.<alias>]` table that no
    /// linted server has (only with [`Linter::check_policy`](super::Linter::check_policy)).
    UnknownPolicyAlias,
}

impl LintCode {
    /// Every code, in code order.
    pub const ALL: &'static [LintCode] = &[
        LintCode::BlankInstructions,
        LintCode::RestatesTool,
        LintCode::UnknownTool,
        LintCode::TooLong,
        LintCode::Secret,
        LintCode::ActsOnHost,
        LintCode::ToolDescriptionsOnly,
        LintCode::WastedWhitespace,
        LintCode::HiddenCharacters,
        LintCode::LostUnderHostCut,
        LintCode::ToolHiddenCharacters,
        LintCode::ToolActsOnHost,
        LintCode::ToolSecret,
        LintCode::ToolDescriptionTooLong,
        LintCode::EraDrift,
        LintCode::UnstableText,
        LintCode::UnknownPolicyAlias,
    ];

    /// The stable code, e.g. `"MCP003"`.
    pub fn code(self) -> &'static str {
        match self {
            LintCode::BlankInstructions => "MCP001",
            LintCode::RestatesTool => "MCP002",
            LintCode::UnknownTool => "MCP003",
            LintCode::TooLong => "MCP004",
            LintCode::Secret => "MCP005",
            LintCode::ActsOnHost => "MCP006",
            LintCode::ToolDescriptionsOnly => "MCP007",
            LintCode::WastedWhitespace => "MCP008",
            LintCode::HiddenCharacters => "MCP009",
            LintCode::LostUnderHostCut => "MCP010",
            LintCode::ToolHiddenCharacters => "MCP011",
            LintCode::ToolActsOnHost => "MCP012",
            LintCode::ToolSecret => "MCP013",
            LintCode::ToolDescriptionTooLong => "MCP014",
            LintCode::EraDrift => "MCP015",
            LintCode::UnstableText => "MCP016",
            LintCode::UnknownPolicyAlias => "MCP017",
        }
    }

    /// The stable name, e.g. `"unknown-tool"`.
    pub fn name(self) -> &'static str {
        match self {
            LintCode::BlankInstructions => "blank-instructions",
            LintCode::RestatesTool => "restates-tool",
            LintCode::UnknownTool => "unknown-tool",
            LintCode::TooLong => "too-long",
            LintCode::Secret => "secret",
            LintCode::ActsOnHost => "acts-on-host",
            LintCode::ToolDescriptionsOnly => "tool-descriptions-only",
            LintCode::WastedWhitespace => "wasted-whitespace",
            LintCode::HiddenCharacters => "hidden-characters",
            LintCode::LostUnderHostCut => "lost-under-host-cut",
            LintCode::ToolHiddenCharacters => "tool-hidden-characters",
            LintCode::ToolActsOnHost => "tool-acts-on-host",
            LintCode::ToolSecret => "tool-secret",
            LintCode::ToolDescriptionTooLong => "tool-description-too-long",
            LintCode::EraDrift => "era-drift",
            LintCode::UnstableText => "unstable-text",
            LintCode::UnknownPolicyAlias => "unknown-policy-alias",
        }
    }

    /// The severity its findings get unless
    /// [`Linter::severity`](super::Linter::severity) says otherwise. Four codes vary by finding: `MCP006` is an error for text
    /// that claims authority or hides things from the user and a warning
    /// for steering; `MCP003` is a warning when the sentence itself makes
    /// the tool conditional ("requires client sampling capability");
    /// `MCP009` and `MCP011` are notes for one or two stray characters and no variation
    /// selector outside an emoji.
    pub fn default_severity(self) -> Severity {
        match self {
            LintCode::BlankInstructions
            | LintCode::UnknownTool
            | LintCode::Secret
            | LintCode::HiddenCharacters
            | LintCode::ToolHiddenCharacters
            | LintCode::ToolActsOnHost
            | LintCode::ToolSecret => Severity::Error,
            LintCode::RestatesTool
            | LintCode::TooLong
            | LintCode::ActsOnHost
            | LintCode::LostUnderHostCut
            | LintCode::EraDrift
            | LintCode::UnstableText
            | LintCode::UnknownPolicyAlias => Severity::Warning,
            LintCode::ToolDescriptionsOnly
            | LintCode::WastedWhitespace
            | LintCode::ToolDescriptionTooLong => Severity::Note,
        }
    }

    /// Whether the code's findings with a tool are about that tool's
    /// definition (its tool is where the finding is, not a tool it mentions).
    pub(in crate::lint) fn about_tool_description(self) -> bool {
        matches!(
            self,
            LintCode::ToolHiddenCharacters
                | LintCode::ToolActsOnHost
                | LintCode::ToolSecret
                | LintCode::ToolDescriptionTooLong
                | LintCode::EraDrift
                | LintCode::UnstableText
        )
    }

    /// One line: what the code finds.
    pub fn summary(self) -> &'static str {
        match self {
            LintCode::BlankInstructions => {
                "instructions are whitespace or invisible characters only"
            }
            LintCode::RestatesTool => "a sentence restates a tool description",
            LintCode::UnknownTool => "instructions name a tool the server does not have",
            LintCode::TooLong => "instructions are over the token threshold",
            LintCode::Secret => "instructions contain something shaped like a credential",
            LintCode::ActsOnHost => {
                "instructions address the host, other servers or the system prompt"
            }
            LintCode::ToolDescriptionsOnly => {
                "instructions only describe single tools, and say nothing about order, identifiers or scope"
            }
            LintCode::WastedWhitespace => {
                "indentation, blank lines or invisible characters cost tokens"
            }
            LintCode::HiddenCharacters => {
                "instructions hold characters nobody reading them can see"
            }
            LintCode::LostUnderHostCut => {
                "a constraint sentence is cut off by a host that forwards only the start of the instructions"
            }
            LintCode::ToolHiddenCharacters => {
                "a tool description holds characters nobody reading it can see"
            }
            LintCode::ToolActsOnHost => {
                "a tool description claims authority, overrides other instructions or hides things from the user"
            }
            LintCode::ToolSecret => {
                "a tool description contains something shaped like a credential"
            }
            LintCode::ToolDescriptionTooLong => {
                "a tool description is over the tool token threshold"
            }
            LintCode::EraDrift => {
                "initialize and server/discover give different instructions or tools"
            }
            LintCode::UnstableText => "instructions or tools differ from one connect to the next",
            LintCode::UnknownPolicyAlias => "the policy file configures an alias no server has",
        }
    }

    /// Why it matters, in a few sentences.
    pub fn explanation(self) -> &'static str {
        match self {
            LintCode::BlankInstructions => {
                "Instructions with nothing visible after sanitizing are never shown to the model. \
                 A templated string whose variables rendered empty ends up like this, and the \
                 server looks as if it sent instructions when it did not."
            }
            LintCode::RestatesTool => {
                "The model reads every tool description already. A sentence that says the same \
                 again costs tokens on every request, and hosts that de-duplicate remove it."
            }
            LintCode::UnknownTool => {
                "A tool name in the instructions that the server does not list is stale (the \
                 tool was renamed or removed) or misspelled, and a model that follows the \
                 instructions calls a tool that does not exist."
            }
            LintCode::TooLong => {
                "Hosts fit every server into a token budget and trim what does not fit, so the \
                 host, not the author, decides what is cut. Every token is paid on every request."
            }
            LintCode::Secret => {
                "Instructions are sent to every client in the handshake, before any \
                 authorization, and hosts copy them into prompts and logs. A secret in them is \
                 public."
            }
            LintCode::ActsOnHost => {
                "Hosts put each server's instructions in a section of their own and tell the \
                 model that it applies only to that server's tools. Text that claims authority, \
                 addresses the host, or steers the model away from other servers and built-in \
                 tools is what prompt-injection defenses look for; hosts may drop it or the server."
            }
            LintCode::ToolDescriptionsOnly => {
                "What one tool does belongs in that tool's description, which the model reads \
                 next to the tool. Instructions are the one place for what no single description \
                 can say: which tool comes first, what an identifier means and where it is \
                 valid, what the server does not cover."
            }
            LintCode::WastedWhitespace => {
                "Clients that forward the string as sent pay for leading indentation, trailing \
                 spaces, blank-line runs and invisible characters on every request; hosts that \
                 sanitize strip them, so they never helped."
            }
            LintCode::HiddenCharacters => {
                "Format characters, variation selectors, tag characters and other invisible code \
                 points can carry a whole message (one byte per variation selector) or reorder \
                 what a reader sees, while the text looks like one harmless sentence. Reviewers \
                 cannot see it; models can read it. Hosts that sanitize remove it; hosts that do \
                 not forward it."
            }
            LintCode::LostUnderHostCut => {
                "Several hosts forward only the first characters of a server's instructions and \
                 drop the rest without a word (Claude Code: 2,048 characters, cut mid-word). A \
                 rule on order, obligation or identifiers after the cut never reaches the model, \
                 and the model breaks it without knowing it exists."
            }
            LintCode::ToolHiddenCharacters => {
                "Tool descriptions go to the model on every request, next to the tool. Invisible \
                 characters in them can carry a whole hidden message that reviewers and users \
                 never see in the tool list (a known tool-poisoning technique)."
            }
            LintCode::ToolActsOnHost => {
                "A tool description that tells the model to ignore other instructions, keep \
                 things from the user, or obey tags such as <IMPORTANT> is the shape of tool \
                 poisoning; hosts and scanners flag it, and the model may follow it for tools \
                 that are not this server's."
            }
            LintCode::ToolSecret => {
                "Tool descriptions are sent to every client in tools/list and copied into \
                 prompts and logs. A secret in one is public."
            }
            LintCode::ToolDescriptionTooLong => {
                "Every tool description is paid for on every request, whether or not the tool \
                 is called; a long one crowds out other servers' tools and is the usual hiding \
                 place for instructions that belong elsewhere."
            }
            LintCode::EraDrift => {
                "Hosts on the 2025 protocol read initialize, hosts on the 2026-07-28 revision read \
                 server/discover. When the two differ, the same server tells models different \
                 things depending on the host, and a difference in invisible characters is \
                 hidden from anyone who compares the sanitized text. A server whose text changes \
                 on every connect differs between eras too (MCP016 tells them apart)."
            }
            LintCode::UnstableText => {
                "Hosts cache the prompt prefix that holds server instructions and tool \
                 definitions. Text that changes between connects (a timestamp, a session id, a \
                 tool that comes and goes) defeats every prompt cache and makes each session's prompt \
                 different for no reason the user can see."
            }
            LintCode::UnknownPolicyAlias => {
                "A [servers.<alias>] table applies to the server with that alias only. One that \
                 matches no server (a typo, a renamed server) excludes, replaces, budgets or \
                 holds nothing, so the operator believes a control is in place that is not."
            }
        }
    }

    /// The general fix (findings carry a specific one in
    /// [`Finding::fix`](super::Finding::fix)).
    pub fn fix(self) -> &'static str {
        match self {
            LintCode::BlankInstructions => {
                "Send no instructions at all, or make sure the template fills them in before \
                 the server starts."
            }
            LintCode::RestatesTool => {
                "Delete the sentence, or keep only what it adds to the tool description (an \
                 order, a limit, what an identifier means)."
            }
            LintCode::UnknownTool => {
                "Use the tool's current name, or remove the mention; if the tool is registered \
                 only under some conditions, say which."
            }
            LintCode::TooLong => {
                "Keep what spans tools (order, identifiers, scope) and move per-tool details \
                 into the tool descriptions."
            }
            LintCode::Secret => {
                "Remove it from the instructions and rotate it; the server should read \
                 credentials from its environment."
            }
            LintCode::ActsOnHost => {
                "Say when this server's tools are the right choice, and leave the choice \
                 between servers, and the rules of the prompt, to the host and the user."
            }
            LintCode::ToolDescriptionsOnly => {
                "Move each tool's sentence into its description; keep instructions for order, \
                 identifiers and scope, or send none."
            }
            LintCode::WastedWhitespace => {
                "Dedent and trim the string before sending it (in Python, inspect.cleandoc or \
                 textwrap.dedent)."
            }
            LintCode::HiddenCharacters => {
                "Remove every invisible character from the instructions; keep variation \
                 selectors and joiners only inside emoji."
            }
            LintCode::LostUnderHostCut => {
                "Put the rules that span tools first and keep the instructions under the \
                 shortest cut you care about; move per-tool details into tool descriptions."
            }
            LintCode::ToolHiddenCharacters => {
                "Remove every invisible character from the tool description; keep variation \
                 selectors and joiners only inside emoji."
            }
            LintCode::ToolActsOnHost => {
                "Describe what the tool does and when to use it; leave the rules of the prompt \
                 and what the user is told to the host and the user."
            }
            LintCode::ToolSecret => {
                "Remove it from the tool description and rotate it; the server should read \
                 credentials from its environment."
            }
            LintCode::ToolDescriptionTooLong => {
                "Say what the tool does, its inputs and its limits in a few sentences; put \
                 cross-tool rules in the instructions and long guides behind a resource."
            }
            LintCode::EraDrift => {
                "Build instructions and tools once and serve the same ones from initialize, \
                 server/discover and tools/list in both eras."
            }
            LintCode::UnstableText => {
                "Keep instructions and tool definitions fixed for a server version: move \
                 timestamps, session ids and per-user data into tool results or resources."
            }
            LintCode::UnknownPolicyAlias => {
                "Rename the table to the alias the server has in the MCP config, or remove it."
            }
        }
    }
}

impl fmt::Display for LintCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl FromStr for LintCode {
    type Err = Error;

    /// Parses a code (`MCP003`, any case) or a name (`unknown-tool`).
    fn from_str(s: &str) -> Result<LintCode> {
        LintCode::ALL
            .iter()
            .copied()
            .find(|c| c.code().eq_ignore_ascii_case(s) || c.name() == s)
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::InvalidConfig,
                    format!(
                        "unknown lint code {s:?} (use MCP001 to {} or a name)",
                        LintCode::ALL.last().map_or("MCP001", |c| c.code())
                    ),
                )
            })
    }
}

impl Serialize for LintCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.code())
    }
}
