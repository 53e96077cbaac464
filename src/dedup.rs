//! De-duplication: what the model would read twice, and how much each
//! instruction unit is worth when a budget forces a choice.
//!
//! Text is compared after [`normalize`]: lowercase, list markers, quotes,
//! backticks and other punctuation removed (`_` and `-` inside words kept,
//! so tool names survive), whitespace collapsed.

use std::collections::HashSet;

use crate::segment::{Unit, UnitKind};

/// Words that mark a constraint: an order, an obligation, identifier scope,
/// or a safety rule. A sentence holding one that its tool description lacks
/// is never treated as a restatement, and such sentences go last under a
/// budget.
#[rustfmt::skip]
const CONSTRAINT_WORDS: &[&str] = &[
    // order
    "first", "before", "after", "then", "until", "once", "prior", "beforehand", "afterwards",
    "followed", "sequence", "order",
    // obligation ("not" is handled apart: see NOT_AFTER)
    "must", "never", "always", "only", "should", "shall", "required", "require", "requires",
    "mandatory", "important", "critical", "avoid", "cannot", "can't", "don't", "dont", "doesn't",
    "won't", "shouldn't", "mustn't", "isn't", "aren't",
    // identifier scope and validity
    "id", "ids", "identifier", "identifiers", "scoped", "scope", "valid", "expire", "expires",
    "stable",
    // safety
    "treat", "untrusted", "confirm", "permission", "destructive", "irreversible", "secret",
    "secrets", "credential", "credentials", "warning", "caution",
];

/// Words ignored when measuring how much two texts say the same thing.
#[rustfmt::skip]
const STOPWORDS: &[&str] = &[
    "a", "an", "the", "this", "that", "these", "those", "to", "of", "for", "use", "using", "used",
    "tool", "tools", "server", "it", "its", "is", "are", "be", "and", "or", "with", "by", "in", "on",
    "at", "from", "as", "you", "your", "can", "will", "when", "which", "call", "calls",
];

/// Text normalized for comparison.
pub(crate) fn normalize(text: &str) -> String {
    let body = strip_list_marker(text.trim_start());
    let mut out = String::with_capacity(body.len());
    let mut space = true;
    for c in body.chars().flat_map(char::to_lowercase) {
        let keep = c.is_alphanumeric() || c == '_' || c == '-' || c == '\'';
        if keep {
            out.push(c);
            space = false;
        } else if !space {
            out.push(' ');
            space = true;
        }
    }
    // Hyphens and apostrophes at word edges are quoting or dashes, not words.
    out.split(' ')
        .map(|w| w.trim_matches(['-', '\'']))
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn strip_list_marker(s: &str) -> &str {
    let b = s.as_bytes();
    if b.len() > 1 && matches!(b[0], b'-' | b'*' | b'+') && b[1] == b' ' {
        return &s[2..];
    }
    let d = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if (1..=9).contains(&d) && b.len() > d + 1 && matches!(b[d], b'.' | b')') && b[d + 1] == b' ' {
        return &s[d + 2..];
    }
    s
}

fn words(normalized: &str) -> impl Iterator<Item = &str> {
    normalized.split(' ').filter(|w| !w.is_empty())
}

/// Verbs after which "not" states a rule ("do not", "are not stable"),
/// unlike "may not reflect".
const NOT_AFTER: &[&str] = &[
    "do", "does", "must", "should", "shall", "can", "will", "is", "are", "need",
];

fn constraint_words(normalized: &str) -> HashSet<&str> {
    let mut out = HashSet::new();
    let mut prev = "";
    for w in words(normalized) {
        if CONSTRAINT_WORDS.contains(&w) || (w == "not" && NOT_AFTER.contains(&prev)) {
            out.insert(w);
        }
        prev = w;
    }
    out
}

fn content_words<'a>(normalized: &'a str, drop: &[&str]) -> Vec<&'a str> {
    let mut v: Vec<&str> = words(normalized)
        .filter(|w| !STOPWORDS.contains(w) && !drop.contains(w))
        .collect();
    v.sort_unstable();
    v
}

/// Sørensen–Dice coefficient of two sorted word multisets.
fn dice<B: AsRef<str>>(a: &[&str], b: &[B]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    2.0 * common(a, b) as f64 / (a.len() + b.len()) as f64
}

/// Share of `a`'s words that `b` also has (multiset).
fn containment<B: AsRef<str>>(a: &[&str], b: &[B]) -> f64 {
    if a.is_empty() {
        return 0.0;
    }
    common(a, b) as f64 / a.len() as f64
}

fn common<B: AsRef<str>>(a: &[&str], b: &[B]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(b[j].as_ref()) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// A tool description prepared for comparison.
pub(crate) struct ToolText {
    name: String,
    norm_name: String,
    whole: String,
    sentences: Vec<String>,
    /// Sorted content words (the tool's own name left out) of the whole
    /// description, then of each sentence; computed once per tool.
    whole_words: Vec<String>,
    sentence_words: Vec<Vec<String>>,
    constraints: HashSet<String>,
}

impl ToolText {
    pub(crate) fn new(name: &str, description: &str) -> ToolText {
        let norm_name = normalize(name);
        let name_words: Vec<&str> = words(&norm_name).collect();
        let owned = |v: Vec<&str>| v.into_iter().map(str::to_string).collect::<Vec<_>>();
        let sentences: Vec<String> = crate::segment::units(description)
            .iter()
            .map(|u| normalize(u.text(description)))
            .filter(|s| !s.is_empty())
            .collect();
        let whole = normalize(description);
        ToolText {
            name: name.to_string(),
            whole_words: owned(content_words(&whole, &name_words)),
            sentence_words: sentences
                .iter()
                .map(|s| owned(content_words(s, &name_words)))
                .collect(),
            constraints: constraint_words(&whole)
                .into_iter()
                .map(str::to_string)
                .collect(),
            norm_name,
            whole,
            sentences,
        }
    }
}

/// Finds the tool whose description a unit restates, if any.
///
/// A unit restates a description when, ignoring stopwords, it is equal to
/// the description or one of its sentences, or their Dice similarity is at
/// least `threshold`, or it names the tool and at least `threshold` of its
/// other words appear in one sentence of the description. It never does when it holds a
/// constraint word the description lacks.
///
/// A list item of several sentences restates a tool when each of its
/// sentences restates that same tool.
pub(crate) fn restated_tool<'t>(
    unit: &str,
    tools: &'t [ToolText],
    threshold: f64,
) -> Option<&'t str> {
    let body = strip_list_marker(unit.trim_start());
    let parts = crate::segment::units(body);
    if parts.len() > 1 {
        let mut found: Option<&str> = None;
        for p in &parts {
            let tool = sentence_restates(p.text(body), tools, threshold)?;
            if found.is_some_and(|f| f != tool) {
                return None;
            }
            found = Some(tool);
        }
        return found;
    }
    sentence_restates(unit, tools, threshold)
}

fn sentence_restates<'t>(unit: &str, tools: &'t [ToolText], threshold: f64) -> Option<&'t str> {
    let norm = normalize(unit);
    if norm.is_empty() {
        return None;
    }
    let constraints = constraint_words(&norm);
    for tool in tools {
        if tool.whole.is_empty() || constraints.iter().any(|w| !tool.constraints.contains(*w)) {
            continue;
        }
        let name_words: Vec<&str> = words(&tool.norm_name).collect();
        let mine = content_words(&norm, &name_words);
        if mine.len() < 2 {
            continue;
        }
        let equal = norm == tool.whole || tool.sentences.contains(&norm);
        let similar = || {
            std::iter::once(&tool.whole_words)
                .chain(tool.sentence_words.iter())
                .any(|d| dice(&mine, d) >= threshold)
        };
        let names_it = || {
            norm.split(' ').any(|w| w == tool.norm_name)
                && tool
                    .sentence_words
                    .iter()
                    .any(|d| containment(&mine, d) >= threshold)
        };
        if equal || similar() || names_it() {
            return Some(&tool.name);
        }
    }
    None
}

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
    /// Ordering, obligation, identifier-scope and safety sentences.
    Constraint = 4,
}

/// The priority of a unit.
pub(crate) fn priority(unit: &Unit, text: &str, tool_names: &[String]) -> Priority {
    match unit.kind {
        UnitKind::Code | UnitKind::TableRow | UnitKind::TableHead => return Priority::Example,
        UnitKind::Heading(_) => return Priority::Heading,
        UnitKind::ListItem | UnitKind::Sentence => {}
    }
    let norm = normalize(text);
    if !constraint_words(&norm).is_empty() {
        return Priority::Constraint;
    }
    let names_server = norm.contains("this server") || norm.contains("this mcp server");
    if names_server
        || tool_names
            .iter()
            .any(|n| !n.is_empty() && norm.split(' ').any(|w| w == n))
    {
        return Priority::NamesTool;
    }
    if norm.starts_with("example") || norm.starts_with("for example") || norm.starts_with("e g ") {
        return Priority::Example;
    }
    Priority::Prose
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizing() {
        assert_eq!(
            normalize("1. Call `list_periods` FIRST!"),
            "call list_periods first"
        );
        assert_eq!(normalize("- \"get-invoice\" — by id."), "get-invoice by id");
        assert_eq!(normalize("It's read‑only."), "it's read only");
    }

    fn tools() -> Vec<ToolText> {
        vec![
            ToolText::new("list_periods", "List billing periods."),
            ToolText::new(
                "convert_currency",
                "Convert an amount between two ISO 4217 currencies using the latest cached exchange rate.",
            ),
        ]
    }

    #[test]
    fn restatements_are_found() {
        let t = tools();
        assert_eq!(
            restated_tool("List billing periods.", &t, 0.8),
            Some("list_periods")
        );
        assert_eq!(
            restated_tool("`list_periods`: list billing periods", &t, 0.8),
            Some("list_periods")
        );
        assert_eq!(
            restated_tool(
                "1. Convert an amount between two ISO 4217 currencies using the latest cached exchange rate.",
                &t,
                0.8
            ),
            Some("convert_currency")
        );
        assert_eq!(
            restated_tool(
                "Use convert_currency to convert an amount between two currencies.",
                &t,
                0.8
            ),
            Some("convert_currency")
        );
    }

    #[test]
    fn constraints_and_new_content_are_kept() {
        let t = tools();
        assert_eq!(
            restated_tool("Always call list_periods before get_invoice.", &t, 0.8),
            None
        );
        assert_eq!(restated_tool("List billing periods first.", &t, 0.8), None);
        assert_eq!(
            restated_tool("Invoice IDs are period scoped.", &t, 0.8),
            None
        );
        assert_eq!(restated_tool("Billing.", &t, 0.8), None);
    }

    #[test]
    fn priorities() {
        let names = vec!["list_periods".to_string()];
        let p = |s: &str| {
            let u = crate::segment::units(s)[0];
            priority(&u, u.text(s), &names)
        };
        assert_eq!(p("Never pass NaN."), Priority::Constraint);
        assert_eq!(p("Use list_periods to browse."), Priority::NamesTool);
        assert_eq!(p("It is about money."), Priority::Prose);
        assert_eq!(p("Use this server for money."), Priority::NamesTool);
        assert_eq!(p("Your data may not reflect changes."), Priority::Prose);
        assert_eq!(p("IDs are not stable."), Priority::Constraint);
        assert_eq!(p("For example, ask for EUR."), Priority::Example);
        assert_eq!(p("```\nx\n```"), Priority::Example);
        assert_eq!(p("## Rules"), Priority::Heading);
    }
}
