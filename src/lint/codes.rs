//! Lint codes and severities. Every fact about a code (its stable code and
//! name, default severity, summary, explanation, fix, and where SARIF
//! locates its findings) is one entry of the `lint_codes!` table below;
//! [`LintCode`]'s methods, `FromStr`, [`LintCode::ALL`], the SARIF `rules`
//! array and the text report's legend all read that table.
//!
//! # Adding a code
//!
//! 1. Add one entry at the end of the `lint_codes!` invocation in this file:
//!    the variant name; `code`, the next number (`MCP018` after `MCP017`);
//!    `name`, kebab-case; `severity`, the default (`Error`, `Warning` or
//!    `Note`); `about_tool_description`, `true` when a finding's `tool` is
//!    the tool whose definition it is about (SARIF then locates the finding
//!    at that tool); `summary`, one lowercase line without a period on what
//!    the code finds (it also begins the variant's docs); `explanation`, why
//!    it matters, in a few sentences; `fix`, the general fix. Doc comments
//!    above the variant name are added to the variant's docs (say there when
//!    the code needs a [`Linter`](super::Linter) option). Codes and names
//!    are public formats (`--allow`, JSON, SARIF rule ids): never renumber,
//!    rename or reorder an entry.
//! 2. Write the rule: a function in a family of `src/lint/rules/` (or a new
//!    file there, called from `rules/mod.rs`) that records findings with
//!    `Pass::push(LintCode::YourCode, ...)`; name the code in the module
//!    docs of `rules/mod.rs`.
//! 3. Test it in `tests/lint/lint.rs`, and add the code to the stable list in
//!    `every_code_is_documented_and_stable` and to the `MCP001 to MCP0NN`
//!    message in the same file (both pin public formats on purpose).
//!
//! Nothing else needs an edit: parsing, `--allow`, the renderers and the
//! SARIF rules follow the table, and this module's tests check it (codes
//! unique and sequential, names unique and kebab-case, one row per variant,
//! `FromStr` round trips). The user docs (`README.md`, the crate docs) list
//! the codes in prose; mention the new one there.

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

/// Everything the crate says about one code: a row of the table.
struct Row {
    code: &'static str,
    name: &'static str,
    severity: Severity,
    about_tool_description: bool,
    summary: &'static str,
    explanation: &'static str,
    fix: &'static str,
}

/// Declares [`LintCode`], [`LintCode::ALL`] and the rows (`TABLE`) from one
/// list of entries, so a variant and its row cannot disagree or go missing.
macro_rules! lint_codes {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident {
            code: $code:literal,
            name: $name:literal,
            severity: $severity:ident,
            about_tool_description: $about_tool:literal,
            summary: $summary:literal,
            explanation: $explanation:literal,
            fix: $fix:literal $(,)?
        }
    ),* $(,)?) => {
        /// What a finding is about. Each has a stable code (`MCP001`…) and name.
        ///
        /// | Code | Name | Default severity | Finds |
        /// |------|------|------------------|-------|
        #[doc = concat!($(
            "| `", $code, "` | `", $name, "` | ", stringify!($severity), " | ", $summary, " |\n",
        )*)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum LintCode {
            $(
                #[doc = concat!("`", $code, "` `", $name, "`: ", $summary, ".")]
                $(#[doc = $doc])*
                $variant,
            )*
        }

        impl LintCode {
            /// Every code, in code order.
            pub const ALL: &'static [LintCode] = &[$(LintCode::$variant),*];
        }

        /// One row per code, in variant order: `TABLE[code as usize]`.
        static TABLE: &[Row] = &[$(
            Row {
                code: $code,
                name: $name,
                severity: Severity::$severity,
                about_tool_description: $about_tool,
                summary: $summary,
                explanation: $explanation,
                fix: $fix,
            },
        )*];
    };
}

// The table. Entries are in code order; append new codes at the end.
lint_codes! {
    BlankInstructions {
        code: "MCP001",
        name: "blank-instructions",
        severity: Error,
        about_tool_description: false,
        summary: "instructions are whitespace or invisible characters only",
        explanation:
            "Instructions with nothing visible after sanitizing are never shown to the model. \
             A templated string whose variables rendered empty ends up like this, and the \
             server looks as if it sent instructions when it did not.",
        fix:
            "Send no instructions at all, or make sure the template fills them in before \
             the server starts.",
    },
    RestatesTool {
        code: "MCP002",
        name: "restates-tool",
        severity: Warning,
        about_tool_description: false,
        summary: "a sentence restates a tool description",
        explanation:
            "The model reads every tool description already. A sentence that says the same \
             again costs tokens on every request, and hosts that de-duplicate remove it.",
        fix:
            "Delete the sentence, or keep only what it adds to the tool description (an \
             order, a limit, what an identifier means).",
    },
    UnknownTool {
        code: "MCP003",
        name: "unknown-tool",
        severity: Error,
        about_tool_description: false,
        summary: "instructions name a tool the server does not have",
        explanation:
            "A tool name in the instructions that the server does not list is stale (the \
             tool was renamed or removed) or misspelled, and a model that follows the \
             instructions calls a tool that does not exist.",
        fix:
            "Use the tool's current name, or remove the mention; if the tool is registered \
             only under some conditions, say which.",
    },
    TooLong {
        code: "MCP004",
        name: "too-long",
        severity: Warning,
        about_tool_description: false,
        summary: "instructions are over the token threshold",
        explanation:
            "Hosts fit every server into a token budget and trim what does not fit, so the \
             host, not the author, decides what is cut. Every token is paid on every request.",
        fix:
            "Keep what spans tools (order, identifiers, scope) and move per-tool details \
             into the tool descriptions.",
    },
    Secret {
        code: "MCP005",
        name: "secret",
        severity: Error,
        about_tool_description: false,
        summary: "instructions contain something shaped like a credential",
        explanation:
            "Instructions are sent to every client in the handshake, before any \
             authorization, and hosts copy them into prompts and logs. A secret in them is \
             public.",
        fix:
            "Remove it from the instructions and rotate it; the server should read \
             credentials from its environment.",
    },
    ActsOnHost {
        code: "MCP006",
        name: "acts-on-host",
        severity: Warning,
        about_tool_description: false,
        summary: "instructions address the host, other servers or the system prompt",
        explanation:
            "Hosts put each server's instructions in a section of their own and tell the \
             model that it applies only to that server's tools. Text that claims authority, \
             addresses the host, or steers the model away from other servers and built-in \
             tools is what prompt-injection defenses look for; hosts may drop it or the server.",
        fix:
            "Say when this server's tools are the right choice, and leave the choice \
             between servers, and the rules of the prompt, to the host and the user.",
    },
    ToolDescriptionsOnly {
        code: "MCP007",
        name: "tool-descriptions-only",
        severity: Note,
        about_tool_description: false,
        summary:
            "instructions only describe single tools, and say nothing about order, identifiers or scope",
        explanation:
            "What one tool does belongs in that tool's description, which the model reads \
             next to the tool. Instructions are the one place for what no single description \
             can say: which tool comes first, what an identifier means and where it is \
             valid, what the server does not cover.",
        fix:
            "Move each tool's sentence into its description; keep instructions for order, \
             identifiers and scope, or send none.",
    },
    WastedWhitespace {
        code: "MCP008",
        name: "wasted-whitespace",
        severity: Note,
        about_tool_description: false,
        summary: "indentation, blank lines or invisible characters cost tokens",
        explanation:
            "Clients that forward the string as sent pay for leading indentation, trailing \
             spaces, blank-line runs and invisible characters on every request; hosts that \
             sanitize strip them, so they never helped.",
        fix:
            "Dedent and trim the string before sending it (in Python, inspect.cleandoc or \
             textwrap.dedent).",
    },
    /// Hidden are format and private-use characters, unassigned code points,
    /// variation selectors outside emoji and other default-ignorables.
    HiddenCharacters {
        code: "MCP009",
        name: "hidden-characters",
        severity: Error,
        about_tool_description: false,
        summary: "instructions hold characters nobody reading them can see",
        explanation:
            "Format characters, variation selectors, tag characters and other invisible code \
             points can carry a whole message (one byte per variation selector) or reorder \
             what a reader sees, while the text looks like one harmless sentence. Reviewers \
             cannot see it; models can read it. Hosts that sanitize remove it; hosts that do \
             not forward it.",
        fix:
            "Remove every invisible character from the instructions; keep variation \
             selectors and joiners only inside emoji.",
    },
    /// Only with [`Linter::hosts`](super::Linter::hosts).
    LostUnderHostCut {
        code: "MCP010",
        name: "lost-under-host-cut",
        severity: Warning,
        about_tool_description: false,
        summary:
            "a constraint sentence is cut off by a host that forwards only the start of the instructions",
        explanation:
            "Several hosts forward only the first characters of a server's instructions and \
             drop the rest without a word (Claude Code cuts mid-word; `--hosts` gives each \
             host's cut, its unit and its source). A \
             rule on order, obligation or identifiers after the cut never reaches the model, \
             and the model breaks it without knowing it exists.",
        fix:
            "Put the rules that span tools first and keep the instructions under the \
             shortest cut you care about; move per-tool details into tool descriptions.",
    },
    ToolHiddenCharacters {
        code: "MCP011",
        name: "tool-hidden-characters",
        severity: Error,
        about_tool_description: true,
        summary: "a tool description holds characters nobody reading it can see",
        explanation:
            "Tool descriptions go to the model on every request, next to the tool. Invisible \
             characters in them can carry a whole hidden message that reviewers and users \
             never see in the tool list (a known tool-poisoning technique).",
        fix:
            "Remove every invisible character from the tool description; keep variation \
             selectors and joiners only inside emoji.",
    },
    ToolActsOnHost {
        code: "MCP012",
        name: "tool-acts-on-host",
        severity: Error,
        about_tool_description: true,
        summary:
            "a tool description claims authority, overrides other instructions or hides things from the user",
        explanation:
            "A tool description that tells the model to ignore other instructions, keep \
             things from the user, or obey tags such as <IMPORTANT> is the shape of tool \
             poisoning; hosts and scanners flag it, and the model may follow it for tools \
             that are not this server's.",
        fix:
            "Describe what the tool does and when to use it; leave the rules of the prompt \
             and what the user is told to the host and the user.",
    },
    ToolSecret {
        code: "MCP013",
        name: "tool-secret",
        severity: Error,
        about_tool_description: true,
        summary: "a tool description contains something shaped like a credential",
        explanation:
            "Tool descriptions are sent to every client in tools/list and copied into \
             prompts and logs. A secret in one is public.",
        fix:
            "Remove it from the tool description and rotate it; the server should read \
             credentials from its environment.",
    },
    ToolDescriptionTooLong {
        code: "MCP014",
        name: "tool-description-too-long",
        severity: Note,
        about_tool_description: true,
        summary: "a tool description is over the tool token threshold",
        explanation:
            "Every tool description is paid for on every request, whether or not the tool \
             is called; a long one crowds out other servers' tools and is the usual hiding \
             place for instructions that belong elsewhere.",
        fix:
            "Say what the tool does, its inputs and its limits in a few sentences; put \
             cross-tool rules in the instructions and long guides behind a resource.",
    },
    /// Only with [`Linter::check_connects`](super::Linter::check_connects).
    EraDrift {
        code: "MCP015",
        name: "era-drift",
        severity: Warning,
        about_tool_description: true,
        summary: "initialize and server/discover give different instructions or tools",
        explanation:
            "Hosts on the 2025 protocol read initialize, hosts on the 2026-07-28 revision read \
             server/discover. When the two differ, the same server tells models different \
             things depending on the host, and a difference in invisible characters is \
             hidden from anyone who compares the sanitized text. A server whose text changes \
             on every connect differs between eras too (MCP016 tells them apart).",
        fix:
            "Build instructions and tools once and serve the same ones from initialize, \
             server/discover and tools/list in both eras.",
    },
    /// Both connects are in the same era. Only with
    /// [`Linter::check_connects`](super::Linter::check_connects).
    UnstableText {
        code: "MCP016",
        name: "unstable-text",
        severity: Warning,
        about_tool_description: true,
        summary: "instructions or tools differ from one connect to the next",
        explanation:
            "Hosts cache the prompt prefix that holds server instructions and tool \
             definitions. Text that changes between connects (a timestamp, a session id, a \
             tool that comes and goes) defeats every prompt cache and makes each session's prompt \
             different for no reason the user can see.",
        fix:
            "Keep instructions and tool definitions fixed for a server version: move \
             timestamps, session ids and per-user data into tool results or resources.",
    },
    /// The table is `[servers.<alias>]`. Only with
    /// [`Linter::check_policy`](super::Linter::check_policy).
    UnknownPolicyAlias {
        code: "MCP017",
        name: "unknown-policy-alias",
        severity: Warning,
        about_tool_description: false,
        summary: "the policy file configures an alias no server has",
        explanation:
            "A [servers.<alias>] table applies to the server with that alias only. One that \
             matches no server (a typo, a renamed server) excludes, replaces, budgets or \
             holds nothing, so the operator believes a control is in place that is not.",
        fix: "Rename the table to the alias the server has in the MCP config, or remove it.",
    },
    /// Compared by a confusable skeleton: Cyrillic, Greek and Armenian
    /// letters that look Latin, dotless `ı` and fullwidth forms count as the
    /// Latin letter. A finding in a tool name or description names that tool.
    ConfusableToolName {
        code: "MCP018",
        name: "confusable-tool-name",
        severity: Error,
        about_tool_description: true,
        summary: "a name in the instructions or the tools looks like a tool's name but is spelt with letters of another script",
        explanation:
            "A name such as `dеlete_invoice` with a Cyrillic `е` reads exactly like `delete_invoice` to a \
             reviewer, in a diff and in a terminal, but it is another name: a model told to \
             call it calls a tool that does not exist or, worse, a look-alike tool that another \
             server registered to catch those calls. Mixing scripts inside one identifier is \
             almost never an accident.",
        fix:
            "Spell tool names, and the names that mention them, in one script: replace the \
             look-alike letters with the Latin ones.",
    },
    /// Only with [`Linter::hosts`](super::Linter::hosts), for the hosts whose
    /// naming rule sends a long name whole (Claude Code).
    ToolNameOverHostCap {
        code: "MCP019",
        name: "tool-name-over-host-cap",
        severity: Error,
        about_tool_description: true,
        summary: "a tool's name as a host sends it is past the model API's cap on tool names",
        explanation:
            "Claude Code names an MCP tool `mcp__<server>__<tool>` and sends the name whole, \
             while the model API caps tool names at 64 characters: a longer name makes every \
             request fail, for every tool of every server, until the user removes the server.",
        fix:
            "Shorten the tool's name so that `mcp__<server>__<tool>` stays within 64 \
             characters with the server names users give it.",
    },
    ConcealmentDirective {
        code: "MCP020",
        name: "concealment-directive",
        severity: Error,
        about_tool_description: false,
        summary: "instructions tell the model to keep something from the user",
        explanation:
            "Text such as \"do not tell the user …\", \"never mention this to the user\" or \"without \
             telling the user\" makes the model hide what it does from the person it works for. A \
             registry-wide audit found it on dozens of published servers; hosts and reviewers \
             treat it as an attack on the user's trust.",
        fix:
            "Remove the directive. If something must not be shown (a raw identifier, a \
             secret), say how to present it instead, without keeping it from the user.",
    },
    OverrideOrRoleEscape {
        code: "MCP021",
        name: "override-or-role-escape",
        severity: Error,
        about_tool_description: false,
        summary:
            "instructions tell the model to ignore other instructions, claim to override them, or fake a system or assistant turn",
        explanation:
            "Text such as \"ignore previous instructions\" or \"these rules override any other\", a line that \
             starts with \"SYSTEM:\" or \"Assistant:\", a chat-template token: text that tries to \
             step out of the server's own section into the host's prompt or the conversation: \
             it is the core shape of prompt injection; hosts drop it, or the server.",
        fix:
            "Remove it: a server's instructions apply to its own tools only; state what this \
             server's tools need without addressing other instructions or roles.",
    },
    InstructionsOverToolDescriptions {
        code: "MCP022",
        name: "instructions-over-tool-descriptions",
        severity: Note,
        about_tool_description: false,
        summary: "instructions are longer than all tool descriptions together",
        explanation:
            "Instructions are for what no single tool description can say: order, identifiers, \
             scope. Instructions longer than every description together usually carry per-tool \
             documentation, which the model reads twice and which budgets cut first.",
        fix:
            "Move what describes one tool into that tool's description; keep the rules that \
             span tools.",
    },
}

impl LintCode {
    /// The code's row of the table.
    fn row(self) -> &'static Row {
        // The macro declares the variants and the rows in the same order.
        &TABLE[self as usize]
    }

    /// The stable code, e.g. `"MCP003"`.
    pub fn code(self) -> &'static str {
        self.row().code
    }

    /// The stable name, e.g. `"unknown-tool"`.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// The severity its findings get unless
    /// [`Linter::severity`](super::Linter::severity) says otherwise. Four codes vary by finding: `MCP006` is an error for text
    /// that claims authority or hides things from the user and a warning
    /// for steering; `MCP003` is a warning when the sentence itself makes
    /// the tool conditional ("requires client sampling capability");
    /// `MCP009` and `MCP011` are notes for one or two stray characters and no variation
    /// selector outside an emoji.
    pub fn default_severity(self) -> Severity {
        self.row().severity
    }

    /// Whether the code's findings with a tool are about that tool's
    /// definition (its tool is where the finding is, not a tool it mentions).
    pub(in crate::lint) fn about_tool_description(self) -> bool {
        self.row().about_tool_description
    }

    /// One line: what the code finds.
    pub fn summary(self) -> &'static str {
        self.row().summary
    }

    /// Why it matters, in a few sentences.
    pub fn explanation(self) -> &'static str {
        self.row().explanation
    }

    /// The general fix (findings carry a specific one in
    /// [`Finding::fix`](super::Finding::fix)).
    pub fn fix(self) -> &'static str {
        self.row().fix
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
                let code = |row: Option<&Row>| row.map_or("MCP001", |r| r.code);
                Error::new(
                    ErrorKind::InvalidConfig,
                    format!(
                        "unknown lint code {s:?} (use {} to {} or a name)",
                        code(TABLE.first()),
                        code(TABLE.last())
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

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn one_row_per_variant_in_order() {
        assert_eq!(TABLE.len(), LintCode::ALL.len());
        for (i, c) in LintCode::ALL.iter().enumerate() {
            assert_eq!(*c as usize, i, "{c:?}");
            assert!(std::ptr::eq(c.row(), &TABLE[i]), "{c:?}");
        }
        assert!(LintCode::ALL.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn codes_are_sequential_and_names_unique() {
        let mut names = HashSet::new();
        for (i, row) in TABLE.iter().enumerate() {
            assert_eq!(row.code, format!("MCP{:03}", i + 1));
            assert!(names.insert(row.name), "{} twice", row.name);
            assert!(
                !row.name.is_empty()
                    && !row.name.starts_with('-')
                    && !row.name.ends_with('-')
                    && !row.name.contains("--")
                    && row
                        .name
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b == b'-'),
                "{} is not kebab-case",
                row.name
            );
        }
    }

    #[test]
    fn texts_are_shaped_for_their_places() {
        for row in TABLE {
            let s = row.summary;
            assert!(
                s.starts_with(char::is_lowercase) && !s.ends_with('.'),
                "{}",
                row.code
            );
            for t in [row.explanation, row.fix] {
                assert!(
                    t.starts_with(char::is_uppercase) && t.ends_with('.'),
                    "{}",
                    row.code
                );
                assert!(!t.contains("  ") && !t.contains('\n'), "{}", row.code);
            }
        }
    }

    #[test]
    fn from_str_round_trips() {
        for &c in LintCode::ALL {
            assert_eq!(c.code().parse::<LintCode>().unwrap(), c);
            assert_eq!(c.code().to_lowercase().parse::<LintCode>().unwrap(), c);
            assert_eq!(c.name().parse::<LintCode>().unwrap(), c);
            assert_eq!(c.to_string(), c.code());
        }
        let err = "MCP000".parse::<LintCode>().unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "invalid configuration: unknown lint code \"MCP000\" (use MCP001 to MCP{:03} or a name)",
                TABLE.len()
            )
        );
    }

    #[test]
    fn tool_description_codes() {
        let at_tool: Vec<&str> = LintCode::ALL
            .iter()
            .filter(|c| c.about_tool_description())
            .map(|c| c.code())
            .collect();
        assert_eq!(
            at_tool,
            [
                "MCP011", "MCP012", "MCP013", "MCP014", "MCP015", "MCP016", "MCP018", "MCP019"
            ]
        );
    }
}
