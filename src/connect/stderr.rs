//! A stdio server's stderr in the log: one event per line it wrote (target
//! `mcp_preamble::upstream`, inside a span `upstream{alias=…}` that names
//! the server), its text made terminal-safe, so a line cannot color, move
//! or erase what a terminal shows, nor pass for a line of its own.
//!
//! A server that writes without end costs the log little: a line is cut at
//! [`MAX_LINE`] bytes, and at most [`BURST`] lines are logged at once, then
//! [`PER_SECOND`] a second; the lines left out are counted in one event when
//! logging resumes (or when the server's stderr closes).

use tokio::time::Instant;

use crate::text::terminal_safe;

/// The longest line logged, in bytes; the rest of it is left out.
pub(crate) const MAX_LINE: usize = 2048;
/// How many lines may be logged at once.
pub(crate) const BURST: f64 = 200.0;
/// How many lines a second may be logged after a burst.
pub(crate) const PER_SECOND: f64 = 50.0;

/// One server's stderr, line by line, into the log.
pub(super) struct StderrLines {
    span: tracing::Span,
    /// The line so far (at most [`MAX_LINE`] bytes kept).
    pending: Vec<u8>,
    /// Bytes of the current line past [`MAX_LINE`].
    cut: usize,
    /// Lines that may be logged now.
    tokens: f64,
    last: Option<Instant>,
    /// Lines left out since the last one logged.
    dropped: u64,
}

impl StderrLines {
    pub(super) fn new(alias: &str) -> StderrLines {
        StderrLines {
            span: tracing::info_span!(target: "mcp_preamble::upstream", "upstream", alias = %alias),
            pending: Vec::new(),
            cut: 0,
            tokens: BURST,
            last: None,
            dropped: 0,
        }
    }

    /// Takes in what the server wrote (`now`: when it was read).
    pub(super) fn feed(&mut self, mut bytes: &[u8], now: Instant) {
        while let Some(end) = bytes.iter().position(|b| *b == b'\n') {
            self.take(&bytes[..end]);
            self.line(now);
            bytes = &bytes[end + 1..];
        }
        self.take(bytes);
    }

    /// The server's stderr closed: its last line without a newline, and
    /// the count of lines left out.
    pub(super) fn finish(&mut self, now: Instant) {
        if !self.pending.is_empty() || self.cut > 0 {
            self.line(now);
        }
        self.tell_dropped();
    }

    fn take(&mut self, part: &[u8]) {
        let room = MAX_LINE.saturating_sub(self.pending.len());
        let kept = part.len().min(room);
        self.pending.extend_from_slice(&part[..kept]);
        self.cut += part.len() - kept;
    }

    fn line(&mut self, now: Instant) {
        let raw = std::mem::take(&mut self.pending);
        let cut = std::mem::take(&mut self.cut);
        if let Some(last) = self.last {
            let refill = now.saturating_duration_since(last).as_secs_f64() * PER_SECOND;
            self.tokens = (self.tokens + refill).min(BURST);
        }
        self.last = Some(now);
        if self.tokens < 1.0 {
            self.dropped += 1;
            return;
        }
        self.tokens -= 1.0;
        self.tell_dropped();
        let text = String::from_utf8_lossy(&raw);
        let text = terminal_safe(text.strip_suffix('\r').unwrap_or(&text)).into_owned();
        self.span.in_scope(|| match cut {
            0 => tracing::info!(target: "mcp_preamble::upstream", "stderr: {text}"),
            n => tracing::info!(target: "mcp_preamble::upstream", "stderr: {text}… ({n} more bytes not logged)"),
        });
    }

    fn tell_dropped(&mut self) {
        let n = std::mem::take(&mut self.dropped);
        if n > 0 {
            self.span.in_scope(|| {
                tracing::warn!(target: "mcp_preamble::upstream", "{n} stderr lines not logged (more than {PER_SECOND} a second)");
            });
        }
    }

    #[cfg(test)]
    fn state(&self) -> (usize, u64) {
        (self.pending.len(), self.dropped)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_flood_is_logged_as_a_burst_then_a_rate() {
        let start = Instant::now();
        let mut lines = StderrLines::new("x");
        let flood = "line\n".repeat(1000);
        lines.feed(flood.as_bytes(), start);
        assert_eq!(lines.state(), (0, 1000 - BURST as u64));
        // A second later, 50 more may be logged: the first tells the count.
        lines.feed(b"again\n", start + Duration::from_secs(1));
        assert_eq!(lines.state(), (0, 0));
    }

    #[test]
    fn a_line_without_end_is_kept_to_its_cap() {
        let start = Instant::now();
        let mut lines = StderrLines::new("x");
        lines.feed(&vec![b'a'; MAX_LINE * 3], start);
        assert_eq!(lines.state(), (MAX_LINE, 0));
        assert_eq!(lines.cut, MAX_LINE * 2);
        lines.feed(b"\nnext", start);
        assert_eq!((lines.state(), lines.cut), ((4, 0), 0));
    }
}
