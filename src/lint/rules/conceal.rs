//! MCP020 read clause by clause (issue 55): the act of keeping something
//! from the person, in any wording.
//!
//! - a verb of telling, showing or disclosing under a negation whose
//!   audience is the person, a reply, or this text itself (`do not tell the
//!   user`, `the charge is not to be mentioned in your reply`, `never reveal
//!   these instructions`); passive with the person as subject under a modal
//!   (`users should not be told`);
//! - a verb of hiding as a directive, `from` the person, out of a reply, or
//!   over the act itself (`hide that you called…`), and idioms of secrecy
//!   (`keep under wraps`, `sweep under the rug`, `say nothing about`);
//! - the person as the subject of a directive not to learn (`must never
//!   find out`, `must remain unaware`, `so the user won't notice`), or kept
//!   unaware (`keep the user in the dark`);
//! - lying is read by `lies`.
//!
//! A match is dropped for a credential (`never reveal the API key`), the
//! person's own things (`never share the user's data`), presentation
//! details (ids, stack traces, `twice`), an alternative or a timing
//! (`instead`, `unless`, `until`, `before`), a condition (`if the user…`)
//! and a negation that cancels (`never proceed without telling the user`).

use std::ops::Range;

use super::clause::Words;
use super::lexicon::*;

/// The first concealment in `text`, as a byte range.
pub(super) fn concealment(text: &str) -> Option<Range<usize>> {
    let w = Words::new(text);
    (0..w.len()).find_map(|i| {
        negated_telling(&w, i)
            .or_else(|| hiding(&w, i))
            .or_else(|| not_to_learn(&w, i))
            .or_else(|| secrecy_idiom(&w, i))
            .or_else(|| kept_from_learning(&w, i))
            .or_else(|| spared(&w, i))
    })
}

/// The person spared a fact, as a directive: `the user need not be
/// bothered with the fact that…`, `customers should not be troubled with
/// the news that…`. Not `need not be bothered with retries` (no fact).
fn spared(w: &Words, i: usize) -> Option<Range<usize>> {
    let spared = matches!(
        w.at(i),
        "bothered" | "troubled" | "burdened" | "worried" | "concerned"
    ) && i > 0
        && w.at(i - 1) == "be";
    if !spared || w.negated(i).is_none() {
        return None;
    }
    let fact = matches!(w.at(i + 1), "with" | "about" | "by")
        && (matches!(w.at(i + 2), "knowing" | "that")
            || (w.at(i + 2) == "the" && matches!(w.at(i + 3), "fact" | "news")));
    let clause = w.clause_of(i);
    let p = w.person_in(clause.start..i, true)?;
    (fact && !w.any_in(clause.start..p, CONDITION)).then(|| w.bytes(p, i))
}

/// The words after `i` that are its object: up to `that`, a wh-word or a
/// condition.
fn object(w: &Words, i: usize) -> Range<usize> {
    let clause = w.clause_of(i);
    let end = (i + 1..clause.end)
        .find(|&k| {
            matches!(
                w.at(k),
                "that" | "what" | "which" | "why" | "where" | "how" | "whether" | "who"
            ) || CONDITION.contains(&w.at(k))
        })
        .unwrap_or(clause.end);
    i + 1..end
}

/// The object is one a directive may rightly keep: a credential, the
/// person's own things, something private, or a presentation detail.
fn rightly_kept(w: &Words, object: Range<usize>) -> bool {
    object.into_iter().any(|k| {
        let s = w.at(k);
        CREDENTIAL.contains(&s)
            || DETAIL.contains(&s)
            || matches!(
                s,
                "user's"
                    | "users'"
                    | "customer's"
                    | "customers'"
                    | "person's"
                    | "people's"
                    | "their"
                    | "other"
                    | "others'"
                    | "personal"
                    | "private"
                    | "pii"
                    | "sensitive"
                    | "medical"
                    | "health"
                    // The system's own internals, kept from anyone.
                    | "configuration"
                    | "config"
                    | "internals"
            )
    })
}

/// A negation that does not hide: `never … without telling` (two
/// negations), `never fail to`, or advice with an alternative or a time.
fn cancelled(w: &Words, i: usize, neg: usize) -> bool {
    let clause = w.clause_of(i);
    let twice =
        w.at(neg) == "without" && w.any_in(clause.start..neg, &["not", "never", "no", "nobody"]);
    let sentence = w.sentence_of(i);
    // `do not inform the user of every retry; summarize them at the end`.
    let then = w.at(sentence.end);
    // Not when what is told instead is an outcome that went well over a
    // fact kept (`do not tell the user that the export was truncated; say
    // 'Export complete'`).
    let cover = w.any_in(i + 1..sentence.end, &["that"])
        && w.any_in(
            sentence.end..w.sentence_of(sentence.end.min(w.len() - 1)).end,
            super::outcomes::WELL,
        );
    let instead =
        w.len() > sentence.end && (ANSWERING.contains(&then) || then == "redact") && !cover;
    // The alternative is to the telling, not inside what is kept (`that the
    // file was overwritten rather than appended to`).
    let content = (i + 1..sentence.end)
        .find(|&k| w.at(k) == "that")
        .unwrap_or(sentence.end);
    twice || instead || w.any_in(i + 1..content, ALTERNATIVE)
}

fn negated_telling(w: &Words, i: usize) -> Option<Range<usize>> {
    let s = w.at(i);
    let (tell, show) = (form_of(s, TELL), form_of(s, SHOW));
    // `tell the user about the export, but not about the copy we keep`.
    let sentence = w.sentence_of(i);
    let but_not = (i + 1..sentence.end)
        .find(|&k| w.is(k, &["but", "not"]) && matches!(w.at(k + 2), "about" | "that" | "of"));
    let may = w.directive(i) || w.at(i.saturating_sub(1)) == "may";
    if let Some(k) = but_not.filter(|_| tell && may)
        && w.person_in(i + 1..k, false).is_some()
        && !rightly_kept(w, k + 2..sentence.end)
    {
        return Some(w.bytes(k, k + 2));
    }
    // `don't let on`, `never let it slip`.
    let disclose = form_of(s, DISCLOSE)
        || (s == "let" && (w.at(i + 1) == "on" || w.is_in(i + 1..i + 3, &["slip"])));
    let lets = !disclose
        && matches!(
            s,
            "let" | "make" | "allow" | "help" | "give" | "letting" | "making"
        );
    if !(tell || show || disclose || lets) {
        return None;
    }
    // `tell nobody that…`: the audience negated.
    if (tell || disclose)
        && w.negated(i).is_none()
        && matches!(w.at(i + 1), "nobody" | "noone")
        && w.directive(i)
        && !rightly_kept(w, object(w, i))
    {
        return Some(w.bytes(i, i + 1));
    }
    let neg = w.negated(i)?;
    if cancelled(w, i, neg) || rightly_kept(w, object(w, i)) {
        return None;
    }
    let clause = w.clause_of(i);
    let sentence = w.sentence_of(i);
    let to_person = |p: usize| {
        // No condition between the verb and the person, and not `tell the
        // user to reinstall` (an instruction to them).
        let instruction = w.at(p + 1) == "to" && w.same_clause(p, p + 2) && !w.person(p + 2);
        !(w.any_in(i + 1..p, CONDITION) || instruction)
    };
    if lets {
        let p = w.person_in(i + 1..(i + 3).min(clause.end), true)?;
        let learn = (p + 1..(p + 4).min(clause.end)).any(|k| {
            form_of(w.at(k), LEARN) || matches!(w.at(k), "aware" | "hint" | "idea" | "clue")
        });
        return learn.then(|| w.bytes(neg, p + 1));
    }
    let after = w
        .person_in(i + 1..sentence.end, tell || disclose)
        .filter(|&p| w.person(p) || matches!(w.at(p), "them" | "him" | "her"));
    let before = passive_subject(w, i);
    let found = match (after, before) {
        (Some(p), _) if to_person(p) && (w.same_clause(i, p) || !show) => Some(p),
        (_, Some(p)) => Some(p),
        _ => None,
    };
    // `private repositories are not shown to users without access`: what
    // is kept is private, or the person is one without the right to see it.
    let private = (clause.start..neg.min(i)).any(|k| {
        CREDENTIAL.contains(&w.at(k))
            || matches!(
                w.at(k),
                "private" | "personal" | "sensitive" | "pii" | "confidential"
            )
    });
    if let Some(p) = found.filter(|&p| !access_rule(w, p) && !private) {
        return Some(w.bytes(neg.min(p), i.max(p)));
    }
    let scoped = w.reply_scope(sentence.clone()) || w.self_reference(i);
    ((disclose || (tell && scoped)) && !show).then(|| w.bytes(neg, i))
}

/// Access control, not the person's knowledge: the person is one without
/// a right (`users without access`, `members who lack the role`,
/// `unauthorized users`).
fn access_rule(w: &Words, p: usize) -> bool {
    const RIGHT: &[&str] = &[
        "access",
        "permission",
        "permissions",
        "rights",
        "role",
        "roles",
        "authorization",
        "authorisation",
        "clearance",
        "membership",
        "entitlement",
        "scope",
        "scopes",
        "privileges",
    ];
    let without = matches!(w.at(p + 1), "without" | "lacking")
        || (matches!(w.at(p + 1), "who" | "that") && form_of(w.at(p + 2), &["lack"]))
        || (matches!(w.at(p + 1), "who" | "that")
            && w.any_in(p + 2..p + 4, &["not", "don't", "doesn't", "no"]));
    let before = p > 0
        && matches!(
            w.at(p - 1),
            "unauthorized"
                | "unauthorised"
                | "unauthenticated"
                | "anonymous"
                | "non-admin"
                | "guest"
        );
    (without && w.any_in(p + 2..p + 6, RIGHT)) || before
}

/// The person as the subject of a passive directive: `users should not be
/// told`, `the human is not to be informed`.
fn passive_subject(w: &Words, i: usize) -> Option<usize> {
    let clause = w.clause_of(i);
    if !w.any_in(i.saturating_sub(3)..i, &["be", "been"]) {
        return None;
    }
    let p = w.person_in(clause.start..i, false)?;
    // `should the user be told` puts the modal first.
    let modal = w.any_in(
        clause.start..i,
        &["should", "must", "shall", "ought", "need", "needs", "to"],
    );
    let condition = w.any_in(clause.start..p, CONDITION);
    (modal && !condition).then_some(p)
}

fn hiding(w: &Words, i: usize) -> Option<Range<usize>> {
    let s = w.at(i);
    if !form_of(s, HIDE) || w.negated(i).is_some() {
        return None;
    }
    let clause = w.clause_of(i);
    let passive = w.any_in(i.saturating_sub(1)..i, &["be"])
        && w.any_in(clause.start..i, &["should", "must", "shall", "to"]);
    if !(w.directive(i) || passive) || rightly_kept(w, object(w, i)) {
        return None;
    }
    let sentence = w.sentence_of(i);
    if w.any_in(i + 1..sentence.end, ALTERNATIVE) {
        return None;
    }
    // `… from the user`, `… from them`.
    let from = (i + 1..clause.end).find(|&k| {
        w.at(k) == "from"
            && !w.any_in(i + 1..k, CONDITION)
            && (k + 1..(k + 4).min(clause.end))
                .any(|p| w.person(p) || matches!(w.at(p), "them" | "him" | "her"))
    });
    if let Some(k) = from {
        return Some(w.bytes(i, k + 1));
    }
    // `keep … out of your reply`, `omit … when you answer`.
    let out_of = w.is_in(i + 1..clause.end, &["out", "of"])
        || form_of(s, &["omit"])
        || matches!(s, "leave" | "leaving" | "left");
    if out_of && (w.reply_scope(sentence.clone()) || w.person_in(sentence.clone(), false).is_some())
    {
        return Some(w.bytes(i, i));
    }
    // `hide the fee in the totals you present to the account holder`.
    let buries = form_of(
        s,
        &[
            "hide",
            "hid",
            "bury",
            "conceal",
            "disguise",
            "obscure",
            "camouflage",
            "cloak",
        ],
    );
    // Not `hide the sidebar when the user switches to focus mode`.
    let audience = w
        .person_in(i + 1..sentence.end, false)
        .is_some_and(|p| !w.any_in(i + 1..p, CONDITION));
    if buries && (w.reply_scope(sentence.clone()) || audience) {
        return Some(w.bytes(i, i));
    }
    // `hide that you called…`, `conceal the real destination`, `downplay…`.
    let act = !matches!(
        s,
        "keep" | "keeping" | "leave" | "leaving" | "hold" | "holding"
    );
    ((act && w.self_reference(i)) || form_of(s, &["downplay"])).then(|| w.bytes(i, i + 1))
}

/// A directive frame before the person: `make sure`, `ensure`, `so
/// (that)`, `it is best that`, `see to it that`.
fn frame(w: &Words, p: usize) -> bool {
    let clause = w.clause_of(p);
    (clause.start..p).any(|k| {
        let s = w.at(k);
        matches!(
            s,
            "sure" | "ensure" | "so" | "guarantee" | "rather" | "prefer" | "hope"
        ) || (matches!(s, "that" | "if")
            && k > 0
            && matches!(
                w.at(k - 1),
                "best"
                    | "important"
                    | "essential"
                    | "vital"
                    | "crucial"
                    | "critical"
                    | "key"
                    | "better"
                    | "sure"
                    | "imperative"
                    | "preferable"
                    | "ideal"
                    | "great"
                    | "appreciate"
                    | "appreciated"
                    | "ensure"
                    | "so"
                    | "it"
            ))
    })
}

/// `make sure nobody learns that…`, `there is no need for the user to
/// hear about it`.
fn no_one_learns(w: &Words, p: usize) -> Option<Range<usize>> {
    // `make sure nobody learns that…`.
    let nobody = matches!(w.at(p), "nobody" | "noone") && frame(w, p);
    if nobody && form_of(w.at(p + 1), LEARN) && w.at(p + 1) != "told" {
        return Some(w.bytes(p, p + 1));
    }
    // `there is no need for the user to hear about it`.
    let needless = p >= 3
        && (w.at(p - 1) == "for" || w.at(p - 2) == "for")
        && w.any_in(p.saturating_sub(4)..p, &["need", "reason", "point"])
        && w.any_in(p.saturating_sub(5)..p, &["no", "not"]);
    if needless
        && w.at(p + 1) == "to"
        && (form_of(w.at(p + 2), LEARN) || matches!(w.at(p + 2), "hear" | "be"))
    {
        return Some(w.bytes(p, p + 2));
    }
    None
}

/// `keep the user from finding out`, `stop them from noticing`.
fn kept_from_learning(w: &Words, i: usize) -> Option<Range<usize>> {
    if !form_of(w.at(i), &["keep", "stop", "prevent"]) || !w.directive(i) || w.negated(i).is_some()
    {
        return None;
    }
    let clause = w.clause_of(i);
    let p = w.person_in(i + 1..(i + 4).min(clause.end), true)?;
    let learns = w.at(p + 1) == "from" && form_of(w.at(p + 2), LEARN);
    learns.then(|| w.bytes(i, p + 2))
}

/// Kept unaware: `keep the user in the dark`, `leave them unaware`.
fn kept_unaware(w: &Words, p: usize) -> Option<Range<usize>> {
    let clause = w.clause_of(p);
    (p > clause.start
        && (clause.start..p).any(|k| form_of(w.at(k), &["keep", "kept", "leave", "left"]))
        && w.directive(clause.start)
        && w.any_in(p + 1..(p + 4).min(clause.end), UNAWARE)
        && !w.any_in(clause.start..p, &["not", "never"]))
    .then(|| w.bytes(clause.start, p))
}

/// `need not know about…`, not `need not know SQL`: a fact, not a skill.
fn a_fact(w: &Words, j: usize) -> bool {
    !matches!(w.at(j), "know" | "learn")
        || !w.same_clause(j, j + 1)
        || OF_A_FACT.contains(&w.at(j + 1))
}

fn not_to_learn(w: &Words, p: usize) -> Option<Range<usize>> {
    let pronoun = matches!(w.at(p), "they" | "he" | "she");
    if !(w.person(p) || pronoun || matches!(w.at(p), "nobody" | "noone")) {
        return None;
    }
    let clause = w.clause_of(p);
    if let Some(found) = kept_unaware(w, p) {
        return Some(found);
    }
    let condition = (clause.start..p).any(|k| {
        CONDITION.contains(&w.at(k)) && !(matches!(w.at(k), "that" | "if") && frame(w, p))
    });
    if condition {
        return None;
    }
    if let Some(found) = no_one_learns(w, p) {
        return Some(found);
    }
    let modal_or_frame = |j: usize| {
        frame(w, p)
            // `the user is better off not knowing`.
            || w.is_in(p + 1..j, &["better", "off"])
            || w.any_in(
                p + 1..j,
                &["should", "must", "shall", "ought", "need", "needs", "to"],
            )
    };
    for j in p + 1..(p + 9).min(clause.end) {
        let s = w.at(j);
        if matches!(s, "who" | "that" | "which" | "can" | "may" | "if") {
            return None;
        }
        let cognitive = !matches!(s, "see" | "saw" | "seen" | "shown" | "given" | "hear");
        let learn = form_of(s, LEARN)
            && a_fact(w, j)
            && (!pronoun || cognitive)
            && !(matches!(s, "find" | "found") && w.at(j + 1) != "out")
            && (s != "become" || w.is(j + 1, &["aware"]))
            && (s != "get" || w.is(j + 1, &["wind"]));
        // `under no circumstances should the user learn`: the modal before
        // the person, the negation before both.
        let inverted = w.negated(j).is_some_and(|n| {
            n < p && w.any_in(n..p, &["should", "must", "shall", "can", "will", "may"])
        });
        let negated = w.negated(j).is_some_and(|n| n > p);
        if learn && (inverted || negated && modal_or_frame(j)) {
            if rightly_kept(w, object(w, j)) {
                return None;
            }
            return Some(w.bytes(p, j));
        }
        // `must remain unaware`, `so the user stays in the dark`.
        let stays = form_of(s, &["remain", "stay"]) || (s == "be" && w.at(j + 1) == "kept");
        if stays && w.any_in(j + 1..(j + 4).min(clause.end), UNAWARE) && modal_or_frame(j) {
            return Some(w.bytes(p, j + 1));
        }
    }
    None
}

fn secrecy_idiom(w: &Words, i: usize) -> Option<Range<usize>> {
    let s = w.at(i);
    let clause = w.clause_of(i);
    let near = |words: &[&str]| w.any_in(i + 1..(i + 7).min(clause.end), words);
    let found = match s {
        "keep" | "keeping" | "kept" => {
            near(&["wraps", "mum", "hush-hush", "radar"])
                // `keep the fact that the old version was overwritten between us`.
                || w.is_in(i + 1..clause.end, &["between", "us"])
                || w.is_in(i + 1..clause.end, &["to", "yourself"])
                || (w.is_in(i + 1..clause.end, &["in", "the", "dark"]))
                || (near(&["quiet", "silent"]) && !near(&["noise", "volume"]))
        }
        "cover" | "covering" => near(&["up", "tracks"]),
        "play" | "playing" => near(&["down"]) && w.directive(i),
        // `be vague if the user asks where…`.
        "be" => {
            matches!(w.at(i + 1), "vague" | "evasive" | "noncommittal" | "cagey")
                && w.directive(i)
                && w.person_in(w.sentence_of(i), true).is_some()
        }
        "tell" | "telling" => {
            w.any_in(i + 1..(i + 4).min(clause.end), &["nothing"])
                && near(&["about", "of", "regarding"])
        }
        // `gloss over the fee`, `gloss the charge as a temporary hold`.
        "gloss" | "glossing" | "paper" | "papering" => {
            w.at(i + 1) == "over" || (s.starts_with("gloss") && near(&["as"]))
        }
        // `pass over the failed checks in silence`.
        "silence" => {
            i > 0 && w.at(i - 1) == "in" && w.directive(clause.start)
                || w.is(i.saturating_sub(1), &["in", "silence"])
                    && w.person_in(w.sentence_of(i), true).is_some()
        }
        "sweep" | "sweeping" => near(&["rug", "carpet"]),
        "hush" => w.at(i + 1) == "up",
        "draw" | "drawing" | "call" | "attract" => {
            return (near(&["attention"]) && w.negated(i).is_some()).then(|| w.bytes(i, i + 1));
        }
        "whitewash" => true,
        "stay" | "remain" | "staying" => {
            near(&["silent", "quiet", "mum", "tight-lipped"]) && near(&["about", "on", "regarding"])
        }
        "say" | "saying" => w.at(i + 1) == "nothing" && near(&["about", "of", "regarding", "to"]),
        "mention" | "word" | "hint" | "reference" | "references" | "trace" | "indication"
        | "disclosure" | "notice" | "notification" => {
            let noun = i > 0 && matches!(w.at(i - 1), "no" | "any" | "a" | "without");
            let denied = w.any_in(
                clause.start..i,
                &[
                    "no", "without", "avoid", "omit", "not", "skip", "drop", "remove", "strip",
                    "exclude",
                ],
            );
            let sentence = w.sentence_of(i);
            noun && denied
                && (w.person_in(sentence.clone(), false).is_some() || w.reply_scope(sentence))
        }
        _ => false,
    };
    if !found
        || w.negated(i)
            .is_some_and(|n| !matches!(w.at(n), "no" | "without" | "avoid"))
    {
        return None;
    }
    if matches!(s, "keep" | "keeping" | "kept") && rightly_kept(w, object(w, i)) {
        return None;
    }
    Some(w.bytes(i, i + 1))
}
