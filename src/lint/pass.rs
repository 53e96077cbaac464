//! One server's pass: the findings its rules push, with their excerpts.

use crate::model::ServerSnapshot;
use crate::segment::Unit;
use crate::text;

use super::rules::redact;
use super::{Finding, LintCode, Linter, Severity};

/// One server's pass.
pub(super) struct Pass<'a> {
    pub(super) linter: &'a Linter,
    pub(super) server: &'a ServerSnapshot,
    pub(super) name: String,
    pub(super) findings: Vec<Finding>,
}

impl Pass<'_> {
    /// Records a finding at its code's default severity; `at` is the
    /// sanitized text, the unit's text and the unit, for a finding about one
    /// unit (it gets an excerpt and a line).
    pub(super) fn push(
        &mut self,
        code: LintCode,
        message: String,
        at: Option<(&str, &str, &Unit)>,
        tool: Option<String>,
        fix: String,
    ) {
        self.push_with(code, code.default_severity(), message, at, tool, fix);
    }

    /// [`Pass::push`] for the codes whose severity varies by finding
    /// (`MCP003`, `MCP006`).
    pub(super) fn push_with(
        &mut self,
        code: LintCode,
        severity: Severity,
        message: String,
        at: Option<(&str, &str, &Unit)>,
        tool: Option<String>,
        fix: String,
    ) {
        let (excerpt, line) = match at {
            Some((text, unit_text, unit)) => (
                Some(excerpt(unit_text)),
                Some(text[..unit.start].matches('\n').count() + 1),
            ),
            None => (None, None),
        };
        self.findings.push(Finding {
            code,
            severity,
            server: self.name.clone(),
            message,
            excerpt,
            line,
            tool,
            explanation: code.explanation(),
            fix,
        });
    }
}

/// Most characters of an excerpt.
const EXCERPT_CHARS: usize = 160;

/// A unit as one line, secrets redacted, cut to [`EXCERPT_CHARS`].
fn excerpt(unit_text: &str) -> String {
    text::cut_chars(&redact(&text::one_line(unit_text)), EXCERPT_CHARS)
}
