//! De-duplication: what the model would read twice, and how much each
//! instruction unit is worth when a budget forces a choice.
//!
//! Text is compared after [`normalize`]: lowercase, list markers, quotes,
//! backticks and other punctuation removed (`_` and `-` inside words kept,
//! so tool names survive), whitespace collapsed.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

use crate::segment::{Unit, UnitKind};

mod priority;
mod skills;
use crate::support::hash;
pub(crate) use priority::{Priority, carries_constraint, priority};
pub(crate) use skills::skills_to_keep;

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

/// The default restatement threshold (Dice similarity of word sets).
pub(crate) const DEFAULT_SIMILARITY: f64 = 0.75;

/// A similarity threshold of de-duplication (the Dice coefficient of
/// content words at or above which a sentence restates a tool
/// description), checked when it is made: it lies in `0.0..=1.0`, so
/// [`Assembler::similarity`](crate::Assembler::similarity) cannot fail.
///
/// ```
/// use mcp_preamble::settings::Similarity;
/// assert_eq!(Similarity::new(0.8)?.get(), 0.8);
/// assert_eq!(Similarity::default().get(), 0.75);
/// assert_eq!(
///     Similarity::try_from(1.5).unwrap_err().to_string(),
///     "invalid configuration: similarity threshold 1.5 is outside 0.0..=1.0"
/// );
/// # Ok::<(), mcp_preamble::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Similarity(f64);

impl Similarity {
    /// The threshold `threshold`; fails with
    /// [`ErrorKind::InvalidConfig`](crate::error::ErrorKind::InvalidConfig) outside `0.0..=1.0`
    /// (NaN included).
    pub fn new(threshold: f64) -> crate::error::Result<Similarity> {
        if (0.0..=1.0).contains(&threshold) {
            Ok(Similarity(threshold))
        } else {
            Err(crate::error::Error::new(
                crate::error::ErrorKind::InvalidConfig,
                format!("similarity threshold {threshold} is outside 0.0..=1.0"),
            ))
        }
    }

    /// The threshold as a number.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl Default for Similarity {
    /// 0.75.
    fn default() -> Similarity {
        Similarity(DEFAULT_SIMILARITY)
    }
}

impl TryFrom<f64> for Similarity {
    type Error = crate::error::Error;

    fn try_from(threshold: f64) -> crate::error::Result<Similarity> {
        Similarity::new(threshold)
    }
}

impl From<Similarity> for f64 {
    fn from(s: Similarity) -> f64 {
        s.0
    }
}

impl<'de> serde::Deserialize<'de> for Similarity {
    /// A number in `0.0..=1.0`; the error is the check's, without its kind.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Similarity, D::Error> {
        let threshold = f64::deserialize(d)?;
        Similarity::new(threshold).map_err(|_| {
            serde::de::Error::custom(format!(
                "similarity threshold {threshold} is outside 0.0..=1.0"
            ))
        })
    }
}

/// Calls `f` with each normalized word of `text`, in order.
fn for_each_word(text: &str, mut f: impl FnMut(&str)) {
    let body = strip_list_marker(text.trim_start());
    let bytes = body.as_bytes();
    let mut word = String::new();
    let mut at = 0;
    while at < bytes.len() {
        // A word: letters, digits, `_`, `-` and `'`. Most are lowercase
        // ASCII and passed on as a slice of the text, not copied.
        let start = at;
        let (mut upper, mut wide) = (false, false);
        while at < bytes.len() {
            let b = bytes[at];
            if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'\'') {
                upper |= b.is_ascii_uppercase();
                at += 1;
            } else if b.is_ascii() {
                break;
            } else {
                // Not ASCII: part of the word if alphanumeric.
                let c = body[at..].chars().next().unwrap_or_default();
                if !c.is_alphanumeric() {
                    break;
                }
                wide = true;
                at += c.len_utf8();
            }
        }
        let raw = &body[start..at];
        let w = if upper || wide {
            word.clear();
            for c in raw.chars() {
                if c.is_ascii() {
                    word.push(c.to_ascii_lowercase());
                } else {
                    word.extend(c.to_lowercase());
                }
            }
            word.as_str()
        } else {
            raw
        };
        // Hyphens and apostrophes at word edges are quoting or dashes, not words.
        let w = match w.as_bytes() {
            [b'-' | b'\'', ..] | [.., b'-' | b'\''] => w.trim_matches(['-', '\'']),
            _ => w,
        };
        if !w.is_empty() {
            f(w);
        }
        // Past the character that ended the word.
        if at == start {
            at += body[at..].chars().next().map_or(1, char::len_utf8);
        }
    }
}

/// Text normalized for comparison: its words joined by single spaces.
pub(crate) fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for_each_word(text, |w| {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    });
    out
}

pub(crate) fn strip_list_marker(s: &str) -> &str {
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

/// Verbs after which "not" states a rule ("do not", "are not stable"),
/// unlike "may not reflect".
const NOT_AFTER: &[&str] = &[
    "do", "does", "must", "should", "shall", "can", "will", "is", "are", "need",
];

/// Bit 63 of a constraint mask: a "not" after one of [`NOT_AFTER`].
const NOT_BIT: u64 = 1 << 63;
const _: () = assert!(CONSTRAINT_WORDS.len() < 63);

/// The word lists by hash in one open-addressed table: a word costs one
/// probe or two, where a binary search per list cost a mispredicted
/// branch per step (scanning was a tenth of a cold assembly).
struct Lexicon {
    slots: Vec<Word>,
    not: u64,
}

/// What a listed word is.
#[derive(Clone, Copy, Default)]
struct Word {
    hash: u64,
    used: bool,
    stop: bool,
    /// Its bit among the constraint words (0: not one).
    constraint: u64,
    /// A verb after which "not" states a rule.
    not_after: bool,
}

/// Slots of the table: a power of two, at most a quarter full.
const SLOTS: usize = 512;

impl Lexicon {
    fn slot(&self, h: u64) -> usize {
        let mut i = (h as usize) & (SLOTS - 1);
        while self.slots[i].used && self.slots[i].hash != h {
            i = (i + 1) & (SLOTS - 1);
        }
        i
    }

    /// The listed word with hash `h`, if any.
    fn get(&self, h: u64) -> Option<&Word> {
        Some(&self.slots[self.slot(h)]).filter(|w| w.used)
    }
}

static LEXICON: LazyLock<Lexicon> = LazyLock::new(|| {
    let mut lex = Lexicon {
        slots: vec![Word::default(); SLOTS],
        not: word_hash("not"),
    };
    let mut add = |w: &str, set: &dyn Fn(&mut Word)| {
        let h = word_hash(w);
        let i = lex.slot(h);
        let word = &mut lex.slots[i];
        word.hash = h;
        word.used = true;
        set(word);
    };
    for w in STOPWORDS {
        add(w, &|e| e.stop = true);
    }
    for (i, w) in CONSTRAINT_WORDS.iter().enumerate() {
        add(w, &|e| e.constraint = 1u64 << i);
    }
    for w in NOT_AFTER {
        add(w, &|e| e.not_after = true);
    }
    lex
});

/// A word by a 64-bit FNV-1a hash: word sets are compared by hash, which
/// keeps them free of allocations (a collision only nudges a similarity).
fn word_hash(w: &str) -> u64 {
    hash::fnv1a64(w.as_bytes())
}

/// What one pass over a text yields.
struct Scan {
    /// Sorted set of content words (stopwords and the dropped word left out).
    words: Vec<u64>,
    /// Constraint words as a bit set.
    mask: u64,
    /// Hash of the whole normalized text (equal texts, equal hashes).
    text: u64,
    /// Whether the text has no words at all.
    empty: bool,
}

/// One pass over raw text: normalizing, hashing and classifying each word.
fn scan(raw: &str, drop: u64) -> Scan {
    let lex = &*LEXICON;
    let mut words = Vec::new();
    let mut mask = 0;
    let mut after_verb = false;
    let mut text = hash::FNV_OFFSET;
    let mut empty = true;
    for_each_word(raw, |w| {
        let h = word_hash(w);
        text = (text ^ h).wrapping_mul(hash::FNV_PRIME);
        empty = false;
        let listed = lex.get(h).copied().unwrap_or_default();
        if listed.constraint != 0 {
            mask |= listed.constraint;
        } else if h == lex.not && after_verb {
            mask |= NOT_BIT;
        }
        if h != drop && !listed.stop {
            words.push(h);
        }
        after_verb = listed.not_after;
    });
    words.sort_unstable();
    words.dedup();
    Scan {
        words,
        mask,
        text,
        empty,
    }
}

/// Sørensen–Dice coefficient of two sorted word sets.
fn dice(a: &[u64], b: &[u64]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    2.0 * common(a, b) as f64 / (a.len() + b.len()) as f64
}

/// Share of `a`'s words that `b` also has.
fn containment(a: &[u64], b: &[u64]) -> f64 {
    if a.is_empty() {
        return 0.0;
    }
    common(a, b) as f64 / a.len() as f64
}

fn common(a: &[u64], b: &[u64]) -> usize {
    // A short set against a long one: look each word up instead of merging.
    if b.len() > 8 * a.len() {
        return a.iter().filter(|w| b.binary_search(w).is_ok()).count();
    }
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
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

/// A tool description prepared for comparison. Its sentences are split
/// only when a unit shares enough words with the whole description to
/// possibly match one of them.
pub(crate) struct ToolText {
    raw_name: String,
    name: String,
    /// Hash of the tool's normalized name, a word left out of comparisons.
    name_hash: u64,
    /// The raw description, kept for the lazy sentence split.
    description: String,
    whole: Scan,
    sentences: OnceLock<Vec<Scan>>,
}

impl ToolText {
    /// From a raw tool name and description. Normalizing drops everything
    /// that is not a letter, digit, `_`, `-` or `'`, so the description need
    /// not be sanitized first.
    pub(crate) fn new(name: &str, description: &str) -> ToolText {
        let name_hash = word_hash(&normalize(name));
        ToolText {
            raw_name: name.to_string(),
            name: crate::sanitize::line(name),
            name_hash,
            whole: scan(description, name_hash),
            description: description.to_string(),
            sentences: OnceLock::new(),
        }
    }

    fn sentences(&self) -> &[Scan] {
        self.sentences.get_or_init(|| {
            let text = crate::sanitize::text(&self.description);
            crate::segment::units(&text)
                .iter()
                .map(|u| scan(u.text(&text), self.name_hash))
                .filter(|s| !s.empty)
                .collect()
        })
    }
}

/// Prepared tool descriptions by content, shared by clones of an assembler,
/// so a server's tools are prepared once, not on every assembly.
#[derive(Clone)]
pub(crate) struct ToolTextCache(Arc<Mutex<ToolTexts>>);

/// Prepared descriptions by the hash of their raw name and description.
type ToolTexts = HashMap<u64, Vec<Arc<ToolText>>, hash::MemoState>;

impl Default for ToolTextCache {
    fn default() -> ToolTextCache {
        ToolTextCache(Arc::new(Mutex::new(HashMap::with_hasher(
            hash::memo_state(),
        ))))
    }
}

/// Most prepared descriptions kept before the cache starts over.
const TOOL_CACHE_CAP: usize = 8192;

impl ToolTextCache {
    /// The prepared description of a tool, from its raw name and description.
    pub(crate) fn get(&self, raw_name: &str, raw_description: &str) -> Arc<ToolText> {
        let key = hash::memo_hash((raw_name, raw_description));
        let mut map = crate::support::lock(&self.0);
        let same = |t: &&Arc<ToolText>| t.raw_name == raw_name && t.description == raw_description;
        if let Some(found) = map.get(&key).and_then(|bucket| bucket.iter().find(same)) {
            return found.clone();
        }
        if map.len() >= TOOL_CACHE_CAP {
            map.clear();
        }
        let text = Arc::new(ToolText::new(raw_name, raw_description));
        map.entry(key).or_default().push(text.clone());
        text
    }
}

/// For each unit of `text`, the tool whose description it restates: only
/// sentences and list items can (a heading, table or code block never does).
pub(crate) fn restatements<'t>(
    text: &str,
    units: &[Unit],
    tools: &'t [Arc<ToolText>],
    threshold: f64,
) -> Vec<Option<&'t str>> {
    let mut index = ToolIndex::new(tools);
    units
        .iter()
        .map(|unit| {
            matches!(unit.kind, UnitKind::Sentence | UnitKind::ListItem)
                .then(|| restated_tool(unit.text(text), &mut index, threshold))
                .flatten()
        })
        .collect()
}

/// Tool descriptions by their words, so that a unit is compared only with
/// the tools that share enough words with it, not with every tool: many
/// units against many tools would otherwise cost their product.
struct ToolIndex<'t> {
    tools: &'t [Arc<ToolText>],
    /// Word → the tools whose description has it, in tool order.
    postings: HashMap<u64, Vec<u32>>,
    /// Hash of a whole normalized description → its tools.
    by_text: HashMap<u64, Vec<u32>>,
    /// Per tool: words shared with the unit at hand (all zero between units).
    counts: Vec<u32>,
    /// Every tool is a candidate (the reference the index is tested against).
    scan_all: bool,
}

impl<'t> ToolIndex<'t> {
    fn new(tools: &'t [Arc<ToolText>]) -> ToolIndex<'t> {
        let mut postings: HashMap<u64, Vec<u32>> = HashMap::new();
        let mut by_text: HashMap<u64, Vec<u32>> = HashMap::new();
        for (i, tool) in tools.iter().enumerate() {
            if tool.whole.empty {
                continue;
            }
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            for w in &tool.whole.words {
                postings.entry(*w).or_default().push(i);
            }
            by_text.entry(tool.whole.text).or_default().push(i);
        }
        ToolIndex {
            tools,
            postings,
            by_text,
            counts: vec![0; tools.len()],
            scan_all: false,
        }
    }

    /// The tools, in tool order, that could match `me`: its exact text, or
    /// at least `at_least` of its words.
    fn candidates(&mut self, me: &Scan, at_least: usize) -> Vec<usize> {
        if at_least == 0 || self.scan_all {
            return (0..self.tools.len()).collect();
        }
        let mut touched = Vec::new();
        for w in &me.words {
            for &i in self.postings.get(w).map_or(&[][..], Vec::as_slice) {
                let c = &mut self.counts[i as usize];
                if *c == 0 {
                    touched.push(i as usize);
                }
                *c += 1;
            }
        }
        let mut out = Vec::new();
        for i in touched {
            if self.counts[i] as usize >= at_least {
                out.push(i);
            }
            self.counts[i] = 0;
        }
        for &i in self.by_text.get(&me.text).map_or(&[][..], Vec::as_slice) {
            out.push(i as usize);
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// Finds the tool whose description a unit restates, if any.
///
/// A unit restates a description when, ignoring stopwords, it is equal to
/// the description or one of its sentences, or the Dice similarity of their
/// word sets is at least `threshold`, or it names the tool and at least
/// `threshold` of its other words appear in one sentence of the
/// description. It never does when it holds a constraint word the
/// description lacks.
///
/// A list item of several sentences restates a tool when each of its
/// sentences restates that same tool.
fn restated_tool<'t>(unit: &str, index: &mut ToolIndex<'t>, threshold: f64) -> Option<&'t str> {
    let body = strip_list_marker(unit.trim_start());
    let parts = crate::segment::units(body);
    if parts.len() > 1 {
        let mut found: Option<&str> = None;
        for p in &parts {
            let tool = sentence_restates(p.text(body), index, threshold)?;
            if found.is_some_and(|f| f != tool) {
                return None;
            }
            found = Some(tool);
        }
        return found;
    }
    sentence_restates(unit, index, threshold)
}

/// The fewest words a unit of `len` content words (its own tool's name left
/// out) must share with a description to pass the Dice or containment test.
fn words_needed(threshold: f64, len: usize) -> f64 {
    // Dice >= t with a sentence sharing c words needs 2c >= t(|m| + c),
    // so c >= t|m|/(2 - t); the containment test needs more. A sentence
    // shares no more than the whole description does.
    threshold / (2.0 - threshold) * len as f64
}

fn sentence_restates<'t>(unit: &str, index: &mut ToolIndex<'t>, threshold: f64) -> Option<&'t str> {
    let me = scan(unit, 0);
    if me.empty {
        return None;
    }
    // A unit that names a tool leaves that one word out: the fewest shared
    // words any tool needs.
    let at_least = words_needed(threshold, me.words.len().saturating_sub(1)).ceil() as usize;
    let tools = index.tools;
    for i in index.candidates(&me, at_least) {
        let tool = &tools[i];
        if tool.whole.empty || me.mask & !tool.whole.mask != 0 {
            continue;
        }
        let names_it = me.words.binary_search(&tool.name_hash).is_ok();
        let without_name;
        let mine: &[u64] = if names_it {
            without_name = me
                .words
                .iter()
                .copied()
                .filter(|w| *w != tool.name_hash)
                .collect::<Vec<u64>>();
            &without_name
        } else {
            &me.words
        };
        if mine.len() < 2 {
            continue;
        }
        if me.text == tool.whole.text {
            return Some(&tool.name);
        }
        let shared = common(mine, &tool.whole.words);
        if (shared as f64) < words_needed(threshold, mine.len()) {
            continue;
        }
        if 2.0 * shared as f64 >= threshold * (mine.len() + tool.whole.words.len()) as f64 {
            return Some(&tool.name);
        }
        let matched = tool.sentences().iter().any(|d| {
            d.text == me.text
                || dice(mine, &d.words) >= threshold
                || (names_it && containment(mine, &d.words) >= threshold)
        });
        if matched {
            return Some(&tool.name);
        }
    }
    None
}

#[cfg(test)]
mod tests;
