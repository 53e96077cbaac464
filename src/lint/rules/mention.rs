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
    let named = ["token", "marker", "tag", "delimiter"]
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
    let lead = before[..k].to_lowercase();
    let lead = lead.trim_end();
    q == '`' || MENTION.iter().any(|w| lead.ends_with(w))
}
