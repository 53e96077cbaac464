//! Orphan fragments: what a budget keeps of instructions never leaves a
//! quotation, a bracket or a code fence open that the whole text closed.

use mcp_preamble::{Assembler, ServerSnapshot, Template};

/// The kinds of pair checked, as a test sees them (written apart from the
/// crate's own pairing): straight double quotes (an even count), curly
/// double quotes, parentheses, square brackets (nesting), code fences
/// (lines opening with three backticks or tildes, an even count).
pub const KINDS: [&str; 5] = ["\"", "\u{201C}\u{201D}", "()", "[]", "fence"];

/// Whether `text` is balanced in pair kind `kind` (an entry of [`KINDS`]).
pub fn balanced(text: &str, kind: &str) -> bool {
    match kind {
        "\"" => text.matches('"').count().is_multiple_of(2),
        "fence" => text
            .lines()
            .filter(|l| {
                let l = l.trim_start();
                l.starts_with("```") || l.starts_with("~~~")
            })
            .count()
            .is_multiple_of(2),
        pair => {
            let mut chars = pair.chars();
            let (open, close) = (chars.next().unwrap(), chars.next().unwrap());
            let mut depth = 0i64;
            for c in text.chars() {
                if c == open {
                    depth += 1;
                } else if c == close {
                    depth -= 1;
                    if depth < 0 {
                        return false;
                    }
                }
            }
            depth == 0
        }
    }
}

/// A template that shows each block's instructions raw between markers,
/// with a heading and a tool line as the built-in ones have, so budgets walk
/// the same ladder.
pub fn marked_template() -> Template {
    Template::from_source(
        "marked",
        "{% macro server(s) %}### {{ s.name }}\n\
         {% if s.instructions %}\n\u{27E6}{{ s.instructions }}\u{27E7}\n{% endif %}\
         {% if s.tools or s.more_tools %}\nTools:{% for t in s.tools %} {{ t.name }}{% endfor %}\
         {% if s.more_tools %} and {{ s.more_tools }} more{% endif %}{% endif %}{% endmacro %}\
         {% for b in blocks %}{{ b }}\n{% endfor %}",
    )
    .unwrap()
}

/// The instructions a block shows, between the markers.
pub fn shown_instructions(block: &str) -> &str {
    match (block.find('\u{27E6}'), block.rfind('\u{27E7}')) {
        (Some(a), Some(b)) if a < b => &block[a + '\u{27E6}'.len_utf8()..b],
        _ => "",
    }
}

/// An orphan: the server, the budget (`None`: none), the pair kind left
/// open, and the instructions shown.
pub type Orphan = (String, Option<usize>, &'static str, String);

/// Assembles each server of `servers` alone without a budget, then at every
/// budget in `budgets` (stopping once nothing is cut), and returns every case
/// where the shown instructions leave open a pair the server's instructions
/// closed, as `(server, budget, kind, shown)`; and how many blocks a budget
/// trimmed.
pub fn orphans(
    assembler: &Assembler,
    servers: &[ServerSnapshot],
    budgets: std::ops::RangeInclusive<usize>,
) -> (Vec<Orphan>, usize) {
    let mut found = Vec::new();
    let mut trimmed = 0;
    for s in servers {
        let Some(raw) = s.instructions.raw() else {
            continue;
        };
        let kinds: Vec<&str> = KINDS.into_iter().filter(|k| balanced(raw, k)).collect();
        let budgets = std::iter::once(None).chain(budgets.clone().map(Some));
        for budget in budgets {
            let mut assembler = assembler.clone();
            if let Some(b) = budget {
                assembler = assembler.budget(b);
            }
            let a = assembler.assemble(std::slice::from_ref(s)).unwrap();
            let r = &a.servers()[0];
            if budget.is_some() {
                if !r.trimmed() {
                    break;
                }
                trimmed += 1;
            }
            let shown = shown_instructions(&r.text);
            for kind in &kinds {
                if !balanced(shown, kind) {
                    found.push((r.name.clone(), budget, *kind, shown.to_string()));
                }
            }
        }
    }
    (found, trimmed)
}
