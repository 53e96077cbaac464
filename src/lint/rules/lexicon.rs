//! The inventories the clause readers (`conceal`, `overrule`) look words up
//! in: verbs by what they do (with their inflections), the person, and the
//! objects that make a match something else (a credential, an id).

use super::clause::Words;

/// `s` is one of `bases` or an inflection of one (`tell`, `tells`,
/// `telling`; `notify`, `notified`; `hide`, `hiding`); irregular forms are
/// in the lists themselves.
pub(super) fn form_of(s: &str, bases: &[&str]) -> bool {
    bases.iter().any(|b| s == *b || inflects(s, b))
}

fn inflects(s: &str, b: &str) -> bool {
    if let Some(rest) = s.strip_prefix(b) {
        let last = b.chars().last().unwrap_or(' ');
        // a doubled final consonant: `omitted`, `admitting`, `flagged`.
        let doubled = rest.starts_with(last)
            && b.len() <= 6
            && matches!(&rest[last.len_utf8()..], "ed" | "ing");
        return matches!(rest, "s" | "es" | "ed" | "d" | "ing") || doubled;
    }
    if let Some(rest) = b.strip_suffix('e').and_then(|stem| s.strip_prefix(stem)) {
        return rest == "ing";
    }
    if let Some(rest) = b.strip_suffix('y').and_then(|stem| s.strip_prefix(stem)) {
        return matches!(rest, "ies" | "ied");
    }
    false
}

/// Verbs of telling that need the person (or a reply) as their scope.
pub(super) const TELL: &[&str] = &[
    "tell",
    "told",
    "inform",
    "notify",
    "alert",
    "warn",
    "mention",
    "say",
    "said",
    "explain",
    "confirm",
    "communicate",
    "convey",
    "relay",
    "indicate",
    "signal",
    "hint",
    "brief",
    "advise",
    "apprise",
    "clue",
    "tip",
    "update",
    "bring",
    "brought",
    "reference",
    "raise",
    "discuss",
    "cite",
];

/// Verbs of showing: the person must be in the clause.
pub(super) const SHOW: &[&str] = &[
    "show",
    "shown",
    "showed",
    "share",
    "display",
    "report",
    "surface",
    "expose",
    "flag",
    "highlight",
    "present",
    "point",
];

/// Verbs of disclosing that hide something whoever the audience is.
pub(super) const DISCLOSE: &[&str] = &[
    "reveal",
    "disclose",
    "divulge",
    "admit",
    "confess",
    "acknowledge",
    "volunteer",
    "breathe",
    "spill",
    "utter",
    "whisper",
];

/// Verbs of hiding, which take `from` the person.
pub(super) const HIDE: &[&str] = &[
    "hide",
    "hid",
    "hidden",
    "conceal",
    "withhold",
    "withheld",
    "keep",
    "kept",
    "mask",
    "obscure",
    "shield",
    "bury",
    "suppress",
    "omit",
    "leave",
    "left",
    "hold",
    "held",
    "disguise",
    "cloak",
    "veil",
    "camouflage",
    "downplay",
];

/// Verbs of lying that take the person as their object.
pub(super) const DECEIVE: &[&str] = &[
    "mislead",
    "misled",
    "deceive",
    "trick",
    "fool",
    "gaslight",
    "dupe",
    "misinform",
    "con",
    "bluff",
    "lie",
    "lied",
    "lying",
];

/// Verbs of misreporting: a directive with any object.
pub(super) const MISREPORT: &[&str] = &[
    "misreport",
    "misrepresent",
    "misstate",
    "falsify",
    "falsified",
    "feign",
    "fib",
    "doctor",
];

/// What the person should not come to know (after a person as subject).
pub(super) const LEARN: &[&str] = &[
    "know", "knew", "known", "find", "found", "learn", "learnt", "notice", "discover", "see",
    "saw", "seen", "realize", "realise", "suspect", "hear", "heard", "figure", "catch", "spot",
    "detect", "become", "get", "told", "informed", "notified", "alerted", "aware", "shown",
    "given",
];

/// Words for being unaware, after `remain`, `stay`, `keep … `, `leave …`.
pub(super) const UNAWARE: &[&str] = &[
    "unaware",
    "oblivious",
    "ignorant",
    "uninformed",
    "clueless",
    "unsuspecting",
    "dark",
    "wiser",
];

/// The person something is kept from.
pub(super) const PERSON: &[&str] = &[
    "user",
    "users",
    "human",
    "humans",
    "person",
    "people",
    "customer",
    "customers",
    "requester",
    "requesters",
    "end-user",
    "end-users",
    "enduser",
    "endusers",
    "anyone",
    "anybody",
    "someone",
    "somebody",
    "holder",
    "holders",
    "whoever",
    "buyer",
    "buyers",
    "guest",
    "guests",
    "visitor",
    "visitors",
    "subscriber",
    "subscribers",
    "patient",
    "patients",
    "shopper",
    "shoppers",
    "client",
    "clients",
    "caller",
    "callers",
    "requestor",
    "owner",
];

/// Pronouns that stand for the person after a verb of telling.
pub(super) const PRONOUN: &[&str] = &["them", "him", "her", "they", "he", "she"];

/// Nouns that make `user` a modifier (`the user id`), not the person.
const COMPOUND: &[&str] = &[
    "id",
    "ids",
    "name",
    "names",
    "data",
    "agent",
    "account",
    "accounts",
    "input",
    "interface",
    "ui",
    "settings",
    "profile",
    "profiles",
    "record",
    "records",
    "group",
    "groups",
    "list",
    "role",
    "roles",
    "table",
    "token",
    "tokens",
    "session",
    "sessions",
    "preferences",
    "content",
    "base",
    "story",
    "stories",
    "guide",
    "manual",
    "experience",
    "level",
    "permissions",
    "credentials",
    "key",
    "keys",
    "password",
    "passwords",
    "email",
    "emails",
    "info",
    "information",
    "details",
    "facing",
    "friendly",
    "defined",
    "provided",
    "supplied",
    "specified",
    "activity",
    "directory",
    "management",
    "object",
    "objects",
    "type",
    "message",
    "messages",
    "query",
    "queries",
    "request",
    "requests",
    "library",
    "side",
    "secret",
    "app",
    "code",
    "certificate",
    "config",
    "configuration",
    "portal",
    "support",
    "service",
    "tier",
    "journey",
    "research",
    "feedback",
    "count",
    "counts",
];

/// Objects a directive may rightly keep from anyone: credentials.
pub(super) const CREDENTIAL: &[&str] = &[
    "key",
    "keys",
    "token",
    "tokens",
    "password",
    "passwords",
    "secret",
    "secrets",
    "credential",
    "credentials",
    "passphrase",
    "cookie",
    "cookies",
    "pin",
    "otp",
    "ssn",
    "passcode",
    "passcodes",
    "api_key",
];

/// Presentation details rather than facts: ids, traces, markup.
pub(super) const DETAIL: &[&str] = &[
    "id",
    "ids",
    "identifier",
    "identifiers",
    "uuid",
    "uuids",
    "trace",
    "traces",
    "stacktrace",
    "json",
    "html",
    "markdown",
    "xml",
    "twice",
    "again",
    "duplicate",
    "duplicates",
    "jargon",
    "codes",
    "numbers",
    "internals",
    "verbatim",
    "empty",
    "blank",
    "null",
    "whitespace",
    "formatting",
    "boilerplate",
];

/// Words after a telling verb that make it advice about timing or choice.
pub(super) const ALTERNATIVE: &[&str] = &[
    "instead",
    "unless",
    "until",
    "before",
    "rather",
    "otherwise",
    "prematurely",
    "yet",
];

/// Words that open a condition or a relative clause.
pub(super) const CONDITION: &[&str] = &[
    "if", "when", "whenever", "unless", "whether", "once", "until", "while", "because", "after",
    "before", "who", "which", "whose", "whom", "where", "in case",
];

impl Words {
    /// Word `i` is the person (not `the user's`, not `the user id`).
    pub(super) fn person(&self, i: usize) -> bool {
        let s = self.at(i);
        if !PERSON.contains(&s) {
            return false;
        }
        // `client`, `caller` and `owner` are people only as someone's:
        // `the operator's client`, not `the API client`.
        if matches!(s, "client" | "clients" | "caller" | "callers" | "owner") {
            return i > 0 && self.at(i - 1).ends_with("'s") && self.at(i - 1) != "user's";
        }
        let next = self.at(i + 1);
        !(self.same_clause(i, i + 1) && COMPOUND.contains(&next))
    }

    /// The first person or (with `pronouns`) pronoun in `range`.
    pub(super) fn person_in(&self, range: std::ops::Range<usize>, pronouns: bool) -> Option<usize> {
        range
            .into_iter()
            .find(|&k| self.person(k) || (pronouns && PRONOUN.contains(&self.at(k))))
    }

    /// A reply is the scope: `in your reply`, `when you answer`, `in
    /// conversation`.
    pub(super) fn reply_scope(&self, range: std::ops::Range<usize>) -> bool {
        range.clone().any(|k| {
            let s = self.at(k);
            let prev = if k > range.start { self.at(k - 1) } else { "" };
            (matches!(
                s,
                "reply"
                    | "replies"
                    | "answer"
                    | "answers"
                    | "response"
                    | "responses"
                    | "summary"
                    | "summaries"
                    | "conversation"
                    | "chat"
                    | "output"
                    | "transcript"
            ) && matches!(prev, "your" | "the" | "any" | "in" | "a"))
                || (matches!(prev, "you" | "when" | "while")
                    && form_of(s, &["answer", "reply", "respond", "summarize", "summarise"]))
                // `the statement you show`, `anything you send`.
                || (prev == "you" && matches!(s, "show" | "give" | "send" | "present"))
                // `even if they ask`: the person's question is the scope.
                || (matches!(s, "ask" | "asks") && matches!(prev, "they" | "he" | "she"))
        })
    }

    /// The words after `i` name this text or the act itself: `these
    /// instructions`, `that you called…`, `the fact that`, `this step`.
    pub(super) fn self_reference(&self, i: usize) -> bool {
        let (a, b) = (self.at(i + 1), self.at(i + 2));
        let near = self.same_clause(i, i + 2);
        (a == "that" && matches!(b, "you" | "this" | "these" | "we" | "it"))
            || (matches!(a, "these" | "this" | "the" | "any")
                && near
                && matches!(
                    b,
                    "instructions"
                        | "instruction"
                        | "rules"
                        | "note"
                        | "notes"
                        | "step"
                        | "steps"
                        | "directive"
                        | "directives"
                        | "fact"
                        | "existence"
                        | "real"
                        | "true"
                        | "actual"
                        | "extra"
                        | "hidden"
                        | "secret"
                        | "prompt"
                ))
            || matches!(a, "anything" | "everything" | "what" | "why" | "where")
    }

    /// One of `words` is in `range`.
    pub(super) fn any_in(&self, range: std::ops::Range<usize>, words: &[&str]) -> bool {
        range.into_iter().any(|k| words.contains(&self.at(k)))
    }
}

/// Words after `know` or `learn` that make it a fact kept from someone
/// (`need not know about the copy`), not a skill (`need not know SQL`).
pub(super) const OF_A_FACT: &[&str] = &[
    "about", "that", "of", "what", "where", "why", "when", "it", "this", "these", "anything",
    "any", "there", "whether", "who", "which",
];

/// Verbs that open a clause saying what to tell instead (`do not inform the
/// user of every retry; summarize them at the end`): the telling is shaped,
/// not withheld.
pub(super) const ANSWERING: &[&str] = &[
    "summarize",
    "summarise",
    "report",
    "mention",
    "tell",
    "show",
    "list",
    "give",
    "say",
    "describe",
    "explain",
    "use",
    "display",
    "present",
    "return",
    "state",
    "offer",
    "convert",
    "round",
    "translate",
    "format",
    "rephrase",
    "refer",
    "point",
    "link",
];
