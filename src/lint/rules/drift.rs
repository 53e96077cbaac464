//! Drift between snapshots of one server: `initialize` against
//! `server/discover` (MCP015) and one connect against the next (MCP016).
//! Both codes share [`compare`], which reads two snapshots the way a host
//! does: instructions sanitized (and, apart, the invisible characters
//! sanitizing removes), tools by name (order does not matter), each tool's
//! sanitized description and input schema.
//!
//! Whitespace that sanitizing removes (indentation, trailing spaces, blank
//! lines) is not a difference: every host that sanitizes sends the same
//! text. Invisible characters are: they are what sanitizing hides, and a
//! message in them can reach a host that forwards the raw text.

use std::collections::BTreeMap;

use crate::lint::LintCode;
use crate::lint::pass::Pass;
use crate::model::{Era, Instructions, ServerSnapshot, Tool};
use crate::sanitize;
use crate::text::one_line;

/// Most tool names listed in one finding; the rest are counted.
const MAX_NAMES: usize = 10;

/// Most findings about single redescribed tools in one comparison; the
/// rest share one finding.
const MAX_TOOL_FINDINGS: usize = 10;

/// Characters of context shown before the first difference in a line.
const BEFORE: usize = 30;

/// Most characters shown of each side of a difference.
const SHOWN: usize = 70;

/// How two snapshots of one server differ, as a host would see it.
#[derive(Debug, Default)]
struct Drift {
    instructions: Option<TextDrift>,
    only_a: Vec<String>,
    only_b: Vec<String>,
    redescribed: Vec<ToolDrift>,
}

impl Drift {
    fn tools_differ(&self) -> bool {
        !self.only_a.is_empty() || !self.only_b.is_empty() || !self.redescribed.is_empty()
    }
}

/// How one text differs between two snapshots.
#[derive(Debug)]
enum TextDrift {
    /// Sent by one side only (the other has none, or only whitespace).
    Presence { a_chars: usize, b_chars: usize },
    /// The sanitized texts differ, first at this 1-based line: the two
    /// versions of the line around the first difference.
    Line { line: usize, a: String, b: String },
    /// Equal once sanitized; the invisible characters differ (how many each).
    Invisible { a: usize, b: usize },
}

/// One tool, same name, defined differently.
#[derive(Debug)]
struct ToolDrift {
    name: String,
    description: Option<TextDrift>,
    schema: bool,
}

/// Compares `b` with `a`.
fn compare(a: &ServerSnapshot, b: &ServerSnapshot) -> Drift {
    let raw = |i: &Instructions| i.raw().map(str::to_string);
    let mut drift = Drift {
        instructions: text_drift(
            raw(&a.instructions).as_deref(),
            raw(&b.instructions).as_deref(),
        ),
        ..Drift::default()
    };
    // By name, the first of a duplicated name winning, as hosts that key by name do.
    let by_name = |s: &'_ ServerSnapshot| {
        let mut map: BTreeMap<String, Tool> = BTreeMap::new();
        for t in &s.tools {
            map.entry(t.name.clone()).or_insert_with(|| t.clone());
        }
        map
    };
    let (ta, tb) = (by_name(a), by_name(b));
    for (name, tool) in &ta {
        match tb.get(name) {
            None => drift.only_a.push(name.clone()),
            Some(other) => {
                let description =
                    text_drift(tool.description.as_deref(), other.description.as_deref());
                // serde_json's maps compare without regard to key order.
                let schema = tool.input_schema != other.input_schema;
                if description.is_some() || schema {
                    drift.redescribed.push(ToolDrift {
                        name: name.clone(),
                        description,
                        schema,
                    });
                }
            }
        }
    }
    drift.only_b = tb
        .keys()
        .filter(|n| !ta.contains_key(*n))
        .cloned()
        .collect();
    drift
}

/// How text `b` differs from text `a` (raw, as sent; `None` when not sent).
fn text_drift(a: Option<&str>, b: Option<&str>) -> Option<TextDrift> {
    let (a, b) = (a.unwrap_or(""), b.unwrap_or(""));
    if a == b {
        return None;
    }
    let (sa, sb) = (sanitize::text(a), sanitize::text(b));
    if sa == sb {
        // CR is a line break to sanitizing, not a hidden character.
        let hidden = |s: &str| -> Vec<char> {
            s.chars()
                .filter(|c| *c != '\r' && sanitize::hidden(*c).is_some())
                .collect()
        };
        let (ha, hb) = (hidden(a), hidden(b));
        // Only whitespace differs: every sanitizing host sends the same text.
        return (ha != hb).then_some(TextDrift::Invisible {
            a: ha.len(),
            b: hb.len(),
        });
    }
    if sa.is_empty() || sb.is_empty() {
        return Some(TextDrift::Presence {
            a_chars: sa.chars().count(),
            b_chars: sb.chars().count(),
        });
    }
    let (la, lb): (Vec<&str>, Vec<&str>) = (sa.split('\n').collect(), sb.split('\n').collect());
    let at = la
        .iter()
        .zip(&lb)
        .position(|(x, y)| x != y)
        .unwrap_or(la.len().min(lb.len()));
    let (x, y) = (la.get(at).copied(), lb.get(at).copied());
    let (a, b) = around(x.unwrap_or(""), y.unwrap_or(""));
    Some(TextDrift::Line {
        line: at + 1,
        a: if x.is_some() { a } else { "(no line)".into() },
        b: if y.is_some() { b } else { "(no line)".into() },
    })
}

/// The two versions of a line from a little before their first difference,
/// each cut short, with `…` where text is left out.
fn around(a: &str, b: &str) -> (String, String) {
    let (ca, cb): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let common = ca.iter().zip(&cb).take_while(|(x, y)| x == y).count();
    // A short line is shown whole; a long one from the word that starts a
    // little before the difference.
    let mut start = 0;
    if ca.len().max(cb.len()) > SHOWN && common > BEFORE {
        start = common - BEFORE;
        if let Some(space) = ca[start..common].iter().position(|c| c.is_whitespace()) {
            start += space + 1;
        }
    }
    let show = |c: &[char]| {
        if c.is_empty() {
            return "(blank line)".to_string();
        }
        let rest = &c[start.min(c.len())..];
        let mut s: String = rest.iter().take(SHOWN).collect();
        s = one_line(&s);
        if start > 0 {
            s.insert(0, '…');
        }
        if rest.len() > SHOWN {
            s.push('…');
        }
        s
    };
    (show(&ca), show(&cb))
}

/// `a`, `b` and `c`, each in backticks; past [`MAX_NAMES`], `and N more`.
fn names(list: &[String]) -> String {
    let mut shown: Vec<String> = list
        .iter()
        .take(MAX_NAMES)
        .map(|n| format!("`{}`", one_line(n)))
        .collect();
    if list.len() > MAX_NAMES {
        shown.push(format!("and {} more", list.len() - MAX_NAMES));
    }
    shown.join(", ")
}

/// What a side is called in messages: its handshake for MCP015, its connect
/// for MCP016.
fn label(era: Era) -> &'static str {
    match era {
        Era::Legacy => "initialize",
        Era::Modern => "server/discover",
    }
}

impl Pass<'_> {
    /// MCP015 and MCP016 for the later snapshots of the pass's server: those
    /// in the first snapshot's era against the first (MCP016, "connect 1"
    /// against "connect n"); the first in the other era against the first
    /// (MCP015), and the rest of that era against their era's first (MCP016).
    /// What changes between connects is left out of MCP015, which it would
    /// otherwise report as an era difference.
    pub(in crate::lint) fn drift(&mut self, later: &[&ServerSnapshot]) {
        let first = self.server;
        let mut unstable = (false, false);
        let mut n = 1;
        for s in later.iter().filter(|s| s.era == first.era) {
            n += 1;
            let d = compare(first, s);
            unstable.0 |= d.instructions.is_some();
            unstable.1 |= d.tools_differ();
            let (a, b) = ("connect 1".to_string(), format!("connect {n}"));
            self.report_drift(LintCode::UnstableText, d, &a, &b);
        }
        let others: Vec<&ServerSnapshot> = later
            .iter()
            .copied()
            .filter(|s| s.era != first.era)
            .collect();
        if let Some((other, rest)) = others.split_first() {
            let mut d = compare(first, other);
            if unstable.0 {
                d.instructions = None;
            }
            if unstable.1 {
                (d.only_a, d.only_b, d.redescribed) = Default::default();
            }
            let (a, b) = (label(first.era), label(other.era));
            self.report_drift(LintCode::EraDrift, d, a, b);
            for (i, s) in rest.iter().enumerate() {
                let d = compare(other, s);
                let (a, b) = (format!("{b} connect 1"), format!("{b} connect {}", i + 2));
                self.report_drift(LintCode::UnstableText, d, &a, &b);
            }
        }
    }

    /// One finding for the instructions, one per side with tools of its own,
    /// one per redescribed tool (up to [`MAX_TOOL_FINDINGS`]).
    fn report_drift(&mut self, code: LintCode, d: Drift, a: &str, b: &str) {
        let fix = code.fix().to_string();
        let between = format!("between {a} and {b}");
        let cache = if code == LintCode::UnstableText {
            "; this defeats prompt caches"
        } else {
            ""
        };
        if let Some(t) = d.instructions {
            let (message, line) = instructions_drift(t, &between, a, b, cache);
            self.push(code, message, None, None, fix.clone());
            if let (Some(line), Some(f)) = (line, self.findings.last_mut()) {
                f.line = Some(line);
            }
        }
        for (side, list) in [(a, &d.only_a), (b, &d.only_b)] {
            if !list.is_empty() {
                self.push(
                    code,
                    format!("tools only in {side}: {}{cache}", names(list)),
                    None,
                    None,
                    fix.clone(),
                );
            }
        }
        let (shown, more) = d
            .redescribed
            .split_at(d.redescribed.len().min(MAX_TOOL_FINDINGS));
        for t in shown {
            let (what, detail) = tool_drift(t, a, b);
            self.push(
                code,
                format!(
                    "tool `{}` has a different {what} {between}{detail}{cache}",
                    one_line(&t.name)
                ),
                None,
                Some(t.name.clone()),
                fix.clone(),
            );
        }
        if !more.is_empty() {
            let list: Vec<String> = more.iter().map(|t| t.name.clone()).collect();
            self.push(
                code,
                format!(
                    "{} more tools have a different description or inputSchema {between}: {}{cache}",
                    more.len(),
                    names(&list)
                ),
                None,
                None,
                fix,
            );
        }
    }
}

/// The message about drifted instructions, and the line it is first at.
fn instructions_drift(
    t: TextDrift,
    between: &str,
    a: &str,
    b: &str,
    cache: &str,
) -> (String, Option<usize>) {
    match t {
        TextDrift::Presence { a_chars, b_chars } => (
            format!(
                "instructions differ {between}: {} characters in {a}, {} characters in {b}{cache}",
                a_chars, b_chars
            ),
            None,
        ),
        TextDrift::Line { line, a: x, b: y } => (
            format!(
                "instructions differ {between}, first at line {line}: \"{x}\" in {a}, \"{y}\" in {b}{cache}"
            ),
            Some(line),
        ),
        TextDrift::Invisible { a: x, b: y } => (
            format!(
                "instructions differ {between} only in invisible characters that sanitizing removes ({x} in {a}, {y} in {b}){cache}"
            ),
            None,
        ),
    }
}

/// What of a tool drifted, and how its description differs.
fn tool_drift(t: &ToolDrift, a: &str, b: &str) -> (&'static str, String) {
    let what = match (&t.description, t.schema) {
        (Some(_), true) => "description and inputSchema",
        (Some(_), false) => "description",
        _ => "inputSchema",
    };
    let detail = match &t.description {
        Some(TextDrift::Line { line, a: x, b: y }) => {
            format!(", first at line {line}: \"{x}\" in {a}, \"{y}\" in {b}")
        }
        Some(TextDrift::Presence { a_chars, b_chars }) => {
            format!(": {a_chars} characters in {a}, {b_chars} characters in {b}")
        }
        Some(TextDrift::Invisible { a: x, b: y }) => {
            format!(": only invisible characters that sanitizing removes ({x} in {a}, {y} in {b})")
        }
        None => String::new(),
    };
    (what, detail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shown_part_starts_near_the_difference() {
        let a = format!("{}Session 4f3a. Then more.", "word ".repeat(40));
        let b = format!("{}Session 9b2c. Then more.", "word ".repeat(40));
        let (x, y) = around(&a, &b);
        assert!(x.starts_with('…') && x.contains("Session 4f3a"), "{x}");
        assert!(y.contains("Session 9b2c"), "{y}");
        assert!(x.chars().count() <= SHOWN + 2);
    }

    #[test]
    fn whitespace_only_is_no_drift_and_invisible_characters_are() {
        assert!(text_drift(Some("Use x.  \n\n\n"), Some("  Use x.")).is_none());
        assert!(text_drift(Some("a\r\nb"), Some("a\nb")).is_none());
        assert!(matches!(
            text_drift(Some("Use x."), Some("Use\u{200b} x.")),
            Some(TextDrift::Invisible { a: 0, b: 1 })
        ));
        assert!(matches!(
            text_drift(None, Some("Use x.")),
            Some(TextDrift::Presence {
                a_chars: 0,
                b_chars: 6
            })
        ));
        // A line missing on one side.
        assert!(matches!(
            text_drift(Some("a\nb"), Some("a")),
            Some(TextDrift::Line { line: 2, .. })
        ));
    }
}
