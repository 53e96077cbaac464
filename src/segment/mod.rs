//! Splitting sanitized instructions into units: the pieces that de-duplication
//! and budgets keep or drop whole.
//!
//! Markdown blocks are units of their own: a heading, a list item (with its
//! indented continuation lines), a table's header with its delimiter row, a
//! table row, a fenced code block. Paragraph text is split into sentences at
//! Unicode (UAX #29) sentence boundaries, except inside inline code and URLs
//! and after abbreviations such as "e.g." — the splitter already keeps
//! version numbers, paths and domain names whole. A quotation, parenthesis
//! or bracket that spans sentences stays in one unit (`pairs.rs`), and so
//! does a sentence that only continues the one before it ("This …",
//! "Otherwise …"): no budget keeps one half of either.

mod pairs;

use unicode_segmentation::UnicodeSegmentation;

use crate::markdown::{
    fence_closes, fence_open, heading_level, is_list_item, is_table_delimiter, is_table_row,
};

/// What a unit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UnitKind {
    Heading(u8),
    ListItem,
    TableHead,
    TableRow,
    Code,
    Sentence,
}

/// A unit: a byte range of the text it was cut from (no trailing whitespace).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unit {
    pub start: usize,
    pub end: usize,
    pub kind: UnitKind,
}

impl Unit {
    pub(crate) fn text<'a>(&self, source: &'a str) -> &'a str {
        &source[self.start..self.end]
    }
}

const ABBREVIATIONS: &[&str] = &[
    "e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "incl.", "esp.", "mr.", "mrs.", "ms.", "dr.",
    "no.", "nos.", "fig.", "st.", "jr.", "sr.", "ca.", "al.", "resp.", "min.", "max.", "avg.",
    "est.", "dept.", "corp.", "inc.", "ltd.", "co.", "vol.", "ver.", "v.", "op.", "ref.", "sec.",
];

/// Splits `text` (already sanitized) into units, in order.
pub(crate) fn units(text: &str) -> Vec<Unit> {
    let lines = line_ranges(text);
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let (start, end) = lines[i];
        let line = &text[start..end];
        if line.trim().is_empty() {
            i += 1;
            continue;
        }
        if let Some(fence) = fence_open(line) {
            let mut j = i + 1;
            while j < lines.len() && !fence_closes(&text[lines[j].0..lines[j].1], fence) {
                j += 1;
            }
            let last = j.min(lines.len() - 1);
            out.push(unit(text, start, lines[last].1, UnitKind::Code));
            i = last + 1;
            continue;
        }
        if let Some(level) = heading_level(line) {
            out.push(unit(text, start, end, UnitKind::Heading(level)));
            i += 1;
            continue;
        }
        if is_table_row(line) {
            if i + 1 < lines.len() && is_table_delimiter(&text[lines[i + 1].0..lines[i + 1].1]) {
                out.push(unit(text, start, lines[i + 1].1, UnitKind::TableHead));
                i += 2;
            } else {
                out.push(unit(text, start, end, UnitKind::TableRow));
                i += 1;
            }
            continue;
        }
        if is_list_item(line) {
            let mut j = i + 1;
            while j < lines.len() {
                let next = &text[lines[j].0..lines[j].1];
                let continues = !next.trim().is_empty()
                    && next.starts_with([' ', '\t'])
                    && !is_list_item(next)
                    && fence_open(next).is_none();
                if !continues {
                    break;
                }
                j += 1;
            }
            out.push(unit(text, start, lines[j - 1].1, UnitKind::ListItem));
            i = j;
            continue;
        }
        let mut j = i;
        while j < lines.len() {
            let next = &text[lines[j].0..lines[j].1];
            if next.trim().is_empty()
                || (j > i
                    && (fence_open(next).is_some()
                        || heading_level(next).is_some()
                        || is_table_row(next)
                        || is_list_item(next)))
            {
                break;
            }
            j += 1;
        }
        sentences(text, start, lines[j - 1].1, &mut out);
        i = j;
    }
    out
}

fn unit(text: &str, start: usize, end: usize, kind: UnitKind) -> Unit {
    let end = start + text[start..end].trim_end().len();
    Unit { start, end, kind }
}

fn line_ranges(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, b) in text.bytes().enumerate() {
        if b == b'\n' {
            out.push((start, i));
            start = i + 1;
        }
    }
    out.push((start, text.len()));
    out
}

/// Byte ranges (relative to `para`) where a sentence must not end or a cut
/// fall: code spans, URLs and matched quotation marks and brackets
/// (sorted, not overlapping).
pub(crate) fn protected(para: &str) -> Vec<(usize, usize)> {
    let spans = spans(para);
    let mut all = pairs::matched(para, &spans);
    if all.is_empty() {
        return spans;
    }
    all.extend_from_slice(&spans);
    all.sort_unstable();
    pairs::merged(&all)
}

/// Byte ranges (relative to `para`) of code spans and URLs.
fn spans(para: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let b = para.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'`' {
            let run = b[i..].iter().take_while(|c| **c == b'`').count();
            let mut j = i + run;
            let mut closed = None;
            while j < b.len() {
                if b[j] == b'`' {
                    let r = b[j..].iter().take_while(|c| **c == b'`').count();
                    if r == run {
                        closed = Some(j + r);
                        break;
                    }
                    j += r;
                } else {
                    j += 1;
                }
            }
            match closed {
                Some(end) => {
                    out.push((i, end));
                    i = end;
                }
                None => i += run,
            }
            continue;
        }
        if para[i..].starts_with("http://") || para[i..].starts_with("https://") {
            let len = para[i..]
                .find(|c: char| c.is_whitespace() || c == '>' || c == '"')
                .unwrap_or(para.len() - i);
            // A sentence may end right after a URL: the final dot is not part of it.
            let url = para[i..i + len].trim_end_matches(['.', ',', ')', ';', ':', '!', '?']);
            out.push((i, i + url.len()));
            i += len.max(1);
            continue;
        }
        i += para[i..].chars().next().map_or(1, char::len_utf8);
    }
    out
}

/// Whether `at` falls strictly inside one of `guards` (sorted, not
/// overlapping): a binary search, since a paragraph can hold thousands.
pub(crate) fn inside_guard(guards: &[(usize, usize)], at: usize) -> bool {
    let k = guards.partition_point(|(a, _)| *a < at);
    k > 0 && at < guards[k - 1].1
}

fn ends_with_abbreviation(piece: &str) -> bool {
    // From the end: pieces grow while abbreviations continue them.
    let last = piece.split_whitespace().next_back().unwrap_or("");
    let last = last
        .trim_start_matches(['(', '"', '\'', '['])
        .to_lowercase();
    if ABBREVIATIONS.contains(&last.as_str()) {
        return true;
    }
    // Initialisms such as "U.S." or "a.m.".
    let dots = last.matches('.').count();
    dots >= 2 && last.len() <= 6 && last.chars().all(|c| c == '.' || c.is_alphabetic())
}

fn sentences(text: &str, start: usize, end: usize, out: &mut Vec<Unit>) {
    // Line breaks inside a paragraph are soft in markdown: split as if they
    // were spaces (same byte length, so offsets hold).
    let joined = text[start..end].replace('\n', " ");
    let para = joined.as_str();
    let guards = protected(para);
    let mut current: Option<usize> = None;
    let mut pieces = para.split_sentence_bound_indices().peekable();
    while let Some((at, piece)) = pieces.next() {
        let begin = *current.get_or_insert(at);
        let piece_end = at + piece.len();
        let next_at = pieces.peek().map(|(n, _)| *n);
        let keep_going = match next_at {
            None => false,
            Some(n) => inside_guard(&guards, n) || ends_with_abbreviation(&para[begin..piece_end]),
        };
        if keep_going {
            continue;
        }
        let s = &para[begin..piece_end];
        let lead = s.len() - s.trim_start().len();
        let trimmed = s.trim();
        if !trimmed.is_empty() {
            let a = start + begin + lead;
            match out.last_mut() {
                // Only a sentence of this paragraph can be continued.
                Some(prev) if prev.start >= start && continues(trimmed) => {
                    prev.end = a + trimmed.len();
                }
                _ => out.push(Unit {
                    start: a,
                    end: a + trimmed.len(),
                    kind: UnitKind::Sentence,
                }),
            }
        }
        current = None;
    }
}

/// First words of a sentence that only continues the one before it: it
/// points back to it ("This", "It", "Such") or hangs on it ("Otherwise",
/// "However"), and means nothing alone. A next step ("Then call …",
/// "Also …") stands alone.
const CONTINUATIONS: &[&str] = &[
    "this",
    "that",
    "these",
    "those",
    "it",
    "its",
    "they",
    "them",
    "their",
    "such",
    "otherwise",
    "however",
    "instead",
    "else",
    "therefore",
    "thus",
    "hence",
    "likewise",
    "similarly",
];

/// Nouns after "This"/"These" that name the server or its instructions,
/// not the sentence before ("This server …" stands alone).
const SELF_NOUNS: &[&str] = &[
    "server",
    "servers",
    "mcp",
    "instructions",
    "guide",
    "document",
];

/// Whether `sentence` only continues the sentence before it.
fn continues(sentence: &str) -> bool {
    let mut words = sentence
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty());
    let Some(first) = words.next() else {
        return false;
    };
    let first = first.to_lowercase();
    if !CONTINUATIONS.contains(&first.as_str()) {
        return false;
    }
    let next = words.next().map(str::to_lowercase).unwrap_or_default();
    !(matches!(first.as_str(), "this" | "these") && SELF_NOUNS.contains(&next.as_str()))
}

/// Rebuilds text from the kept units, with the separator the source had
/// between them: a blank line, a newline, or a space.
pub(crate) fn join(text: &str, units: &[Unit], keep: impl Fn(usize) -> bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut gap = Gap::None;
    let mut any = false;
    for (k, u) in units.iter().enumerate() {
        if k > 0 {
            gap = gap.max(Gap::of(&text[units[k - 1].end..u.start]));
        }
        if !keep(k) {
            continue;
        }
        if any {
            out.push_str(match gap {
                Gap::Blank => "\n\n",
                Gap::Newline => "\n",
                Gap::Space | Gap::None => " ",
            });
        }
        out.push_str(u.text(text));
        any = true;
        gap = Gap::None;
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Gap {
    None,
    Space,
    Newline,
    Blank,
}

impl Gap {
    fn of(s: &str) -> Gap {
        match s.matches('\n').count() {
            0 if s.is_empty() => Gap::None,
            0 => Gap::Space,
            1 => Gap::Newline,
            _ => Gap::Blank,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(s: &str) -> Vec<(&str, UnitKind)> {
        units(s).iter().map(|u| (u.text(s), u.kind)).collect()
    }

    #[test]
    fn sentences_respect_abbreviations_code_versions_paths_and_urls() {
        let s = "Codes are case-sensitive (e.g. `EUR`, not `eur`). Use v1.2.3 of ./src/main.rs, i.e. the latest. \
                 See https://example.com/a.b?c=d. Call `a. B` now. The U.S. office is closed.";
        let got: Vec<&str> = texts(s).into_iter().map(|(t, _)| t).collect();
        assert_eq!(
            got,
            [
                "Codes are case-sensitive (e.g. `EUR`, not `eur`).",
                "Use v1.2.3 of ./src/main.rs, i.e. the latest.",
                "See https://example.com/a.b?c=d.",
                "Call `a. B` now.",
                "The U.S. office is closed.",
            ]
        );
    }

    #[test]
    fn markdown_blocks_are_units() {
        let s = "# Title\n\nIntro one. Intro two.\n\n## Rules\n1. First rule.\n2. Second rule\n   continues here.\n- bullet\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```json\n{\"a\": 1}\n\n```\nAfter.";
        assert_eq!(
            texts(s),
            vec![
                ("# Title", UnitKind::Heading(1)),
                ("Intro one.", UnitKind::Sentence),
                ("Intro two.", UnitKind::Sentence),
                ("## Rules", UnitKind::Heading(2)),
                ("1. First rule.", UnitKind::ListItem),
                ("2. Second rule\n   continues here.", UnitKind::ListItem),
                ("- bullet", UnitKind::ListItem),
                ("| a | b |\n|---|---|", UnitKind::TableHead),
                ("| 1 | 2 |", UnitKind::TableRow),
                ("```json\n{\"a\": 1}\n\n```", UnitKind::Code),
                ("After.", UnitKind::Sentence),
            ]
        );
    }

    #[test]
    fn a_quotation_or_bracket_across_sentences_is_one_unit() {
        let s = "If asked, respond with \"It works! This proves it.\" Then stop. \
                 Notes (see below. Or above.) are kept. A stray ) ends. Next one.";
        let got: Vec<&str> = texts(s).into_iter().map(|(t, _)| t).collect();
        assert_eq!(
            got,
            [
                "If asked, respond with \"It works! This proves it.\"",
                "Then stop.",
                "Notes (see below. Or above.) are kept.",
                "A stray ) ends.",
                "Next one.",
            ]
        );
        // An odd quote pairs nothing: sentences split as before.
        let got: Vec<&str> = texts("Say \"hi. Go now.")
            .into_iter()
            .map(|(t, _)| t)
            .collect();
        assert_eq!(got, ["Say \"hi.", "Go now."]);
    }

    #[test]
    fn a_sentence_that_only_continues_the_last_joins_it() {
        let s = "Call `sync` first. Otherwise results are stale. This server stores notes. \
                 Use tags.\n\nThese go with nothing before them.";
        let got: Vec<&str> = texts(s).into_iter().map(|(t, _)| t).collect();
        assert_eq!(
            got,
            [
                "Call `sync` first. Otherwise results are stale.",
                "This server stores notes.",
                "Use tags.",
                "These go with nothing before them.",
            ]
        );
        // Near misses: a word that only starts like one, a list item before.
        let got: Vec<&str> = texts("- item\nThis stands alone. Thistle grows.")
            .into_iter()
            .map(|(t, _)| t)
            .collect();
        assert_eq!(got, ["- item", "This stands alone.", "Thistle grows."]);
    }

    #[test]
    fn an_unclosed_fence_runs_to_the_end() {
        let s = "Before.\n```\ncode\nmore";
        assert_eq!(
            texts(s).last().unwrap(),
            &("```\ncode\nmore", UnitKind::Code)
        );
    }

    #[test]
    fn join_keeps_separators() {
        let s = "A one. A two.\nLine.\n\n# H\n\n- x\n- y";
        let u = units(s);
        assert_eq!(join(s, &u, |_| true), s);
        assert_eq!(join(s, &u, |k| k != 1), "A one.\nLine.\n\n# H\n\n- x\n- y");
        assert_eq!(join(s, &u, |k| k == 0 || k == 5), "A one.\n\n- y");
        assert_eq!(join(s, &u, |_| false), "");
    }
}
