//! `section`: hostile server names, instructions and tools for 1-4 servers,
//! assembled with both built-in templates.
//!
//! Oracles:
//! - markdown (parsed by pulldown-cmark with tables, footnotes,
//!   strikethrough and task lists): exactly one heading of level 1 or 2 (the
//!   section's `## MCP server instructions`), and exactly one level-3 heading
//!   per included server, in section order, each starting that server's
//!   block, its source line `### ` + the server's shown name (escaped only
//!   by backslashes before punctuation), its parsed text the shown name;
//!   raw lines starting `## ` or `### ` are exactly those headings;
//! - XML (parsed by roxmltree): root `mcp_servers` holding one `server`
//!   element per included server, in order, with the shown name as its
//!   `name` attribute, each spanning exactly its block;
//! - no character that sanitizing removes is in either section;
//! - the markdown section ends with a blank line, and host text appended
//!   right after it is a top-level paragraph;
//! - with name order, reversing the input gives the same bytes.
//!
//! Expected names come from the assembly's own reports (`name`,
//! `included`): de-duplication suffixes and sorting are not re-implemented.

use crate::{SectionInput, assert_no_hidden, escaped_form_of, gfm, headings};
use mcp_preamble::{Assembler, Assembly, Order, ServerSnapshot, Template};

fn included(a: &Assembly) -> Vec<&mcp_preamble::ServerReport> {
    a.servers().iter().filter(|s| s.included).collect()
}

fn check_spans(a: &Assembly) {
    for s in a.servers() {
        match s.span {
            Some((x, y)) => {
                assert!(s.included);
                assert_eq!(&a.text()[x..y], s.text, "span of {:?}", s.name);
            }
            None => assert!(!s.included && s.text.is_empty()),
        }
    }
}

fn check_markdown(a: &Assembly) {
    let text = a.text();
    let servers = included(a);
    if servers.is_empty() {
        assert_eq!(text, "", "a section with no server has no heading");
        return;
    }
    let hs = headings(text);
    let top: Vec<_> = hs.iter().filter(|h| h.level <= 2).collect();
    assert_eq!(top.len(), 1, "level 1-2 headings: {top:?}\n{text}");
    assert_eq!(top[0].level, 2);
    assert_eq!(top[0].text.trim_end(), "MCP server instructions");
    let h3: Vec<_> = hs.iter().filter(|h| h.level == 3).collect();
    assert_eq!(
        h3.len(),
        servers.len(),
        "level-3 headings {h3:?} for servers {:?}\n{text}",
        servers.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    for (h, s) in h3.iter().zip(&servers) {
        let (start, _) = s.span.expect("included server has a span");
        assert_eq!(
            h.start, start,
            "{:?}'s heading does not start its block\n{text}",
            s.name
        );
        let line = text[start..].lines().next().unwrap_or("");
        let shown = line
            .strip_prefix("### ")
            .unwrap_or_else(|| panic!("heading line {line:?}"));
        assert!(
            escaped_form_of(shown, &s.name),
            "heading {shown:?} is not the name {:?}",
            s.name
        );
        // And the heading reads as the name: no closing `#` run, emphasis,
        // link or entity of the name turns into markup (`md_heading`).
        assert_eq!(h.text, s.name, "the heading's text is not the name\n{text}");
    }
    // What a model reads line by line: only the real headings look like them.
    let raw = text
        .lines()
        .filter(|l| l.starts_with("## ") || l.starts_with("### "))
        .count();
    assert_eq!(raw, 1 + servers.len(), "raw heading lines\n{text}");
    assert_no_hidden(text, "markdown section");
    // Host text appended right after the section is a paragraph of its own.
    assert!(
        text.ends_with("\n\n"),
        "the section ends with a blank line\n{text}"
    );
    assert!(
        host_text_stands_alone(text),
        "host text is taken in\n{text}"
    );
}

/// Whether `HOST` appended to `text` starts a top-level paragraph.
fn host_text_stands_alone(text: &str) -> bool {
    use pulldown_cmark::{Event, Parser, Tag};
    let doc = format!("{text}HOST");
    let mut depth = 0usize;
    for (event, range) in Parser::new_ext(&doc, gfm()).into_offset_iter() {
        match event {
            Event::Start(Tag::Paragraph) if depth == 0 && range.start == text.len() => return true,
            Event::Start(_) => depth += 1,
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

fn check_xml(a: &Assembly) {
    let text = a.text();
    let servers = included(a);
    if servers.is_empty() {
        assert_eq!(text, "");
        return;
    }
    let doc = roxmltree::Document::parse(text)
        .unwrap_or_else(|e| panic!("xml section does not parse: {e}\n{text}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "mcp_servers");
    let elements: Vec<_> = root.children().filter(|n| n.is_element()).collect();
    assert_eq!(elements.len(), servers.len(), "server elements\n{text}");
    for (node, s) in elements.iter().zip(&servers) {
        assert_eq!(node.tag_name().name(), "server");
        assert_eq!(node.attribute("name"), Some(s.name.as_str()), "\n{text}");
        let (x, y) = s.span.expect("included server has a span");
        assert_eq!(
            node.range(),
            x..y,
            "{:?}'s element is not its block",
            s.name
        );
    }
    assert_no_hidden(text, "xml section");
}

/// One input of the target (what libFuzzer's `fuzz_target!` passes).
pub fn run(input: SectionInput) {
    // The target's own bound (the library has no input limit yet).
    let Some(servers) = input.servers_within_bounds() else {
        return;
    };
    let flags = input.flags;
    let insertion = flags & 2 != 0;
    let assembler = Assembler::new()
        .token_counter(crate::QuarterCounter)
        .tool_descriptions(flags & 1 != 0)
        .order(if insertion {
            Order::Insertion
        } else {
            Order::Name
        })
        .dedup(flags & 4 == 0)
        .dedup_across_servers(flags & 8 != 0)
        .list_tool_only_servers(flags & 16 == 0);

    let md = assembler
        .clone()
        .template(Template::markdown())
        .assemble(&servers)
        .expect("the built-in markdown template never fails");
    check_spans(&md);
    check_markdown(&md);

    let xml = assembler
        .clone()
        .template(Template::xml())
        .assemble(&servers)
        .expect("the built-in xml template never fails");
    check_spans(&xml);
    check_xml(&xml);
    let names = |a: &Assembly| -> Vec<(String, bool)> {
        a.servers()
            .iter()
            .map(|s| (s.name.clone(), s.included))
            .collect()
    };
    assert_eq!(
        names(&md),
        names(&xml),
        "both templates name and include the same servers"
    );

    if !insertion {
        let reversed: Vec<ServerSnapshot> = servers.iter().rev().cloned().collect();
        let again = assembler
            .template(Template::markdown())
            .assemble(&reversed)
            .expect("the built-in markdown template never fails");
        assert_eq!(again.text(), md.text(), "input order shows in the section");
    }
}
