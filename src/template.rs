//! Rendering through minijinja, and the escaping that keeps server text inside
//! its own block.
//!
//! A template is one file with two parts: a macro `server(s)` that renders one
//! server's block, and a body that lays out the section around the list
//! `blocks`. Blocks are rendered apart from the body, so each server's text in
//! the report is exactly what the section holds, and a block can be re-rendered
//! alone while it is fitted to its budget.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use minijinja::value::Serde;
use minijinja::{Environment, UndefinedBehavior, Value};
use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};
use serde::Serialize;

use crate::error::{Error, ErrorKind, Result};
use crate::sanitize;

const MARKDOWN_SOURCE: &str = include_str!("../templates/markdown.jinja");
const XML_SOURCE: &str = include_str!("../templates/xml.jinja");

/// Upper bound on template work per render, so a user template cannot spin.
const FUEL: u64 = 5_000_000;

/// Marks where the body placed block `i`; server text never reaches the body,
/// so the marker can only come from the template itself.
fn block_marker(i: usize) -> String {
    format!("\u{0}mcp-preamble-block-{i}\u{0}")
}

/// A compiled section template.
///
/// Built-in: [`Template::markdown`] (the default) and [`Template::xml`]. Your
/// own: [`Template::from_source`] or [`Template::from_path`]; it must define a
/// macro `server(s)` and output each item of `blocks` exactly once. See the
/// crate docs, "Templates", for the variables and the escaping filters.
#[derive(Clone)]
pub struct Template {
    inner: Arc<Compiled>,
}

struct Compiled {
    name: String,
    env: Environment<'static>,
}

impl std::fmt::Debug for Template {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Template")
            .field("name", &self.inner.name)
            .finish()
    }
}

impl Template {
    /// The built-in markdown template: `## MCP server instructions`, then one
    /// `### <server>` block per server. Headings inside server text are
    /// demoted below level 3, thematic breaks and setext underlines are
    /// escaped, and text that would leave a markdown construct open is fenced.
    pub fn markdown() -> Template {
        static T: OnceLock<Template> = OnceLock::new();
        T.get_or_init(|| compile_builtin("markdown", MARKDOWN_SOURCE))
            .clone()
    }

    /// The built-in XML template: `<mcp_servers>` holding one
    /// `<server name="…">` element per server. All server text is XML-escaped
    /// (`&`, `<`, `>`, and quotes in attributes), so it cannot open or close
    /// any element.
    pub fn xml() -> Template {
        static T: OnceLock<Template> = OnceLock::new();
        T.get_or_init(|| compile_builtin("xml", XML_SOURCE)).clone()
    }

    /// A built-in template by name: `"markdown"` or `"xml"`.
    pub fn builtin(name: &str) -> Result<Template> {
        match name {
            "markdown" | "md" => Ok(Template::markdown()),
            "xml" => Ok(Template::xml()),
            other => Err(Error::new(
                ErrorKind::UnknownTemplate,
                format!("{other:?} (built-in templates: markdown, xml)"),
            )),
        }
    }

    /// Compiles a template from source. `name` appears in error messages.
    ///
    /// Undefined variables are errors. Fails with [`ErrorKind::Template`]
    /// (naming the template and line) when the source does not compile, its
    /// body fails on an empty section, or it defines no `server` macro.
    pub fn from_source(name: impl Into<String>, source: impl Into<String>) -> Result<Template> {
        let name = name.into();
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_fuel(Some(FUEL));
        env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
        env.add_filter("md_block", md_block_filter);
        env.add_filter("md_line", md_line);
        env.add_filter("md_code", md_code);
        env.add_filter("xml_text", xml_text);
        env.add_filter("xml_attr", xml_attr);
        env.add_filter("one_line", one_line);
        env.add_template_owned(name.clone(), source.into())
            .map_err(|e| Error::template(e, &name))?;
        let template = Template {
            inner: Arc::new(Compiled { name, env }),
        };
        template.check()?;
        Ok(template)
    }

    /// Reads and compiles a template file; its name is the file name.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Template> {
        let path = path.as_ref();
        let source = crate::error::read_file(path)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        Template::from_source(name, source)
    }

    /// The template's name (`"markdown"`, `"xml"`, or the name given).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    fn check(&self) -> Result<()> {
        let session = self.session(0)?;
        let has_macro = session.captured.state().exports().contains(&"server");
        if !has_macro {
            return Err(Error::new(
                ErrorKind::Template,
                format!("{}: the template defines no macro server(s)", self.name()),
            ));
        }
        session.body_parts(0)?;
        Ok(())
    }

    /// Starts rendering a section of `count` blocks.
    pub(crate) fn session(&self, count: usize) -> Result<Session<'_>> {
        let tmpl = self
            .inner
            .env
            .get_template(&self.inner.name)
            .map_err(|e| Error::template(e, &self.inner.name))?;
        let blocks: Vec<String> = (0..count).map(block_marker).collect();
        let captured = tmpl
            .render_captured(minijinja::context! { blocks => blocks })
            .map_err(|e| Error::template(e, &self.inner.name))?;
        Ok(Session {
            name: &self.inner.name,
            captured,
        })
    }
}

fn compile_builtin(name: &str, source: &str) -> Template {
    match Template::from_source(name, source) {
        Ok(t) => t,
        // The built-in sources are fixed and covered by tests.
        Err(e) => unreachable!("built-in template {name} does not compile: {e}"),
    }
}

/// One render of a section: call [`Session::block`] per server, then
/// [`Session::body_parts`] for the text around the blocks.
pub(crate) struct Session<'t> {
    name: &'t str,
    captured: minijinja::Captured<'t>,
}

impl Session<'_> {
    /// Renders one server's block.
    pub(crate) fn block<S: Serialize>(&mut self, server: &S) -> Result<String> {
        let arg = Value::from(Serde(server));
        let name = self.name;
        self.captured
            .with_state_mut(|state| state.call_macro("server", &[arg]))
            .map_err(|e| Error::template(e, name))
    }

    /// The body's text split around the blocks: `count + 1` pieces, the blocks
    /// go between them in order.
    pub(crate) fn body_parts(&self, count: usize) -> Result<Vec<String>> {
        let out = self.captured.output();
        let mut parts = Vec::with_capacity(count + 1);
        let mut rest = out;
        for i in 0..count {
            let marker = block_marker(i);
            let Some(at) = rest.find(&marker) else {
                return Err(self.misplaced());
            };
            parts.push(rest[..at].to_string());
            rest = &rest[at + marker.len()..];
        }
        if rest.contains('\u{0}') {
            return Err(self.misplaced());
        }
        parts.push(rest.to_string());
        Ok(parts)
    }

    fn misplaced(&self) -> Error {
        Error::new(
            ErrorKind::Template,
            format!(
                "{}: the body must output each item of blocks exactly once, in order",
                self.name
            ),
        )
    }
}

// ---- escaping filters -------------------------------------------------------

/// `one_line`: collapses whitespace so the value fits on one line.
fn one_line(value: &str) -> String {
    sanitize::line(value)
}

/// `md_line`: one line that cannot start a markdown block of its own, nor
/// open a code span or an HTML comment that would run into what follows.
fn md_line(value: &str) -> String {
    let line = sanitize::line(value);
    let mut out = String::with_capacity(line.len() + 1);
    if line.starts_with(['#', '>', '=', '-', '*', '+', '_', '|', '~']) {
        out.push('\\');
    }
    for c in line.chars() {
        if matches!(c, '`' | '<') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `md_code`: an inline code span that no backtick in the value can close.
fn md_code(value: &str) -> String {
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

/// `xml_text`: escapes `&`, `<` and `>`.
fn xml_text(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// `xml_attr`: one line, escaped for a double- or single-quoted attribute.
fn xml_attr(value: &str) -> String {
    let line = sanitize::line(value);
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

fn md_block_filter(value: &str, depth: Option<u8>) -> String {
    md_block(value, depth.unwrap_or(3).clamp(1, 5) as usize)
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
/// Every heading line (also inside lists and quotes) is demoted by `depth`
/// levels (at most to 6); lines that would be a thematic break or a setext
/// underline get a backslash. The result is then parsed: if any heading of
/// level `depth` or less or any thematic break remains, or the text would
/// swallow what follows it (an unclosed fence, an HTML block), an open fence
/// is closed, and failing that the whole text is put in a code fence longer
/// than any backtick run inside it.
pub(crate) fn md_block(text: &str, depth: usize) -> String {
    let escaped = escape_lines(text, depth);
    if md_contained(&escaped, depth) {
        return escaped;
    }
    if let Some(fence) = open_fence(&escaped) {
        let closed = format!("{escaped}\n{fence}");
        if md_contained(&closed, depth) {
            return closed;
        }
    }
    let fence = "`".repeat(longest_run(&escaped, '`').max(2) + 1);
    format!("{fence}\n{escaped}\n{fence}")
}

/// Length of the container prefix of a line: indentation, `>` quotes and
/// list markers, in any nesting.
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
        if i < b.len() && matches!(b[i], b'-' | b'*' | b'+') && spaced(i + 1) {
            i += 1;
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

fn escape_lines(text: &str, depth: usize) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for (n, line) in text.split('\n').enumerate() {
        if n > 0 {
            out.push('\n');
        }
        let p = container_prefix(line);
        let (prefix, rest) = line.split_at(p);
        out.push_str(prefix);
        let hashes = rest.bytes().take_while(|&c| c == b'#').count();
        let after = &rest[hashes..];
        if (1..=6).contains(&hashes) && (after.is_empty() || after.starts_with([' ', '\t'])) {
            let level = (hashes + depth).min(6);
            out.push_str(&"#".repeat(level));
            out.push_str(after);
        } else if is_break_like(rest) {
            out.push('\\');
            out.push_str(rest);
        } else {
            out.push_str(rest);
        }
    }
    out
}

/// A line made of one of `= - * _` and blanks: a setext underline or a
/// thematic break, depending on its neighbours.
fn is_break_like(rest: &str) -> bool {
    let mut marks = rest.chars().filter(|c| !matches!(c, ' ' | '\t'));
    match marks.next() {
        Some(first @ ('=' | '-' | '*' | '_')) => marks.all(|c| c == first),
        _ => false,
    }
}

/// A top-level fence still open at the end of `text`, as its closing line.
fn open_fence(text: &str) -> Option<String> {
    let mut open: Option<(char, usize)> = None;
    for line in text.split('\n') {
        let indent = line.len() - line.trim_start_matches(' ').len();
        if indent > 3 {
            continue;
        }
        let rest = &line[indent..];
        let Some(ch) = rest.chars().next().filter(|c| *c == '`' || *c == '~') else {
            continue;
        };
        let run = rest.chars().take_while(|c| *c == ch).count();
        if run < 3 {
            continue;
        }
        match open {
            None => open = Some((ch, run)),
            Some((och, orun)) if och == ch && run >= orun && rest[run..].trim().is_empty() => {
                open = None
            }
            Some(_) => {}
        }
    }
    open.map(|(ch, run)| ch.to_string().repeat(run))
}

/// Whether markdown `text`, followed by a heading of level `depth`, keeps
/// that heading at the top level and holds no heading of its level or above
/// and no thematic break.
fn md_contained(text: &str, depth: usize) -> bool {
    let mut doc = String::with_capacity(text.len() + 16);
    doc.push_str(text);
    doc.push_str("\n\n");
    doc.push_str(&"#".repeat(depth));
    doc.push_str(" probe\n");
    let mut nesting = 0usize;
    let mut probe_seen = false;
    for (event, range) in Parser::new(&doc).into_offset_iter() {
        let in_probe = range.start >= text.len() + 2;
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                let level = heading_level(level);
                if in_probe {
                    probe_seen = nesting == 0 && level == depth;
                } else if level <= depth {
                    return false;
                }
                nesting += 1;
            }
            Event::Start(_) => {
                if in_probe {
                    return false;
                }
                nesting += 1;
            }
            Event::End(TagEnd::Heading(_)) | Event::End(_) => nesting = nesting.saturating_sub(1),
            Event::Rule => return false,
            _ => {}
        }
    }
    probe_seen
}

fn heading_level(level: HeadingLevel) -> usize {
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
                    current = Some((heading_level(level), String::new()))
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
    fn breaks_and_setext_underlines_are_escaped() {
        assert_eq!(
            md_block("Title\n===\ntext\n---\n***", 3),
            "Title\n\\===\ntext\n\\---\n\\***"
        );
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
    fn ordinary_markdown_is_left_alone() {
        let text =
            "Intro.\n\n- one\n- two\n\n```json\n{\"a\": 1}\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |";
        assert_eq!(md_block(text, 3), text);
    }

    #[test]
    fn md_line_neutralizes_spans_and_comments() {
        assert_eq!(md_line("a `b` <!-- c"), "a \\`b\\` \\<!-- c");
        assert_eq!(md_line("# x"), "\\# x");
    }

    #[test]
    fn code_spans_cannot_be_closed() {
        assert_eq!(md_code("a`b"), "``a`b``");
        assert_eq!(md_code("`x"), "`` `x ``");
    }

    #[test]
    fn xml_escaping() {
        assert_eq!(
            xml_text("</server><server name=\"x\">&"),
            "&lt;/server&gt;&lt;server name=\"x\"&gt;&amp;"
        );
        assert_eq!(xml_attr("a\"b'\n<c>"), "a&quot;b&apos; &lt;c&gt;");
    }
}
