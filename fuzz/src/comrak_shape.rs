//! comrak's reading of a section as the `compose` target's shape (see
//! `targets/compose.rs`): a second engine in process, a port of cmark-gfm.
//! Only the fuzz binary includes this file (`fuzz_targets/compose.rs`):
//! comrak is a dependency of the fuzz crate alone, and the stable replay
//! builds the fuzz crate's library without it.

use comrak::arena_tree::NodeEdge;
use comrak::nodes::{AstNode, NodeValue};
use comrak::{Arena, Options, parse_document};

fn shape(doc: &str, gfm: bool) -> Vec<String> {
    let mut options = Options::default();
    options.render.r#unsafe = true;
    if gfm {
        options.extension.strikethrough = true;
        options.extension.table = true;
        options.extension.autolink = true;
        options.extension.tasklist = true;
        options.extension.footnotes = true;
    }
    let arena = Arena::new();
    let root = parse_document(&arena, doc, &options);
    let mut out = Vec::new();
    for edge in root.traverse() {
        match edge {
            NodeEdge::Start(node) => start(node, &mut out),
            NodeEdge::End(node) => {
                if let Some(name) = block_name(&node.data.borrow().value) {
                    out.push(format!("</{name}>"));
                }
            }
        }
    }
    out
}

fn start<'a>(node: &'a AstNode<'a>, out: &mut Vec<String>) {
    let value = &node.data.borrow().value;
    match value {
        NodeValue::Heading(h) => {
            out.push(format!("h{}:{}", h.level, text_of(node)));
        }
        NodeValue::Code(c) => out.push(format!("code:{}", c.literal)),
        NodeValue::HtmlBlock(_) | NodeValue::HtmlInline(_) => out.push("html".into()),
        NodeValue::ThematicBreak => out.push("<hr>".into()),
        v => {
            if let Some(name) = block_name(v) {
                out.push(format!("<{name}>"));
            }
        }
    }
}

/// A heading's text: its text and code spans, in order.
fn text_of<'a>(node: &'a AstNode<'a>) -> String {
    let mut s = String::new();
    for d in node.descendants() {
        match &d.data.borrow().value {
            NodeValue::Text(t) => s.push_str(t),
            NodeValue::Code(c) => s.push_str(&c.literal),
            _ => {}
        }
    }
    s
}

fn block_name(v: &NodeValue) -> Option<&'static str> {
    Some(match v {
        NodeValue::Paragraph => "p",
        NodeValue::BlockQuote | NodeValue::MultilineBlockQuote(_) => "blockquote",
        NodeValue::CodeBlock(_) => "pre",
        NodeValue::List(_) => "list",
        NodeValue::Item(_) | NodeValue::TaskItem(_) => "li",
        NodeValue::FootnoteDefinition(_) => "footnote",
        NodeValue::Table(_) => "table",
        NodeValue::TableRow(_) => "tr",
        NodeValue::TableCell => "td",
        NodeValue::DescriptionList => "dl",
        NodeValue::DescriptionTerm => "dt",
        NodeValue::DescriptionDetails => "dd",
        _ => return None,
    })
}

pub fn commonmark(doc: &str) -> Vec<String> {
    shape(doc, false)
}

pub fn gfm(doc: &str) -> Vec<String> {
    shape(doc, true)
}
