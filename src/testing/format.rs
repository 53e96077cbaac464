//! How failures show a server: its budget, removals and block.

use std::fmt;

use crate::report::{Assembly, Removal, ServerReport};
use crate::text;

/// Why a check failed: [`Display`](fmt::Display) is the documented message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub(super) message: String,
}

impl Failure {
    /// The message (the same text as `to_string()`).
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}

pub(super) fn assemble_failed(e: crate::error::Error) -> Failure {
    Failure {
        message: format!("cannot assemble: {e}"),
    }
}

pub(super) fn budget_line(budget: usize, assembly: &Assembly) -> String {
    format!(
        "  budget: {budget} tokens ({}, {} template)\n",
        assembly.encoding(),
        assembly.template()
    )
}

/// Removals and the block as rendered, indented under a headline.
pub(super) fn details(report: &ServerReport) -> String {
    let mut out = String::new();
    if !report.removed.is_empty() {
        out.push_str("  removed:\n");
        for r in &report.removed {
            out.push_str(&format!("    - {}\n", removal_line(r)));
        }
    }
    if report.included {
        out.push_str(&format!(
            "  block as rendered ({} tokens):\n",
            report.tokens
        ));
        out.push_str(&quoted_block(&report.text));
    } else {
        out.push_str(&format!(
            "  block as rendered: none ({})\n",
            why_omitted(report)
        ));
    }
    out.trim_end().to_string()
}

/// `budget: "text"`, `restates_tool (list_periods): "text"`.
pub(super) fn removal_line(r: &Removal) -> String {
    let by = r
        .tool
        .as_deref()
        .or(r.server.as_deref())
        .map(|x| format!(" ({x})"))
        .unwrap_or_default();
    format!(
        "{}{by}: {:?}",
        r.reason,
        text::cut_chars(&text::one_line(&r.text), 100)
    )
}

/// `45 tokens of 64, 2 removed`, `not included (omitted: …)`.
pub(super) fn server_summary(s: &ServerReport) -> String {
    if !s.included {
        return format!("not included ({})", why_omitted(s));
    }
    let mut out = format!("{} tokens", s.tokens);
    if let Some(b) = s.budget {
        out.push_str(&format!(" of {b}"));
    }
    if !s.removed.is_empty() {
        out.push_str(&format!(", {} removed", s.removed.len()));
    }
    if s.truncated {
        out.push_str(", truncated");
    }
    out
}

pub(super) fn why_omitted(report: &ServerReport) -> String {
    report
        .omitted
        .map_or_else(|| "omitted".to_string(), |why| why.to_string())
}

/// Every line of `text` as `    | line` (blank lines as `    |`).
pub(super) fn quoted_block(text: &str) -> String {
    let mut out = String::new();
    for line in text.trim_end_matches('\n').split('\n') {
        if line.is_empty() {
            out.push_str("    |\n");
        } else {
            out.push_str("    | ");
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}
