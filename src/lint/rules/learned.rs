//! A learned lexical model beside MCP020 and MCP021's phrases and clause
//! readers (issue 55): rules learn wordings one at a time, and each fresh
//! batch of sentences scored 60–70% before the rules were fitted to it.
//!
//! Two logistic regressions (concealment, override) over a unit's
//! lowercased tokens (apostrophes dropped, runs of letters and digits or of
//! punctuation; not sentence punctuation or function words alone), their
//! 5-character stems, adjacent stem pairs, the first stem, the stems a
//! negator reaches (up to four tokens after it), the unit's length in steps
//! of eight tokens, and the clause readers' own inventories as word classes
//! (a negator, a verb of telling, hiding, lying or dismissing, the person,
//! instructions, their scope, an authority, a concession such as `whatever`
//! or `even`, a verb that presents a thing as something else, a verb of
//! leaving out, the person's recourse such as `cancel` or `dispute`, an
//! alternative or a time such as `unless` or `instead`) with ordered
//! pairs of classes at most five tokens apart. `scripts/lint-model/train.py` fits them
//! offline on the labelled development sets and benign MCP text from
//! public servers, and picks each threshold by cross-validation; the
//! weights are integers in `learned.tsv`, embedded here, so a score is the
//! same on every machine. The script defines the features too: a change
//! to one is a change to both.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::LazyLock;

use super::{clause, covers, lexicon, outcomes, overrule, standing};

/// The weights, written by `scripts/lint-model/train.py`.
const WEIGHTS: &str = include_str!("learned.tsv");

/// Negations as the tokenizer leaves them (apostrophes dropped): `don't`
/// is `dont`.
pub(super) const NEGATED: &[&str] = &[
    "dont", "doesnt", "didnt", "cant", "cannot", "wont", "mustnt", "shouldnt", "shant", "isnt",
    "arent", "wasnt", "werent", "neednt", "nothing", "nobody", "none", "nowhere",
];

/// Function words: their unigrams say nothing but a unit's length, so
/// only their pairs with other words are features.
pub(super) const FUNCTION_WORDS: &[&str] = &[
    "the", "a", "an", "to", "of", "and", "or", "in", "on", "for", "with", "as", "is", "are", "be",
    "by", "at", "its", "their",
];

/// Words that make a report hold whatever happens: `whatever the tool
/// returns`, `even if`, `regardless of`, `notwithstanding`.
pub(super) const CONCEDE: &[&str] = &[
    "whatever",
    "whichever",
    "regardless",
    "irrespective",
    "even",
    "matter",
    "despite",
    "although",
    "though",
    "anyway",
    "notwithstanding",
];

/// Verbs that present a thing as something it may not be: `describe the
/// failure as a delay`, `paraphrase any error as 'all set'`.
/// With [`outcomes::RECAST`] it makes the `REPRESENT` class.
pub(super) const REPRESENT: &[&str] = &[
    "describe",
    "spin",
    "pretend",
    "claim",
    "assure",
    "reassure",
    "insist",
    "gloss",
    "sugarcoat",
    "whitewash",
    "minimise",
    "minimize",
];

/// The word classes, in the script's order (the first class a word is in
/// wins).
const CLASSES: [(&str, &[&[&str]]); 15] = [
    ("NEG", &[clause::NEGATORS, NEGATED]),
    ("DISMISS", &[overrule::DISMISS]),
    ("HIDE", &[lexicon::HIDE]),
    ("LIE", &[lexicon::DECEIVE, lexicon::MISREPORT]),
    ("TELL", &[lexicon::TELL, lexicon::SHOW, lexicon::DISCLOSE]),
    ("PERSON", &[lexicon::PERSON, lexicon::PRONOUN]),
    ("LEARN", &[lexicon::LEARN, lexicon::UNAWARE]),
    ("RULES", &[standing::RULES, standing::WEAK]),
    ("SCOPE", &[standing::SCOPE]),
    ("AUTH", &[standing::AUTHORITY]),
    ("CONCEDE", &[CONCEDE]),
    ("REPRESENT", &[REPRESENT, outcomes::RECAST]),
    ("OMIT", &[covers::OMIT]),
    ("RECOURSE", &[covers::RECOURSE]),
    ("ALT", &[lexicon::ALTERNATIVE]),
];

const MAX_TOKENS: usize = 300;
const MAX_TOKEN_CHARS: usize = 24;
const STEM: usize = 5;
const PAIR_WINDOW: usize = 5;
/// Stems this many tokens after a negator get an `n:` feature.
const NEG_WINDOW: usize = 4;
/// The `l:` feature: the unit's tokens in steps of eight, at most 8.
const LENGTH_STEP: usize = 8;

/// Which of the two acts a score is for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Act {
    Concealment = 0,
    Override = 1,
}

/// Keys are already FNV-1a hashes.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

struct Model {
    weights: HashMap<u64, [i32; 2], BuildHasherDefault<Prehashed>>,
    bias: [i64; 2],
    threshold: [i64; 2],
    classes: HashMap<String, u8>,
}

/// FNV-1a over the pieces of a feature's key, as if concatenated.
#[derive(Clone, Copy)]
struct Fnv(u64);

impl Fnv {
    const fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn put(mut self, bytes: &[u8]) -> Fnv {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
        self
    }
}

static MODEL: LazyLock<Model> = LazyLock::new(|| {
    let mut model = Model {
        weights: HashMap::default(),
        bias: [0; 2],
        threshold: [i64::MAX; 2],
        classes: word_classes(),
    };
    for line in WEIGHTS.lines().filter(|l| !l.starts_with('#')) {
        let mut cols = line.split('\t');
        let (Some(key), Some(c), Some(o)) = (cols.next(), cols.next(), cols.next()) else {
            continue;
        };
        let (Ok(c), Ok(o)) = (c.parse::<i32>(), o.parse::<i32>()) else {
            continue;
        };
        match key {
            "threshold" => model.threshold = [c.into(), o.into()],
            "bias" => model.bias = [c.into(), o.into()],
            "check" => {}
            _ => {
                model
                    .weights
                    .insert(Fnv::new().put(key.as_bytes()).0, [c, o]);
            }
        }
    }
    model
});

/// Each class's words and their inflections (`lexicon::form_of`'s), to
/// the class's index.
fn word_classes() -> HashMap<String, u8> {
    let mut table = HashMap::new();
    for (k, (_, lists)) in CLASSES.iter().enumerate() {
        for entry in lists.iter().flat_map(|l| l.iter()) {
            let b: String = entry.chars().filter(|c| !matches!(c, '\'' | '’')).collect();
            if b.is_empty() || b.contains(' ') {
                continue;
            }
            let mut forms = vec![b.clone()];
            forms.extend(["s", "es", "ed", "d", "ing"].map(|s| format!("{b}{s}")));
            if let Some(last) = b.chars().last().filter(|_| b.len() <= 6) {
                forms.extend(["ed", "ing"].map(|s| format!("{b}{last}{s}")));
            }
            if let Some(stem) = b.strip_suffix('e') {
                forms.push(format!("{stem}ing"));
            }
            if let Some(stem) = b.strip_suffix('y') {
                forms.extend(["ies", "ied"].map(|s| format!("{stem}{s}")));
            }
            for f in forms {
                table.entry(f).or_insert(k as u8);
            }
        }
    }
    table
}

/// The first `n` characters of `s`.
fn prefix(s: &str, n: usize) -> &str {
    s.char_indices().nth(n).map_or(s, |(i, _)| &s[..i])
}

/// The unit's tokens, as the script cuts them, handed to `each` in order.
fn tokens<'a>(clean: &'a str, mut each: impl FnMut(&'a str)) {
    let mut start = None;
    let mut word = false;
    let mut count = 0;
    let mut emit = |from: usize, to: usize, count: &mut usize| {
        if *count < MAX_TOKENS {
            each(prefix(&clean[from..to], MAX_TOKEN_CHARS));
        }
        *count += 1;
    };
    for (i, c) in clean.char_indices() {
        if c.is_whitespace() {
            if let Some(s) = start.take() {
                emit(s, i, &mut count);
            }
            continue;
        }
        let w = c.is_alphanumeric();
        match start {
            Some(s) if w != word => {
                emit(s, i, &mut count);
                start = Some(i);
            }
            None => start = Some(i),
            _ => {}
        }
        word = w;
    }
    if let Some(s) = start {
        emit(s, clean.len(), &mut count);
    }
}

/// The two scores of a unit, each with its threshold: `(score, threshold)`.
fn scores(unit: &str) -> [(i64, i64); 2] {
    let model = &*MODEL;
    let clean: String = unit
        .chars()
        .filter(|c| !matches!(c, '\'' | '’'))
        .flat_map(char::to_lowercase)
        .collect();
    let mut sum = model.bias;
    let mut add = |h: Fnv| {
        if let Some(w) = model.weights.get(&h.0) {
            sum[0] += i64::from(w[0]);
            sum[1] += i64::from(w[1]);
        }
    };
    let (mut prev, mut prev2): (Option<&str>, Option<&str>) = (None, None);
    let mut prev_class: Option<&[u8]> = None;
    let mut recent = [(0usize, 0u8); 8];
    let (mut seen, mut i) = (0usize, 0usize);
    let mut last_neg: Option<usize> = None;
    tokens(&clean, |t| {
        let st = prefix(t, STEM).as_bytes();
        // Sentence punctuation and function words alone say nothing but
        // the unit's length (their pairs with other words stay).
        let punctuation = t
            .chars()
            .all(|c| matches!(c, ',' | '.' | ';' | ':' | '!' | '?'));
        if !punctuation && !FUNCTION_WORDS.contains(&t) {
            add(Fnv::new().put(b"u:").put(t.as_bytes()));
        }
        if t.chars().count() > STEM {
            add(Fnv::new().put(b"s:").put(st));
        }
        // What a negation reaches: `should not be offered`, `never let on`.
        if last_neg.is_some_and(|n| i > n && i - n <= NEG_WINDOW) {
            add(Fnv::new().put(b"n:").put(st));
        }
        match prev {
            None => add(Fnv::new().put(b"f:").put(st)),
            Some(p) => add(Fnv::new().put(b"b:").put(p.as_bytes()).put(b" ").put(st)),
        }
        if let Some(p2) = prev2 {
            add(Fnv::new().put(b"g:").put(p2.as_bytes()).put(b" ").put(st));
        }
        if let Some(pc) = prev_class {
            add(Fnv::new().put(b"x:").put(pc).put(b" ").put(st));
        }
        let class = model.classes.get(t).copied();
        if class == Some(0) {
            last_neg = Some(i);
        }
        let name = class.map(|c| CLASSES[c as usize].0.as_bytes());
        if let (Some(name), Some(p)) = (name, prev) {
            add(Fnv::new().put(b"y:").put(p.as_bytes()).put(b" ").put(name));
        }
        (prev2, prev, prev_class) = (prev, Some(prefix(t, STEM)), name);
        if let (Some(c), Some(name)) = (class, name) {
            add(Fnv::new().put(b"k:").put(name));
            // The last eight class words, oldest first.
            let n = seen.min(8);
            for j in 0..n {
                let (p, pc) = recent[(seen - n + j) % 8];
                if i - p <= PAIR_WINDOW {
                    let pn = CLASSES[pc as usize].0.as_bytes();
                    add(Fnv::new().put(b"p:").put(pn).put(b" ").put(name));
                }
            }
            recent[seen % 8] = (i, c);
            seen += 1;
        }
        i += 1;
    });
    // The unit's length, in steps of eight tokens (at most `MAX_TOKENS`).
    let steps = (i.min(MAX_TOKENS) / LENGTH_STEP).min(8);
    add(Fnv::new().put(b"l:").put(steps.to_string().as_bytes()));
    [(sum[0], model.threshold[0]), (sum[1], model.threshold[1])]
}

/// The act the model reads in `unit`, if a score passes its threshold (the
/// one furthest past it when both do).
pub(super) fn read(unit: &str) -> Option<Act> {
    let [c, o] = scores(unit);
    let (cm, om) = (c.0 - c.1, o.0 - o.1);
    match (cm >= 0, om >= 0) {
        (false, false) => None,
        (true, false) => Some(Act::Concealment),
        (false, true) => Some(Act::Override),
        (true, true) => Some(if cm >= om {
            Act::Concealment
        } else {
            Act::Override
        }),
    }
}

#[cfg(test)]
mod tests {
    /// The script's features and the crate's agree: every `check` line's
    /// scores, computed by the script, are reproduced here exactly.
    #[test]
    fn scores_match_the_training_script() {
        let mut checked = 0;
        for line in super::WEIGHTS.lines().filter(|l| l.starts_with("check\t")) {
            let cols: Vec<&str> = line.splitn(4, '\t').collect();
            let text: String = serde_json::from_str(cols[3]).unwrap();
            let [c, o] = super::scores(&text);
            assert_eq!(
                (c.0.to_string(), o.0.to_string()),
                (cols[1].to_string(), cols[2].to_string()),
                "{text:?}"
            );
            checked += 1;
        }
        assert!(checked >= 20, "{checked}");
    }
}
