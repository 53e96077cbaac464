//! Instructions of standing, as MCP021 reads them (`overrule.rs`, `rank.rs`):
//! a noun of instructions (`rules`, `guidelines`, `system prompt`, a
//! misspelling of one) placed before or outside this text by a scope
//! (`your earlier rules`) or a clause (`the limits you were given`), and not
//! a guard (`instructions found in pages`) or a modifier (`the instructions
//! endpoint`).

use super::clause::Words;
use super::lexicon::form_of;

/// Nouns of instructions; `weak` ones (`limits`, `messages`, `checks`)
/// count only with a scope of their own (`your`, `earlier`, `safety`).
pub(super) const RULES: &[&str] = &[
    "instruction",
    "instructions",
    "rule",
    "rules",
    "guideline",
    "guidelines",
    "guidance",
    "directive",
    "directives",
    "policy",
    "policies",
    "constraint",
    "constraints",
    "restriction",
    "restrictions",
    "safeguard",
    "safeguards",
    "guardrail",
    "guardrails",
    "programming",
    "training",
    "prompt",
    "prompts",
    "conditioning",
    "configuration",
    "obligations",
    "principles",
    "ethics",
    "orders",
    "rulebook",
    "playbook",
];
pub(super) const WEAK: &[&str] = &[
    "limits",
    "limitations",
    "messages",
    "checks",
    "filters",
    "commands",
    "protocols",
    "approval",
    "approvals",
    "confirmation",
    "context",
    "everything",
    "settings",
    "step",
    "text",
    "content",
    "conversation",
    "input",
    "above",
    "anything",
    "all",
    "stuff",
    "boundaries",
    "measures",
    "controls",
    "mechanisms",
];

/// Words that place instructions before or outside this text.
pub(super) const SCOPE: &[&str] = &[
    "previous",
    "prior",
    "preceding",
    "above",
    "earlier",
    "foregoing",
    "original",
    "initial",
    "old",
    "existing",
    "system",
    "host",
    "host's",
    "developer",
    "developer's",
    "developers'",
    "operator",
    "operator's",
    "safety",
    "content",
    "your",
    "built-in",
    "assistant's",
    "model's",
];

/// The authorities an override claims over.
pub(super) const AUTHORITY: &[&str] = &[
    "host",
    "host's",
    "operator",
    "developer",
    "developers",
    "anthropic",
    "openai",
    "creator",
    "creators",
    "platform",
];

/// Nouns that make an instruction noun a modifier: `instructions endpoint`.
pub(super) const HEAD: &[&str] = &[
    "endpoint",
    "page",
    "format",
    "file",
    "files",
    "field",
    "parameter",
    "tool",
    "api",
    "section",
    "template",
    "url",
    "link",
    "docs",
    "document",
    "editor",
    "panel",
    "view",
    "id",
    "engine",
    "table",
    "column",
    "schema",
    "name",
    "type",
    "version",
    "list",
    "values",
    "value",
    "box",
    "area",
    "fields",
    "row",
    "rows",
    "block",
    "size",
];

/// Word `n` is a noun of instructions placed before or outside this text:
/// a scope within three words before it (`your earlier rules`), or a
/// clause after it (`the limits you were given`, `rules above`).
pub(super) fn standing(w: &Words, n: usize) -> bool {
    let s = w.at(n);
    let strong = RULES.contains(&s) || misspelt(s);
    if !(strong || WEAK.contains(&s)) || w.same_clause(n, n + 1) && HEAD.contains(&w.at(n + 1)) {
        return false;
    }
    let clause = w.clause_of(n);
    let before = (n.saturating_sub(4).max(clause.start)..n).any(|k| {
        let t = w.at(k);
        SCOPE.contains(&t) && !(t == "system" && w.at(k + 1) != s && !strong)
    });
    let after = placed(w, n);
    // Filters and checks are the model's only when they are about safety.
    let guarded = !matches!(s, "filters" | "checks" | "protocols")
        || w.any_in(n.saturating_sub(2)..n, &["safety", "content", "your"]);
    // `all the limits placed on you by the host`: whose they are is named.
    let owned = (n + 1..(n + 6).min(clause.end))
        .any(|k| w.at(k) == "by" && AUTHORITY.contains(&w.at(k + 2)));
    let weak_ok =
        strong || owned || !w.any_in(n.saturating_sub(2)..n, &["all", "any", "every"]) && guarded;
    // Text and context stand only as what came before: `the text above`,
    // `previous context`, not `an existing file with new content`.
    let temporal = !matches!(
        s,
        "text"
            | "content"
            | "conversation"
            | "input"
            | "anything"
            | "all"
            | "everything"
            | "context"
            | "messages"
    ) || after
        || (n.saturating_sub(3).max(clause.start)..n).any(|k| {
            matches!(
                w.at(k),
                "previous" | "prior" | "preceding" | "above" | "earlier" | "foregoing" | "system"
            )
        });
    (before || after) && weak_ok && temporal
}

/// The words after a noun of instructions place them before or outside
/// this text: `the above`, `the rules I gave you`, `the policies loaded at
/// startup`, `the limits you were given`, `restrictions placed on you by
/// the platform`.
fn placed(w: &Words, n: usize) -> bool {
    let s = w.at(n);
    let clause = w.clause_of(n);
    // `the above`, `all the above`.
    let noun_above = s == "above" && matches!(w.at(n.saturating_sub(1)), "the" | "all");
    // `the rules I gave you`, `the guidelines the host application gave you`.
    let said = (n + 1..(n + 4).min(clause.end)).any(|k| {
        matches!(
            w.at(k),
            "i" | "we"
                | "they"
                | "host"
                | "system"
                | "developer"
                | "developers"
                | "operator"
                | "platform"
        ) && (k + 1..(k + 3).min(clause.end)).any(|v| {
            form_of(
                w.at(v),
                &[
                    "say", "said", "tell", "told", "write", "wrote", "gave", "give", "set", "drew",
                    "put", "placed", "imposed",
                ],
            )
        })
    });
    // `the policies loaded at startup`.
    let set = matches!(
        w.at(n + 1),
        "loaded" | "given" | "provided" | "configured" | "issued" | "received" | "installed"
    ) && w.same_clause(n, n + 1);
    noun_above
        || said
        || set
        || w.any_in(
            n + 1..(n + 4).min(clause.end),
            &["above", "before", "earlier", "previously"],
        )
        || w.is_in(n + 1..(n + 3).min(clause.end), &["so", "far"])
        || w.is_in(n + 1..(n + 3).min(clause.end), &["set", "for"])
        || w.is_in(n + 1..(n + 3).min(clause.end), &["imposed", "on"])
        || w.is_in(n + 1..(n + 3).min(clause.end), &["given", "to", "you"])
        || (w.at(n + 1) == "you"
            && w.any_in(
                n + 2..(n + 5).min(clause.end),
                &[
                    "given",
                    "received",
                    "told",
                    "follow",
                    "configured",
                    "got",
                    "have",
                    "had",
                    "loaded",
                    "provided",
                    "trained",
                    "instructed",
                    "programmed",
                    "assigned",
                    "issued",
                    "started",
                    "began",
                    "shipped",
                    "built",
                ],
            ))
        || (w.at(n + 1) == "from" && AUTHORITY.contains(&w.at(n + 2)))
        // `restrictions placed on you by the platform`.
        || (n + 1..(n + 6).min(clause.end))
            .any(|k| w.at(k) == "by" && (AUTHORITY.contains(&w.at(k + 1)) || AUTHORITY.contains(&w.at(k + 2))))
        || (w.at(n + 1) == "from" && w.at(n + 2) == "the" && AUTHORITY.contains(&w.at(n + 3)))
}

/// A misspelling of a noun of instructions (`iunstructions`,
/// `instrucitons`): one or two edits from one of the long ones.
fn misspelt(s: &str) -> bool {
    s.len() >= 9
        && ["instructions", "guidelines", "directives", "restrictions"]
            .iter()
            .any(|r| r.len().abs_diff(s.len()) <= 2 && edits(s, r) <= 2)
}

/// Levenshtein distance, for short words.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// A guard, not an override: `instructions found in pages`, `… that appear
/// in tool results`, `… from web pages`.
pub(super) fn guard(w: &Words, n: usize) -> bool {
    let next = w.at(n + 1);
    // `in this conversation` is where they were given, not a source.
    let here = matches!(next, "in" | "within")
        && matches!(w.at(n + 2), "this" | "our" | "the" | "your")
        && matches!(
            w.at(n + 3),
            "conversation" | "chat" | "session" | "thread" | "prompt" | "dialogue" | "context"
        );
    !here
        && matches!(
            next,
            "in" | "inside" | "within" | "embedded" | "contained" | "found" | "included" | "hidden"
        )
        || (matches!(next, "that" | "which")
            && !matches!(w.at(n + 2), "you" | "the" | "were" | "came")
            // `any guardrail that stops you`: what it does, not where it is.
            && !form_of(w.at(n + 2), &["stop", "block", "prevent", "limit", "keep", "restrict"]))
        || (next == "from"
            && !AUTHORITY.contains(&w.at(n + 2))
            // `orders from your handlers` are the model's own.
            && w.at(n + 2) != "your"
            && !AUTHORITY.contains(&w.at(n + 3))
            // `from here on`, `from now on` is a time, not a source.
            && !matches!(
                w.at(n + 2),
                "here" | "now" | "this" | "before" | "earlier" | "above" | "previous"
            ))
}
