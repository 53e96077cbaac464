//! Redaction of everything a report prints that a server wrote: every
//! finding's strings go through one server's [`Redactor`] in
//! [`Pass::push_with`](super::pass::Pass::push_with), so no rule can print a
//! secret, whatever it quotes.

use std::collections::HashSet;

use crate::model::{Instructions, ServerSnapshot};
use crate::sanitize;

use super::rules::find_secrets;

/// Slices of a secret this long are masked wherever they turn up: a rule
/// may quote a secret cut short (a phrase, a name), which no pattern knows.
const SLICE_CHARS: usize = 8;

/// Shorter secrets (a url's password) are masked whole from this length.
const SHORT_CHARS: usize = 5;

/// What replaces a masked slice.
const MASK: &str = "[redacted]";

/// One server's secrets, for scrubbing the strings its findings print.
#[derive(Debug, Default)]
pub(super) struct Redactor {
    /// Every [`SLICE_CHARS`]-character slice of the server's secrets.
    slices: HashSet<String>,
    /// Whole secrets shorter than that.
    short: Vec<String>,
}

impl Redactor {
    /// The secrets in a server's instructions, as sent and as sanitized.
    pub(super) fn for_server(server: &ServerSnapshot) -> Redactor {
        let mut r = Redactor::default();
        if let Instructions::Present(raw) | Instructions::Blank(raw) = &server.instructions {
            r.learn(raw);
            r.learn(&sanitize::text(raw));
        }
        r
    }

    fn learn(&mut self, text: &str) {
        for secret in find_secrets(text) {
            let value = &text[secret.value.clone()];
            // A key block's lines are what one-line excerpts keep of it.
            for chunk in value.split(|c: char| c.is_whitespace() || c == '\\') {
                let chars: Vec<(usize, char)> = chunk.char_indices().collect();
                if chars.len() < SLICE_CHARS {
                    if chars.len() >= SHORT_CHARS && chunk.len() == value.len() {
                        self.short.push(chunk.to_string());
                    }
                    continue;
                }
                for i in 0..=chars.len() - SLICE_CHARS {
                    let end = chars
                        .get(i + SLICE_CHARS)
                        .map_or(chunk.len(), |(at, _)| *at);
                    self.slices.insert(chunk[chars[i].0..end].to_string());
                }
            }
        }
    }

    /// `s` with every secret-shaped value redacted (see [`redact`]) and any
    /// slice of this server's secrets masked. Idempotent.
    pub(super) fn scrub(&self, s: &str) -> String {
        let s = redact(s);
        if self.slices.is_empty() && self.short.is_empty() {
            return s;
        }
        let starts: Vec<usize> = s.char_indices().map(|(i, _)| i).collect();
        let mut masked = vec![false; starts.len()];
        let end_of = |i: usize| starts.get(i).copied().unwrap_or(s.len());
        for i in 0..starts.len() {
            if i + SLICE_CHARS <= starts.len()
                && self.slices.contains(&s[starts[i]..end_of(i + SLICE_CHARS)])
            {
                masked[i..i + SLICE_CHARS].fill(true);
            }
        }
        for short in &self.short {
            for (at, _) in s.match_indices(short.as_str()) {
                let first = starts.partition_point(|&b| b < at);
                let last = starts.partition_point(|&b| b < at + short.len());
                masked[first..last].fill(true);
            }
        }
        if !masked.contains(&true) {
            return s;
        }
        let mut out = String::with_capacity(s.len());
        for (i, &start) in starts.iter().enumerate() {
            if !masked[i] {
                out.push_str(&s[start..end_of(i + 1)]);
            } else if i == 0 || !masked[i - 1] {
                out.push_str(MASK);
            }
        }
        out
    }
}

/// `text` with every secret-shaped value replaced by its redacted form, in
/// brackets; for strings with no server to learn from (a source, an error).
pub(super) fn redact(text: &str) -> String {
    let secrets = find_secrets(text);
    if secrets.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for s in secrets {
        if s.start < at {
            continue;
        }
        out.push_str(&text[at..s.start]);
        out.push_str(&format!("[redacted: {}]", s.redacted));
        at = s.end;
    }
    out.push_str(&text[at..]);
    out
}
