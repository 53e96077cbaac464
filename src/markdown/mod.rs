//! The CommonMark line rules, in one place: the segmenter splits server text
//! with them and the escaper neutralizes it with them, so both always see the
//! same fences, headings and breaks (a disagreement is where a forgery would
//! hide).

mod html;
mod spans;

use html::{container_prefix, escape_inline, unsafe_destination};
use spans::PARSES;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag};

use crate::sanitize;

/// An opening code fence: its character and length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fence {
    pub ch: char,
    pub run: usize,
}

impl Fence {
    /// The line that closes this fence.
    fn closing(self) -> String {
        self.ch.to_string().repeat(self.run)
    }
}

/// Leading spaces of a line.
fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// The fence `line` opens: at most three spaces, then three or more `` ` ``
/// or `~`. A backtick fence's info string may not hold a backtick
/// (CommonMark 4.5), or the line is not a fence at all.
pub(crate) fn fence_open(line: &str) -> Option<Fence> {
    if indent(line) > 3 {
        return None;
    }
    let rest = line.trim_start_matches(' ');
    let ch = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let run = rest.chars().take_while(|c| *c == ch).count();
    (run >= 3 && !(ch == '`' && rest[run..].contains('`'))).then_some(Fence { ch, run })
}

/// Whether `line` closes `fence`: the same character, at least as many, and
/// nothing else but blanks.
pub(crate) fn fence_closes(line: &str, fence: Fence) -> bool {
    if indent(line) > 3 {
        return false;
    }
    let rest = line.trim_start_matches(' ');
    let n = rest.chars().take_while(|c| *c == fence.ch).count();
    n >= fence.run && rest[n..].trim().is_empty()
}

/// The level of an ATX heading marker at the start of `rest`: one to six
/// `#`, then nothing or a blank.
fn atx_level(rest: &str) -> Option<usize> {
    let n = rest.bytes().take_while(|b| *b == b'#').count();
    let after = &rest[n..];
    ((1..=6).contains(&n) && (after.is_empty() || after.starts_with([' ', '\t']))).then_some(n)
}

/// The level of a top-level ATX heading line (at most three spaces of indent).
pub(crate) fn heading_level(line: &str) -> Option<u8> {
    if indent(line) > 3 {
        return None;
    }
    atx_level(line.trim_start_matches(' ')).map(|n| n as u8)
}

/// A table row (or header) line.
pub(crate) fn is_table_row(line: &str) -> bool {
    line.trim_start().starts_with('|')
}

/// A table's delimiter row, such as `|---|:-:|`.
pub(crate) fn is_table_delimiter(line: &str) -> bool {
    let t = line.trim();
    t.starts_with('|')
        && t.contains('-')
        && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'))
}

/// A list item with content: `-`, `*`, `+`, or 1-9 digits and `.`/`)`,
/// then a blank.
pub(crate) fn is_list_item(line: &str) -> bool {
    let rest = line.trim_start_matches([' ', '\t']);
    let b = rest.as_bytes();
    let spaced = |j: usize| j >= b.len() || b[j] == b' ' || b[j] == b'\t';
    if !b.is_empty() && matches!(b[0], b'-' | b'*' | b'+') && spaced(1) && b.len() > 1 {
        return true;
    }
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    (1..=9).contains(&digits)
        && digits < b.len()
        && matches!(b[digits], b'.' | b')')
        && spaced(digits + 1)
        && b.len() > digits + 1
}

/// A line made of `= - * _` and blanks: a setext underline or a thematic
/// break, depending on its neighbours.
fn is_break_like(rest: &str) -> bool {
    // Mixed marks too (`---=`): some renderers take them for an underline.
    let mut marks = rest.chars().filter(|c| !matches!(c, ' ' | '\t'));
    marks
        .next()
        .is_some_and(|c| matches!(c, '=' | '-' | '*' | '_'))
        && marks.all(|c| matches!(c, '=' | '-' | '*' | '_'))
}

/// [`md_line_with`], images turned into links.
#[cfg(test)]
pub(crate) fn md_line(value: &str) -> String {
    md_line_with(value, false)
}

/// [`md_block_with`], images turned into links.
#[cfg(test)]
pub(crate) fn md_block(text: &str, depth: usize) -> String {
    md_block_with(text, depth, false)
}

/// `md_line`: one line that cannot start a markdown block of its own, nor
/// open a code span or an HTML comment that would run into what follows.
/// Every `<` becomes `&lt;`: an autolink (cmark-gfm's `www.` and `http://`,
/// mistune's url plugin) takes a backslash into the link and would leave the
/// `<` after it live. A backslashed backtick it takes is link text. A
/// backslash before punctuation or at the end gets one of its own, so no
/// backslash of the server's can undo an escape (`` \` `` would leave a live
/// backtick that pairs with the next code span). An image's `!` gets a
/// backslash unless `images` (a link remains), and a link destination that
/// starts with an unsafe scheme or an entity gets `./` before it (a relative
/// path in every browser). What could reach past the line into the
/// template's code spans is escaped: a `~~` run (mistune's strikethrough
/// runs to the next `~~`, into a code span), and the `(` of a link whose
/// destination and title do not close plainly on the line (a title takes
/// the code spans after it in every engine).
pub(crate) fn md_line_with(value: &str, images: bool) -> String {
    let line = sanitize::line(value);
    let mut out = String::with_capacity(line.len() + 1);
    if line.starts_with(['#', '>', '=', '-', '*', '+', '_', '|', '~', '[']) {
        out.push('\\');
    }
    let mut relative_at = None;
    for (i, c) in line.char_indices() {
        if relative_at == Some(i) {
            out.push_str("./");
        }
        let next = line[i + c.len_utf8()..].chars().next();
        match c {
            '<' => out.push_str("&lt;"),
            '`' => out.push_str("\\`"),
            '\\' if next.is_none_or(|n| n.is_ascii_punctuation()) => out.push_str("\\\\"),
            // (The first `~` may have its backslash already.)
            '~' if (next == Some('~') || line[..i].ends_with('~')) && !escapes_next(&out) => {
                out.push_str("\\~")
            }
            // A `!` the server escaped is text already; a backslash before
            // it that is itself escaped is not.
            '!' if !images && line[i + 1..].starts_with('[') && !escapes_next(&out) => {
                out.push_str("\\!")
            }
            '(' if line[..i].ends_with(']') && !plain_destination(&line[i + 1..]) => {
                out.push_str("\\(")
            }
            '(' if line[..i].ends_with(']') => {
                out.push('(');
                let dest = line[i + 1..].trim_start_matches([' ', '\t']);
                if dest.starts_with('&') || unsafe_destination(dest) {
                    relative_at = Some(line.len() - dest.len());
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// Whether a link's destination, after its `(` and any blanks, closes
/// plainly within `rest`: no blank, quote, bracket, backslash or backtick
/// before the first `)`, so every engine ends the link there (no title that
/// runs on). A `<` is `&lt;` by then: no pointy destination.
fn plain_destination(rest: &str) -> bool {
    let rest = rest.trim_start_matches([' ', '\t']);
    rest.find(')').is_some_and(|end| {
        !rest[..end].contains(|c: char| c.is_whitespace() || "\"'(\\`[]".contains(c))
    })
}

/// Whether `out` ends with an odd run of backslashes (the next character
/// is escaped).
fn escapes_next(out: &str) -> bool {
    out.bytes().rev().take_while(|b| *b == b'\\').count() % 2 == 1
}

/// `md_heading`: [`md_line`] for the text of a heading, which every engine
/// must show as exactly the value (a server's shown name is what the report
/// names). Besides what `md_line` escapes: `*`, `~`, `[`, `]` (emphasis,
/// strikethrough, links), `_` unless between two ASCII letters or digits
/// (where no engine takes it for emphasis), `&` before what could be an
/// entity, a backslash before punctuation or at the end, every `#` of a
/// closing `#` run (an ATX closing sequence), and the `:` of `://` and the
/// `.` of `www.` (an autolink takes backslashes after them into its text).
pub(crate) fn md_heading(value: &str) -> String {
    let line = sanitize::line(value);
    let chars: Vec<char> = line.chars().collect();
    let trailing_hashes = chars.iter().rev().take_while(|c| **c == '#').count();
    let closing_from = chars.len() - trailing_hashes;
    let alnum = |i: Option<usize>| {
        i.and_then(|i| chars.get(i))
            .is_some_and(char::is_ascii_alphanumeric)
    };
    let mut out = String::with_capacity(line.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
        let escape = match c {
            '<' => {
                out.push_str("&lt;");
                continue;
            }
            '`' | '*' | '~' | '[' | ']' => true,
            '_' => !(alnum(i.checked_sub(1)) && alnum(Some(i + 1))),
            '&' => next.is_some_and(|n| n == '#' || n.is_ascii_alphanumeric()),
            '\\' => next.is_none_or(|n| n.is_ascii_punctuation()),
            '#' => i == 0 || i >= closing_from,
            ':' => chars.get(i + 1..i + 3) == Some(&['/', '/']),
            '.' => i >= 3 && chars[i - 3..i].iter().all(|w| w.eq_ignore_ascii_case(&'w')),
            '>' | '=' | '-' | '+' | '|' => i == 0,
            _ => false,
        };
        if escape {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `md_code`: an inline code span that no backtick in the value can close,
/// holding exactly the value (an empty one is a space: two backticks alone
/// would be a run that pairs with a later one).
pub(crate) fn md_code(value: &str) -> String {
    let line = sanitize::line(value);
    if line.is_empty() {
        return "` `".to_string();
    }
    let longest = longest_run(&line, '`');
    let fence = "`".repeat(longest + 1);
    let pad = if line.starts_with('`') || line.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{line}{pad}{fence}")
}

fn longest_run(s: &str, ch: char) -> usize {
    let (mut best, mut cur) = (0, 0);
    for c in s.chars() {
        cur = if c == ch { cur + 1 } else { 0 };
        best = best.max(cur);
    }
    best
}

/// `md_block(depth=3)`: markdown server text made safe to place under a
/// heading of level `depth`.
///
/// Every heading line (also inside lists, quotes, footnote definitions and
/// definition lists) is demoted by `depth` levels (at most to 6); lines that
/// would be a thematic break or a setext underline get a backslash; every `<`
/// that could start raw HTML and every `[` that could start a footnote gets
/// a backslash (see [`escape_inline`]). The result is then parsed as
/// CommonMark and as GFM: if any heading of level `depth` or less, thematic
/// break or raw HTML remains, or the text would swallow what follows it (an
/// unclosed fence, also in a container), an open top-level fence is closed
/// where every renderer opens it, and failing that the whole text is put in
/// a code fence longer than any backtick run inside it. Links and images
/// are made inert as [`escape_inline`] says; an image stays one only with
/// `images`.
pub(crate) fn md_block_with(text: &str, depth: usize, images: bool) -> String {
    let lines = escape_lines(text, depth);
    let escaped = escape_inline(&lines, images);
    if md_contained(&escaped, depth, images) {
        return escaped;
    }
    if let Some(fence) = open_fence(&escaped) {
        let closed = format!("{escaped}\n{}", fence.closing());
        if md_contained(&closed, depth, images) {
            return closed;
        }
    }
    // Inside a code fence nothing is HTML, so those escapes are dropped.
    let fence = "`".repeat(longest_run(&lines, '`').max(2) + 1);
    format!("{fence}\n{lines}\n{fence}")
}

fn escape_lines(text: &str, depth: usize) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for (n, line) in text.split('\n').enumerate() {
        if n > 0 {
            out.push('\n');
        }
        let p = container_prefix(line);
        let (prefix, rest) = line.split_at(p);
        out.push_str(prefix);
        if let Some(hashes) = atx_level(rest) {
            out.push_str(&"#".repeat((hashes + depth).min(6)));
            out.push_str(&rest[hashes..]);
        } else if is_break_like(rest) {
            out.push('\\');
            out.push_str(rest);
        } else {
            out.push_str(rest);
        }
    }
    out
}

/// A top-level fence still open at the end of `text`, if it opens where
/// every renderer starts a block: on the first line or after a blank one,
/// and cannot be read as a table row.
/// Elsewhere (after a definition term, say) a renderer may not see it open,
/// and a closing line would open one there.
fn open_fence(text: &str) -> Option<Fence> {
    let mut open: Option<(Fence, bool)> = None;
    let mut after_blank = true;
    for line in text.split('\n') {
        match open {
            // With a `|` the line may be a table's header instead.
            None => {
                open = fence_open(line).map(|fence| (fence, after_blank && !line.contains('|')))
            }
            Some((fence, _)) if fence_closes(line, fence) => open = None,
            Some(_) => {}
        }
        after_blank = line.trim().is_empty();
    }
    open.and_then(|(fence, clear)| clear.then_some(fence))
}

/// Whether markdown `text`, followed by a heading of level `depth`, keeps
/// that heading at the top level under every parse in [`PARSES`], and holds
/// no heading of its level or above, no thematic break, no raw HTML, no
/// footnote, no fenced code block left open inside a container, no link to
/// an unsafe scheme, and no image unless `images`.
fn md_contained(text: &str, depth: usize, images: bool) -> bool {
    let mut doc = String::with_capacity(text.len() + 16);
    doc.push_str(text);
    doc.push_str("\n\n");
    doc.push_str(&"#".repeat(depth));
    doc.push_str(" probe\n");
    PARSES
        .iter()
        .all(|&options| contained_in(&doc, text.len() + 2, depth, images, options))
}

fn contained_in(
    doc: &str,
    probe_start: usize,
    depth: usize,
    images: bool,
    options: Options,
) -> bool {
    let mut nesting = 0usize;
    let mut probe_seen = false;
    for (event, range) in Parser::new_ext(doc, options).into_offset_iter() {
        let in_probe = range.start >= probe_start;
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                let level = level_number(level);
                if in_probe {
                    probe_seen = nesting == 0 && level == depth;
                } else if level <= depth {
                    return false;
                }
                nesting += 1;
            }
            Event::Start(tag) => {
                if in_probe {
                    return false;
                }
                let open_fence = matches!(tag, Tag::CodeBlock(CodeBlockKind::Fenced(_)))
                    && !fence_closed(&doc[range]);
                let live_link = match &tag {
                    Tag::Image { dest_url, .. } => !images || unsafe_destination(dest_url),
                    Tag::Link { dest_url, .. } => unsafe_destination(dest_url),
                    _ => false,
                };
                if open_fence || live_link || matches!(tag, Tag::FootnoteDefinition(_)) {
                    return false;
                }
                nesting += 1;
            }
            Event::End(_) => nesting = nesting.saturating_sub(1),
            Event::Rule | Event::Html(_) | Event::InlineHtml(_) | Event::FootnoteReference(_) => {
                return false;
            }
            _ => {}
        }
    }
    probe_seen
}

/// Whether the source of a fenced code block ends with its closing fence. An
/// open fence in a list item or quote ends with its container under
/// CommonMark, but renderers disagree on where, so it is not trusted.
fn fence_closed(block: &str) -> bool {
    let block = block.trim_end_matches('\n');
    let (first, last) = match (block.split_once('\n'), block.rsplit_once('\n')) {
        (Some((first, _)), Some((_, last))) => (first, last),
        _ => return false,
    };
    let last = last.trim_start_matches([' ', '\t', '>']);
    fence_open(first).is_some_and(|fence| fence_closes(last, fence))
}

fn level_number(level: HeadingLevel) -> usize {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

#[cfg(test)]
mod tests;
