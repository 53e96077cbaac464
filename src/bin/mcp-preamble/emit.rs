//! Output: the preview report (JSON or text table) and writing to stdout.
//!
//! Server text reaches stdout and stderr only through [`terminal_safe`]
//! (text) or [`json_safe`](mcp_preamble::text::json_safe) (JSON), so a hostile server cannot drive the
//! terminal, and only through `mcp_preamble::redact`, so no command prints
//! a secret: [`emit`] redacts secret-shaped values in everything (server
//! text under review keeps its URLs), [`emit_line`], [`emit_err`] and the
//! connection rows redact query strings of URLs too.

use std::fmt::{self, Write as _};
use std::io::{IsTerminal, Write as _};

use mcp_preamble::Assembly;
use mcp_preamble::lint::HostSurvival;
use mcp_preamble::pin::PinState;
use mcp_preamble::redact;
use mcp_preamble::report::{Omission, ServerDiagnostic};
use mcp_preamble::text::terminal_safe;

use crate::source::{Origin, Source};

/// `--check`: a server is new or changed against the lock and its
/// `on_change` is not `accept`.
pub fn pending_review(assembly: &Assembly) -> bool {
    assembly.servers().iter().any(|s| s.pin.pending())
}

/// `--check`: a tool rule of the policy matches none of its server's tools.
pub fn unmatched_rules(assembly: &Assembly) -> bool {
    assembly.servers().iter().any(|s| {
        s.notes
            .iter()
            .any(|n| matches!(n, ServerDiagnostic::UnmatchedToolRule { .. }))
    })
}

/// `--check`: a server was cut to fit, or left out as even its heading did not.
pub fn needed_trimming(assembly: &Assembly) -> bool {
    assembly
        .servers()
        .iter()
        .any(|s| s.trimmed() || matches!(s.omitted, Some(Omission::OverBudget { .. })))
}

struct Paint(bool);

impl Paint {
    fn on(&self, code: &str, text: &str) -> String {
        if self.0 {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
}

/// The preview report on stdout: JSON, or the section and a table.
pub fn emit_preview(
    assembly: &Assembly,
    sources: &[Source],
    hosts: &[(String, Vec<HostSurvival>)],
    json: bool,
) {
    if json {
        // Connection rows (errors, stderr tails) are not server text under review.
        let mut connections = serde_json::json!(sources);
        redact::json_strings(&mut connections, redact::printed);
        let mut report = serde_json::json!({ "assembly": assembly, "connections": connections });
        if !hosts.is_empty() {
            let by_server: serde_json::Map<String, serde_json::Value> = hosts
                .iter()
                .map(|(name, h)| (name.clone(), serde_json::json!(h)))
                .collect();
            report["hosts"] = serde_json::Value::Object(by_server);
        }
        emit(&mcp_preamble::report::printed_json(report));
    } else {
        emit(&text_report(assembly, sources));
        if !hosts.is_empty() {
            let mut text = "\nwhat reaches the model, per host:\n".to_string();
            for (name, list) in hosts {
                text.push_str(&format!("{name}\n"));
                for h in list {
                    text.push_str(&h.describe("  "));
                }
            }
            emit(&terminal_safe(&text));
        }
    }
}

/// The text report: the section, then a row per server.
fn text_report(assembly: &Assembly, sources: &[Source]) -> String {
    let mut out = String::new();
    let paint = Paint(std::io::stdout().is_terminal());
    // Printed as is: the library removed every control and format character
    // from server text; what else is there is the host's own template, which
    // may hold an emoji joiner that terminal_safe would escape.
    let _ = write!(out, "{}", assembly.text());
    if !assembly.text().is_empty() {
        let _ = writeln!(out);
    }
    let _ = writeln!(out);
    server_rows(&mut out, &paint, assembly, sources);
    for f in sources.iter().filter(|c| !c.ok) {
        let row = format!(
            "{:<24} {}",
            truncate(&terminal_safe(&redact::printed(&f.alias)), 24),
            terminal_safe(&redact::printed(f.error.as_deref().unwrap_or("failed")))
        );
        let _ = writeln!(out, "{}", paint.on("31", &row));
        for line in f.stderr.lines() {
            let _ = writeln!(out, "    stderr: {}", terminal_safe(&redact::printed(line)));
        }
    }
    pin_diffs(&mut out, &paint, assembly);
    let last = format!(
        "section: {} tokens ({}{}, template {})",
        assembly.total_tokens(),
        assembly.encoding(),
        counting_note(assembly.counting()),
        assembly.template()
    );
    let _ = writeln!(out, "{}", terminal_safe(&last));
    out
}

/// The table's header and a row per server, with its diagnostics.
fn server_rows(out: &mut String, paint: &Paint, assembly: &Assembly, sources: &[Source]) {
    // The pin column only when a lock was given.
    let pinned = assembly
        .servers()
        .iter()
        .any(|s| s.pin.state != PinState::Unpinned);
    let pin_cell = |state: &dyn fmt::Display| pinned.then(|| format!(" {state}"));
    let _ = writeln!(
        out,
        "{}",
        paint.on(
            "1",
            &(table_row([
                &"server",
                &"era/version",
                &"instr",
                &"tools",
                &"budget",
                &"before",
                &"after",
                &"removed",
                &"connect",
            ]) + &pin_cell(&"pin").unwrap_or_default())
        )
    );
    for s in assembly.servers() {
        let alias = s.alias.clone().unwrap_or_else(|| s.name.clone());
        let source = sources.iter().find(|c| c.alias == alias);
        let connect = match source {
            Some(c) if c.source == Origin::Cache => "cache".to_string(),
            Some(c) if c.source == Origin::Live => format!("{} ms", c.elapsed_ms),
            _ => "file".to_string(),
        };
        let trimmed = s.trimmed();
        let after = if s.included {
            s.tokens.to_string()
        } else {
            "-".to_string()
        };
        // Server text made safe before padding and coloring.
        let row = table_row([
            &truncate(&terminal_safe(&s.name), 24),
            &terminal_safe(&format!("{}/{}", s.era, s.protocol_version)),
            &s.instructions,
            &s.tools,
            &s.budget.map_or("-".to_string(), |b| b.to_string()),
            &s.tokens_before,
            &after,
            &s.removed.len(),
            &connect,
        ]) + &pin_cell(&s.pin.state).unwrap_or_default();
        let _ = writeln!(
            out,
            "{}",
            if trimmed {
                paint.on("33", &row)
            } else {
                paint.on("32", &row)
            }
        );
        for d in &s.notes {
            let _ = writeln!(out, "    {}", terminal_safe(&d.to_string()));
        }
    }
}

/// The diff of each new or changed server against its pin.
fn pin_diffs(out: &mut String, paint: &Paint, assembly: &Assembly) {
    for s in assembly.servers() {
        if !matches!(s.pin.state, PinState::New | PinState::Changed) {
            continue;
        }
        let head = format!("pin: {} {}: {}", s.name, s.pin.state, s.pin.summary());
        let _ = writeln!(out, "{}", paint.on("1", &terminal_safe(&head)));
        for line in s.pin.diff.as_deref().unwrap_or("").lines() {
            // The diff is of sanitized text; escaped again for the terminal.
            let line = terminal_safe(line);
            let code = match line.as_bytes().first() {
                Some(b'-') => "31",
                Some(b'+') => "32",
                Some(b'@') => "36",
                Some(b'\\') => "33",
                _ => "0",
            };
            let _ = writeln!(out, "    {}", paint.on(code, &line));
        }
    }
}

/// After the counter's name: nothing for exact counts, else what the
/// estimate is (`, estimate: o200k_base × 1.20–1.50 + 10%`) and how many
/// counts fell back.
fn counting_note(c: &mcp_preamble::tokens::Counting) -> String {
    let estimate = |e: &mcp_preamble::tokens::Estimate| {
        let f = [e.factors.prose, e.factors.code, e.factors.scripts];
        let lo = f.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = f.iter().copied().fold(0.0, f64::max);
        format!(
            "estimate: {} × {lo:.2}–{hi:.2} + {:.0}%",
            e.base,
            e.margin * 100.0
        )
    };
    let mut note = String::new();
    if let Some(e) = &c.estimate {
        note.push_str(&format!(", {}", estimate(e)));
    }
    if c.fallbacks > 0 {
        let by = c.fallback.as_deref().unwrap_or("the fallback");
        note.push_str(&format!(", {} counts by {by}", c.fallbacks));
        if let Some(e) = &c.fallback_estimate {
            note.push_str(&format!(" ({})", estimate(e)));
        }
    }
    note
}

/// One line of the table: the header and the servers share these widths.
fn table_row(cells: [&dyn fmt::Display; 9]) -> String {
    let [
        server,
        version,
        instr,
        tools,
        budget,
        before,
        after,
        removed,
        connect,
    ] = cells;
    format!(
        "{server:<24} {version:<18} {instr:<8} {tools:>5} {budget:>6} {before:>6} {after:>6} {removed:>7} {connect:>8}"
    )
}

/// Writes to stdout, secret-shaped values redacted; a closed pipe (`| head`)
/// is not an error.
pub fn emit(text: &str) {
    let text = redact::secrets(text);
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// One line on stdout, made terminal-safe, query strings and secrets redacted.
pub fn emit_line(line: &str) {
    emit(&format!("{}\n", terminal_safe(&redact::printed(line))));
}

/// One line on stderr, made terminal-safe, query strings and secrets
/// redacted: every message that may quote a server or a config (errors,
/// aliases, URLs, stderr tails) goes out this way.
pub fn emit_err(line: &str) {
    let _ = writeln!(
        std::io::stderr().lock(),
        "{}",
        terminal_safe(&redact::printed(line))
    );
}

/// The gateway's log (`serve`, a file or stderr): every event is one line,
/// redacted and made terminal-safe like everything else printed, and a
/// newline inside an event (an upstream's stderr, an error it sent) is
/// shown as `\n`, so nothing an upstream writes starts a log line of its own.
pub struct LogLines<W>(pub W);

impl<W: std::io::Write> std::io::Write for LogLines<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // tracing-subscriber writes each event whole, in one call.
        let text = String::from_utf8_lossy(buf);
        self.0.write_all(log_line(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// One log event as the line written: its own final newline kept, the
/// others shown as `\n` (and carriage returns, escapes, bidi controls as
/// [`terminal_safe`] shows them).
fn log_line(event: &str) -> String {
    let body = event.strip_suffix('\n').unwrap_or(event);
    let redacted = redact::printed(body);
    format!("{}\n", terminal_safe(&redacted.replace('\n', "\\n")))
}

pub fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n - 1).collect::<String>() + "…"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_event_is_one_inert_line() {
        let forged = "x INFO up: stderr: a\x1b]0;t\x07\r\n2026-01-01T00:00:00Z  INFO ok\u{202e}\n";
        assert_eq!(
            log_line(forged),
            "x INFO up: stderr: a\\x1b]0;t\\x07\\x0d\\n2026-01-01T00:00:00Z  INFO ok\\u{202e}\n"
        );
        assert_eq!(log_line("plain\n"), "plain\n");
    }
}
