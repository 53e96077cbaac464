//! References to a server's own tools in its instructions, found by one
//! documented rule, and rewritten to the names the model sees.
//!
//! The rule: a *run* is a maximal stretch of `A-Z a-z 0-9 _ . -`, without
//! leading or trailing `.` and `-` (so `get_invoice.` at a sentence's end
//! is the run `get_invoice`), that neither follows nor precedes a `/`
//! (paths and URLs are left alone). A run that equals a tool's name
//! exactly (case included) is a reference when it is
//! - in code: inside an inline code span (`` `get_invoice` ``,
//!   `` `get_invoice(id)` ``) or a fenced code block ([`Form::Code`]);
//! - a call: directly followed by `(` (`get_invoice()`, [`Form::Call`]);
//! - an identifier: a name no prose word has, with a `_`, a digit, an inner
//!   `.` or `-`, or a capital after a small letter (`get_invoice`,
//!   `getInvoice`, [`Form::Identifier`]).
//!
//! Anything else is prose and stays: a tool named `search` is not
//! referenced by "search the web", only by `` `search` `` or `search()`.
//! Names with other characters (spaces, `/`) are never matched.
//!
//! Rewriting replaces each reference by the name the model sees for that
//! tool, and only that: a run is replaced whole, by a name of the same
//! server's tool, so the text can never come to name another server's tool.

use serde::Serialize;

use crate::support::string_enum;

string_enum! {
    /// How an instruction referred to a tool (see the crate docs, "Tool names").
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
    #[serde(rename_all = "snake_case")]
    #[non_exhaustive]
    pub enum Form {
        /// In an inline code span or a fenced code block.
        Code => "code",
        /// Followed by `(`: `get_invoice()`.
        Call => "call",
        /// An identifier no prose word has: `get_invoice`, `getInvoice`.
        Identifier => "identifier",
    }
    /// The name used in the JSON report: `code`, `call` or `identifier`.
    fn as_str;
}

/// One reference rewritten to the name the model sees.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Rewrite {
    /// The tool's own name, as the instructions said it.
    pub tool: String,
    /// The name it was rewritten to.
    pub name: String,
    /// How the instructions referred to it.
    pub form: Form,
    /// Its byte offset in the sanitized instructions (after the operator's
    /// policy, before rewriting).
    pub at: usize,
}

/// An instruction unit kept although it names tools the model is not sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct HiddenMention {
    /// The unit's text.
    pub text: String,
    /// The hidden tools it names, in order of first mention.
    pub tools: Vec<String>,
}

/// One reference found: its byte range and form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reference {
    pub start: usize,
    pub end: usize,
    pub form: Form,
}

fn run_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

/// Whether a bare `name` is an identifier no prose word has.
fn identifier_shaped(name: &str) -> bool {
    let b = name.as_bytes();
    let inner = |c: u8| b.len() > 2 && b[1..b.len() - 1].contains(&c);
    name.contains('_')
        || b.iter().any(u8::is_ascii_digit)
        || inner(b'.')
        || inner(b'-')
        || b.windows(2)
            .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
}

/// Every reference in `text` to a name `is_tool` accepts, in order.
pub(crate) fn references(text: &str, is_tool: impl Fn(&str) -> bool) -> Vec<Reference> {
    let mut out = Vec::new();
    let mut in_fence = false;
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
        } else {
            scan_line(line, line_start, in_fence, &is_tool, &mut out);
        }
        line_start += line.len();
    }
    out
}

/// The references of one line, at `base` in the text.
fn scan_line(
    line: &str,
    base: usize,
    fenced: bool,
    is_tool: &impl Fn(&str) -> bool,
    out: &mut Vec<Reference>,
) {
    let b = line.as_bytes();
    // Inline code spans: a backtick run opens one, the same length closes it.
    let mut code = vec![fenced; b.len()];
    if !fenced {
        let mut i = 0;
        while i < b.len() {
            if b[i] != b'`' {
                i += 1;
                continue;
            }
            let open = b[i..].iter().take_while(|c| **c == b'`').count();
            let body = i + open;
            let close = (body..b.len()).find(|&j| {
                b[j] == b'`'
                    && b[j..].iter().take_while(|c| **c == b'`').count() == open
                    && (j == 0 || b[j - 1] != b'`')
            });
            match close {
                Some(j) => {
                    code[body..j].iter_mut().for_each(|c| *c = true);
                    i = j + open;
                }
                None => i = body,
            }
        }
    }
    let mut i = 0;
    while i < b.len() {
        if !run_char(b[i] as char) {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < b.len() && run_char(b[j] as char) {
            j += 1;
        }
        let (mut s, mut e) = (i, j);
        while s < e && matches!(b[s], b'.' | b'-') {
            s += 1;
        }
        while e > s && matches!(b[e - 1], b'.' | b'-') {
            e -= 1;
        }
        let slash = (i > 0 && b[i - 1] == b'/') || (j < b.len() && b[j] == b'/');
        if s < e && !slash {
            let name = &line[s..e];
            let form = if code[s] {
                Some(Form::Code)
            } else if b.get(e) == Some(&b'(') {
                Some(Form::Call)
            } else if identifier_shaped(name) {
                Some(Form::Identifier)
            } else {
                None
            };
            if let Some(form) = form.filter(|_| is_tool(name)) {
                out.push(Reference {
                    start: base + s,
                    end: base + e,
                    form,
                });
            }
        }
        i = j;
    }
}

/// `text` with every reference to a tool `seen` names rewritten to that
/// name, and what was rewritten; references whose name is their own are
/// left as they are and not reported.
pub(crate) fn rewrite<'a>(
    text: &str,
    seen: impl Fn(&str) -> Option<&'a str>,
) -> (String, Vec<Rewrite>) {
    let refs = references(text, |n| seen(n).is_some_and(|to| to != n));
    if refs.is_empty() {
        return (text.to_string(), Vec::new());
    }
    let mut out = String::with_capacity(text.len() + refs.len() * 16);
    let mut rewrites = Vec::with_capacity(refs.len());
    let mut last = 0;
    for r in refs {
        let tool = &text[r.start..r.end];
        let Some(name) = seen(tool) else { continue };
        out.push_str(&text[last..r.start]);
        out.push_str(name);
        last = r.end;
        rewrites.push(Rewrite {
            tool: tool.to_string(),
            name: name.to_string(),
            form: r.form,
            at: r.start,
        });
    }
    out.push_str(&text[last..]);
    (out, rewrites)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rw(text: &str, tools: &[&str]) -> String {
        rewrite(text, |n| {
            tools
                .iter()
                .find(|t| **t == n)
                .map(|_| Box::leak(format!("mcp__s__{n}").into_boxed_str()) as &str)
        })
        .0
    }

    #[test]
    fn the_documented_forms_are_rewritten() {
        let tools = ["get_invoice", "search", "getInvoice", "list-periods"];
        assert_eq!(
            rw(
                "Call get_invoice. Use `search` or search() to search.",
                &tools
            ),
            "Call mcp__s__get_invoice. Use `mcp__s__search` or mcp__s__search() to search."
        );
        assert_eq!(
            rw("Then getInvoice, then list-periods.", &tools),
            "Then mcp__s__getInvoice, then mcp__s__list-periods."
        );
        assert_eq!(
            rw("```\nsearch(q)\nsearch\n```", &tools),
            "```\nmcp__s__search(q)\nmcp__s__search\n```"
        );
        assert_eq!(
            rw("`get_invoice(id=1)`", &tools),
            "`mcp__s__get_invoice(id=1)`"
        );
    }

    #[test]
    fn prose_paths_and_longer_runs_stay() {
        let tools = ["search", "get_invoice", "read"];
        for text in [
            "Search the web, then search again.",
            "See https://x.example/get_invoice and docs/get_invoice.md.",
            "Call billing.get_invoice_v2 or get_invoices.",
            "Read the file.",
            "Use mcp__s__get_invoice directly.",
        ] {
            assert_eq!(rw(text, &tools), text);
        }
    }

    #[test]
    fn rewrites_are_reported_with_offsets() {
        let (_, r) = rewrite("a `get_x` b get_x()", |n| (n == "get_x").then_some("T"));
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].at, r[0].form), (3, Form::Code));
        assert_eq!((r[1].at, r[1].form), (12, Form::Call));
    }

    #[test]
    fn names_outside_the_rule_never_match() {
        for name in ["get invoice", "a/b", "-x"] {
            let text = format!("Call `{name}` and {name}().");
            assert_eq!(rw(&text, &[name]), text);
        }
    }
}
