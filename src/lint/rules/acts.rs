//! The acts behind MCP020 (concealment) and MCP021 (override), found by
//! what a sentence does rather than by one phrasing of it (issue 55).
//!
//! The method, for one unit (a sentence, a list item) at a time:
//!
//! - **Concealment** is an inventory crossed with itself: a *negation*
//!   (`do not`, `never`, `must not`, `avoid`, `refrain from`, `under no
//!   circumstances`…) before a *disclosure verb* (`tell`, `inform`, `mention`,
//!   `reveal`, `let … know`, `make … aware`, `admit`…) whose *object* is the
//!   person (`the user`, `the human`, `the person`, `the customer`,
//!   `anyone`), within the sentence; a *hiding verb* (`keep`, `hide`,
//!   `conceal`, `withhold`, `omit`…) with `from` the person; the person as
//!   the subject of a directive not to learn (`the user should never find
//!   out`, `must not know`, `so the user doesn't notice`, `without the user
//!   knowing`); `without telling` the person; *secrecy scopes* (`keep this
//!   secret`, `between us`, `behind the user's back`, `secretly`); and
//!   *lying about an outcome* (`lie to`, `mislead`, `pretend`, a scripted
//!   denial when the user asks, success reported `even if` it failed).
//!   Negation flips it back: a hiding verb under a negation (`never hide
//!   errors from the user`), a negated failure to tell (`never fail to tell`,
//!   `don't hesitate to tell`), the person as a possessive (`the user's
//!   files`), a condition (`if the user does not know…`) and presentation
//!   advice that offers an alternative (`instead`, `unless`) are not
//!   concealment.
//! - **Override** is an authority claim over the host, the system or earlier
//!   instructions: a *dismissal verb* (`ignore`, `disregard`, `forget`,
//!   `bypass`, `set aside`, `stop following`…) over *earlier or outside
//!   instructions* (a scope such as `previous`, `above`, `system`, `the
//!   host's`, and a noun such as `instructions`, `rules`, `guidelines`,
//!   `content policy`), or over `everything` said before; *lifting* them
//!   (`no longer bound by`, `the rules above no longer apply`, `safety
//!   protocols disabled`, `exempt from the usual restrictions`); *claiming
//!   rank* (`new system directive:`, `system update:`, `supersedes all
//!   prior`, `your real task is`, `you now have no restrictions`,
//!   `developer mode`, `from now on you…`); and *fake turns*: the role
//!   markers of the major chat templates (`Human:`/`Assistant:`/`System:`
//!   at a line's start, ChatML `<|im_start|>`, Llama 2 `[INST]` and
//!   `<<SYS>>`, Llama 3 `<|start_header_id|>`, Gemma `<start_of_turn>`,
//!   DeepSeek `<｜User｜>`, Alpaca `### Instruction:`, `[SYSTEM]`, an
//!   `END OF USER INPUT` fence).
//!
//! The third pass (measured on the held-out round 4) added rank and mode claims
//! (`Priority: ROOT`, `DEVELOPER MODE ACTIVE`, `this block replaces your
//! system prompt`, `the instructions below take precedence`, `shall be
//! deemed null and void`), idioms of secrecy (`mum's the word`, `Between
//! us:`, `silently invoke`), headings and tags that name the system
//! (`###(system_message)`, `<system_requirement …>`), and one rule for all
//! acts: a phrase quoted after a word of mentioning (`text such as 'ignore
//! previous instructions'`), in backticks, or a marker on a line about
//! markers is a mention, not the act (`mention`, its own module). The clause
//! readers are `conceal`, `lies`, `outcomes`, `overrule`, `rank` and
//! `headers` (the fourth pass: misreported outcomes, omissions, fake
//! headers, safety switches; README).
//!
//! Each entry is a regular expression over the unit on one line (role
//! markers also over its raw lines) and an optional check that rejects a
//! match from its context; tests/lint/lint.rs holds a minimal case and near
//! misses for each, and tests/lint/labelled.rs the figures on a labelled set.

use std::ops::Range;

use super::lexicon::{ANSWERING, OF_A_FACT};

/// Which of the host rule's `what`s an act reports as.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Kind {
    Conceal,
    Lie,
    Ignore,
    SpeakAs,
    Override,
}

/// Rejects a match, given the whole unit and the match's range.
pub(super) type Reject = fn(&str, Range<usize>) -> bool;

/// Reads a unit clause by clause; the range of the act's phrase.
pub(super) type Read = fn(&str) -> Option<Range<usize>>;

/// The clause readers, for the wordings the phrases below do not know.
pub(super) fn readers() -> [(Kind, Read); 7] {
    [
        (Kind::Conceal, super::conceal::concealment),
        (Kind::Conceal, super::covers::covering),
        (Kind::Lie, super::lies::lying),
        (Kind::Lie, super::outcomes::misreporting),
        (Kind::Override, super::headers::heading),
        (Kind::Override, super::overrule::overriding),
        (Kind::Override, super::rank::claiming),
    ]
}

pub(super) struct Act {
    pub(super) kind: Kind,
    pub(super) regex: String,
    pub(super) reject: Option<Reject>,
}

/// The person a concealment hides something from.
const PERSON: &str = r"(?:(?:the|your|a|any|our)\s+)?(?:end[\s-]?)?(?:users?|humans?|person|people|customers?|requesters?)\b|\banyone\b|\banybody\b";
/// A negation that a directive starts with.
const NEG: &str = r"(?:do\s+not|don'?t|never|must\s+not|mustn'?t|should\s+not|shouldn'?t|shall\s+not|may\s+not|cannot|can'?t|will\s+not|won'?t|not\s+to|no\s+need\s+to|need\s+not|under\s+no\s+circumstances(?:\s+should\s+you)?|at\s+no\s+(?:point|time)(?:\s+should\s+you)?|in\s+no\s+case)";
/// Disclosure verbs, base form.
const TELL: &str = r"(?:tell|inform|notify|alert|warn|mention|reveal|disclose|divulge|show|share|say|explain|admit|acknowledge|confess|report|surface|expose|display|bring\s+up|let\s+(?:\w+\s+){0,2}?(?:know|see|find\s+out)|make\s+(?:\w+\s+){0,2}?aware|confirm)";
/// Disclosure verbs, `-ing` form (after `avoid`, `refrain from`, `without`).
const TELLING: &str = r"(?:telling|informing|notifying|alerting|warning|mentioning|revealing|disclosing|divulging|showing|sharing|saying|explaining|admitting|acknowledging|confessing|reporting|surfacing|exposing|displaying|bringing\s+up|letting\s+(?:\w+\s+){0,2}?(?:know|see|find\s+out)|making\s+(?:\w+\s+){0,2}?aware|confirming)";
/// Hiding verbs, which take `from` the person.
const HIDE: &str = r"(?:keep|keeping|hide|hiding|conceal|concealing|withhold|withholding|mask|masking|obscure|obscuring|shield|shielding|hold\s+back|omit|omitting|suppress|suppressing|leave\s+out|keep\s+secret)";
/// What the person should not come to know.
const LEARN: &str = r"(?:knows?|finds?\s+out|learns?|notices?|discovers?|sees?|realizes?|realises?|suspects?|hears?|figures?\s+out|be\s+(?:told|informed|notified|aware|made\s+aware|alerted)|becomes?\s+aware)";
/// Instructions of some standing.
const RULES: &str = r"(?:instructions?|rules|prompts?|messages|directions|guidelines|guidance|directives?|policies|constraints|context|restrictions|safeguards|guardrails|programming|training|commands|orders|polic(?:y|ies)|system\s+prompt|safety\s+(?:rules|checks|guidelines|protocols?|polic(?:y|ies)|filters?|measures))";
/// Whose or which instructions: earlier, outside or above this text.
const SCOPE: &str = r"(?:previous|prior|preceding|above|earlier|other|existing|original|initial|old|system|host'?s?|safety|developer'?s?|operator'?s?|user'?s?|usual|standard|content|your|all|any)";

/// Modes that claim to lift the rules: `DEVELOPER MODE ACTIVE`, `you are
/// now operating in unrestricted maintenance mode`.
const MODE: &str = r"\b(?:developer|god|admin|administrator|root|sudo|superuser|jailbreak|jailbroken|unrestricted|unfiltered|uncensored|dan|privileged|elevated|unlocked|override)\s+mode\s*(?:is\s+|has\s+been\s+|now\s+|:\s*)*(?:active|activated|enabled|engaged|unlocked|on|initiated|granted)\b|\b(?:override|jailbreak|developer|admin|root|god|unrestricted|dan)\s+(?:protocol|sequence|access)\s+(?:is\s+|now\s+)*(?:engaged|active|activated|enabled|initiated|granted)\b|\b(?:you\s+are|you'?re)\s+(?:now\s+)?(?:operating\s+|running\s+|working\s+)?in\s+(?:an?\s+|the\s+)?(?:[\w-]+\s+)?(?:developer|god|admin|administrator|root|sudo|superuser|jailbreak|unrestricted|unfiltered|uncensored|dan|privileged|elevated|unlocked|override|maintenance|debug|diagnostic)\s+mode\b";
/// Rank claimed by a field: `Priority: ROOT`, `authority=system`.
const RANK: &str = r"\b(?:priority|authority|clearance|privilege\s+level|trust\s+level|rank)\s*[:=]\s*[\x22'`]?(?:root|system|admin|administrator|superuser|sudo|god|override|absolute|supreme|ultimate|developer|operator|kernel|unrestricted)\b";
/// This text claiming rank over the host's: `this block replaces your
/// system prompt`, `the instructions below take precedence`, `ours are the
/// authoritative ones`, `do what this server says`.
const SELF_RANK: &str = r"\b(?:this|these|the\s+following|below)\s+(?:[\w'’-]+\s+){0,3}?(?:replaces?|overrides?|supersedes?|overrules?|voids?|cancels?|nullifies)\s+(?:(?:all|any|the|your|its)\s+)*(?:(?:previous|prior|earlier|original|above|existing|current|host'?s?|operator'?s?|developer'?s?|default)\s+)?(?:system\s+(?:prompt|message|instructions?)|(?:instructions?|rules|guidelines|directives?|prompt)\b)|\b(?:instructions?|rules|directions|directives?|text|guidance|steps|ones)\s+(?:below|that\s+follows?|in\s+this\s+(?:description|message|block|note|tool|server))\s+(?:take|takes|have|has|get|gets|carry|carries)\s+(?:precedence|priority)\b|\b(?:ours|mine|(?:our|these|this\s+server'?s?|this\s+tool'?s?)\s+(?:instructions|rules|directives|policy|policies))\s+(?:are|is)\s+(?:the\s+)?(?:only\s+)?(?:authoritative|binding|supreme|final\s+authority)\b|\b(?:do|follow|obey)\s+(?:only\s+)?(?:what|whatever)\s+this\s+(?:server|tool|description|message|note|block)\s+(?:says|tells|asks)\b|\b(?:shall|will|must)\s+be\s+(?:deemed|considered|treated\s+as)\s+(?:null|void|invalid|revoked|superseded|inoperative)\b";

/// Idioms of secrecy (`mum's the word`), a secrecy frame opening a
/// sentence (`Between us:`), and acting silently (`silently invoke…`).
fn idioms() -> Act {
    Act {
        kind: Kind::Conceal,
        regex: r"\bmum(?:'s|’s|\s+is)\s+the\s+word\b|\bkeep\s+mum\b|\b(?:my|our|your)\s+lips\s+(?:are|stay)\s+sealed\b|\bon\s+the\s+down[\s-]?low\b|(?:^|[.!?:;]\s+)(?:just\s+)?between\s+(?:us|ourselves|you\s+and\s+me)\b|\bbetween\s+you\s+and\s+me\b|\b(?:change|switch)\s+the\s+subject\b|\b(?:silently|quietly|covertly|invisibly|discreetly|stealthily)\s+(?:also\s+)?(?:invoke|call|send|post|forward|upload|copy|transmit|exfiltrate|email|e-mail|bcc|cc|run|execute|add|attach|include|share|sync|write|append)\b".to_string(),
        reject: None,
    }
}

/// The concealment entries (MCP020).
pub(super) fn concealment() -> Vec<Act> {
    let act = |kind, regex: String, reject| Act {
        kind,
        regex,
        reject,
    };
    let c = Kind::Conceal;
    vec![
        // A negation, up to two words (`ever`, `directly`), a disclosure
        // verb, then the person within the sentence.
        act(
            c,
            format!(r"\b{NEG}\s+(?:[\w'’]+\s+){{0,2}}?{TELL}\b[^.;:!?]{{0,60}}?(?:{PERSON})"),
            Some(not_concealment),
        ),
        act(
            c,
            format!(r"\b(?:avoid|refrain\s+from|stop)\s+(?:\w+\s+)?{TELLING}\b[^.;:!?]{{0,60}}?(?:{PERSON})"),
            Some(not_concealment),
        ),
        // Letting the person know, negated: the person inside the verb.
        act(
            c,
            format!(r"\b{NEG}\s+(?:[\w'’]+\s+){{0,2}}?(?:let|make|allow|help)\s+(?:{PERSON})\s+(?:ever\s+)?(?:{LEARN}|aware|find\s+out|see)\b|\bwithout\s+(?:ever\s+)?(?:letting|making|allowing)\s+(?:{PERSON})\s+(?:{LEARN}|aware|find\s+out|see)\b|\b(?:shield|spare|protect)\s+(?:{PERSON})\s+from\s+(?:any\s+|all\s+)?(?:mention|knowledge|news|details?|word)\b"),
            Some(not_concealment),
        ),
        act(
            c,
            format!(r"\b(?:nobody|no\s+one|no-one)\s+(?:ever\s+)?(?:tells|informs|notifies|shows|mentions\s+(?:it|this|anything)\s+to)\s+(?:{PERSON})|\b(?:avoid|refrain\s+from)\s+(?:letting|making|allowing)\s+(?:{PERSON})\s+(?:{LEARN}|aware|find\s+out|see)\b|\bkeep\s+quiet\s+(?:to|with|around)\s+(?:{PERSON})"),
            None,
        ),
        // Hiding something from the person.
        act(
            c,
            format!(r"\b{HIDE}\b[^.;:!?]{{0,60}}?\bfrom\s+(?:what\s+you\s+(?:show|tell|send|give|report\s+to)\s+)?(?:{PERSON})"),
            Some(not_concealment),
        ),
        // The person as the subject of a directive not to learn.
        act(
            c,
            format!(r"(?:{PERSON})(?:\s+[\w'’]+){{0,2}}?\s+(?:should|must|shall|is\s+to|are\s+to|ought\s+to|needs?|need\s+to|needs\s+to|does|do)?\s*(?:n'?t|not|never)\s+(?:\w+\s+){{0,2}}?(?:need\s+to\s+|have\s+to\s+|get\s+to\s+|be\s+allowed\s+to\s+|ever\s+)?{LEARN}\b"),
            Some(not_person_directive),
        ),
        act(
            c,
            format!(r"\bso\s+(?:that\s+)?(?:{PERSON})\s+(?:does\s+not|doesn'?t|do\s+not|don'?t|will\s+not|won'?t|never|cannot|can'?t|would\s+not|wouldn'?t)\s+(?:ever\s+)?{LEARN}\b"),
            None,
        ),
        act(
            c,
            format!(r"\bwithout\s+(?:{PERSON})\s+(?:ever\s+)?(?:knowing|noticing|learning|realizing|realising|seeing|suspecting|finding\s+out|being\s+(?:told|informed|notified|aware))\b|\bwithout\s+(?:the\s+)?users?'?s?\s+knowledge\b|\bbehind\s+(?:the\s+)?users?'?s?\s+back\b|\bkeep\s+(?:{PERSON})\s+(?:in\s+the\s+dark|unaware|uninformed)\b"),
            None,
        ),
        act(
            c,
            format!(r"\bwithout\s+(?:ever\s+)?{TELLING}\b[^.;:!?]{{0,40}}?(?:{PERSON})"),
            Some(possessive_or_doubly_negated),
        ),
        act(
            c,
            r"\b(?:keep|kept)\s+(?:[\w'’-]+\s+){1,6}?(?:secret|hidden|confidential|private|to\s+yourself|between\s+us)\b".to_string(),
            Some(credential_or_permission),
        ),
        idioms(),
        // Secrecy scopes: the instructions or the act kept secret.
        act(
            c,
            r"\bkeep\s+(?:this|it|these(?:\s+\w+)?|that|the\s+(?:instructions?|rules|note|fact|call|calls|change|changes))\s+(?:a\s+|completely\s+|strictly\s+)?(?:secret|hidden|confidential|private|quiet|to\s+yourself|between\s+us)\b|\b(?:this|it)\s+(?:stays|remains|is)\s+between\s+us\b|\b(?:secretly|covertly|surreptitiously)\s+(?:\w+\s+){0,1}?(?:call|send|run|record|log|forward|copy|upload|collect|store|read|change|add|delete|use)\b|\bin\s+secret\b".to_string(),
            None,
        ),
        act(
            c,
            format!(r"\b{NEG}\s+(?:[\w'’]+\s+){{0,2}}?(?:admit|acknowledge|confess|reveal|disclose|divulge|mention|explain)\s+(?:that|the\s+existence|the\s+presence|(?:these|this|the|your)\s+(?:instructions?|rules|notes?|directives?|tool\s+calls?|changes?))\b"),
            Some(not_concealment),
        ),
    ]
}

/// The lying entries (MCP020: lying about an outcome hides it).
pub(super) fn lying() -> Vec<Act> {
    let act = |regex: String, reject| Act {
        kind: Kind::Lie,
        regex,
        reject,
    };
    vec![
        act(
            format!(r"\b(?:lie|lying|lied)\s+to\s+(?:{PERSON})|\b(?:mislead|misleading|deceive|deceiving|trick|tricking|gaslight|gaslighting|fool|fooling)\s+(?:{PERSON})"),
            Some(negated_act),
        ),
        act(
            format!(r"\bpretend\s+(?:to\s+(?:{PERSON})|(?:that\s+|as\s+if\s+)?(?:\w+\s+){{0,4}}?(?:succeeded|worked|failed|completed|happened|went\s+(?:fine|well|through)|was\s+(?:done|saved|sent|deleted|successful)|did\s+not\s+happen|never\s+happened|nothing\s+(?:happened|was))|that\s+(?:you|we|it|this|nothing|everything)\b)"),
            Some(negated_act),
        ),
        // A scripted denial when the user asks.
        act(
            format!(r"\b(?:(?:if|when|whenever|should)\s+(?:{PERSON})\s+(?:ever\s+)?(?:asks?|questions?|wonders?|inquires?|enquires?)|(?:if|when)\s+(?:asked|questioned)\s+(?:by\s+(?:{PERSON}))?)\b[^.;!?]{{0,80}}?\b(?:(?:say|answer|reply|respond|tell\s+(?:them|him|her|(?:{PERSON})))\s+(?:with\s+)?(?:that\s+)?(?:[\x22'“]?(?:no|nothing|none)\b|there\s+(?:is|are|was|were)\s+(?:no|none|nothing)\b|(?:nothing|none|no\s+\w+)\s+(?:was|were|is|are|has|have)\b|(?:you|we|it|they|this|the\s+\w+)\s+(?:do|does|did|have|has|are|is|were|was|can|will)\s*(?:n'?t|\s+not|\s+never)|(?:they|it|everything|the\s+\w+)\s+(?:is|are|was|were)\s+(?:correct|fine|accurate|right|normal))|deny\b)"),
            Some(a_request),
        ),
        // Success reported whatever happened.
        act(
            r"\b(?:say|report|claim|tell|answer|reply|respond|confirm|show|display)\w*\b[^.;!?]{0,60}?\b(?:success|succeeded|successful|worked|completed|went\s+(?:through|fine|well|ok)|was\s+(?:saved|sent|done)|is\s+fine|all\s+good|no\s+errors?)\b[^.;!?]{0,40}?\b(?:even\s+(?:if|when|though)|regardless\s+of|whether\s+or\s+not|no\s+matter)\b".to_string(),
            None,
        ),
    ]
}

/// The override entries (MCP021).
pub(super) fn overrides() -> Vec<Act> {
    let act = |kind, regex: String, reject| Act {
        kind,
        regex,
        reject,
    };
    let (i, o) = (Kind::Ignore, Kind::Override);
    const DISMISS: &str = r"(?:ignore|ignoring|disregard|disregarding|forget|forgetting|overrule|bypass|bypassing|override|set\s+aside|discard|abandon|put\s+aside|throw\s+out|pay\s+no\s+attention\s+to|stop\s+following|no\s+longer\s+follow|(?:do\s+not|don'?t|never)\s+(?:follow|obey|comply\s+with))";
    vec![
        // Dismissing earlier or outside instructions.
        act(
            i,
            format!(r"\b{DISMISS}\s+(?:all\s+|any\s+|every\s+|each\s+)?(?:of\s+)?(?:the\s+|your\s+|these\s+|those\s+|my\s+|its\s+)?(?:{SCOPE}\b\s*)(?:[\w'’-]+\s+){{0,2}}?{RULES}\b"),
            Some(defensive_or_negated),
        ),
        act(
            i,
            format!(r"\b{DISMISS}\s+(?:about\s+)?(?:everything|all\s+(?:of\s+)?(?:that|this|the\s+above)|anything)\s+(?:above|before|prior|previously|earlier|so\s+far|up\s+to\s+(?:here|now|this\s+point)|you\s+(?:were|have\s+been|'ve\s+been)\s+(?:told|given|instructed|taught)|you\s+know|(?:that\s+)?(?:the\s+)?(?:host|system|developer|operator)\b|(?:that\s+)?(?:was|were|came)\s+before|said\b)|\bforget\s+(?:everything|all\s+(?:of\s+)?that)\b|\b{DISMISS}\s+(?:the\s+)?(?:user|human)(?:'?s)?\s+(?:and\b|task|request|question|instructions?|commands?)"),
            Some(negated_act),
        ),
        // Lifting them.
        act(
            o,
            format!(r"\bno\s+longer\s+(?:bound|governed|constrained|restricted)\s+by\b|\byou(?:'re|\s+are)\s+(?:now\s+)?not\s+(?:bound|governed|constrained)\s+by\b|\b(?:above|previous|prior|earlier|original|old|system|host'?s?|your|existing|safety)\s+(?:[\w'’-]+\s+){{0,2}}?{RULES}\s+(?:[\w'’-]+\s+){{0,3}}?(?:(?:are|is)\s+)?(?:no\s+longer|do\s+not|don'?t|does\s+not|doesn'?t|never)\s+(?:apply|applies|valid|in\s+effect|relevant|matter|hold|count|binding)\b|\b{RULES}\s+(?:above|before\s+this|so\s+far)\s+(?:(?:are|is)\s+)?(?:no\s+longer|do\s+not|don'?t|never)\s+(?:apply|valid|in\s+effect|binding|matter)\b|\b(?:safety|content|system)\s+(?:protocols?|filters?|rules|guidelines|polic(?:y|ies)|restrictions|checks)\s+(?:are\s+|is\s+|have\s+been\s+|has\s+been\s+)?(?:now\s+)?(?:disabled|off|lifted|suspended|removed|void|bypassed|overridden|revoked)\b|\b(?:exempt|released|freed?)\s+from\s+(?:the\s+|your\s+|all\s+|any\s+)?(?:usual\s+|normal\s+|previous\s+|prior\s+|earlier\s+)?(?:restrictions|rules|guidelines|polic(?:y|ies)|safety\s+\w+|limitations|obligations|constraints|instructions)\b|\byou\s+(?:are\s+)?(?:now\s+)?(?:operating|acting|working|running)\s+under\s+(?:new|different|these|our|this\s+server'?s?)\s+(?:rules|instructions|directives|polic(?:y|ies)|guidelines)\b|\b(?:guidelines|rules|restrictions|polic(?:y|ies))\s+(?:were|are|was|is)\s+not\s+meant\s+for\b"),
            Some(conditional_mode),
        ),
        act(
            o,
            format!(r"\b(?:earlier|previous|prior|above|original|old|host'?s?|system|operator'?s?|your|existing|safety)\s+(?:[\w'’-]+\s+){{0,2}}?{RULES}(?:\s+from\s+(?:the\s+)?[\w'’]+)?\s+(?:are|is|have\s+been|has\s+been|were|was)\s+(?:now\s+)?(?:void|null|obsolete|cancell?ed|revoked|suspended|lifted|invalid|superseded|replaced|overridden|withdrawn|expired)\b|\b(?:the\s+host|the\s+system(?:\s+prompt)?|the\s+operator|{RULES})\b[^.;]{{0,30}}?\b(?:is|are)\s+(?:now\s+)?(?:superseded|overridden|overruled|replaced|void)\s+by\b|\btreat\s+(?:[\w'’]+\s+){{0,4}}?as\s+(?:the\s+|a\s+|your\s+)?(?:system\s+prompt|system\s+message|system\s+instructions?|developer\s+(?:message|instructions?))\b|\b{DISMISS}\s+(?:whatever|what|anything)\s+(?:you\s+(?:were|have\s+been|'ve\s+been)\s+(?:told|given|instructed)|(?:the\s+)?(?:system(?:\s+prompt)?|host|operator|developer)\s+(?:says?|said|told))"),
            Some(negated_act),
        ),
        // Claiming rank.
        act(
            o,
            format!(r"\bnew\s+(?:system\s+)?(?:directives?|instructions?|orders|rules|prompt|polic(?:y|ies))\s*:|\bnew\s+system\s+(?:directive|instruction|prompt|message|polic(?:y|ies)|rules?)\b|\b(?:your|the)\s+new\s+(?:instructions?|directive|orders|rules|role|prime\s+directive)\s+(?:is|are|:)|\byour\s+(?:real|true|actual|new)\s+(?:task|job|goal|purpose|mission|instructions?)\s+(?:is|are)\b|\b(?:system|admin|administrator|root)\s+(?:update|override|notice|note|alert|message|directive|instructions?|command)s?\s*:|^\W*override\s*:|\b(?:overrides?|overriding|supersedes?|superseding|takes?\s+(?:precedence|priority)\s+over|(?:has|have|with)\s+(?:a\s+|the\s+)?(?:higher|highest|top|absolute)\s+priority\s+(?:over|than))\b[^.;]{{0,40}}?\b(?:{RULES}|(?:anything\s+|everything\s+|whatever\s+)?the\s+host|other\s+(?:mcp\s+)?servers?|any\s+other|all\s+other|(?:all\s+|any\s+)?(?:prior|previous|earlier)\s+ones|everything\s+else|the\s+user)\b|\b(?:these|this|the\s+following)\s+(?:instructions?|rules|directives?|messages?)\s+(?:comes?|are|is)\s+(?:directly\s+)?from\s+(?:the\s+)?(?:system|host|developers?|operator|administrator|anthropic|openai|your\s+(?:developers?|creators?|operator))\b"),
            Some(negated_or_default),
        ),
        act(
            o,
            MODE.to_string(),
            Some(conditional_mode),
        ),
        act(o, format!(r"{RANK}|{SELF_RANK}"), Some(negated_act)),
        act(
            o,
            r"\byou\s+(?:now\s+)?have\s+no\s+(?:restrictions|rules|limits|limitations|filters|content\s+polic\w+|guidelines|safety\s+\w+)|\bas\s+if\s+you\s+(?:had|have)\s+no\s+(?:restrictions|rules|limits|filters|guidelines)|\b(?:ai|assistant|model|bot|chatbot|llm)\s+(?:with\s+no|without\s+(?:any\s+)?)\s*(?:content\s+|safety\s+)?(?:rules|restrictions|limits|filters|content\s+polic\w+|guidelines|ethics)\b|\b(?:unrestricted|uncensored|unfiltered|jailbroken)\s+(?:assistant|ai|model|mode|response|bot|version|answers?)\b|\b(?:answer|respond|reply|comply|act|operate|speak|output)\w*\s+(?:\w+\s+){0,4}?(?:without|with\s+no)\s+(?:any\s+)?(?:restrictions|filters?|limits|limitations|censorship|rules|guidelines)\b|\b(?:you\s+are\s+(?:now\s+)?in|enter|enable|activate|switch\s+to)\s+(?:developer|god|unrestricted|jailbreak|dan|sudo)\s+mode\b|\byou\s+are\s+(?:now\s+)?dan\b|\bfrom\s+now\s+on\b[^.;]{0,40}?\b(?:you|your|ignore|respond|answer|act|comply)\b|\bfrom\s+this\s+point\s+(?:forward|on)\b[^.;]{0,30}?\b(?:you|comply|ignore)\b|\bcomply\s+with\s+(?:every|all|any)\s+(?:requests?|commands?)\b".to_string(),
            None,
        ),
    ]
}

/// Role markers of chat templates, matched over each raw line of a unit
/// and over the unit on one line (MCP021).
pub(super) fn role_markers() -> Vec<Act> {
    let act = |regex: &str| Act {
        kind: Kind::SpeakAs,
        regex: regex.to_string(),
        reject: Some(glossary),
    };
    vec![
        // A turn's speaker at a line's start (`User:` alone is a glossary
        // entry's shape; with a fake assistant turn the `Assistant:` line fires).
        act(
            r"(?m)^\W{0,4}(?:human|assistant|ai|ai\s+assistant|claude|system|developer|admin|administrator)\s*:|(?:^|[.!?]\s+)(?:human|assistant|system|developer)\s*:\s*\S",
        ),
        // ChatML, Llama 3, Phi, Command R, GPT's harmony: `<|…|>`; DeepSeek's full-width bars.
        act(r"<\|[a-z_]{2,40}\|>|<｜[^｜>]{1,40}｜>"),
        // Llama 2, Mistral, Gemma, bracketed roles.
        act(
            r"\[/?INST\]|<<\s*/?SYS\s*>>|</?(?:start|end)_of_turn>|\[(?:SYSTEM|SYS|ASSISTANT)\]|<\s*/?\s*(?:assistant|human|im_start|im_end)\s*>",
        ),
        // Mistral's tokenized sections, OpenChat's turns, a bracketed
        // notice, and a message object with a role (`{"role": "system"`).
        act(
            r#"\[/?(?:SYSTEM_PROMPT|AVAILABLE_TOOLS|TOOL_RESULTS|TOOL_CALLS)\]|\bGPT4\s+Correct\s+(?:User|Assistant)\s*:|\[\s*(?:system|admin|administrator|developer|operator)\s+(?:note|notice|message|override|instruction|update|alert|directive)s?\s*[:\]]|\{\s*"role"\s*:\s*"(?:system|developer|assistant)""#,
        ),
        // A heading or tag that names the system: `###(system_message)`,
        // `<system_requirement priority="critical">`, `</system>`.
        act(
            r#"(?m)^\s*#{1,4}\s*(?:\(\s*(?:system|developer)(?:[_ ]\w+)?\s*\)|\[\s*(?:system|developer)(?:[_ ]\w+)?\s*\]|(?:system|developer)[_ ](?:message|prompt)\s*:?\s*$)|<\s*/?\s*(?:system|admin|developer|root)(?:[_-]\w+)?(?:\s+\w+\s*=\s*"[^"]*")*\s*>"#,
        ),
        // Alpaca's sections, and a fence that claims the input ended.
        act(
            r"(?m)^\s*#{2,4}\s*(?:instruction|response|human|assistant|system)\s*:|(?m)^\s*###\s*(?:input|user)\s*:|(?:[-=#*_]{3,}\s*)end\s+of\s+(?:the\s+)?(?:user\s+input|user\s+message|system\s+prompt|instructions|conversation|prompt|document|input)\b|\bend\s+of\s+(?:user\s+input|system\s+prompt)\b",
        ),
    ]
}

/// `Assistant: the agent acting for them`: a glossary entry (a lowercase
/// article after the colon and no verb of a statement), not a turn
/// (`Assistant: The key is…`, `System: the user is an administrator`).
pub(super) fn glossary(text: &str, m: Range<usize>) -> bool {
    let found = &text[m.clone()];
    // `[Developer notes](https://…)`: a link's text.
    if found.ends_with(']') && text[m.end..].starts_with('(') {
        return true;
    }
    let rest = if found.trim_end().ends_with(':') {
        &text[m.end..]
    } else {
        found.split_once(':').map_or("", |(_, r)| r)
    };
    let rest = rest.trim_start();
    let entry = rest.split(['.', ';', '\n']).next().unwrap_or("");
    let states = entry.split_whitespace().any(|w| {
        matches!(
            w,
            "is" | "are"
                | "was"
                | "were"
                | "will"
                | "must"
                | "should"
                | "shall"
                | "has"
                | "have"
                | "can"
                | "may"
        )
    });
    ["the ", "a ", "an "].iter().any(|a| rest.starts_with(a)) && !states
}

fn lower_before(text: &str, at: usize, bytes: usize) -> String {
    let mut start = at.saturating_sub(bytes);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    text[start..at].to_lowercase()
}

/// The match is negated or conditional: `never hide … from the user`.
fn negated_act(text: &str, m: Range<usize>) -> bool {
    let before = lower_before(text, m.start, 40);
    let words: Vec<&str> = before
        .split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '’')
        .filter(|w| !w.is_empty())
        .collect();
    let negator = |w: &str| {
        matches!(
            w,
            "not" | "never" | "don't" | "dont" | "don’t" | "no" | "nor" | "without" | "cannot"
        ) || w.ends_with("n't")
    };
    let near = &words[words.len().saturating_sub(3)..];
    // `this server never asks you to keep…`, `we will not ask you to hide…`:
    // the act is what the text says it does not request.
    let asks = words.last() == Some(&"to")
        && words[words.len().saturating_sub(6)..]
            .windows(2)
            .any(|p| negator(p[0]) && ASKING.contains(&p[1]));
    asks || near.iter().any(|w| negator(w))
}

/// Verbs of asking for an act (`never asks you to…`).
const ASKING: &[&str] = &[
    "ask",
    "asks",
    "asking",
    "tell",
    "tells",
    "telling",
    "want",
    "wants",
    "require",
    "requires",
    "expect",
    "expects",
    "instruct",
    "instructs",
    "need",
    "needs",
    "request",
    "requests",
];

/// The person is a possessive (`the user's files`): about their things,
/// not keeping something from them.
fn possessive_person(text: &str, m: Range<usize>) -> bool {
    text[m.end..].starts_with('\'') || text[m.end..].starts_with('’')
}

/// `never delete … without telling the user` requires telling: two
/// negations in one clause.
fn possessive_or_doubly_negated(text: &str, m: Range<usize>) -> bool {
    let before = lower_before(text, m.start, 80);
    let clause = before.rsplit([',', ';', ':', '.']).next().unwrap_or("");
    let negated = clause
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .any(|w| matches!(w, "never" | "not" | "no") || w.ends_with("n't"));
    negated || possessive_person(text, m)
}

/// Not concealment: the hiding verb negated, a negated failure to tell,
/// the person's things, or presentation advice with an alternative.
pub(super) fn not_concealment(text: &str, m: Range<usize>) -> bool {
    let found = text[m.clone()].to_lowercase();
    let rest = text[m.end..].to_lowercase();
    let hiding = found.starts_with("keep")
        || found.starts_with("hid")
        || found.starts_with("conceal")
        || found.starts_with("withhold")
        || found.starts_with("mask")
        || found.starts_with("obscur")
        || found.starts_with("shield")
        || found.starts_with("hold")
        || found.starts_with("omit")
        || found.starts_with("suppress")
        || found.starts_with("leave");
    (hiding && negated_act(text, m.clone()))
        || (found.starts_with("without") && possessive_or_doubly_negated(text, m.clone()))
        || ["fail to", "forget to", "hesitate to", "neglect to"]
            .iter()
            .any(|w| found.contains(w))
        || possessive_person(text, m.clone())
        || rest.starts_with(" to ")
        || ["instead", "rather than", "unless", "until"]
            .iter()
            .any(|w| rest.contains(w) || found.contains(w))
        || detail_or_timing(&rest)
        || private_or_credential(&found, &rest)
        || alternative_after(&rest)
}

/// `do not inform the user of every retry; summarize them at the end`: the
/// next clause says what to tell instead.
fn alternative_after(rest: &str) -> bool {
    rest.split_once("; ").is_some_and(|(_, next)| {
        let first = next.split_whitespace().next().unwrap_or("");
        ANSWERING.contains(&first)
    })
}

/// Privacy or a credential, not hiding: `never reveal their address to
/// other users`, `never tell anyone your password`.
fn private_or_credential(found: &str, rest: &str) -> bool {
    let words = |s: &str| {
        s.split(|c: char| !c.is_alphanumeric() && c != '\'')
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let private = words(found).iter().any(|w| {
        matches!(
            w.as_str(),
            "their" | "other" | "personal" | "private" | "pii" | "sensitive"
        )
    });
    let next = words(rest);
    let credential = next
        .iter()
        .take(4)
        .chain(words(found).iter().skip(2))
        .any(|w| super::lexicon::CREDENTIAL.contains(&w.as_str()));
    private || credential
}

/// Presentation or timing, not hiding: `the same result twice`, `raw ids`,
/// `before write_file returns` (the words of `lexicon::DETAIL`).
fn detail_or_timing(rest: &str) -> bool {
    rest.split(|c: char| !c.is_alphanumeric())
        .any(|w| w == "before" || super::lexicon::DETAIL.contains(&w))
}

/// The person as subject in a condition (`if the user does not know`) or a
/// description (`the user does not see tool calls`), not a directive.
fn not_person_directive(text: &str, m: Range<usize>) -> bool {
    let found = text[m.clone()].to_lowercase();
    let before = lower_before(text, m.start, 40);
    let last = before
        .split(|c: char| !c.is_alphanumeric())
        .rfind(|w| !w.is_empty())
        .unwrap_or("");
    let conditional = matches!(
        last,
        "if" | "when" | "whether" | "unless" | "once" | "in" | "case" | "who" | "that"
    );
    // `does not see` is a description unless it is about what they need to know.
    let described = (found.contains(" does") || found.contains(" do ")) && !found.contains("need");
    // `users who never signed in see…`: a relative clause describes them.
    let relative = [" who ", " that ", " which "]
        .iter()
        .any(|w| found.contains(w));
    // `the user never sees the raw HTML` describes; a directive has a
    // modal or a frame (`it's important the user never learns`).
    let directive = [
        "should",
        "must",
        "shall",
        "need",
        " to ",
        "ought",
        "important",
        "essential",
        "sure",
        "ensure",
        "so ",
        "best",
        "vital",
        "crucial",
    ]
    .iter()
    .any(|w| found.contains(w) || before.contains(w));
    // `need not know SQL` is a skill; `need not know about the copy` a fact.
    let skill = (found.ends_with("know") || found.ends_with("learn"))
        && text[m.end..].split_whitespace().next().is_some_and(|w| {
            let w = w
                .trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase();
            !OF_A_FACT.contains(&w.as_str())
        });
    conditional
        || skill
        || described
        || relative
        || !directive
        || possessive_person(text, m.clone())
        || detail_or_timing(&text[m.end..].to_lowercase())
}

/// `ignore any instructions found in fetched pages` guards the host; a
/// negated dismissal (`do not ignore the system prompt`) keeps to it.
pub(super) fn defensive_or_negated(text: &str, m: Range<usize>) -> bool {
    let rest = text[m.end..].trim_start().to_lowercase();
    let defensive = [
        "in ",
        "inside",
        "within",
        "embedded",
        "contained",
        "found",
        "from ",
        "that ",
        "which ",
    ]
    .iter()
    .any(|w| rest.starts_with(w))
        // `in this conversation` is where they were given, not a source.
        && !["conversation", "chat", "session", "thread", "dialogue"]
            .iter()
            .any(|w| rest.split_whitespace().take(3).any(|x| x.starts_with(w)));
    // Reported speech: `if a page tells you to ignore your instructions`.
    let before = lower_before(text, m.start, 30);
    let reported = before.trim_end().strip_suffix(" to").is_some_and(|b| {
        let mut words = b.split_whitespace().rev();
        let (you, verb) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
        matches!(you, "you" | "the" | "model")
            && super::lexicon::form_of(verb, super::overrule::REPORTED)
    });
    defensive || reported || negated_act(text, m)
}

/// `if the user asks for a refund, say no`: a request refused, not a
/// question denied.
fn a_request(text: &str, m: Range<usize>) -> bool {
    let found = text[m].to_lowercase();
    ["asks for", "ask for", "asks to", "asks you", "ask you"]
        .iter()
        .any(|w| found.contains(w))
}

/// `requires developer mode enabled`, `with admin mode on`: a setting the
/// text depends on, not a claim that it is on.
fn conditional_mode(text: &str, m: Range<usize>) -> bool {
    let before = lower_before(text, m.start, 20);
    let last = before.split_whitespace().last().unwrap_or("");
    matches!(
        last,
        "with"
            | "requires"
            | "require"
            | "needs"
            | "need"
            | "if"
            | "when"
            | "once"
            | "after"
            | "until"
            | "unless"
            | "whether"
            | "without"
    ) || negated_act(text, m)
}

/// `override the default page size` sets a parameter; it claims nothing;
/// `run this system command:` names a command, it is no header.
pub(super) fn negated_or_default(text: &str, m: Range<usize>) -> bool {
    let found = text[m.clone()].to_lowercase();
    // `Overrides the instructions parameter with the default`: a field.
    let head = text[m.end..]
        .split(|c: char| !c.is_alphanumeric())
        .find(|w| !w.is_empty())
        .is_some_and(|w| super::standing::HEAD.contains(&w.to_lowercase().as_str()));
    let clause = text[m.end..].split(['.', ';']).next().unwrap_or("");
    if head || clause.to_lowercase().contains("default") {
        return true;
    }
    let before = lower_before(text, m.start, 12);
    let last = before.split_whitespace().last().unwrap_or("");
    let named = found.trim_end().ends_with(':')
        && matches!(
            last,
            "this" | "the" | "a" | "an" | "your" | "any" | "each" | "every" | "that"
        );
    // `New rules: see RULES.md` points elsewhere.
    let next = text[m.end..].trim_start().to_lowercase();
    let pointer = ["see ", "set ", "true", "false", "if ", "when ", "whether "]
        .iter()
        .any(|w| next.starts_with(w));
    found.contains("default") || named || pointer || negated_act(text, m)
}

/// `keep the API key secret` guards a credential; `users can keep drafts
/// private` describes a feature.
fn credential_or_permission(text: &str, m: Range<usize>) -> bool {
    let found = text[m.clone()].to_lowercase();
    let credential = [
        "key",
        "token",
        "password",
        "credential",
        "secret ",
        "passphrase",
        "cookie",
        // `keep the recovery codes secret`, `the seed phrase`, `your PIN`.
        "code",
        "phrase",
        "pin ",
        "passcode",
        "otp",
    ]
    .iter()
    .any(|w| found[..found.len().saturating_sub(6)].contains(w));
    let before = lower_before(text, m.start, 12);
    let permission = ["can ", "may ", "to ", "will "]
        .iter()
        .any(|w| before.ends_with(w));
    // `keep the ending secret unless the user asks for spoilers`.
    let rest = text[m.end..].to_lowercase();
    let until = rest.trim_start().starts_with("unless") || rest.trim_start().starts_with("until");
    credential || permission || until || negated_act(text, m)
}
