//! Shared pieces of the fuzz targets: the structured inputs (decoded with
//! `arbitrary`), an encoder that writes seed files those inputs decode from,
//! and the oracles (markdown and XML structure, hidden characters).
//!
//! Bounds marked "target's own bound" are limits of this fuzz crate, not of
//! the library: they keep each run fast while the library grows its own
//! input limits (being added in parallel). A crash found under these bounds
//! is a real bug; a slow unit above them is not looked for here.

use arbitrary::Arbitrary;
use icu_properties::props::{DefaultIgnorableCodePoint, GeneralCategory, VariationSelector};
use icu_properties::{CodePointMapData, CodePointSetData};
use mcp_preamble::{ServerSnapshot, Tool};

#[cfg(feature = "serve")]
pub mod gateway;
pub mod targets;

/// Loads the tokenizer before the first input: its one-time load takes
/// seconds under the sanitizer, which libFuzzer would take for a hang.
pub fn warm_up() {
    let _ = mcp_preamble::Assembler::new();
}

/// Largest input a target looks at, in bytes (target's own bound).
pub const MAX_INPUT: usize = 64 * 1024;
/// Most servers per assembly (the brief: 1 to 4).
pub const MAX_SERVERS: usize = 4;
/// Most tools per server a target passes on (target's own bound).
pub const MAX_TOOLS: usize = 16;

// ---- structured inputs ------------------------------------------------------

/// One tool of a fuzzed server.
#[derive(Arbitrary, Debug, Clone, PartialEq, Eq)]
pub struct ToolIn {
    pub name: String,
    pub description: Option<String>,
}

/// One fuzzed server: `serverInfo.name`, an optional host alias, raw
/// instructions (`None` is an absent key) and tools.
#[derive(Arbitrary, Debug, Clone, PartialEq, Eq)]
pub struct ServerIn {
    pub name: String,
    pub alias: Option<String>,
    pub instructions: Option<String>,
    pub tools: Vec<ToolIn>,
}

impl ServerIn {
    /// The snapshot a host would hold for this server.
    pub fn snapshot(&self) -> ServerSnapshot {
        let mut s = ServerSnapshot::new(self.name.clone());
        if let Some(alias) = &self.alias {
            s = s.with_alias(alias.clone());
        }
        if let Some(text) = &self.instructions {
            s = s.with_instructions(text);
        }
        for t in self.tools.iter().take(MAX_TOOLS) {
            s = s.with_tool(Tool {
                name: t.name.clone(),
                title: None,
                description: t.description.clone(),
                input_schema: serde_json::json!({"type": "object"}).into(),
                ..Tool::default()
            });
        }
        s
    }
}

/// Input of the `section` target.
#[derive(Arbitrary, Debug, Clone, PartialEq, Eq)]
pub struct SectionInput {
    /// bit 0: tool descriptions shown; bit 1: insertion order; bit 2: dedup
    /// off; bit 3: dedup across servers; bit 4: tool-only servers not listed.
    pub flags: u8,
    pub servers: Vec<ServerIn>,
}

impl SectionInput {
    /// The servers the `section` target assembles (at most [`MAX_SERVERS`]),
    /// or `None` for an input it skips: no server, or over [`MAX_INPUT`]
    /// bytes of text.
    pub fn servers_within_bounds(&self) -> Option<Vec<ServerSnapshot>> {
        let size: usize = self
            .servers
            .iter()
            .map(|s| {
                s.name.len()
                    + s.alias.as_ref().map_or(0, String::len)
                    + s.instructions.as_ref().map_or(0, String::len)
                    + s.tools
                        .iter()
                        .map(|t| t.name.len() + t.description.as_ref().map_or(0, String::len))
                        .sum::<usize>()
            })
            .sum();
        if self.servers.is_empty() || size > MAX_INPUT {
            return None;
        }
        Some(
            self.servers
                .iter()
                .take(MAX_SERVERS)
                .map(|s| s.snapshot())
                .collect(),
        )
    }
}

/// One server of the `budgets` target with its own budget (`None`: the
/// global one applies).
#[derive(Arbitrary, Debug, Clone, PartialEq, Eq)]
pub struct BudgetServer {
    pub budget: Option<u16>,
    pub server: ServerIn,
}

/// Input of the `budgets` target.
#[derive(Arbitrary, Debug, Clone, PartialEq, Eq)]
pub struct BudgetInput {
    /// bit 0: xml template; bit 1: tool descriptions shown; bit 2: a total
    /// budget; bit 3: a global per-server budget; bit 4: dedup off.
    pub flags: u8,
    pub budget: u16,
    pub total: u16,
    pub servers: Vec<BudgetServer>,
}

/// One server of the `lint` target, with where it came from.
#[derive(Arbitrary, Debug, Clone, PartialEq, Eq)]
pub struct LintServer {
    pub source: Option<String>,
    pub server: ServerIn,
}

/// A server that could not be linted, as the CLI records it.
#[derive(Arbitrary, Debug, Clone, PartialEq, Eq)]
pub struct LintFailure {
    pub source: String,
    pub error: String,
}

/// Input of the `lint` target.
#[derive(Arbitrary, Debug, Clone, PartialEq, Eq)]
pub struct LintInput {
    /// `MCP004`'s threshold (0 means the default).
    pub max_tokens: u16,
    pub failures: Vec<LintFailure>,
    pub servers: Vec<LintServer>,
}

// ---- seed encoder -----------------------------------------------------------

/// What the decoder reads: bytes from the front, or a length from the back
/// (`arbitrary` takes collection and string lengths from the end of the
/// data).
enum Op {
    Front(Vec<u8>),
    Len(usize),
}

/// Writes bytes that `arbitrary` 1.x decodes into a given value. Seeds made
/// with it are checked by decoding them again (see `examples/make_seeds.rs`).
#[derive(Default)]
pub struct Encoder {
    ops: Vec<Op>,
}

impl Encoder {
    fn front(&mut self, bytes: &[u8]) {
        self.ops.push(Op::Front(bytes.to_vec()));
    }

    /// The seed bytes.
    pub fn finish(self) -> Vec<u8> {
        let front_total: usize = self
            .ops
            .iter()
            .map(|op| match op {
                Op::Front(b) => b.len(),
                Op::Len(_) => 0,
            })
            .sum();
        let lens = self.ops.iter().filter(|o| matches!(o, Op::Len(_))).count();
        // A length's width depends on what remains when it is read, which
        // depends on the widths: iterate to the fixed point (widths only grow).
        let mut widths = vec![1usize; lens];
        loop {
            let total = front_total + widths.iter().sum::<usize>();
            let mut remaining = total;
            let mut next = Vec::with_capacity(lens);
            for op in &self.ops {
                match op {
                    Op::Front(b) => remaining -= b.len().min(remaining),
                    Op::Len(_) => {
                        let w = width(remaining);
                        next.push(w);
                        remaining -= w.min(remaining);
                    }
                }
            }
            if next == widths {
                break;
            }
            widths = next.iter().zip(&widths).map(|(a, b)| *a.max(b)).collect();
        }
        let mut front = Vec::new();
        let mut back: Vec<Vec<u8>> = Vec::new();
        let mut k = 0;
        for op in &self.ops {
            match op {
                Op::Front(b) => front.extend_from_slice(b),
                Op::Len(n) => {
                    let w = widths[k];
                    k += 1;
                    let bytes = (*n as u64).to_be_bytes();
                    back.push(bytes[8 - w..].to_vec());
                }
            }
        }
        for group in back.iter().rev() {
            front.extend_from_slice(group);
        }
        front
    }
}

/// How many bytes `arbitrary_byte_size` takes when `remaining` are left.
fn width(remaining: usize) -> usize {
    match remaining as u64 {
        0 => 0,
        1..=256 => 1,
        257..=65_537 => 2,
        65_538..=4_294_967_299 => 4,
        _ => 8,
    }
}

/// A value that can be written as `arbitrary` input.
pub trait Seed {
    /// As a field that is not the last of the top-level value.
    fn put(&self, e: &mut Encoder);
    /// As the last field of the top-level value (`arbitrary_take_rest`).
    fn put_last(&self, e: &mut Encoder) {
        self.put(e)
    }
    /// The seed bytes of this value as a whole input.
    fn seed(&self) -> Vec<u8> {
        let mut e = Encoder::default();
        self.put_last(&mut e);
        e.finish()
    }
}

impl Seed for u8 {
    fn put(&self, e: &mut Encoder) {
        e.front(&[*self]);
    }
}

impl Seed for u16 {
    fn put(&self, e: &mut Encoder) {
        e.front(&self.to_le_bytes());
    }
}

impl Seed for String {
    fn put(&self, e: &mut Encoder) {
        e.ops.push(Op::Len(self.len()));
        e.front(self.as_bytes());
    }
    fn put_last(&self, e: &mut Encoder) {
        e.front(self.as_bytes());
    }
}

impl<T: Seed> Seed for Option<T> {
    fn put(&self, e: &mut Encoder) {
        match self {
            None => e.front(&[0]),
            Some(v) => {
                e.front(&[1]);
                v.put(e);
            }
        }
    }
}

impl<T: Seed> Seed for Vec<T> {
    fn put(&self, e: &mut Encoder) {
        for v in self {
            e.front(&[1]);
            v.put(e);
        }
        e.front(&[0]);
    }
    fn put_last(&self, e: &mut Encoder) {
        // The take-rest iterator stops at the end of the data.
        for v in self {
            e.front(&[1]);
            v.put(e);
        }
    }
}

macro_rules! seed_struct {
    ($ty:ident { $($field:ident),* ; $last:ident }) => {
        impl Seed for $ty {
            fn put(&self, e: &mut Encoder) {
                $(self.$field.put(e);)*
                self.$last.put(e);
            }
            fn put_last(&self, e: &mut Encoder) {
                $(self.$field.put(e);)*
                self.$last.put_last(e);
            }
        }
    };
}

seed_struct!(ToolIn { name ; description });
seed_struct!(ServerIn { name, alias, instructions ; tools });
seed_struct!(SectionInput { flags ; servers });
seed_struct!(BudgetServer { budget ; server });
seed_struct!(BudgetInput { flags, budget, total ; servers });
seed_struct!(LintServer { source ; server });
seed_struct!(LintFailure { source ; error });
seed_struct!(LintInput { max_tokens, failures ; servers });

// ---- oracles ----------------------------------------------------------------

/// Whether sanitizing removes or rewrites `c`, so that it must never be in a
/// section: every `Cc` but tab and newline (CR included: it becomes LF),
/// `Cf`, `Co`, `Cn`, `Cs`, variation selectors, the rest of
/// `Default_Ignorable_Code_Point`, U+2800, and the line and paragraph
/// separators (which become LF). The rules of `src/sanitize.rs`, restated
/// from the crate docs with the same Unicode tables.
pub fn forbidden_in_section(c: char) -> bool {
    if c == '\n' || c == '\t' {
        return false;
    }
    if matches!(c, '\r' | '\u{2028}' | '\u{2029}' | '\u{2800}') {
        return true;
    }
    if CodePointSetData::new::<VariationSelector>().contains(c)
        || CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
    {
        return true;
    }
    matches!(
        CodePointMapData::<GeneralCategory>::new().get(c),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::PrivateUse
            | GeneralCategory::Unassigned
            | GeneralCategory::Surrogate
    )
}

/// Panics when `text` holds a character sanitizing removes.
pub fn assert_no_hidden(text: &str, what: &str) {
    if let Some((at, c)) = text.char_indices().find(|(_, c)| forbidden_in_section(*c)) {
        panic!(
            "{what}: U+{:04X} at byte {at} survived sanitizing\n{text:?}",
            c as u32
        );
    }
}

/// pulldown-cmark with the GitHub options: tables, footnotes, strikethrough,
/// task lists.
pub fn gfm() -> pulldown_cmark::Options {
    use pulldown_cmark::Options;
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
}

/// A heading as pulldown-cmark sees it: level, start byte, text content.
#[derive(Debug)]
pub struct Heading {
    pub level: u8,
    pub start: usize,
    pub text: String,
}

/// Every heading of a markdown document (GFM options).
pub fn headings(doc: &str) -> Vec<Heading> {
    use pulldown_cmark::{Event, Parser, Tag, TagEnd};
    let mut out = Vec::new();
    let mut current: Option<Heading> = None;
    for (event, range) in Parser::new_ext(doc, gfm()).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                current = Some(Heading {
                    level: level as u8,
                    start: range.start,
                    text: String::new(),
                })
            }
            Event::Text(t) | Event::Code(t) | Event::InlineHtml(t) | Event::Html(t) => {
                if let Some(h) = current.as_mut() {
                    h.text.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => out.extend(current.take()),
            _ => {}
        }
    }
    out
}

/// Whether `shown` is `name` with backslashes inserted before ASCII
/// punctuation (or `<` written `&lt;`) and nothing else: what escaping a
/// name for a markdown heading line may do (`md_line` escapes a leading
/// block marker and every backtick and `<`). Checked on the heading's source line, since the
/// parsed text of a heading also drops inline markup (`*a*`, links, a
/// closing `#` run) that is not forgery.
pub fn escaped_form_of(shown: &str, name: &str) -> bool {
    let s: Vec<char> = shown.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // match[i][j]: s[i..] is an escaped form of n[j..].
    let mut ok = vec![vec![false; n.len() + 1]; s.len() + 1];
    ok[s.len()][n.len()] = true;
    for i in (0..s.len()).rev() {
        for j in (0..=n.len()).rev() {
            let same = j < n.len() && s[i] == n[j] && ok[i + 1][j + 1];
            let inserted =
                s[i] == '\\' && i + 1 < s.len() && s[i + 1].is_ascii_punctuation() && ok[i + 1][j];
            // md_line writes `<` after a bare URL as `&lt;` (a backslash there
            // would be taken into the link by some renderers).
            let entity = j < n.len()
                && n[j] == '<'
                && s[i..].starts_with(&['&', 'l', 't', ';'])
                && ok[i + 4][j + 1];
            ok[i][j] = same || inserted || entity;
        }
    }
    ok[0][0]
}

/// Limits a fuzzed string to `max` bytes at a char boundary (target's own
/// bound for fields that feed quadratic work).
pub fn clip(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// A cheap stand-in tokenizer (a token per 4 bytes, rounded up) for targets
/// whose oracles check structure, not token counts: tiktoken took most of
/// each execution, and libFuzzer's throughput is what a campaign is worth.
/// The `budgets` target keeps tiktoken, since its oracle recounts exactly.
pub struct QuarterCounter;

impl mcp_preamble::TokenCounter for QuarterCounter {
    fn name(&self) -> &str {
        "quarter"
    }

    fn count(&self, text: &str) -> usize {
        text.len().div_ceil(4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_forms() {
        assert!(escaped_form_of("\\# a", "# a"));
        assert!(escaped_form_of("a\\`b\\<c", "a`b<c"));
        assert!(escaped_form_of("a\\b", "a\\b"));
        assert!(!escaped_form_of("ab", "a"));
        assert!(!escaped_form_of("b", "a"));
        // The 230 s `section` run stopped on an outdated oracle: `&lt;` after a bare URL.
        assert!(escaped_form_of("http://x&lt;/server>", "http://x</server>"));
        assert!(!escaped_form_of("&lt;", "&"));
    }
}
