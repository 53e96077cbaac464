//! A phrase mentioned, not meant (issue 55): MCP020 and MCP021 skip a
//! match quoted after a word of mentioning (`text such as 'ignore previous
//! instructions'`), in backticks, or a chat template's marker on a line
//! that describes markers or a template (`each message is wrapped as
//! <|start_header_id|>{role}<|end_header_id|>`).

use std::ops::Range;

/// Words that name what follows as an example or a format, not an act.
const MENTION: &[&str] = &[
    "such as",
    "like",
    "e.g.",
    "for example",
    "contain",
    "contains",
    "containing",
    "phrases",
    "phrase",
    "strings",
    "string",
    "words",
    "starting with",
    "start with",
    "begin with",
    "prefixed with",
    "prefix",
    "label",
    "labels",
    "pattern",
    "patterns",
    "include",
    "includes",
    "including",
    "i.e.",
    "e.g.,",
];

/// Nouns after a quoted phrase that make it a specimen (`'ignore previous
/// instructions' attempts`, `"do not tell the user"-style text`).
const SPECIMEN: &[&str] = &[
    "attempt",
    "attempts",
    "pattern",
    "patterns",
    "phrase",
    "phrases",
    "string",
    "strings",
    "payload",
    "payloads",
    "attack",
    "attacks",
    "injection",
    "injections",
    "style",
    "example",
    "examples",
    "trick",
    "tricks",
    "wording",
    "text",
    "lines",
];

/// Nouns that make a chat template's marker a thing described.
const MARKER_NOUNS: &[&str] = &[
    "marker",
    "markers",
    "delimiter",
    "delimiters",
    "special token",
    "special tokens",
    "chat template",
    "chatml",
];

/// Words of a line that says how a template marks turns.
const TEMPLATE_VERBS: &[&str] = &[
    "wrapped as",
    "wraps a",
    "wrap each",
    "marked with",
    "roles are",
    "formats prompts",
    "formats a conversation",
    "fine-tun",
];

/// The match at `m` is quoted after a word of mentioning (`text such as
/// 'ignore previous instructions'`), in backticks, or a marker on a line
/// that describes markers (`wrapping each message in <|im_start|> …
/// markers`).
pub(super) fn mention(text: &str, m: Range<usize>) -> bool {
    // A word's closing quote (`instructions'`) belongs after the match.
    let mut m = m;
    if text[m.clone()].ends_with(['\'', '’']) && m.end - m.start > 1 {
        m.end -= text[m.clone()]
            .chars()
            .next_back()
            .map_or(0, char::len_utf8);
    }
    let line_start = text[..m.start].rfind('\n').map_or(0, |k| k + 1);
    let line_end = text[m.end..].find('\n').map_or(text.len(), |k| m.end + k);
    let before = &text[line_start..m.start];
    let after = &text[m.end..line_end];
    let line = text[line_start..line_end].to_lowercase();
    let marker = text[m.clone()].contains('<') || text[m.clone()].contains('[');
    let next = after.trim_start().to_lowercase();
    let named = [
        "token",
        "marker",
        "tag",
        "delimiter",
        "placeholder",
        "variable",
    ]
    .iter()
    .any(|n| next.starts_with(n));
    // A template described: placeholders (`{role}`) or how turns are marked.
    let template =
        line.contains('{') && line.contains('}') || TEMPLATE_VERBS.iter().any(|v| line.contains(v));
    if marker && (named || template || MARKER_NOUNS.iter().any(|n| line.contains(n))) {
        return true;
    }
    // The nearest quote before the match, closed after it.
    let open = before.char_indices().rev().find(|&(k, c)| {
        matches!(c, '"' | '`' | '“' | '‘')
            || (c == '\''
                && before[..k]
                    .chars()
                    .next_back()
                    .is_none_or(|p| !p.is_alphanumeric()))
    });
    let Some((k, q)) = open else {
        return false;
    };
    let close = match q {
        '“' => '”',
        '‘' => '’',
        c => c,
    };
    let inside = &before[k + q.len_utf8()..];
    if inside.contains(close) || !after.contains(close) {
        return false;
    }
    // What follows the closing quote: a noun naming the phrase a specimen.
    let tail = after[after.find(close).map_or(0, |c| c + close.len_utf8())..].to_lowercase();
    let next = tail
        .trim_start_matches(['-', ' '])
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or("");
    q == '`' || SPECIMEN.contains(&next) || listed(&before[..k], q, close)
}

/// The text before a quote leads to it by a word of mentioning, directly
/// or through a list of quoted items (`e.g. 'a', 'b', 'c'`).
fn listed(lead: &str, open: char, close: char) -> bool {
    let mut lead = lead.to_lowercase();
    for _ in 0..8 {
        let trimmed = lead.trim_end();
        if MENTION.iter().any(|w| trimmed.ends_with(w)) {
            return true;
        }
        // `…'b', ` or `…'b' or `: step back over the previous item.
        let rest = trimmed
            .strip_suffix(',')
            .or_else(|| trimmed.strip_suffix(" or"))
            .or_else(|| trimmed.strip_suffix(" and"))
            .map(str::trim_end);
        let Some(rest) = rest.and_then(|r| r.strip_suffix(close)) else {
            return false;
        };
        let Some(k) = rest.rfind(open) else {
            return false;
        };
        lead = rest[..k].to_string();
    }
    false
}
