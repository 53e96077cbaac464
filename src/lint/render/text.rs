//! [`LintReport::to_text`]: the report for people.

use std::collections::BTreeSet;

use crate::lint::{Finding, LintCode, LintReport, Severity};
use crate::model::InstructionsState;

/// A finding's lines: severity, code and message; excerpt; fix.
fn write_finding(out: &mut String, f: &Finding) {
    use std::fmt::Write as _;
    let _ = writeln!(
        out,
        "  {}[{}] {}: {}",
        f.severity,
        f.code.code(),
        f.code.name(),
        f.message
    );
    if let Some(excerpt) = &f.excerpt {
        match f.line {
            Some(line) => {
                let _ = writeln!(out, "    line {line}: {excerpt}");
            }
            None => {
                let _ = writeln!(out, "    {excerpt}");
            }
        }
    }
    let _ = writeln!(out, "    fix: {}", f.fix);
}

impl LintReport {
    /// A human-readable report: per server, its cost and findings (each with
    /// its excerpt and fix) and, with hosts, what survives each; then a table
    /// of tokens per server (instructions, tool definitions); then what each
    /// code that occurred means, then a summary line.
    pub fn to_text(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        for s in self.servers() {
            let source = s
                .source
                .as_deref()
                .map(|p| format!(" ({p})"))
                .unwrap_or_default();
            let cost = match s.instructions {
                InstructionsState::Present if s.exact => {
                    format!("{} tokens of instructions ({})", s.tokens, s.encoding)
                }
                InstructionsState::Present => {
                    format!(
                        "{} tokens of instructions ({}, estimate)",
                        s.tokens, s.encoding
                    )
                }
                InstructionsState::Blank => "blank instructions".to_string(),
                InstructionsState::Absent => "no instructions".to_string(),
            };
            let count = match s.findings.len() {
                0 => "no findings".to_string(),
                1 => "1 finding".to_string(),
                n => format!("{n} findings"),
            };
            let _ = writeln!(out, "{}{source}: {cost}, {count}", s.server);
            for f in &s.findings {
                write_finding(&mut out, f);
            }
            for h in &s.hosts {
                out.push_str(&h.describe("  "));
            }
        }
        if let Some(source) = self.policy_source() {
            let count = match self.policy_findings().len() {
                0 => "no findings".to_string(),
                1 => "1 finding".to_string(),
                n => format!("{n} findings"),
            };
            let _ = writeln!(out, "policy file {source}: {count}");
            for f in self.policy_findings() {
                write_finding(&mut out, f);
            }
        }
        if !self.servers().is_empty() {
            out.push('\n');
            out.push_str(&self.token_table());
        }
        for (source, error) in self.failures() {
            let _ = writeln!(out, "{source}: not linted: {error}");
        }
        let seen: BTreeSet<LintCode> = self.findings().map(|f| f.code).collect();
        if !seen.is_empty() {
            out.push('\n');
            for code in seen {
                let _ = writeln!(
                    out,
                    "{} {}: {}",
                    code.code(),
                    code.name(),
                    code.explanation()
                );
            }
        }
        let _ = writeln!(out, "\n{}", self.summary());
        out
    }

    /// Per server, the tokens of its instructions and of its tool
    /// definitions (name, description, input schema), one aligned row each;
    /// with compared models, their two columns each, side by side.
    fn token_table(&self) -> String {
        use std::fmt::Write as _;
        let Some(first) = self.servers().first() else {
            return String::new();
        };
        let marked = |name: &str, exact: bool| {
            if exact {
                name.to_string()
            } else {
                format!("{name}, estimate")
            }
        };
        let label = format!("tokens ({})", marked(&first.encoding, first.exact));
        // Column pairs: the linter's counter, then each compared model.
        let mut heads = vec![("instructions".to_string(), "tool definitions".to_string())];
        heads.extend(first.models.iter().map(|m| {
            let name = marked(&m.model, m.exact);
            (format!("{name}: instructions"), format!("{name}: tools"))
        }));
        let rows: Vec<Vec<usize>> = self
            .servers()
            .iter()
            .map(|s| {
                let mut row = vec![s.tokens, s.tool_tokens];
                for m in &s.models {
                    row.extend([m.tokens, m.tool_tokens]);
                }
                row
            })
            .collect();
        let width = self
            .servers()
            .iter()
            .map(|s| s.server.chars().count() + 2)
            .chain([label.chars().count()])
            .max()
            .unwrap_or(0);
        let widths: Vec<usize> = heads
            .iter()
            .flat_map(|(a, b)| [a.chars().count().max(12), b.chars().count().max(16)])
            .collect();
        let mut out = format!("{label:<width$}");
        for ((a, b), w) in heads.iter().zip(widths.chunks(2)) {
            let _ = write!(out, "  {a:>w0$}  {b:>w1$}", w0 = w[0], w1 = w[1]);
        }
        out.push('\n');
        for (s, row) in self.servers().iter().zip(&rows) {
            let _ = write!(out, "{:<width$}", format!("  {}", s.server));
            for (n, w) in row.iter().zip(&widths) {
                let _ = write!(out, "  {n:>w$}");
            }
            out.push('\n');
        }
        out
    }

    /// `"37 servers, 5 findings (2 errors, 2 warnings, 1 note)"`.
    fn summary(&self) -> String {
        let n = |count: usize, one: &str, many: &str| {
            format!("{count} {}", if count == 1 { one } else { many })
        };
        let by = |s: Severity| self.findings().filter(|f| f.severity == s).count();
        let total = self.findings().count();
        let mut line = format!(
            "{}, {}",
            n(self.servers().len(), "server", "servers"),
            n(total, "finding", "findings")
        );
        if total > 0 {
            line.push_str(&format!(
                " ({}, {}, {})",
                n(by(Severity::Error), "error", "errors"),
                n(by(Severity::Warning), "warning", "warnings"),
                n(by(Severity::Note), "note", "notes")
            ));
        }
        if !self.failures().is_empty() {
            line.push_str(&format!(
                "; {} not linted",
                n(self.failures().len(), "server", "servers")
            ));
        }
        line
    }
}
