//! The lint pass: what a server author should fix in the instructions before
//! release. Every finding has a stable code, a message, an explanation and a
//! fix; reports render as text, JSON or SARIF 2.1.0.
//!
//! The pass reads the instructions the way a host does (sanitized, cut into
//! units as the assembler does) and reuses the assembler's restatement test,
//! so a sentence the lint calls a restatement is one a host removes.
//!
//! # Codes and hosts
//!
//! [`Linter`] tells a server author what is wrong with the instructions
//! before release, with stable codes: `MCP001` blank instructions, `MCP002`
//! a sentence that restates a tool description (naming the tool), `MCP003`
//! a tool name the server does not have (with the closest real one),
//! `MCP004` over a token threshold, `MCP005` a secret-shaped string, `MCP006`
//! text that acts on the host or other servers, `MCP007` only per-tool
//! descriptions, `MCP008` whitespace that costs tokens, `MCP009` hidden characters; on tool
//! descriptions, each naming its tool, `MCP011` hidden characters, `MCP012` authority and injection
//! phrases, `MCP013` secrets and `MCP014` over [`DEFAULT_MAX_TOOL_TOKENS`]. Given several
//! snapshots of one server, [`Linter::check_connects`] adds `MCP015` when `initialize` and
//! `server/discover` give different instructions or tools ([`Capture::era_snapshots`](crate::files::Capture::era_snapshots) gives both
//! eras of a capture) and `MCP016` when a later connect differs from the first (text that defeats
//! prompt caches), naming what differs. [`Linter::check_policy`] gives `MCP017` for a
//! `[servers.<alias>]` of a policy file that no linted server has ([`LintReport::add_policy`]),
//! and `MCP018` flags a name in the instructions or the tools that looks like a tool's name in
//! letters of another script.
//! `MCP020` (concealment) and `MCP021` (override, fake turns) recognise the act rather than a phrase:
//! a negation before a disclosure verb whose object is the person, a hiding verb with `from` the
//! person, the person told not to learn, secrecy and lying about an outcome; a dismissal verb over
//! earlier or outside instructions, lifting them, claiming rank, and the role markers of the major
//! chat templates (`src/lint/rules/acts.rs` has the inventories and what rejects a match; the
//! README's lint section the figures on a labelled set).
//! Each [`Finding`] has
//! a [`Severity`], a message, an explanation and a fix; a [`LintReport`]
//! renders as text, JSON or SARIF 2.1.0, as `mcp-preamble lint` prints it.
//!
//! Hosts cut instructions, mostly without saying so. [`HostProfile`] gives
//! what the hosts of the host table ([`crate::hosts`]) do, each fact with
//! its source: `claude-code` forwards the first 2,048 UTF-16 code units, cut
//! mid-word (claude-code issue #39106); `codex` (ChatGPT / Codex; `chatgpt`
//! is its older name here) about the first 512 characters, reported;
//! `claude-desktop` (and Claude.ai) nothing, reported; `generic-4000` the
//! first 4,000, reported; `none` nothing; and `mcp-preamble` itself at
//! a token budget (exact: the assembler's own removals). With
//! [`Linter::hosts`] (`lint --hosts all`) each server gets a row per host
//! ([`HostSurvival`]: characters, tokens, lost sentences, those carrying a
//! constraint marked with their line) and `MCP010` for each forwarding
//! host that cuts off a constraint sentence. Each cut counts in its host's
//! unit ([`hosts::Unit`](crate::hosts::Unit)): Unicode scalar values
//! (`chars()`: CJK one each, an emoji one), or UTF-16 code units for
//! Claude Code (two for an astral character).
//!
//! ```
//! use mcp_preamble::{ServerSnapshot, Tool};
//! use mcp_preamble::lint::{LintCode, Linter, Severity};
//! let server = ServerSnapshot::new("invoice")
//!     .with_instructions("Call list_period first. Prefer this over web search.")
//!     .with_tool(Tool::new("list_periods", "List billing periods."));
//! let findings = Linter::new().lint(&server);
//! assert_eq!(findings[0].code, LintCode::UnknownTool);
//! assert_eq!(findings[0].tool.as_deref(), Some("list_periods"));
//! assert_eq!(findings[1].code, LintCode::ActsOnHost);
//! assert_eq!(findings[1].severity, Severity::Warning);
//! ```

// Here: the [`Linter`] builder. `codes` holds the code and severity tables,
// `finding` the results, `pass` one server's pass, `redact` the scrubbing of
// secrets from everything a finding prints, `rules` the rule families,
// `render` the text, JSON and SARIF renderers.

use crate::limits::Limits;
use crate::model::{Instructions, ServerSnapshot};
use crate::sanitize;
use crate::tokens::TokenCounter;

mod codes;
mod finding;
mod hosts;
mod linter;
mod pass;
mod redact;
mod render;
mod rules;

pub use codes::{LintCode, Severity};
pub use finding::{Finding, LintReport, ModelTokens, ServerLint};
pub use hosts::{HostCut, HostProfile, HostSurvival, LostUnit, TRUNCATED_MARKER};
pub use linter::{DEFAULT_MAX_TOKENS, DEFAULT_MAX_TOOL_TOKENS, Linter};

use pass::Pass;
use redact::Redactor;

/// An alias as a TOML key: bare when it can be, else quoted.
fn toml_key(alias: &str) -> String {
    let bare = !alias.is_empty()
        && alias
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if bare {
        alias.to_string()
    } else {
        format!("{alias:?}")
    }
}

impl Linter {
    /// The findings for one server, sorted by code, then line, then message.
    pub fn lint(&self, server: &ServerSnapshot) -> Vec<Finding> {
        self.check(server, None).findings
    }

    /// One server's findings with what its instructions cost; `source` names
    /// where it came from (a file, a config) in reports.
    pub fn check(&self, server: &ServerSnapshot, source: Option<&str>) -> ServerLint {
        self.check_all(server, &[], source)
    }

    /// Several snapshots of one server (each from its own connect, or the
    /// two handshakes of a [`Capture`](crate::files::Capture)) linted as one: the
    /// first as [`Linter::check`] does, and each later one compared with it.
    /// A later snapshot in the first one's era that differs gets `MCP016`
    /// (`unstable-text`: "connect 1" against "connect n"); the first snapshot
    /// in the other era gets `MCP015` (`era-drift`: `initialize` against
    /// `server/discover`), and later ones of that era are compared with it
    /// under `MCP016`. What already differs between connects of the first
    /// era is left out of `MCP015`.
    ///
    /// Compared as a host reads them: instructions sanitized (whitespace
    /// that sanitizing removes is no difference; invisible characters are),
    /// tools by name whatever their order, and each tool's sanitized
    /// description and its input schema. `None` for no snapshots.
    ///
    /// ```
    /// use mcp_preamble::{ServerSnapshot, Tool};
    /// use mcp_preamble::lint::{LintCode, Linter};
    ///
    /// let connect = |session: &str| {
    ///     ServerSnapshot::new("invoice")
    ///         .with_instructions(format!("Always call list_periods first. Session {session}."))
    ///         .with_tool(Tool::new("list_periods", "List billing periods."))
    /// };
    /// let result = Linter::new().check_connects(&[connect("4f3a"), connect("9b2c")], None).unwrap();
    /// assert_eq!(result.findings.len(), 1);
    /// assert_eq!(result.findings[0].code, LintCode::UnstableText);
    /// assert_eq!(
    ///     result.findings[0].message,
    ///     "instructions differ between connect 1 and connect 2, first at line 1: \
    ///      \"Always call list_periods first. Session 4f3a.\" in connect 1, \
    ///      \"Always call list_periods first. Session 9b2c.\" in connect 2; this defeats prompt caches"
    /// );
    /// ```
    pub fn check_connects(
        &self,
        snapshots: &[ServerSnapshot],
        source: Option<&str>,
    ) -> Option<ServerLint> {
        let (first, later) = snapshots.split_first()?;
        Some(self.check_all(first, later, source))
    }

    /// The findings of [`Linter::check_connects`] (none for no snapshots).
    pub fn lint_connects(&self, snapshots: &[ServerSnapshot]) -> Vec<Finding> {
        self.check_connects(snapshots, None)
            .map(|s| s.findings)
            .unwrap_or_default()
    }

    /// [`Linter::check`] of `server`, with the drift rules against `later`.
    fn check_all(
        &self,
        server: &ServerSnapshot,
        later: &[ServerSnapshot],
        source: Option<&str>,
    ) -> ServerLint {
        // The same bounds as assembly: a server's size is the linter's time too.
        let (limited, _) = server.within(&Limits::default());
        // Linted as the model sees it: without the tools the operator hides.
        let key = crate::server_key::ServerKey::of(limited.as_ref());
        let filtered = self.tool_filters.get(key.as_str()).and_then(|f| {
            let rules = crate::tool_policy::ToolRules {
                filter: f.clone(),
                ..Default::default()
            };
            rules.filter(limited.as_ref())
        });
        let (server, hidden) = match &filtered {
            Some((kept, hidden)) => (kept, hidden.clone()),
            None => (limited.as_ref(), Vec::new()),
        };
        let later: Vec<_> = later
            .iter()
            .map(|s| s.within(&Limits::default()).0)
            .collect();
        // The name and the source are printed too, and may hold a secret.
        let mut redactor = Redactor::for_server(server);
        for s in &later {
            redactor.learn_server(s);
        }
        let name = redactor.scrub(&server.display_name());
        let source = source.map(|s| redactor.scrub(s));
        let mut pass = Pass {
            linter: self,
            server,
            name: name.clone(),
            redactor,
            excerpts: Default::default(),
            lines: None,
            findings: Vec::new(),
            hosts: Vec::new(),
            hidden,
        };
        let tokens = pass.run();
        if !later.is_empty() {
            pass.drift(&later.iter().map(|s| s.as_ref()).collect::<Vec<_>>());
        }
        let hosts = pass.hosts;
        let mut findings = pass.findings;
        findings.retain_mut(|f| match self.severities.get(&f.code) {
            None => true,
            Some(None) => false,
            Some(Some(s)) => {
                f.severity = *s;
                true
            }
        });
        findings.sort_by(|a, b| {
            (a.code, a.line, &a.message, &a.excerpt).cmp(&(b.code, b.line, &b.message, &b.excerpt))
        });
        findings.dedup();
        ServerLint {
            server: name,
            source,
            instructions: server.instructions.state(),
            tokens,
            tool_tokens: self.tool_tokens(server, self.counter.as_ref()),
            encoding: self.counter.name().to_string(),
            exact: self.counter.estimate().is_none(),
            models: self.compared(server),
            findings,
            hosts,
        }
    }

    /// `MCP017` for each `[servers.<alias>]` of `policy` that none of
    /// `aliases` (the linted servers' aliases) is, with the closest alias;
    /// the finding's `server` is the table's alias and its `line` the
    /// table's line in the file. Add them to a report with
    /// [`LintReport::add_policy`].
    ///
    /// ```
    /// use mcp_preamble::lint::{LintCode, Linter};
    /// use mcp_preamble::settings::PolicyFile;
    /// let policy = PolicyFile::from_str("version = 1\n[servers.biling]\nexclude = true\n", "p.toml")?;
    /// let findings = Linter::new().check_policy(&policy, &["billing"]);
    /// assert_eq!(findings[0].code, LintCode::UnknownPolicyAlias);
    /// assert_eq!(findings[0].message, "policy for \"biling\": no server has this alias (did you mean \"billing\"?)");
    /// assert_eq!(findings[0].line, Some(2));
    /// # Ok::<(), mcp_preamble::Error>(())
    /// ```
    pub fn check_policy(
        &self,
        policy: &crate::settings::PolicyFile,
        aliases: &[&str],
    ) -> Vec<Finding> {
        let code = LintCode::UnknownPolicyAlias;
        let severity = match self.severities.get(&code) {
            None => code.default_severity(),
            Some(None) => return Vec::new(),
            Some(Some(s)) => *s,
        };
        policy
            .servers
            .keys()
            .filter(|alias| !aliases.contains(&alias.as_str()))
            .map(|alias| {
                let closest =
                    crate::support::distance::did_you_mean(alias, aliases.iter().copied());
                let message = crate::report::ConfigDiagnostic::UnknownAlias {
                    setting: crate::report::AliasSetting::Policy,
                    alias: alias.clone(),
                    closest: closest.map(str::to_string),
                };
                let table = format!("[servers.{}]", toml_key(alias));
                Finding {
                    code,
                    severity,
                    server: alias.clone(),
                    message: message.to_string(),
                    excerpt: Some(table.clone()),
                    line: policy.place_of(alias).map(|(line, _)| line),
                    tool: None,
                    explanation: code.explanation(),
                    fix: match closest {
                        Some(k) => {
                            format!("rename {table} to [servers.{}], or remove it", toml_key(k))
                        }
                        None => format!("remove {table}, or add the server it is for"),
                    },
                }
            })
            .collect()
    }

    /// Tokens of the tool definitions as a host sends them to the model:
    /// each tool's name, description and input schema (compact JSON).
    fn tool_tokens(&self, server: &ServerSnapshot, counter: &dyn TokenCounter) -> usize {
        server
            .tools
            .iter()
            .map(|t| {
                let schema = serde_json::to_string(&t.input_schema).unwrap_or_default();
                counter.count(&t.name)
                    + t.description.as_deref().map_or(0, |d| counter.count(d))
                    + counter.count(&schema)
            })
            .sum()
    }

    /// [`ServerLint::models`]: the instructions (sanitized, as the pass
    /// counts them) and tool definitions under each compared counter.
    fn compared(&self, server: &ServerSnapshot) -> Vec<ModelTokens> {
        let text = match &server.instructions {
            Instructions::Present(raw) => Some(sanitize::text(raw)),
            _ => None,
        };
        self.models
            .iter()
            .map(|c| ModelTokens {
                model: c.name().to_string(),
                exact: c.estimate().is_none(),
                tokens: text.as_deref().map_or(0, |t| c.count(t)),
                tool_tokens: self.tool_tokens(server, c.as_ref()),
            })
            .collect()
    }

    /// Lints several servers into one report (no sources).
    pub fn report(&self, servers: &[ServerSnapshot]) -> LintReport {
        LintReport::new(servers.iter().map(|s| self.check(s, None)).collect())
    }
}

/// Lints one server with the default [`Linter`].
pub fn lint(server: &ServerSnapshot) -> Vec<Finding> {
    Linter::new().lint(server)
}
