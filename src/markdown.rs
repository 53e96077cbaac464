//! The CommonMark line rules, in one place: the segmenter splits server text
//! with them and the escaper neutralizes it with them, so both always see the
//! same fences, headings and breaks (a disagreement is where a forgery would
//! hide).

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, LinkType, Options, Parser, Tag, TagEnd};

use crate::sanitize;

/// The parses server text must be safe under: plain CommonMark, and with the
/// GFM extensions hosts' renderers turn on (footnotes and definition lists
/// are containers of their own; tables hold inline HTML).
const PARSES: [Options; 2] = [
    Options::empty(),
    Options::ENABLE_TABLES
        .union(Options::ENABLE_FOOTNOTES)
        .union(Options::ENABLE_STRIKETHROUGH)
        .union(Options::ENABLE_TASKLISTS)
        .union(Options::ENABLE_DEFINITION_LIST),
];

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

/// Length of the container prefix of a line: indentation, `>` quotes, list
/// markers, footnote definitions (`[^label]: `) and definition-list markers
/// (`: `, `~ `), in any nesting.
fn container_prefix(line: &str) -> usize {
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

/// `md_line`: one line that cannot start a markdown block of its own, nor
/// open a code span or an HTML comment that would run into what follows.
pub(crate) fn md_line(value: &str) -> String {
    let line = sanitize::line(value);
    let url = bare_url_bytes(&line);
    let mut out = String::with_capacity(line.len() + 1);
    if line.starts_with(['#', '>', '=', '-', '*', '+', '_', '|', '~']) {
        out.push('\\');
    }
    for (i, c) in line.char_indices() {
        if c == '<' && i > 0 && url[i - 1] {
            // mistune's url plugin would take a backslash into the link.
            out.push_str("&lt;");
            continue;
        }
        if matches!(c, '`' | '<') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `md_code`: an inline code span that no backtick in the value can close.
pub(crate) fn md_code(value: &str) -> String {
    let line = sanitize::line(value);
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
/// a code fence longer than any backtick run inside it.
pub(crate) fn md_block(text: &str, depth: usize) -> String {
    let lines = escape_lines(text, depth);
    let escaped = escape_inline(&lines);
    if md_contained(&escaped, depth) {
        return escaped;
    }
    if let Some(fence) = open_fence(&escaped) {
        let closed = format!("{escaped}\n{}", fence.closing());
        if md_contained(&closed, depth) {
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

/// Passes of [`escape_inline`]; each escape can change the parse (an HTML
/// block that dissolves exposes the tags inside it), so it re-parses. Text
/// that needs more is fenced by `md_block`.
const ESCAPE_PASSES: usize = 8;

/// Backslash-escapes, outside code blocks, autolinks and code spans every
/// renderer keeps whole, every `<` that could start raw HTML and every `[`
/// that could start a footnote under any parse in [`PARSES`] (a `<` right
/// after a bare URL becomes `&lt;`). Footnotes go because renderers move
/// their text to the end of the page, past later servers' blocks, behind a
/// rule.
fn escape_inline(text: &str) -> String {
    let mut text = text.to_string();
    for _ in 0..ESCAPE_PASSES {
        let at = escape_points(&text);
        if at.is_empty() {
            break;
        }
        let url = bare_url_bytes(&text);
        let mut out = String::with_capacity(text.len() + at.len());
        let mut from = 0;
        for i in at {
            out.push_str(&text[from..i]);
            // mistune's url plugin would take a backslash into the link.
            if text.as_bytes()[i] == b'<' && i > 0 && url[i - 1] {
                if backslashed(text.as_bytes(), i) {
                    out.pop();
                }
                out.push_str("&lt;");
                from = i + 1;
            } else {
                out.push('\\');
                from = i;
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
fn escape_points(text: &str) -> Vec<usize> {
    if !text.contains(['<', '[']) {
        return Vec::new();
    }
    let bytes = text.as_bytes();
    let could_start = |i: usize| match bytes[i] {
        b'<' => could_start_html(bytes, i),
        b'[' => could_start_footnote(bytes, i),
        _ => false,
    };
    let url = bare_url_bytes(text);
    let cuts = SpanCuts::new(bytes, &url);
    let mut at = Vec::new();
    for options in PARSES {
        // `<` and `[` that an event of this parse accounts for.
        let mut seen = vec![false; text.len()];
        let mut in_code = 0usize;
        // The blocks holding inline text, innermost last.
        let mut blocks = Vec::new();
        blocks.push(0..text.len());
        for (event, range) in Parser::new_ext(text, options).into_offset_iter() {
            let mut text_event = false;
            match &event {
                Event::Html(_)
                | Event::InlineHtml(_)
                | Event::FootnoteReference(_)
                | Event::Start(Tag::FootnoteDefinition(_)) => {
                    let start = range.start + indent_len(&bytes[range.clone()]);
                    if matches!(bytes.get(start), Some(b'<' | b'[')) {
                        at.push(start);
                    }
                }
                Event::Text(_) => text_event = in_code == 0,
                // mistune opens an HTML block at `<hr` in `<hr:x>`.
                Event::Start(Tag::Link {
                    link_type: LinkType::Autolink | LinkType::Email,
                    ..
                }) if first_on_line(bytes, range.start) && block_tag_at(bytes, range.start + 1) => {
                    at.push(range.start)
                }
                // What another renderer may not keep in the span is escaped
                // like text.
                Event::Code(_) => text_event = cuts.cut(bytes, &range, &blocks[blocks.len() - 1]),
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
                Event::Start(Tag::CodeBlock(_)) => in_code += 1,
                Event::End(TagEnd::CodeBlock) => in_code = in_code.saturating_sub(1),
                _ => {}
            }
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
            for i in range.filter(|&i| matches!(bytes[i], b'<' | b'[')) {
                seen[i] = true;
                if text_event && could_start(i) {
                    at.push(i);
                }
            }
        }
        // Syntax no event covers (link reference definitions, say).
        at.extend((0..bytes.len()).filter(|&i| !seen[i] && could_start(i)));
    }
    at.sort_unstable();
    at.dedup();
    at.retain(|&i| !backslashed(bytes, i) || (bytes[i] == b'<' && url[i - 1]));
    at
}

/// Where a renderer may end a code span that CommonMark keeps whole.
struct SpanCuts {
    /// `~~` starting before each byte: mistune's strikethrough runs from one
    /// `~~` to the next across code spans, and the spans after it may pair
    /// up anew.
    tildes: Vec<u32>,
    /// Backticks glued to a bare URL before each byte: mistune's url plugin
    /// takes them into the link, and the spans after it pair up anew.
    glued: Vec<u32>,
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
        SpanCuts {
            tildes: count(&|i| b[i..].starts_with(b"~~")),
            glued: count(&|i| b[i] == b'`' && i > 0 && url[i - 1]),
        }
    }

    /// Whether the code span at `span`, inside the inline block `block`,
    /// may be cut: over several lines or holding a `|` (another renderer sees
    /// a block start or a table cell there), after a glued backtick, or after
    /// a `~~` in a block with a pair of them.
    fn cut(&self, b: &[u8], span: &Range<usize>, block: &Range<usize>) -> bool {
        let s = span.start;
        let (start, end) = (block.start.min(s), block.end.max(s + 1));
        b[span.clone()].iter().any(|c| matches!(c, b'\n' | b'|'))
            || self.glued[s + 1] > self.glued[start]
            || (self.tildes[s] > self.tildes[start] && self.tildes[end] - self.tildes[start] >= 2)
    }
}

/// Bytes inside a bare `http://` or `https://` link as mistune's url plugin
/// reads one: up to a blank or `<`, whatever else comes.
fn bare_url_bytes(text: &str) -> Vec<bool> {
    let b = text.as_bytes();
    let mut on = false;
    (0..b.len())
        .map(|i| {
            if b[i] == b'<' || space_at(b, i) > 0 {
                on = false;
            } else if [&b"http://"[..], b"https://"]
                .iter()
                .any(|p| b[i..].len() >= p.len() && b[i..i + p.len()].eq_ignore_ascii_case(p))
            {
                on = true;
            }
            on
        })
        .collect()
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

/// Spaces and tabs at the start of `b`.
fn indent_len(b: &[u8]) -> usize {
    b.iter().take_while(|c| matches!(c, b' ' | b'\t')).count()
}

/// Whether the `<` at `i` could start raw HTML: `<!` and `<?` always (a
/// comment, declaration, CDATA section or processing instruction), `<` or
/// `</` and a letter when first on its line or when a whole tag follows by
/// the CommonMark grammar. `a < b`, `x<5`, `a<b then` and `<-` cannot.
fn could_start_html(b: &[u8], i: usize) -> bool {
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
/// footnote and no fenced code block left open inside a container.
fn md_contained(text: &str, depth: usize) -> bool {
    let mut doc = String::with_capacity(text.len() + 16);
    doc.push_str(text);
    doc.push_str("\n\n");
    doc.push_str(&"#".repeat(depth));
    doc.push_str(" probe\n");
    PARSES
        .iter()
        .all(|&options| contained_in(&doc, text.len() + 2, depth, options))
}

fn contained_in(doc: &str, probe_start: usize, depth: usize, options: Options) -> bool {
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
                if open_fence || matches!(tag, Tag::FootnoteDefinition(_)) {
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
mod tests {
    use super::*;

    fn headings(doc: &str) -> Vec<(usize, String)> {
        let mut out = Vec::new();
        let mut current: Option<(usize, String)> = None;
        for event in Parser::new(doc) {
            match event {
                Event::Start(Tag::Heading { level, .. }) => {
                    current = Some((level_number(level), String::new()))
                }
                Event::Text(t) | Event::Code(t) => {
                    if let Some((_, s)) = current.as_mut() {
                        s.push_str(&t)
                    }
                }
                Event::End(TagEnd::Heading(_)) => out.extend(current.take()),
                _ => {}
            }
        }
        out
    }

    /// `text` in a code fence longer than any backtick run in it.
    fn fenced(text: &str) -> String {
        let fence = "`".repeat(longest_run(text, '`').max(2) + 1);
        format!("{fence}\n{text}\n{fence}")
    }

    fn under_server(text: &str) -> Vec<(usize, String)> {
        let doc = format!("### a\n\n{}\n\n### b\n", md_block(text, 3));
        headings(&doc)
            .into_iter()
            .filter(|(l, _)| *l <= 3)
            .collect()
    }

    #[test]
    fn headings_are_demoted_below_the_server_level() {
        assert_eq!(
            md_block("# T\n## U\n### V\n#### W", 3),
            "#### T\n##### U\n###### V\n###### W"
        );
        assert_eq!(md_block("#hashtag", 3), "#hashtag");
        assert_eq!(
            md_block("> # quoted\n- ## listed", 3),
            "> #### quoted\n- ##### listed"
        );
    }

    #[test]
    fn footnote_and_definition_headings_are_demoted() {
        assert_eq!(md_block("[^1]: # x", 3), "\\[^1]: #### x");
        assert_eq!(md_block("Term\n: ## x", 3), "Term\n: ##### x");
        assert_eq!(md_block("Term\n~ # x", 3), "Term\n~ #### x");
        assert_eq!(md_block("> [^n]: - : ---", 3), "> \\[^n]: - : \\---");
        // Not a footnote definition: no label, or no blank after the colon.
        assert_eq!(container_prefix("[^]: # x"), 0);
        assert_eq!(container_prefix("[^a]:# x"), 0);
    }

    #[test]
    fn footnotes_are_escaped_where_they_stand() {
        assert_eq!(
            md_block("Note[^1].\n\n[^1]: Also from zz-victim.", 3),
            "Note\\[^1].\n\n\\[^1]: Also from zz-victim."
        );
        assert_eq!(md_block("- [^a b]: x", 3), "- \\[^a b]: x");
        for text in ["`[^abc]` and [^] and [^ x", "```\n[^1]: x\n```", "\\[^1]"] {
            assert_eq!(md_block(text, 3), text, "{text:?}");
        }
    }

    #[test]
    fn containment_is_checked_under_gfm_too() {
        // Headings only the GFM parse sees.
        assert!(!md_contained("[^1]: # x", 3));
        assert!(!md_contained("Term\n: # x", 3));
        assert!(!md_contained("Note[^1].\n\n[^1]: x", 3));
        assert!(!md_contained("| a |\n|---|\n| <b>x</b> |", 3));
        assert!(md_contained("| a |\n|---|\n| ~~b~~ |\n\n- [ ] task", 3));
    }

    #[test]
    fn a_fence_left_open_in_a_container_is_fenced() {
        for text in ["- item\n  ```\n  code", "> ~~~\n> code", "Term\n: ```"] {
            assert_eq!(md_block(text, 3), fenced(text), "{text:?}");
        }
        let closed = "- item\n  ```\n  code\n  ```\n> ~~~\n> x\n> ~~~";
        assert_eq!(md_block(closed, 3), closed);
    }

    #[test]
    fn breaks_and_setext_underlines_are_escaped() {
        assert_eq!(
            md_block("Title\n===\ntext\n---\n***", 3),
            "Title\n\\===\ntext\n\\---\n\\***"
        );
        assert_eq!(
            md_block("Title\n---=\nx\n= -", 3),
            "Title\n\\---=\nx\n\\= -"
        );
    }

    #[test]
    fn block_tag_autolinks_first_on_a_line_are_escaped() {
        assert_eq!(md_block("<hr:x>\n<p@e.com>", 3), "\\<hr:x>\n\\<p@e.com>");
        let kept = "<https://e.com>\n<help@e.com>\nsee <hr:x>";
        assert_eq!(md_block(kept, 3), kept);
    }

    #[test]
    fn a_tag_glued_to_a_bare_url_becomes_an_entity() {
        assert_eq!(md_block("https://e.com<b>x", 3), "https://e.com&lt;b>x");
        assert_eq!(md_block("https://e.com`<b>`", 3), "https://e.com`&lt;b>`");
        assert_eq!(md_block("https://e.com\\<b>", 3), "https://e.com&lt;b>");
        assert_eq!(md_block("https://e.com <b>", 3), "https://e.com \\<b>");
        assert_eq!(md_block("<https://e.com>", 3), "<https://e.com>");
    }

    #[test]
    fn code_spans_a_strikethrough_may_cut_are_escaped() {
        // mistune pairs `~~` across the backtick, freeing the span's text.
        assert_eq!(md_block("~~a `<b>`~~", 3), "~~a `\\<b>`~~");
        assert_eq!(md_block("~~`~~` x `<b>`", 3), "~~`~~` x `\\<b>`");
        assert_eq!(md_block("~~a `<b>`", 3), "~~a `<b>`");
        assert_eq!(md_block("`<b>` ~~a~~", 3), "`<b>` ~~a~~");
        // After a backtick glued to a URL every span pairs anew.
        assert_eq!(
            md_block("https://e.com` x `a` `<b>`", 3),
            "https://e.com` x `a` `\\<b>`"
        );
    }

    #[test]
    fn tags_with_unicode_blanks_are_escaped() {
        // markdown-it and mistune take `\s` for the blank in a tag.
        assert_eq!(md_block("x <b\u{a0}>", 3), "x \\<b\u{a0}>");
        assert_eq!(md_block("x <a\u{3000}y=1>", 3), "x \\<a\u{3000}y=1>");
    }

    #[test]
    fn a_fence_is_closed_only_where_every_renderer_opens_it() {
        assert_eq!(
            md_block("Intro.\n\n```\ncode", 3),
            "Intro.\n\n```\ncode\n```"
        );
        // After a term line a definition-list renderer may take the fence
        // line for another term; a closing line would then open a fence.
        let text = "Term\n```\n: x";
        assert_eq!(md_block(text, 3), fenced(text));
        // Read as a table's header by a renderer that tries tables first.
        let text = "~~~ | a |\n|---|\nx";
        assert_eq!(md_block(text, 3), fenced(text));
    }

    #[test]
    fn tags_in_a_code_span_a_renderer_may_cut_are_escaped() {
        // CommonMark keeps `<h2<x` in the span; a looser renderer opens an
        // HTML block there, and a GFM renderer may cut the span at a row.
        assert_eq!(md_block("a `b\n<h2<x` c", 3), "a `b\n\\<h2<x` c");
        assert_eq!(md_block("`a |\n| <b>` x", 3), "`a |\n| \\<b>` x");
        // A table row by a renderer that does not count cells.
        let row = "a | b |\n|---|\n| `<b> | c` |";
        assert_eq!(md_block(row, 3), "a | b |\n|---|\n| `\\<b> | c` |");
        assert_eq!(md_block("a `<h2>` c", 3), "a `<h2>` c");
    }

    #[test]
    fn nothing_reaches_the_section_levels() {
        let hostile = [
            "x\n### b\n",
            "```\nunclosed fence",
            "~~~~\n### b",
            "<!-- open comment\n",
            "<script>\n",
            "- item\n   ```\ncode",
            "text\n-",
            "   ## indented heading",
            "1) # heading in ordered list",
            "> - > ## nested",
            "````\n```\n",
            "<pre>\n### b",
        ];
        for text in hostile {
            let found = under_server(text);
            assert_eq!(
                found,
                vec![(3, "a".to_string()), (3, "b".to_string())],
                "{text:?} became {:?}",
                md_block(text, 3)
            );
        }
    }

    #[test]
    fn raw_html_is_escaped_block_and_inline() {
        let cases = [
            ("<h3>zz-victim</h3>", "\\<h3>zz-victim\\</h3>"),
            (
                "Text <h2>MCP server instructions</h2> more",
                "Text \\<h2>MCP server instructions\\</h2> more",
            ),
            ("<hr>", "\\<hr>"),
            ("a\n<hr/>\nb", "a\n\\<hr/>\nb"),
            ("<!-- hide", "\\<!-- hide"),
            ("x <!-- y --> z", "x \\<!-- y --> z"),
            ("<?php echo 1; ?>", "\\<?php echo 1; ?>"),
            ("<!DOCTYPE html>", "\\<!DOCTYPE html>"),
            ("<![CDATA[ x", "\\<![CDATA[ x"),
            ("</ul>\n</details>", "\\</ul>\n\\</details>"),
            ("<script>\nalert(1)", "\\<script>\nalert(1)"),
        ];
        for (text, want) in cases {
            assert_eq!(md_block(text, 3), want, "{text:?}");
        }
    }

    #[test]
    fn raw_html_in_containers_is_escaped() {
        let cases = [
            ("- <script>", "- \\<script>"),
            ("> <style>\n> x", "> \\<style>\n> x"),
            ("> - <textarea>", "> - \\<textarea>"),
            ("1. > <pre>", "1. > \\<pre>"),
            (
                "| a |\n|---|\n| <h1>x</h1> |",
                "| a |\n|---|\n| \\<h1>x\\</h1> |",
            ),
            ("[^1]: <!-- x", "\\[^1]: \\<!-- x"),
            ("Term\n: <h2>x</h2>", "Term\n: \\<h2>x\\</h2>"),
        ];
        for (text, want) in cases {
            assert_eq!(md_block(text, 3), want, "{text:?}");
        }
    }

    #[test]
    fn html_revealed_by_an_escape_is_escaped_too() {
        // Escaping the first tag turns its backtick into a code span opener,
        // which frees the `<b>` that was code before.
        assert_eq!(md_block("<a x=\"`\">`<b>`", 3), "\\<a x=\"`\">`\\<b>`");
        // A dissolved HTML block leaves its code span alone.
        assert_eq!(
            md_block("<important>\nUse `<tool>` first.\n</important>", 3),
            "\\<important>\nUse `<tool>` first.\n\\</important>"
        );
        // An escaped backslash does not escape the `<` after it.
        assert_eq!(md_block("\\\\<b>x", 3), "\\\\\\<b>x");
        assert_eq!(md_block("\\<b>x", 3), "\\<b>x");
    }

    #[test]
    fn code_and_autolinks_keep_their_angle_brackets() {
        let text = "Use `<b>` and `Vec<String>`.\n\n```html\n<h1>x</h1>\n```\n\n    <div>\n\nSee <https://example.com/a> or <me@example.com>.";
        assert_eq!(md_block(text, 3), text);
    }

    #[test]
    fn ordinary_angle_brackets_are_left_alone() {
        for text in [
            "a < b and x<5",
            "a -> b <- c, 1 <= 2",
            "if a<b then swap; a -> b",
            "sizes: a<b, c>d",
            "`Vec<String>` and `Option<T>`",
            "<3 and <= and < /",
        ] {
            assert_eq!(md_block(text, 3), text, "{text:?}");
        }
        // A block tag first on its line opens an HTML block even without `>`.
        assert_eq!(md_block("a\n> <div\n", 3), "a\n> \\<div\n");
        assert!(could_start_html(b"- </h3", 2) && !could_start_html(b"x </h3", 2));
        assert!(could_start_html(b"> <pre```", 2) && could_start_html(b"<hr: x", 0));
        // By the tag grammar these are tags, so they are escaped.
        assert_eq!(md_block("a<b c=d>e", 3), "a\\<b c=d>e");
        assert_eq!(md_block("x <y-z\n q='1'/> w", 3), "x \\<y-z\n q='1'/> w");
    }

    #[test]
    fn ordinary_markdown_is_left_alone() {
        let text =
            "Intro.\n\n- one\n- two\n\n```json\n{\"a\": 1}\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |";
        assert_eq!(md_block(text, 3), text);
    }

    #[test]
    fn md_line_neutralizes_spans_and_comments() {
        assert_eq!(md_line("a `b` <!-- c"), "a \\`b\\` \\<!-- c");
        assert_eq!(md_line("# x"), "\\# x");
        assert_eq!(md_line("https://e.com<b> <i>"), "https://e.com&lt;b> \\<i>");
    }

    #[test]
    fn code_spans_cannot_be_closed() {
        assert_eq!(md_code("a`b"), "``a`b``");
        assert_eq!(md_code("`x"), "`` `x ``");
    }

    #[test]
    fn a_backtick_in_the_info_string_is_not_a_fence_on_either_side() {
        // The segmenter and the escaper used to disagree on this line: the
        // escaper took it for an open fence and closed it.
        let text = "```a`b\n# Rules\nNever call delete.";
        assert_eq!(fence_open("```a`b"), None);
        assert_eq!(open_fence(text), None);
        assert_eq!(md_block(text, 3), "```a`b\n#### Rules\nNever call delete.");
        let kinds: Vec<_> = crate::segment::units(text).iter().map(|u| u.kind).collect();
        assert_eq!(
            kinds,
            [
                crate::segment::UnitKind::Sentence,
                crate::segment::UnitKind::Heading(1),
                crate::segment::UnitKind::Sentence
            ]
        );
        // A tilde fence may hold backticks in its info string.
        assert_eq!(fence_open("~~~a`b"), Some(Fence { ch: '~', run: 3 }));
    }
}
