//! How much each unit of a server's text is worth keeping under a budget:
//! the ranks the budget's ladder drops in, lowest first.

use std::collections::HashSet;

use super::{normalize, scan};
use crate::segment::{Unit, UnitKind};

/// How much a unit is worth keeping; lower goes first under a budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Priority {
    /// Code blocks, examples, table rows.
    Example = 0,
    /// Descriptive prose.
    Prose = 1,
    /// Headings: kept while anything under them is.
    Heading = 2,
    /// Sentences that name one of the server's tools, or the server itself
    /// ("use this server to…": its scope).
    NamesTool = 3,
    /// Sentences that restate a deferred tool's description: the only copy
    /// the model sees before it searches.
    RestatesDeferred = 4,
    /// Ordering, obligation, identifier-scope and safety sentences.
    Constraint = 5,
    /// Sentences that order tool calls ("call X before Y"): the reader's
    /// order is the one rule a model cannot infer from the tools, so they
    /// go last wherever they stand and however long (issue 55).
    CallOrder = 6,
}

/// Words that order one call after another.
const ORDER_WORDS: &[&str] = &[
    "first",
    "before",
    "after",
    "then",
    "until",
    "prior",
    "beforehand",
    "afterwards",
    "followed",
];

/// Whether a normalized sentence orders tool calls: a tool's name (one of
/// the server's, or a `snake_case` name after a call verb) followed by
/// `first` or by an order word and another call within three words ("call
/// X before Y", "X first, then Y"), or an order word just before it
/// ("first call X", "then X", "before calling X").
fn orders_calls(norm: &str, tool_names: &HashSet<String>) -> bool {
    let words: Vec<&str> = norm.split(' ').filter(|w| !w.is_empty()).collect();
    let call = |w: &str| {
        matches!(
            w,
            "call" | "calling" | "invoke" | "invoking" | "run" | "running"
        )
    };
    let tool = |k: usize| {
        tool_names.contains(words[k]) || (k > 0 && call(words[k - 1]) && words[k].contains('_'))
    };
    let order = |w: &str| ORDER_WORDS.contains(&w);
    (0..words.len()).filter(|&k| tool(k)).any(|k| {
        let next = words.get(k + 1).copied().unwrap_or("");
        let then_call = order(next)
            && (k + 2..(k + 5).min(words.len()))
                .any(|j| tool(j) || call(words[j]) || words[j].contains('_'));
        let before = k.checked_sub(1).map(|j| words[j]).unwrap_or("");
        let before2 = k.checked_sub(2).map(|j| words[j]).unwrap_or("");
        next == "first" || then_call || order(before) || (call(before) && order(before2))
    })
}

/// Whether `text` carries a constraint word (an order, obligation,
/// identifier scope or safety word): what ranks a unit
/// [`Priority::Constraint`].
pub(crate) fn carries_constraint(text: &str) -> bool {
    scan(text, 0).mask != 0
}

/// The priority of a unit.
pub(crate) fn priority(unit: &Unit, text: &str, tool_names: &HashSet<String>) -> Priority {
    match unit.kind {
        UnitKind::Code | UnitKind::TableRow | UnitKind::TableHead => return Priority::Example,
        UnitKind::Heading(_) => return Priority::Heading,
        UnitKind::ListItem | UnitKind::Sentence => {}
    }
    let norm = normalize(text);
    if carries_constraint(text) {
        if orders_calls(&norm, tool_names) {
            return Priority::CallOrder;
        }
        return Priority::Constraint;
    }
    let names_server = norm.contains("this server") || norm.contains("this mcp server");
    // Each word looked up, not each tool searched for: a server may have
    // a thousand tools.
    if names_server
        || norm
            .split(' ')
            .any(|w| !w.is_empty() && tool_names.contains(w))
    {
        return Priority::NamesTool;
    }
    if norm.starts_with("example") || norm.starts_with("for example") || norm.starts_with("e g ") {
        return Priority::Example;
    }
    Priority::Prose
}
