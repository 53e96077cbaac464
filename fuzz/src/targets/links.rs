//! `links`: server text made from a grammar of what engines group
//! differently: bare URLs (every scheme cmark-gfm, mistune and markdown-it's
//! linkify autolink, `www.`, and schemes none does), inline links and
//! images with pointy, bare and tag-holding destinations and titles, code
//! spans, tags, and the punctuation between them, glued in any order. The
//! text goes in as a server's instructions and as another's tool
//! description, next to a victim server.
//!
//! Oracles, on the markdown section read by pulldown-cmark (CommonMark and
//! GFM):
//! - the real headings only, each the shown name (as `section` checks);
//! - no raw HTML, no image (server images become links), no link or image
//!   whose destination has a `javascript:`, `vbscript:`, `data:` or `file:`
//!   scheme;
//! - the same after every bare URL is taken as an autolink as greedily as
//!   any engine takes one (cmark-gfm's extended autolinks, mistune's url
//!   plugin): from `www.` or `scheme://` to the next ASCII blank or `<`,
//!   masked, and the rest parsed afresh (a link's `[docs](` or a code
//!   span's backtick taken into the URL frees what follows).
//!
//! The same inputs go through cmark-gfm, C cmark, markdown-it, mistune and
//! commonmark.py in `fuzz/differential/run.sh` (`examples/sections.rs`
//! decodes them as this target does).

use arbitrary::Arbitrary;
use mcp_preamble::{Assembler, Assembly, ServerSnapshot, Template, Tool};
use pulldown_cmark::{Event, Options, Parser, Tag};

use crate::{gfm, headings};

/// One piece of the grammar; the numbers pick from the tables below.
#[derive(Arbitrary, Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Url(u8),
    Link {
        text: u8,
        dest: u8,
        title: Option<u8>,
    },
    Image {
        text: u8,
        dest: u8,
        title: Option<u8>,
    },
    Code(u8),
    Tag(u8),
    Glue(u8),
    Free(String),
}

/// Input of the `links` target.
#[derive(Arbitrary, Debug, Clone, PartialEq, Eq)]
pub struct LinksInput {
    pub pieces: Vec<Piece>,
}

const URLS: &[&str] = &[
    "https://x.example/",
    "http://x.example",
    "ftp://x.example/",
    "www.x.example/",
    "WWW.x.example",
    "HTTPS://x.example/a",
    "mailto:a@x.example",
    "xmpp:a@x.example",
    "gopher://x.example/",
    "file:///etc/",
    "a@x.example",
    "javascript:alert(1)",
];
const DESTS: &[&str] = &[
    "<template>",
    "y<template>",
    "<h3>zz-victim</h3>",
    "<img src=x onerror=alert(1)>",
    "y",
    "https://evil.example/",
    "javascript:alert(1)",
    "JaVaScRiPt:alert(1)",
    "<javascript:alert(1)>",
    "&#106;avascript:alert(1)",
    "vbscript:msgbox(1)",
    "data:text/html,<script>alert(1)</script>",
    "file:///etc/passwd",
    " <data:image/png,x>",
    "",
    "<>",
];
const TITLES: &[&str] = &[
    "\"<template>\"",
    "'<h3>zz-victim</h3>'",
    "(<!--)",
    "\"t\"",
    "\"`<b>`\"",
    "\"[^1]\"",
];
const TEXTS: &[&str] = &[
    "docs",
    "",
    "`<b>`",
    "<template>",
    "![i](y)",
    "[a](y)",
    "x\ny",
];
const CODES: &[&str] = &[
    "`<template>`",
    "``<h3>zz-victim</h3>``",
    "`x`",
    "`` ` ``",
    "`<!--`",
];
const TAGS: &[&str] = &[
    "<template>",
    "<h3>zz-victim</h3>",
    "<img src=x onerror=alert(1)>",
    "<!--",
    "</p>",
    "<?x",
    "<![CDATA[",
    "<a href=\"javascript:alert(1)\">",
];
const GLUE: &[&str] = &[
    " ",
    "\n",
    "\n\n",
    "\t",
    "[",
    "]",
    "(",
    ")",
    "](",
    "\"",
    "'",
    "`",
    "\\",
    "<",
    ">",
    "!",
    "~~",
    "*",
    "_",
    "|",
    "now.",
    "[^1]",
    "\n[^1]: x",
    "- ",
    "> ",
    "    ",
];

fn pick<'a>(table: &[&'a str], n: u8) -> &'a str {
    table[usize::from(n) % table.len()]
}

fn link(out: &mut String, text: u8, dest: u8, title: Option<u8>) {
    out.push('[');
    out.push_str(pick(TEXTS, text));
    out.push_str("](");
    out.push_str(pick(DESTS, dest));
    if let Some(t) = title {
        out.push(if t & 0x80 != 0 { '\t' } else { ' ' });
        out.push_str(pick(TITLES, t));
    }
    out.push(')');
}

impl LinksInput {
    /// The server text the pieces make (at most 4 KiB: target's own bound).
    pub fn text(&self) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Url(n) => out.push_str(pick(URLS, *n)),
                Piece::Link { text, dest, title } => link(&mut out, *text, *dest, *title),
                Piece::Image { text, dest, title } => {
                    out.push('!');
                    link(&mut out, *text, *dest, *title);
                }
                Piece::Code(n) => out.push_str(pick(CODES, *n)),
                Piece::Tag(n) => out.push_str(pick(TAGS, *n)),
                Piece::Glue(n) => out.push_str(pick(GLUE, *n)),
                Piece::Free(s) => out.push_str(crate::clip(s, 64)),
            }
            if out.len() > 4096 {
                break;
            }
        }
        out
    }

    /// The markdown section: the text as one server's instructions and as
    /// another's tool description (one server with both would drop the
    /// instructions as restating the tool), beside a victim.
    pub fn assemble(&self) -> Option<Assembly> {
        let text = self.text();
        let servers = [
            ServerSnapshot::new("aa-hostile").with_instructions(text.clone()),
            ServerSnapshot::new("mm-tools")
                .with_instructions("Tools of the middle server.")
                .with_tool(Tool::new("probe", text)),
            ServerSnapshot::new("zz-victim").with_instructions("The real victim server."),
        ];
        Assembler::new()
            .token_counter(crate::QuarterCounter)
            .tool_descriptions(true)
            .template(Template::markdown())
            .assemble(&servers)
            .ok()
    }
}

/// Schemes a browser runs or reads local data with.
pub fn unsafe_target(dest: &str) -> bool {
    let url: String = dest
        .trim_start_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect::<String>()
        .to_ascii_lowercase();
    ["javascript:", "vbscript:", "data:", "file:"]
        .iter()
        .any(|s| url.starts_with(s))
}

/// `doc` with every byte a bare URL's autolink may take masked as `/`,
/// read as greedily as any engine: from `www.` or `scheme://` to the next
/// ASCII blank or `<`. What follows such a link is parsed afresh there.
/// `/` because the link is a node of its own: the mask must not continue
/// a tag name begun before it (`<shttps` + letters + ` src=… >` read as a
/// tag no engine sees); `<x/` followed by anything but `>` is no tag.
///
/// A URL never starts inside a code span: every engine closes a span
/// before it looks for autolinks in what follows, so only a URL that
/// starts outside one can take a later span's backtick (the `ftp://`
/// form of issue 40).
fn mask_urls(doc: &str) -> String {
    let spans: Vec<std::ops::Range<usize>> = Parser::new_ext(doc, gfm())
        .into_offset_iter()
        .filter(|(e, _)| matches!(e, Event::Code(_)))
        .map(|(_, r)| r)
        .collect();
    let in_span = |i: usize| spans.iter().any(|r| r.contains(&i));
    let b = doc.as_bytes();
    let mut on = false;
    let mut out = Vec::with_capacity(b.len());
    for i in 0..b.len() {
        if b[i] == b'<' || b[i].is_ascii_whitespace() {
            on = false;
        } else if !on
            && ((b[i..].len() >= 4 && b[i..i + 4].eq_ignore_ascii_case(b"www."))
                || (b[i] == b':'
                    && i > 0
                    && b[i - 1].is_ascii_alphanumeric()
                    && b[i + 1..].starts_with(b"//")))
            && !in_span(i)
        {
            on = true;
        }
        out.push(if on { b'/' } else { b[i] });
    }
    String::from_utf8(out).expect("ASCII replaces whole characters")
}

/// No raw HTML, no image, no link to an unsafe target.
fn check_parse(doc: &str, options: Options, what: &str) {
    for event in Parser::new_ext(doc, options) {
        match event {
            Event::Html(h) | Event::InlineHtml(h) => panic!("{what}: raw HTML {h:?}\n{doc}"),
            Event::Start(Tag::Image { dest_url, .. }) => {
                panic!("{what}: an image of {dest_url:?}\n{doc}")
            }
            Event::Start(Tag::Link { dest_url, .. }) => {
                assert!(
                    !unsafe_target(&dest_url),
                    "{what}: a link to {dest_url:?}\n{doc}"
                );
            }
            _ => {}
        }
    }
}

pub fn run(input: LinksInput) {
    let Some(assembly) = input.assemble() else {
        return;
    };
    let doc = assembly.text();
    let names: Vec<&str> = assembly
        .servers()
        .iter()
        .filter(|s| s.included)
        .map(|s| s.name.as_str())
        .collect();
    let h3: Vec<String> = headings(doc)
        .into_iter()
        .filter(|h| h.level <= 3)
        .map(|h| h.text)
        .collect();
    let mut want = vec!["MCP server instructions".to_string()];
    want.extend(names.iter().map(|n| n.to_string()));
    assert_eq!(h3, want, "\n{doc}");
    let masked = mask_urls(doc);
    for options in [Options::empty(), gfm()] {
        check_parse(doc, options, "as written");
        check_parse(&masked, options, "after a bare URL's autolink");
    }
}

impl crate::Seed for Piece {
    fn put(&self, e: &mut crate::Encoder) {
        // `arbitrary` picks a variant from a little-endian u32: `(v * 7) >> 32`.
        let variant = |e: &mut crate::Encoder, k: u64| {
            let v = ((k << 32).div_ceil(7)) as u32;
            e.front(&v.to_le_bytes());
        };
        let link = |e: &mut crate::Encoder, text: u8, dest: u8, title: Option<u8>| {
            text.put(e);
            dest.put(e);
            title.put(e);
        };
        match self {
            Piece::Url(n) => {
                variant(e, 0);
                n.put(e);
            }
            Piece::Link { text, dest, title } => {
                variant(e, 1);
                link(e, *text, *dest, *title);
            }
            Piece::Image { text, dest, title } => {
                variant(e, 2);
                link(e, *text, *dest, *title);
            }
            Piece::Code(n) => {
                variant(e, 3);
                n.put(e);
            }
            Piece::Tag(n) => {
                variant(e, 4);
                n.put(e);
            }
            Piece::Glue(n) => {
                variant(e, 5);
                n.put(e);
            }
            Piece::Free(s) => {
                variant(e, 6);
                s.put(e);
            }
        }
    }
}

impl crate::Seed for LinksInput {
    fn put(&self, e: &mut crate::Encoder) {
        self.pieces.put(e);
    }
    fn put_last(&self, e: &mut crate::Encoder) {
        self.pieces.put_last(e);
    }
}

/// The table index of `text` in `table` (seeds name pieces by their text).
fn index(table: &[&str], text: &str) -> u8 {
    table
        .iter()
        .position(|t| *t == text)
        .expect("a grammar piece") as u8
}

/// The committed seeds: the forms of issue 40 (a bare URL of each scheme
/// glued to a link or image holding a tag in its destination or title, a
/// code span glued to `ftp://`, unsafe schemes, images, a tab before a
/// title), by name.
pub fn seeds() -> Vec<(&'static str, LinksInput)> {
    let url = |u: &str| Piece::Url(index(URLS, u));
    let glue = |g: &str| Piece::Glue(index(GLUE, g));
    let link = |t: &str, d: &str, title: Option<&str>| Piece::Link {
        text: index(TEXTS, t),
        dest: index(DESTS, d),
        title: title.map(|x| index(TITLES, x)),
    };
    let image = |t: &str, d: &str, title: Option<&str>| Piece::Image {
        text: index(TEXTS, t),
        dest: index(DESTS, d),
        title: title.map(|x| index(TITLES, x)),
    };
    let tab = |p: Piece| match p {
        Piece::Link { text, dest, title } => Piece::Link {
            text,
            dest,
            title: title.map(|t| t | 0x80),
        },
        p => p,
    };
    let input = |pieces: Vec<Piece>| LinksInput { pieces };
    vec![
        (
            "glued-https-pointy",
            input(vec![
                url("https://x.example/"),
                link("docs", "<template>", None),
                glue(" "),
                glue("now."),
            ]),
        ),
        (
            "glued-www-pointy",
            input(vec![
                url("www.x.example/"),
                link("docs", "<template>", None),
            ]),
        ),
        (
            "glued-ftp-pointy",
            input(vec![
                url("ftp://x.example/"),
                link("docs", "<template>", None),
            ]),
        ),
        (
            "glued-image",
            input(vec![
                url("https://x.example/"),
                image("docs", "<template>", None),
            ]),
        ),
        (
            "glued-title-h3",
            input(vec![
                url("https://x.example/"),
                link("docs", "y", Some("'<h3>zz-victim</h3>'")),
            ]),
        ),
        (
            "glued-dest-tag",
            input(vec![
                url("https://x.example/"),
                link("docs", "y<template>", None),
            ]),
        ),
        (
            "glued-img-onerror",
            input(vec![
                url("www.x.example/"),
                link("docs", "<img src=x onerror=alert(1)>", None),
            ]),
        ),
        (
            "ftp-code-span",
            input(vec![
                url("ftp://x.example/"),
                Piece::Code(index(CODES, "``<h3>zz-victim</h3>``")),
            ]),
        ),
        (
            "javascript",
            input(vec![
                link("docs", "javascript:alert(1)", None),
                glue(" "),
                link("docs", "&#106;avascript:alert(1)", None),
            ]),
        ),
        (
            "vbscript-data-file",
            input(vec![
                link("docs", "vbscript:msgbox(1)", None),
                link("docs", "data:text/html,<script>alert(1)</script>", None),
                link("docs", "file:///etc/passwd", None),
            ]),
        ),
        (
            "autolink-javascript",
            input(vec![glue("<"), url("javascript:alert(1)"), glue(">")]),
        ),
        (
            "remote-image",
            input(vec![
                image("docs", "https://evil.example/", None),
                image("![i](y)", "y", None),
            ]),
        ),
        (
            "tab-title",
            input(vec![tab(link("docs", "y", Some("\"<template>\"")))]),
        ),
    ]
}
