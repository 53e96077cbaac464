//! The parses server text must be safe under, and the code spans other
//! renderers may cut: where a backtick run pairs differently (a bare URL
//! glued to it, runs of mixed lengths, mistune's `~~`), so that the HTML
//! escaping escapes such a span like text.

use std::ops::Range;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// The parses server text must be safe under: plain CommonMark, and with the
/// GFM extensions hosts' renderers turn on (footnotes and definition lists
/// are containers of their own; tables hold inline HTML).
pub(super) const PARSES: [Options; 2] = [
    Options::empty(),
    Options::ENABLE_TABLES
        .union(Options::ENABLE_FOOTNOTES)
        .union(Options::ENABLE_STRIKETHROUGH)
        .union(Options::ENABLE_TASKLISTS)
        .union(Options::ENABLE_DEFINITION_LIST),
];

/// Where a renderer may end a code span that CommonMark keeps whole.
pub(super) struct SpanCuts {
    /// `~~` starting before each byte: mistune's strikethrough runs from one
    /// `~~` to the next across code spans, and the spans after it may pair
    /// up anew.
    tildes: Vec<u32>,
    /// Backticks glued to a bare URL before each byte: mistune's url plugin
    /// and cmark-gfm's extended autolinks take them into the link, and the
    /// spans after it pair up anew.
    glued: Vec<u32>,
    /// Backtick runs whose length differs from the run before them, counted
    /// at their first byte: after an unmatched longer run, C cmark and
    /// cmark-gfm pair the shorter runs differently from CommonMark.
    mixed: Vec<u32>,
    /// The first byte of the first backtick run at or after each byte.
    next_run: Vec<usize>,
}

impl SpanCuts {
    fn new(b: &[u8], url: &[bool]) -> SpanCuts {
        let count = |hit: &dyn Fn(usize) -> bool| {
            let mut n = 0;
            let mut out = Vec::with_capacity(b.len() + 1);
            out.push(0);
            for i in 0..b.len() {
                n += u32::from(hit(i));
                out.push(n);
            }
            out
        };
        // Run lengths, at each run's first byte.
        let mut run = vec![0u32; b.len()];
        let mut i = 0;
        while i < b.len() {
            let n = b[i..].iter().take_while(|c| **c == b'`').count();
            if n > 0 {
                run[i] = n as u32;
                i += n;
            } else {
                i += 1;
            }
        }
        let mixed = {
            let mut last = 0;
            let mut n = 0;
            let mut out = Vec::with_capacity(b.len() + 1);
            out.push(0);
            for &len in &run {
                if len > 0 {
                    n += u32::from(last > 0 && len != last);
                    last = len;
                }
                out.push(n);
            }
            out
        };
        let mut next_run = vec![b.len(); b.len() + 1];
        for i in (0..b.len()).rev() {
            next_run[i] = if run[i] > 0 { i } else { next_run[i + 1] };
        }
        SpanCuts {
            tildes: count(&|i| b[i..].starts_with(b"~~")),
            glued: count(&|i| b[i] == b'`' && i > 0 && url[i - 1]),
            mixed,
            next_run,
        }
    }

    /// Whether the code span at `span`, inside the inline block `block`,
    /// may be cut: over several lines or holding a `|` (another renderer sees
    /// a block start or a table cell there), after a glued backtick, in a
    /// block with backtick runs of different lengths, or after a `~~` in a
    /// block with a pair of them.
    pub(super) fn cut(&self, b: &[u8], span: &Range<usize>, block: &Range<usize>) -> bool {
        let s = span.start;
        let (start, end) = (block.start.min(s), block.end.max(s + 1));
        let first = self.next_run[start].min(end);
        b[span.clone()].iter().any(|c| matches!(c, b'\n' | b'|'))
            || self.glued[s + 1] > self.glued[start]
            || self.mixed[end] > self.mixed[first + 1]
            || (self.tildes[s] > self.tildes[start] && self.tildes[end] - self.tildes[start] >= 2)
    }
}

/// Bytes inside a bare URL as the longest reading takes one (cmark-gfm's
/// extended autolinks of `http://`, `https://`, `ftp://` and `www.`,
/// mistune's url plugin): from `www.` or any `scheme://`, up to an ASCII
/// blank or `<`, whatever else comes.
/// No URL starts at a byte of `kept` (inside a code span every renderer
/// keeps whole).
fn bare_url_bytes(text: &str, kept: &[bool]) -> Vec<bool> {
    let b = text.as_bytes();
    let mut on = false;
    (0..b.len())
        .map(|i| {
            if b[i] == b'<' || b[i].is_ascii_whitespace() {
                on = false;
            } else if ((b[i] == b':'
                && i > 0
                && b[i - 1].is_ascii_alphanumeric()
                && b[i + 1..].starts_with(b"//"))
                || b[i..]
                    .get(..4)
                    .is_some_and(|w| w.eq_ignore_ascii_case(b"www.")))
                && !kept[i]
            {
                on = true;
            }
            on
        })
        .collect()
}

/// The [`SpanCuts`] of `text`. A `scheme://` or `www.` inside a code span
/// that no renderer cuts starts no autolink (every engine closes the span
/// before it looks for one), so it glues no backtick: `` `memory://man` ``
/// leaves the spans after it whole. Which spans are kept depends on the
/// glued backticks before them, so the kept set shrinks to a fixed point;
/// text with no glued backtick (nearly all) skips it.
pub(super) fn span_cuts(text: &str) -> SpanCuts {
    let bytes = text.as_bytes();
    let mut kept = vec![false; bytes.len()];
    let cuts = SpanCuts::new(bytes, &bare_url_bytes(text, &kept));
    if cuts.glued.last().is_none_or(|&n| n == 0) {
        return cuts;
    }
    let mut spans = code_spans(text);
    loop {
        kept.fill(false);
        for (span, _) in &spans {
            kept[span.clone()].fill(true);
        }
        let cuts = SpanCuts::new(bytes, &bare_url_bytes(text, &kept));
        let before = spans.len();
        spans.retain(|(span, block)| !cuts.cut(bytes, span, block));
        if spans.len() == before {
            return cuts;
        }
    }
}

/// Code spans at the same bytes under every parse of [`PARSES`], each with
/// the inline block holding it.
fn code_spans(text: &str) -> Vec<(Range<usize>, Range<usize>)> {
    let mut per_parse = PARSES.map(|options| {
        let mut blocks: Vec<Range<usize>> = std::iter::once(0..text.len()).collect();
        let mut spans = Vec::new();
        for (event, range) in Parser::new_ext(text, options).into_offset_iter() {
            follow_blocks(&mut blocks, &event, &range);
            if let Event::Code(_) = event {
                spans.push((range, blocks[blocks.len() - 1].clone()));
            }
        }
        spans
    });
    let [first, rest @ ..] = &mut per_parse;
    first.retain(|(span, _)| rest.iter().all(|r| r.iter().any(|(s, _)| s == span)));
    std::mem::take(first)
}

/// Follows the inline blocks open around the next event, innermost last
/// (the whole text stays at the bottom).
pub(super) fn follow_blocks(
    blocks: &mut Vec<Range<usize>>,
    event: &Event<'_>,
    range: &Range<usize>,
) {
    match event {
        Event::Start(
            Tag::Paragraph
            | Tag::Heading { .. }
            | Tag::TableCell
            | Tag::Item
            | Tag::BlockQuote(_)
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition,
        ) => blocks.push(range.clone()),
        Event::End(
            TagEnd::Paragraph
            | TagEnd::Heading(_)
            | TagEnd::TableCell
            | TagEnd::Item
            | TagEnd::BlockQuote(_)
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition,
        ) if blocks.len() > 1 => {
            blocks.pop();
        }
        _ => {}
    }
}
