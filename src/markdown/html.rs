//! Raw HTML in server text: every `<` that could start a tag, comment,
//! declaration, processing instruction or CDATA becomes `&lt;`, outside code
//! every renderer keeps whole and autolinks.
//!
//! Why `&lt;` and not a backslash: cmark-gfm's extended autolinks (`www.`,
//! `http://`, running to the next ASCII space) take a backslash into the
//! link and leave the `<` after it live; an entity is never syntax in any
//! engine. `[` that could start a footnote or a link reference definition
//! gets a backslash: those only start a line, where no autolink comes first.

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, LinkType, Parser, Tag, TagEnd};

use super::spans::{PARSES, SpanCuts, follow_blocks, span_cuts};

/// Passes of [`escape_inline`]; each escape can change the parse (an HTML
/// block that dissolves exposes the tags inside it), so it re-parses. Text
/// that needs more is fenced by `md_block`.
const ESCAPE_PASSES: usize = 8;

/// Escapes, outside top-level fenced code, autolinks and code spans every
/// renderer keeps whole, every `<` that could start raw HTML (as `&lt;`,
/// dropping a backslash the server put before it) and every `[` that could
/// start a footnote or a link reference definition (with a backslash) under
/// any parse in [`PARSES`]. Footnotes go because renderers move their text to
/// the end of the page, past later servers' blocks, behind a rule; link
/// reference definitions because they retarget links anywhere on the page,
/// in other servers' blocks and in the host's text.
///
/// Links and images are read from the parse but escaped as if any engine may
/// start an autolink before them (cmark-gfm and mistune take `[docs](` into a
/// bare URL glued to it): every `<` in a destination or title becomes `&lt;`,
/// a destination with a script-capable scheme (`javascript:`, `vbscript:`,
/// `data:`, `file:`) gets `./` before it (a relative path in every browser),
/// and unless `images` the `!` of an image gets a backslash (a link remains).
pub(super) fn escape_inline(text: &str, images: bool) -> String {
    let mut text = text.to_string();
    for _ in 0..ESCAPE_PASSES {
        let at = escape_points(&text, images);
        if at.is_empty() {
            break;
        }
        let mut out = String::with_capacity(text.len() + 3 * at.len());
        let mut from = 0;
        for i in at {
            out.push_str(&text[from..i]);
            // An autolink (cmark-gfm's, mistune's) may take a backslash
            // into the link; an entity stays text in every engine.
            match text.as_bytes()[i] {
                b'<' => {
                    if backslashed(text.as_bytes(), i) {
                        out.pop();
                    }
                    out.push_str("&lt;");
                    from = i + 1;
                }
                b'[' | b'!' => {
                    out.push('\\');
                    from = i;
                }
                // The start of an unsafe destination: a relative path now.
                _ => {
                    out.push_str("./");
                    from = i;
                }
            }
        }
        out.push_str(&text[from..]);
        text = out;
    }
    text
}

/// Byte offsets in `text` to backslash, sorted: the start of every raw HTML
/// event, HTML block line and footnote, and any other `<` or `[` outside
/// code that could start one (renderers disagree at the edges of the rules).
/// A `<` in the middle of an HTML block line waits for the next pass: the
/// block may dissolve and leave it in a code span.
fn escape_points(text: &str, images: bool) -> Vec<usize> {
    if !text.contains(['<', '[']) {
        return Vec::new();
    }
    let bytes = text.as_bytes();
    let could_start = |i: usize| match bytes[i] {
        b'<' => could_start_html(bytes, i),
        b'[' => could_start_footnote(bytes, i) || could_start_definition(bytes, i),
        _ => false,
    };
    let cuts = span_cuts(text);
    let mut at = Vec::new();
    for options in PARSES {
        let mut walk = Walk::new(text.len());
        for (event, range) in Parser::new_ext(text, options).into_offset_iter() {
            walk.links(bytes, &event, &range, images, &mut at);
            let text_event = walk.event(bytes, &cuts, &event, &range, &mut at);
            walk.follow_containers(&event);
            let accounts = matches!(
                event,
                Event::Text(_)
                    | Event::Code(_)
                    | Event::Html(_)
                    | Event::InlineHtml(_)
                    | Event::FootnoteReference(_)
                    | Event::Start(Tag::CodeBlock(_) | Tag::Link { .. } | Tag::Image { .. })
            );
            if !accounts {
                continue;
            }
            if text_event {
                unsafe_destinations_in_text(text, range.clone(), &mut at);
            }
            for i in range.filter(|&i| matches!(bytes[i], b'<' | b'[')) {
                walk.seen[i] = true;
                if text_event && could_start(i) {
                    at.push(i);
                }
                // An engine that groups the text otherwise (an autolink
                // that took an earlier link's `[docs](`, a title read before
                // a code span) may see an image here: its `!` goes.
                if text_event && !images && bytes[i] == b'[' && i > 0 && bytes[i - 1] == b'!' {
                    at.push(i - 1);
                }
            }
        }
        // Syntax no event covers (link reference definitions, say).
        at.extend((0..bytes.len()).filter(|&i| !walk.seen[i] && could_start(i)));
    }
    at.sort_unstable();
    at.dedup();
    // A `\<` the server wrote is no escape after an autolink.
    at.retain(|&i| !matches!(bytes[i], b'[' | b'!') || !backslashed(bytes, i));
    at
}

/// One parse's walk over its events, for [`escape_points`].
struct Walk {
    /// `<` and `[` that an event of this parse accounts for.
    seen: Vec<bool>,
    in_code: usize,
    /// Containers open around the current event: renderers disagree on
    /// where a list item or quote ends (mistune on tabs and empty items),
    /// so code inside one is escaped like text.
    containers: usize,
    /// The blocks holding inline text, innermost last.
    blocks: Vec<Range<usize>>,
    /// Links and images open around the current event, innermost last: the
    /// end of their text so far, and whether the destination is unsafe.
    links: Vec<(usize, bool)>,
}

impl Walk {
    fn new(len: usize) -> Walk {
        Walk {
            seen: vec![false; len],
            in_code: 0,
            containers: 0,
            // The whole text: a range, not the lengths `vec![0..len]` reads as.
            blocks: std::iter::once(0..len).collect(),
            links: Vec::new(),
        }
    }

    /// Pushes onto `at` what makes a link or image inert in every engine:
    /// each `<` (and `[` that could start a footnote or definition) after its
    /// text, in the destination and title, whatever groups them; the start
    /// of an unsafe destination; an image's `!` unless `images`.
    fn links(
        &mut self,
        bytes: &[u8],
        event: &Event<'_>,
        range: &Range<usize>,
        images: bool,
        at: &mut Vec<usize>,
    ) {
        match event {
            Event::Start(Tag::Link {
                link_type: LinkType::Autolink | LinkType::Email,
                dest_url,
                ..
            }) => {
                if unsafe_destination(dest_url) && bytes.get(range.start) == Some(&b'<') {
                    at.push(range.start);
                }
            }
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                let image = bytes.get(range.start) == Some(&b'!');
                if image && !images {
                    at.push(range.start);
                }
                let text_start = range.start + 1 + usize::from(image);
                self.links.push((text_start, unsafe_destination(dest_url)));
            }
            Event::End(TagEnd::Link | TagEnd::Image) => {
                if let Some((text_end, unsafe_dest)) = self.links.pop() {
                    let tail = text_end.min(range.end)..range.end;
                    at.extend(tail.clone().filter(|&i| {
                        bytes[i] == b'<'
                            || (bytes[i] == b'['
                                && (could_start_footnote(bytes, i)
                                    || could_start_definition(bytes, i)))
                    }));
                    if unsafe_dest && let Some(d) = destination_start(bytes, tail) {
                        at.push(d);
                    }
                }
                self.grow_link_text(range.end);
            }
            _ => self.grow_link_text(range.end),
        }
    }

    /// The innermost open link's text reaches at least `end`.
    fn grow_link_text(&mut self, end: usize) {
        if let Some((text_end, _)) = self.links.last_mut() {
            *text_end = (*text_end).max(end);
        }
    }

    /// Pushes onto `at` the start of a raw HTML, footnote or block-tag
    /// event, and follows code and blocks; whether the event's `<` and `[`
    /// are text that could start one.
    fn event(
        &mut self,
        bytes: &[u8],
        cuts: &SpanCuts,
        event: &Event<'_>,
        range: &Range<usize>,
        at: &mut Vec<usize>,
    ) -> bool {
        let mut text_event = false;
        follow_blocks(&mut self.blocks, event, range);
        match event {
            Event::Html(_)
            | Event::InlineHtml(_)
            | Event::FootnoteReference(_)
            | Event::Start(Tag::FootnoteDefinition(_)) => {
                let start = range.start + indent_len(&bytes[range.clone()]);
                if matches!(bytes.get(start), Some(b'<' | b'[')) {
                    at.push(start);
                }
            }
            Event::Text(_) => text_event = self.in_code == 0,
            // mistune opens an HTML block at `<hr` in `<hr:x>`.
            Event::Start(Tag::Link {
                link_type: LinkType::Autolink | LinkType::Email,
                ..
            }) if first_on_line(bytes, range.start) && block_tag_at(bytes, range.start + 1) => {
                at.push(range.start)
            }
            // What another renderer may not keep in the span is escaped
            // like text.
            Event::Code(_) => {
                text_event = cuts.cut(bytes, range, &self.blocks[self.blocks.len() - 1])
            }
            // Only a fence at the top level is code to every renderer:
            // indented code depends on where a paragraph or list ends.
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_))) if self.containers == 0 => {
                self.in_code += 1
            }
            Event::End(TagEnd::CodeBlock) => self.in_code = self.in_code.saturating_sub(1),
            _ => {}
        }
        text_event
    }

    /// Follows the containers open around the next event.
    fn follow_containers(&mut self, event: &Event<'_>) {
        match event {
            Event::Start(
                Tag::Item
                | Tag::BlockQuote(_)
                | Tag::FootnoteDefinition(_)
                | Tag::DefinitionListDefinition,
            ) => self.containers += 1,
            Event::End(
                TagEnd::Item
                | TagEnd::BlockQuote(_)
                | TagEnd::FootnoteDefinition
                | TagEnd::DefinitionListDefinition,
            ) => self.containers = self.containers.saturating_sub(1),
            _ => {}
        }
    }
}

/// Schemes a browser runs or reads local data with, as a link's target.
const UNSAFE_SCHEMES: [&str; 4] = ["javascript:", "vbscript:", "data:", "file:"];

/// Whether a destination (as the parser decoded it) starts with an unsafe
/// scheme, read as a browser reads it: leading blanks and controls skipped,
/// tabs and newlines inside dropped, any case.
pub(super) fn unsafe_destination(dest: &str) -> bool {
    let chars = dest
        .trim_start_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'));
    UNSAFE_SCHEMES.iter().any(|scheme| {
        let mut probe = chars.clone();
        scheme
            .chars()
            .all(|s| probe.next().is_some_and(|c| c.eq_ignore_ascii_case(&s)))
    })
}

/// Pushes onto `at` the start of every destination after a `](` in text
/// at `range` that has an unsafe scheme or starts with an entity: another
/// engine may group a link there that pulldown-cmark does not (a code
/// span it pairs otherwise, an autolink that took an earlier `[`); the
/// destination becomes a relative path, as a parsed link's does.
fn unsafe_destinations_in_text(text: &str, range: Range<usize>, at: &mut Vec<usize>) {
    let bytes = text.as_bytes();
    for i in range.filter(|&i| bytes[i] == b']') {
        if let Some(d) = destination_start(bytes, i..bytes.len())
            && (bytes[d] == b'&' || unsafe_destination(&text[d..]))
        {
            at.push(d);
        }
    }
}

/// The first byte of an inline link's destination in its source after the
/// link text (`](`, blanks, an optional `<`), if there is one.
fn destination_start(b: &[u8], tail: Range<usize>) -> Option<usize> {
    let end = tail.end;
    let mut i = tail.start;
    i += usize::from(b.get(i) == Some(&b']'));
    (b.get(i) == Some(&b'(')).then_some(())?;
    i += 1;
    while i < end && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i += usize::from(b.get(i) == Some(&b'<'));
    (i < end && !matches!(b[i], b')' | b'>')).then_some(i)
}

/// Whether the `[` at `i` could start a footnote reference or definition:
/// `[^`, a label, `]`.
fn could_start_footnote(b: &[u8], i: usize) -> bool {
    b.get(i + 1) == Some(&b'^')
        && b[i + 2..]
            .iter()
            .take(TAG_SCAN)
            .position(|c| matches!(c, b']' | b'[' | b'\n'))
            .is_some_and(|n| n > 0 && b[i + 2 + n] == b']')
}

/// Whether the `[` at `i` could start a link reference definition: first
/// on its line (after container markers), then a label (no unescaped `[`,
/// possibly over lines) and `]:`.
fn could_start_definition(b: &[u8], i: usize) -> bool {
    if !first_on_line(b, i) {
        return false;
    }
    let mut j = i + 1;
    while j < b.len().min(i + 1 + TAG_SCAN) {
        match b[j] {
            b'\\' => j += 2,
            b'[' => return false,
            b']' => return j > i + 1 && b.get(j + 1) == Some(&b':'),
            _ => j += 1,
        }
    }
    false
}

/// Spaces and tabs at the start of `b`.
fn indent_len(b: &[u8]) -> usize {
    b.iter().take_while(|c| matches!(c, b' ' | b'\t')).count()
}

/// Whether the `<` at `i` could start raw HTML: `<!` and `<?` always (a
/// comment, declaration, CDATA section or processing instruction), `<` or
/// `</` and a letter when first on its line or when a whole tag follows by
/// the CommonMark grammar. `a < b`, `x<5`, `a<b then` and `<-` cannot.
pub(super) fn could_start_html(b: &[u8], i: usize) -> bool {
    let name = if b.get(i + 1) == Some(&b'/') {
        i + 2
    } else {
        i + 1
    };
    match b.get(i + 1) {
        Some(b'!' | b'?') => true,
        _ if !b.get(name).is_some_and(u8::is_ascii_alphabetic) => false,
        _ => tag_end(b, name, name == i + 2).is_some() || first_on_line(b, i),
    }
}

/// Tag names that open an HTML block with no `>` (CommonMark conditions 1
/// and 6; mistune matches them as a prefix of any name-like run).
const BLOCK_TAGS: &str = "address article aside base basefont blockquote body caption center col \
    colgroup dd details dialog dir div dl dt fieldset figcaption figure footer form frame \
    frameset h1 h2 h3 h4 h5 h6 head header hr html iframe legend li link main menu menuitem nav \
    noframes ol optgroup option p param pre script search section style summary table tbody td \
    textarea tfoot th thead title tr track ul";

/// Whether a block tag name, as mistune reads names, starts at `i`.
fn block_tag_at(b: &[u8], i: usize) -> bool {
    let n = b[i..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'-')
        .count();
    BLOCK_TAGS
        .split_whitespace()
        .any(|t| t.as_bytes().eq_ignore_ascii_case(&b[i..i + n]))
}

/// Longest container prefix [`first_on_line`] looks back over.
const PREFIX_SCAN: usize = 256;

/// Whether only container markers come before `i` on its line. Renderers
/// open an HTML block at `<` and a tag name there, some with no `>` and
/// looser name rules than CommonMark's, so a line start is escaped on the
/// name alone.
fn first_on_line(b: &[u8], i: usize) -> bool {
    // Container markers are short; a bounded look back keeps long lines linear.
    let from = i.saturating_sub(PREFIX_SCAN);
    let line = match b[from..i].iter().rposition(|c| *c == b'\n') {
        Some(n) => from + n + 1,
        None if from == 0 => 0,
        None => return false,
    };
    std::str::from_utf8(&b[line..i]).is_ok_and(|before| container_prefix(before) == before.len())
}

/// Longest tag [`tag_end`] reads; a longer one is left to the parser's own
/// events, so a run of `<` cannot make escaping quadratic.
const TAG_SCAN: usize = 1024;

/// The end of a tag whose name starts at `i`: the name, then (unless
/// `closing`) attributes, then blanks, an optional `/` and `>`. Blanks are
/// Unicode white space, as in markdown-it's and mistune's `\s`.
fn tag_end(b: &[u8], i: usize, closing: bool) -> Option<usize> {
    let b = &b[..b.len().min(i + TAG_SCAN)];
    let blanks = |mut j: usize| {
        while let n @ 1.. = space_at(b, j) {
            j += n;
        }
        j
    };
    let mut j = i;
    if !b.get(j)?.is_ascii_alphabetic() {
        return None;
    }
    while b
        .get(j)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'-')
    {
        j += 1;
    }
    loop {
        let k = blanks(j);
        match b.get(k)? {
            b'>' => return Some(k + 1),
            b'/' if !closing && b.get(k + 1) == Some(&b'>') => return Some(k + 2),
            c if !closing && k > j && (c.is_ascii_alphabetic() || matches!(c, b'_' | b':')) => {
                j = k + 1;
                while b.get(j).is_some_and(|c| {
                    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b':' | b'-')
                }) {
                    j += 1;
                }
                let eq = blanks(j);
                if b.get(eq) == Some(&b'=') {
                    let v = blanks(eq + 1);
                    j = match b.get(v)? {
                        q @ (b'"' | b'\'') => v + 2 + b[v + 1..].iter().position(|c| c == q)?,
                        _ => {
                            let mut n = v;
                            while b.get(n).is_some_and(|c| !b"\"'=<>`".contains(c))
                                && space_at(b, n) == 0
                            {
                                n += 1;
                            }
                            (n > v).then_some(n)?
                        }
                    };
                }
            }
            _ => return None,
        }
    }
}

/// Byte length of the white-space character at `j`, or 0.
fn space_at(b: &[u8], j: usize) -> usize {
    let Some(&first) = b.get(j) else {
        return 0;
    };
    if first.is_ascii() {
        return usize::from(first.is_ascii_whitespace());
    }
    let len = match first {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    };
    b.get(j..j + len)
        .and_then(|c| std::str::from_utf8(c).ok())
        .and_then(|c| c.chars().next())
        .filter(|c| c.is_whitespace())
        .map_or(0, |_| len)
}

/// Whether the byte at `i` is backslash-escaped (an odd run of `\` before it).
fn backslashed(b: &[u8], i: usize) -> bool {
    b[..i].iter().rev().take_while(|c| **c == b'\\').count() % 2 == 1
}

/// Length of the container prefix of a line: indentation, `>` quotes, list
/// markers, footnote definitions (`[^label]: `) and definition-list markers
/// (`: `, `~ `), in any nesting.
pub(super) fn container_prefix(line: &str) -> usize {
    let b = line.as_bytes();
    let mut i = 0;
    loop {
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
        if i < b.len() && b[i] == b'>' {
            i += 1;
            continue;
        }
        let spaced = |j: usize| j < b.len() && (b[j] == b' ' || b[j] == b'\t');
        // `:` and `~` mark definitions (`~` in markdown-it's plugin).
        if i < b.len() && matches!(b[i], b'-' | b'*' | b'+' | b':' | b'~') && spaced(i + 1) {
            i += 1;
            continue;
        }
        if let Some(label) = line[i..].strip_prefix("[^").and_then(|r| r.find(']'))
            && label > 0
            && b.get(i + 2 + label + 1) == Some(&b':')
            && spaced(i + 2 + label + 2)
        {
            i += 2 + label + 2;
            continue;
        }
        let digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        if (1..=9).contains(&digits)
            && i + digits < b.len()
            && matches!(b[i + digits], b'.' | b')')
            && spaced(i + digits + 1)
        {
            i += digits + 1;
            continue;
        }
        return i;
    }
}
