//! What the pass produces: findings, one server's result, and the report
//! of several servers that the renderers print.

use serde::Serialize;

use super::codes::{LintCode, Severity};
use super::hosts::HostSurvival;
use crate::model::InstructionsState;

/// One problem in one server's instructions. Every string in it that
/// holds server text has secret-shaped values redacted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Finding {
    /// What kind of problem.
    pub code: LintCode,
    /// How serious it is.
    pub severity: Severity,
    /// The server, by its displayed name (alias, else `serverInfo.name`).
    pub server: String,
    /// What is wrong, lowercase first, e.g. ``instructions mention `get_invoices`, which is not one of the server's tools; did you mean `get_invoice`?``.
    pub message: String,
    /// The unit (sentence, list item, heading) it is about, on one line,
    /// with anything secret-shaped redacted; `None` for the whole text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<String>,
    /// The 1-based line of the excerpt in the sanitized instructions (for
    /// `MCP015` and `MCP016` on instructions: the first line that differs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// The tool concerned: the restated tool (`MCP002`), the closest real
    /// tool to an unknown name (`MCP003`), or the tool whose description
    /// the finding is about (`MCP011` to `MCP014`), or the tool defined
    /// differently in two snapshots (`MCP015`, `MCP016`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Why it matters ([`LintCode::explanation`]).
    pub explanation: &'static str,
    /// What to do about this finding.
    pub fix: String,
}

/// One server's lint result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ServerLint {
    /// The server's displayed name.
    pub server: String,
    /// Where it came from (a file or a config path), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Whether the server sent instructions (`"present"`, `"absent"` or `"blank"` in the JSON).
    pub instructions: InstructionsState,
    /// Tokens of the sanitized instructions (0 unless present).
    pub tokens: usize,
    /// Tokens of the tool definitions: every tool's name, description and
    /// input schema (compact JSON), counted apart and added up.
    pub tool_tokens: usize,
    /// The encoding of [`ServerLint::tokens`], e.g. `"o200k_base"`, or
    /// the linter's counter's name (a model, a tokenizer file).
    pub encoding: String,
    /// Whether [`ServerLint::tokens`] is exact; `false` for an estimate
    /// (the Claude estimate), and only then in the JSON (`"exact": false`).
    #[serde(skip_serializing_if = "is_true")]
    pub exact: bool,
    /// The same counts under other models, side by side
    /// ([`Linter::compare`](super::Linter::compare)); absent without.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<ModelTokens>,
    /// The findings, sorted.
    pub findings: Vec<Finding>,
    /// What survives each host given to
    /// [`Linter::hosts`](super::Linter::hosts), in that order (empty
    /// without, and for absent or blank instructions).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostSurvival>,
}

/// A server's instructions and tool definitions counted under one model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ModelTokens {
    /// The counter's name: a model (`claude-sonnet-4`), an encoding.
    pub model: String,
    /// Whether the counts are exact (`false` for an estimate).
    pub exact: bool,
    /// Tokens of the sanitized instructions (0 unless present).
    pub tokens: usize,
    /// Tokens of the tool definitions, as [`ServerLint::tool_tokens`].
    pub tool_tokens: usize,
}

fn is_true(b: &bool) -> bool {
    *b
}

/// Findings for several servers, rendered as text, JSON or SARIF.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LintReport {
    servers: Vec<ServerLint>,
    failures: Vec<(String, String)>,
    /// The policy file checked, and its findings.
    policy: Option<(String, Vec<Finding>)>,
}

impl LintReport {
    /// A report of these servers, sorted by name, then source.
    pub fn new(mut servers: Vec<ServerLint>) -> LintReport {
        servers.sort_by(|a, b| (&a.server, &a.source).cmp(&(&b.server, &b.source)));
        LintReport {
            servers,
            failures: Vec::new(),
            policy: None,
        }
    }

    /// Records a server that could not be linted (a file that does not load,
    /// a server that does not answer): where, and why.
    pub fn add_failure(&mut self, source: impl Into<String>, error: impl Into<String>) {
        // An error may quote what a server sent, a config's URL, its stderr.
        let printed = |s: String| crate::redact::printed(&s).into_owned();
        let (source, error) = (printed(source.into()), printed(error.into()));
        self.failures.push((source, error));
        self.failures.sort();
    }

    /// The servers, sorted.
    pub fn servers(&self) -> &[ServerLint] {
        &self.servers
    }

    /// The recorded failures: `(source, error)`, sorted.
    pub fn failures(&self) -> &[(String, String)] {
        &self.failures
    }

    /// Adds the findings of a policy file ([`Linter::check_policy`](super::Linter::check_policy)),
    /// read from `source`; they count like any server's.
    pub fn add_policy(&mut self, source: impl Into<String>, findings: Vec<Finding>) {
        self.policy = Some((source.into(), findings));
    }

    /// Where the policy file given to [`LintReport::add_policy`] was read from.
    pub fn policy_source(&self) -> Option<&str> {
        self.policy.as_ref().map(|(s, _)| s.as_str())
    }

    /// The policy file's findings.
    pub fn policy_findings(&self) -> &[Finding] {
        self.policy.as_ref().map_or(&[], |(_, f)| f.as_slice())
    }

    /// Every finding, server by server, then the policy file's.
    pub fn findings(&self) -> impl Iterator<Item = &Finding> {
        self.servers
            .iter()
            .flat_map(|s| s.findings.iter())
            .chain(self.policy_findings())
    }

    /// How many findings are at or above `severity`.
    pub fn count_at_least(&self, severity: Severity) -> usize {
        self.findings().filter(|f| f.severity >= severity).count()
    }

    /// The highest severity of any finding.
    pub fn max_severity(&self) -> Option<Severity> {
        self.findings().map(|f| f.severity).max()
    }
}
