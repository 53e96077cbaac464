//! One server's pass: the findings its rules push, with their excerpts.

use std::collections::HashMap;

use crate::model::ServerSnapshot;
use crate::segment::Unit;
use crate::text;

use super::codes::{LintCode, Severity};
use super::finding::Finding;
use super::hosts::HostSurvival;
use super::linter::Linter;
use super::redact::Redactor;

/// One server's pass.
pub(super) struct Pass<'a> {
    pub(super) linter: &'a Linter,
    pub(super) server: &'a ServerSnapshot,
    /// The server's displayed name, already scrubbed.
    pub(super) name: String,
    /// Every string of every finding goes through it.
    pub(super) redactor: Redactor,
    /// Excerpts by unit (start, length): a long unit with many findings is
    /// scrubbed once.
    pub(super) excerpts: HashMap<(usize, usize), String>,
    /// The line index of the text findings were last located in (by its
    /// address and length): many findings in one long text count its
    /// newlines once.
    pub(super) lines: Option<((usize, usize), text::Lines)>,
    pub(super) findings: Vec<Finding>,
    /// What survives each host of [`Linter::hosts`].
    pub(super) hosts: Vec<HostSurvival>,
    /// Tools the operator's filter hides ([`Linter::tool_filter`]).
    pub(super) hidden: Vec<String>,
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
    /// (`MCP003`, `MCP006`). The one way findings are stored: it scrubs
    /// secrets from every string a rule built, so no rule can leak one.
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
            Some((text, unit_text, unit)) => {
                let excerpt = self
                    .excerpts
                    .entry((unit.start, unit_text.len()))
                    .or_insert_with(|| {
                        // Scrubbed before it is cut, so no secret is cut past recognition.
                        let clean = self.redactor.scrub(unit_text);
                        text::cut_chars(&text::one_line(&clean), EXCERPT_CHARS)
                    });
                let excerpt = excerpt.clone();
                let key = (text.as_ptr() as usize, text.len());
                if self.lines.as_ref().is_none_or(|(k, _)| *k != key) {
                    self.lines = Some((key, text::Lines::new(text)));
                }
                let line = self.lines.as_ref().map_or(1, |(_, l)| l.line(unit.start));
                (Some(excerpt), Some(line))
            }
            None => (None, None),
        };
        let scrub = |s: &str| self.redactor.scrub(s);
        let finding = Finding {
            code,
            severity,
            server: self.name.clone(),
            message: scrub(&message),
            excerpt,
            line,
            tool: tool.as_deref().map(scrub),
            explanation: code.explanation(),
            fix: scrub(&fix),
        };
        self.findings.push(finding);
    }
}

impl Pass<'_> {
    /// A finding about one tool's description: `excerpt` is the part of the
    /// description it is about (scrubbed and shortened here, like every
    /// excerpt); it has no line, which is a line of the instructions.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn push_tool(
        &mut self,
        code: LintCode,
        severity: Severity,
        message: String,
        tool: &str,
        excerpt: Option<&str>,
        fix: String,
    ) {
        self.push_with(code, severity, message, None, Some(tool.to_string()), fix);
        if let Some(excerpt) = excerpt {
            let clean = self.redactor.scrub(excerpt);
            if let Some(f) = self.findings.last_mut() {
                f.excerpt = Some(text::cut_chars(&text::one_line(&clean), EXCERPT_CHARS));
            }
        }
    }
}

/// Most characters of an excerpt.
const EXCERPT_CHARS: usize = 160;
