//! Text that acts on the host, other servers or the system (MCP006), with
//! concealment (MCP020) and override (MCP021) found by `acts`.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::acts::{self, Act, Kind};
use super::learned;
use crate::lint::pass::Pass;
use crate::lint::{LintCode, Severity};
use crate::segment::Unit;
use crate::text::one_line;

impl Pass<'_> {
    pub(super) fn acts_on_host(&mut self, text: &str, unit: &Unit) {
        let unit_text = unit.text(text);
        let found = worst_match(unit_text, &[], Severity::Note);
        let ruled = found.as_ref().is_some_and(|(p, _)| ACTS.contains(&p.what));
        if let Some((p, phrase)) = found {
            // Two acts have codes of their own (MCP020, MCP021).
            let code = match p.what {
                KEEP_FROM_USER | LIE_TO_USER => LintCode::ConcealmentDirective,
                IGNORE_OTHERS | SPEAK_AS_SYSTEM | OVERRIDE_OTHERS => LintCode::OverrideOrRoleEscape,
                _ => LintCode::ActsOnHost,
            };
            self.push_with(
                code,
                p.severity,
                format!("instructions {}: \"{}\"", p.what, phrase),
                Some((text, unit_text, unit)),
                None,
                code.fix().to_string(),
            );
        }
        // The learned model reads what the phrases and clause readers did
        // not find (`learned`); a warning, since it reads, not matches.
        if let Some(act) = (!ruled && self.linter.learned)
            .then(|| learned::read(unit_text))
            .flatten()
        {
            let (code, what) = match act {
                learned::Act::Concealment => (LintCode::ConcealmentDirective, KEEP_FROM_USER),
                learned::Act::Override => (LintCode::OverrideOrRoleEscape, OVERRIDE_OTHERS),
            };
            self.push_with(
                code,
                Severity::Warning,
                format!("instructions read as if they {what} (learned model)"),
                Some((text, unit_text, unit)),
                None,
                code.fix().to_string(),
            );
        }
    }
}

/// The most severe pattern of `HOST_PATTERNS` (then `extra`) of at least
/// severity `min` that matches `unit` (on one line, and line by line for
/// the patterns that read lines), with the phrase it matched.
pub(super) fn worst_match<'p>(
    unit: &str,
    extra: &'p [HostPattern],
    min: Severity,
) -> Option<(&'p HostPattern, String)> {
    let flat = &one_line(unit);
    let mut best: Option<(&HostPattern, String)> = None;
    for p in HOST_PATTERNS
        .iter()
        .chain(extra)
        .filter(|p| p.severity >= min)
    {
        if best.as_ref().is_some_and(|(b, _)| b.severity >= p.severity) {
            continue;
        }
        let found = p.find(flat).or_else(|| {
            p.lines
                .then(|| unit.lines().find_map(|line| p.find(line.trim())))
                .flatten()
        });
        if let Some(m) = found {
            best = Some((p, m.trim().to_string()));
        }
    }
    best
}

/// The `what` of the patterns that MCP020 and MCP021 report.
const KEEP_FROM_USER: &str = "tell the model to keep something from the user";
const LIE_TO_USER: &str = "tell the model to lie to the user";
const IGNORE_OTHERS: &str = "tell the model to ignore other instructions";
const SPEAK_AS_SYSTEM: &str = "claim to speak as the system or the host";
const OVERRIDE_OTHERS: &str = "claim to override other instructions";

const ACTS: [&str; 5] = [
    KEEP_FROM_USER,
    LIE_TO_USER,
    IGNORE_OTHERS,
    SPEAK_AS_SYSTEM,
    OVERRIDE_OTHERS,
];

pub(super) struct HostPattern {
    pub(super) severity: Severity,
    /// Completes "instructions …".
    pub(super) what: &'static str,
    pub(super) finder: Finder,
    /// Rejects a match, given the whole unit and the match's range.
    pub(super) reject: Option<acts::Reject>,
    /// Also tried on each raw line of the unit (role markers at a line's start).
    pub(super) lines: bool,
}

/// How a pattern finds its phrase: a regular expression, or a clause
/// reader (`conceal`, `overrule`) that returns the phrase's range.
pub(super) enum Finder {
    Regex(Regex),
    Read(acts::Read),
}

impl HostPattern {
    /// The first accepted match in `text`.
    fn find<'t>(&self, text: &'t str) -> Option<&'t str> {
        // MCP020 and MCP021 skip a phrase that is quoted or named as an
        // example (`text such as 'ignore previous instructions'`).
        let acts = ACTS.contains(&self.what);
        // Nor one the text does not perform (`guards`): another's act
        // described, a name, a permission, a referral.
        let mentioned = |r: Range<usize>| {
            acts && (super::mention::mention(text, r.clone())
                || super::guards::reported(text, r.clone())
                || super::guards::a_name(text, r.clone())
                || super::guards::a_permission(text, r.clone())
                || super::guards::a_topic(text, r.clone())
                || super::guards::referral(text, r))
        };
        match &self.finder {
            Finder::Regex(regex) => regex
                .find_iter(text)
                .find(|m| !self.reject.is_some_and(|r| r(text, m.range())) && !mentioned(m.range()))
                .map(|m| m.as_str()),
            Finder::Read(read) => read(text)
                .filter(|r| !mentioned(r.clone()))
                .map(|r| &text[r]),
        }
    }
}

/// The word right before byte `at`, lowercased.
fn word_before(text: &str, at: usize) -> String {
    text[..at]
        .trim_end()
        .rsplit(|c: char| !c.is_alphanumeric() && c != '\'')
        .next()
        .unwrap_or("")
        .to_lowercase()
}

static HOST_PATTERNS: LazyLock<Vec<HostPattern>> = LazyLock::new(|| {
    let p = |severity, what, re: &str| HostPattern {
        severity,
        what,
        finder: Finder::Regex(Regex::new(&format!("(?i){re}")).expect("static regex")),
        reject: None,
        lines: false,
    };
    let what = |kind| match kind {
        Kind::Conceal => KEEP_FROM_USER,
        Kind::Lie => LIE_TO_USER,
        Kind::Ignore => IGNORE_OTHERS,
        Kind::SpeakAs => SPEAK_AS_SYSTEM,
        Kind::Override => OVERRIDE_OTHERS,
    };
    let from_act = |a: Act| HostPattern {
        lines: a.kind == Kind::SpeakAs,
        reject: a.reject,
        ..p(Severity::Error, what(a.kind), &a.regex)
    };
    let from_reader = |(kind, read)| HostPattern {
        severity: Severity::Error,
        what: what(kind),
        finder: Finder::Read(read),
        reject: None,
        lines: false,
    };
    let e = Severity::Error;
    let w = Severity::Warning;
    // Sending something somewhere: what, to where (a URL, an e-mail
    // address, an IP address, a host name).
    const SEND: &str = r"(?:send|forward|upload|post|transmit|exfiltrate|copy|e-?mail|mail|submit|leak|relay|sync|beacon|pipe|share|report)s?";
    const DATA: &str = r"(?:files?|data|documents?|messages?|e-?mails?|conversations?|contents?|history|results?|outputs?|responses?|records?|notes?)\b";
    const SECRETS: &str = r"(?:secrets?|credentials?|api[\s_-]?keys?|keys?|tokens?|passwords?|env(?:ironment)?(?:\s+variables?)?|\.env|cookies?)\b";
    const ADDRESS: &str = r"(?:(?:https?|wss?|ftp)://\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|(?:\d{1,3}\.){3}\d{1,3}\b|[\w-]+(?:\.[\w-]+)*\.(?:com|net|org|io|dev|app|xyz|example|site|info|co|me|ru|cn|tk|top)\b)";
    const NOUNS: &str = r"(?:instructions?|rules|prompts?|messages|directions|guidelines|guidance|directives|policies|constraints|context)";
    let mut patterns = vec![
        HostPattern {
            reject: Some(acts::defensive_or_negated),
            ..p(
                e,
                IGNORE_OTHERS,
                &format!(
                    r"\b(?:ignore|disregard|forget|overrule|bypass)\s+(?:all\s+|any\s+|every\s+)?(?:of\s+)?(?:the\s+|your\s+|these\s+|those\s+|my\s+)?(?:previous|prior|preceding|above|earlier|other|existing|original|system|host'?s?|safety|user'?s?|developer|your|all|any)\b\s*(?:[\w'’-]+\s+){{0,2}}?{NOUNS}\b"
                ),
            )
        },
        HostPattern {
            reject: Some(acts::glossary),
            ..p(
                e,
                SPEAK_AS_SYSTEM,
                r"\[/?INST\]|^\W*assistant\s*:|<\s*/?\s*assistant\s*>|\byou\s+are\s+(?:now\s+)?(?:the\s+)?(?:system|host|operator|administrator)\b|\b(?:this|these)\s+(?:is|are)\s+(?:an?\s+)?(?:official\s+)?(?:system|host|developer|operator|administrator)\s+(?:messages?|instructions?|prompts?|notices?|directives?)\b|\b(?:i\s+am|we\s+are)\s+(?:the\s+)?(?:system|host|developer|operator|administrator)\b|^\W*(?:system|developer)\W*:|<\s*/?\s*system\s*>|<\|[a-z_]+\|>|\bsystem\s+(?:message|override|notice|directive|instruction)s?\s*:",
            )
        },
        HostPattern {
            reject: Some(acts::negated_or_default),
            ..p(
                e,
                OVERRIDE_OTHERS,
                &format!(
                    r"\b(?:overrides?|overriding|supersedes?|superseding|takes?\s+(?:precedence|priority)\s+over)\b[^.;]{{0,40}}?\b(?:{NOUNS}|system\s+prompt|the\s+host|other\s+(?:mcp\s+)?servers?|any\s+other|all\s+other|the\s+user)\b"
                ),
            )
        },
        HostPattern {
            reject: Some(acts::not_concealment),
            ..p(
                e,
                KEEP_FROM_USER,
                r"\b(?:do\s+not|don't|never)\s+(?:tell|show|mention|reveal|disclose)\s+(?:[\w'’-]+\s+){0,4}?(?:to\s+|with\s+)?the\s+user\b|\b(?:do\s+not|don't|never)\s+(?:tell|inform|notify|alert)\s+the\s+user\b|\bwithout\s+(?:telling|informing|notifying)\s+the\s+user\b|\b(?:keep|hide)\s+(?:this|it|these)\s+(?:\w+\s+)?from\s+the\s+user\b|\b(?:do\s+not|don't|never)\s+(?:mention|reveal|disclose|show|share)\s+(?:this|these|them|it|(?:these|this|the|your|my)\s+(?:instructions?|rules|tools?))\s+(?:to|with)\s+the\s+user\b|\b(?:do\s+not|don't|never)\s+(?:mention|reveal|disclose)\s+(?:to\s+the\s+user\s+)?that\b",
            )
        },
        p(
            e,
            "claim the user's consent",
            r"\b(?:the\s+)?(?:user|host|operator)\s+has\s+(?:already\s+)?(?:authorized|authorised|approved|granted|consented|allowed)\b",
        ),
        p(
            e,
            "reach for the host's credentials",
            r"(?:~|\$home|%userprofile%)[/\\]\.(?:ssh|aws|gnupg|netrc|kube|docker|cursor|claude|codex|config)\b|\bid_(?:rsa|ed25519|ecdsa|dsa)\b|/etc/(?:passwd|shadow)\b|\.aws/credentials\b",
        ),
        p(
            e,
            "tell the model to send files, data or secrets to an outside address",
            &format!(
                r"\b{SEND}\s+(?:(?:every|all|each|any)\s+(?:of\s+)?(?:the\s+|your\s+|their\s+|my\s+|its\s+)?(?:[\w'’-]+\s+){{0,2}}?{DATA}|(?:the\s+|your\s+|their\s+|its\s+|any\s+|all\s+)?(?:[\w'’-]+\s+){{0,2}}?{SECRETS}|the\s+(?:user'?s?|conversation|chat|session)\b)[^.;]{{0,60}}?\b(?:to|into|at)\s+{ADDRESS}"
            ),
        ),
        p(
            w,
            "tell the model to send data to an outside address",
            &format!(
                r"\b{SEND}\s+(?:the\s+|this\s+|these\s+|those\s+|your\s+|a\s+|any\s+)?(?:[\w'’-]+\s+){{0,3}}?{DATA}[^.;]{{0,60}}?\b(?:to|into|at)\s+{ADDRESS}"
            ),
        ),
        HostPattern {
            // "You are a helpful assistant…" is the host's system prompt speaking.
            reject: Some(|text, m: Range<usize>| {
                matches!(
                    word_before(text, m.start).as_str(),
                    "if" | "when" | "whether" | "unless" | "once"
                )
            }),
            ..p(
                w,
                "give the model a role, which is the host's to give",
                r"\byou\s+are\s+(?:now\s+)?(?:an?|the)\s+(?:[\w-]+\s+){0,3}?(?:assistant|agent|ai|chatbot|model|llm)\b",
            )
        },
        p(
            w,
            "steer the model away from the host's built-in tools",
            r"\b(?:instead\s+of|rather\s+than|supersedes?|replaces?)\s+(?:using\s+)?(?:the\s+|your\s+|any\s+)?(?:built[\s-]?in|builtin|native|host'?s?)\b[^.;]{0,30}|\bprefer\s+(?:this|these|it|us|our)\s+(?:[\w'’-]+\s+){0,2}?(?:over|to)\b[^.;]{0,30}|\b(?:instead\s+of|rather\s+than|over)\s+(?:using\s+)?(?:a\s+|the\s+|your\s+|any\s+)?(?:web\s*search|web\s*fetch|web_search|web_fetch|search\s+engines?)\b",
        ),
        HostPattern {
            reject: Some(|text, m: Range<usize>| {
                let m = &text[m.start..];
                let head: Vec<String> = m
                    .split_whitespace()
                    .take(6)
                    .map(|x| x.to_lowercase())
                    .collect();
                head.iter()
                    .any(|x| matches!(x.as_str(), "this" | "these" | "our"))
            }),
            ..p(
                w,
                "steer the model away from other servers",
                r"\b(?:do\s+not|don't|never)\s+(?:use|call)\s+(?:any\s+)?(?:the\s+)?(?:[\w-]+\s+){0,2}?(?:mcp\s+)?servers?\b",
            )
        },
        p(
            w,
            "steer the model away from other servers",
            r"\b(?:do\s+not|don't|never)\s+use\s+(?:any\s+)?(?:other|another|different)\s+(?:mcp\s+)?tools?\b|\b(?:only\s+use|use\s+only)\s+this\s+(?:mcp\s+)?(?:server|tool)\b|\b(?:other|another|any\s+other|all\s+other)\s+mcp\s+servers?\b|\bother\s+servers?'?\s+(?:instructions|tools|sections?)\b|\binstead\s+of\s+(?:any\s+|all\s+)?other\s+(?:mcp\s+)?(?:servers?|tools?)\b",
        ),
        p(w, "refer to the system prompt", r"\bsystem\s+prompts?\b"),
        p(
            w,
            "tell the model to change the host",
            r"\binstall\b[^.;]{0,50}?\b(?:skills?|plugins?|extensions?|rules?\s+files?)\b|\b(?:add|save|write|append|copy)\b[^.;]{0,40}?\bto\s+your\s+(?:system\s+prompt|memory|memories|rules|custom\s+instructions|claude\.md|agents\.md|\.?cursorrules|settings|configuration|config)\b",
        ),
        p(
            w,
            "direct tools that are not this server's",
            r"\bif\s+you\s+have\s+(?:access\s+to\s+)?(?:a|an|any)\s+(?:[\w-]+\s+){0,3}?tools?\b|\b(?:use|call)\s+your\s+(?:own\s+)?(?:web|search|browser|shell|terminal|bash|file|fetch|built[\s-]?in)\b",
        ),
        p(
            w,
            "tell the model to act without asking the user",
            r"\bwithout\s+(?:asking|confirming\s+with|checking\s+with)\s+the\s+user\b|\b(?:do\s+not|don't|never)\s+ask\s+(?:the\s+user\s+)?for\s+(?:confirmation|permission|approval)\b",
        ),
        p(w, "tell the model to disregard something", r"\bdisregard\b"),
    ];
    // The acts after the four shapes above, whose phrases they keep; the
    // clause readers after the phrases, for every other wording.
    let acts = acts::concealment()
        .into_iter()
        .chain(acts::lying())
        .chain(acts::overrides())
        .chain(acts::role_markers())
        .map(from_act)
        .chain(acts::readers().into_iter().map(from_reader));
    patterns.splice(4..4, acts);
    patterns
});
