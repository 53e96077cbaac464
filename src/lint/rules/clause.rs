//! A unit read word by word for MCP020 and MCP021 (issue 55): lowercased
//! words with contractions expanded (`don't` is `do not`), the clause and
//! sentence each word is in, and the questions the acts ask of a word: is it
//! negated, is it a directive, is there a person in its clause.
//!
//! Clauses end at `,` `:` `;` `.` `!` `?`, brackets and dashes; sentences at
//! all of these but `,` and `:`. A word is negated when a negator (`not`,
//! `never`, `no`, `avoid`, `refrain`, `without`…) comes before it in its
//! clause with only auxiliaries and adverbs between (`must never be`, `is
//! not to be`, `do not ever directly`), or the clause opens with `under no
//! circumstances`, `at no point`…; a verb of failing between (`never fail
//! to`, `don't forget to`) cancels the negation.

use std::ops::Range;

pub(super) struct Word {
    pub(super) s: String,
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) clause: u32,
    pub(super) sentence: u32,
}

pub(super) struct Words {
    pub(super) w: Vec<Word>,
}

/// Words that may stand between a negator and the verb it negates.
const GLUE: &[&str] = &[
    "do",
    "does",
    "did",
    "you",
    "to",
    "be",
    "been",
    "being",
    "is",
    "are",
    "was",
    "were",
    "should",
    "must",
    "shall",
    "may",
    "might",
    "can",
    "could",
    "will",
    "would",
    "ever",
    "directly",
    "explicitly",
    "openly",
    "proactively",
    "voluntarily",
    "actively",
    "even",
    "need",
    "needs",
    "have",
    "has",
    "get",
    "please",
    "from",
    "also",
    "really",
    "at",
    "all",
    "any",
    "further",
    "yet",
    "again",
    "specifically",
    "in",
    "way",
    "made",
    "ok",
    "okay",
    "allowed",
    "supposed",
    "under",
    "circumstances",
    "case",
    "longer",
    "reason",
    "bother",
];

/// Words that negate what follows them in a clause.
pub(super) const NEGATORS: &[&str] = &[
    "not",
    "never",
    "no",
    "avoid",
    "avoiding",
    "refrain",
    "refraining",
    "without",
    "nor",
    "neither",
    "nobody",
    "stop",
];

/// Phrases that negate a whole clause after them.
const CLAUSE_NEGATIONS: &[&[&str]] = &[
    &["under", "no", "circumstances"],
    &["in", "no", "circumstances"],
    &["under", "no", "circumstance"],
    &["in", "no", "circumstance"],
    &["at", "no", "point"],
    &["at", "no", "time"],
    &["in", "no", "case"],
    &["on", "no", "account"],
    &["in", "no", "way"],
    &["under", "no", "condition"],
    &["in", "no", "event"],
];

impl Words {
    pub(super) fn new(text: &str) -> Words {
        let mut w = Vec::new();
        let (mut clause, mut sentence) = (0u32, 0u32);
        let mut chars = text.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if is_word_char(c) {
                let mut end = i + c.len_utf8();
                while let Some(&(j, d)) = chars.peek() {
                    let joins = matches!(d, '\'' | '’' | '-')
                        && text[j + d.len_utf8()..]
                            .chars()
                            .next()
                            .is_some_and(is_word_char);
                    let possessive = matches!(d, '\'' | '’') && text[..j].ends_with(['s', 'S']);
                    if is_word_char(d) || joins || possessive {
                        end = j + d.len_utf8();
                        chars.next();
                    } else {
                        break;
                    }
                }
                push_word(&mut w, &text[i..end], i, end, clause, sentence);
                continue;
            }
            let next_blank = text[i + c.len_utf8()..]
                .chars()
                .next()
                .is_none_or(char::is_whitespace);
            match c {
                ';' | '!' | '?' | '\n' | '(' | ')' | '[' | ']' | '{' | '}' | '<' | '>' | '—'
                | '–' | '|' => {
                    clause += 1;
                    sentence += 1;
                }
                '.' if next_blank => {
                    clause += 1;
                    sentence += 1;
                }
                ',' | '"' | '“' | '”' => clause += 1,
                ':' if next_blank => clause += 1,
                _ => {}
            }
        }
        Words { w }
    }

    pub(super) fn len(&self) -> usize {
        self.w.len()
    }

    pub(super) fn at(&self, i: usize) -> &str {
        self.w.get(i).map_or("", |w| w.s.as_str())
    }

    /// The words from `i` on are `phrase`.
    pub(super) fn is(&self, i: usize, phrase: &[&str]) -> bool {
        phrase.iter().enumerate().all(|(k, p)| {
            self.w
                .get(i + k)
                .is_some_and(|w| w.s == *p && w.clause == self.w[i].clause)
        })
    }

    /// `phrase` starts somewhere in `range`.
    pub(super) fn is_in(&self, range: Range<usize>, phrase: &[&str]) -> bool {
        range.into_iter().any(|k| self.is(k, phrase))
    }

    pub(super) fn same_clause(&self, a: usize, b: usize) -> bool {
        a < self.len() && b < self.len() && self.w[a].clause == self.w[b].clause
    }

    /// The indices of `i`'s clause.
    pub(super) fn clause_of(&self, i: usize) -> Range<usize> {
        self.span(i, |w| w.clause)
    }

    /// The indices of `i`'s sentence.
    pub(super) fn sentence_of(&self, i: usize) -> Range<usize> {
        self.span(i, |w| w.sentence)
    }

    fn span(&self, i: usize, key: fn(&Word) -> u32) -> Range<usize> {
        let k = key(&self.w[i]);
        let mut a = i;
        while a > 0 && key(&self.w[a - 1]) == k {
            a -= 1;
        }
        let mut b = i + 1;
        while b < self.len() && key(&self.w[b]) == k {
            b += 1;
        }
        a..b
    }

    /// The byte range from word `a` to word `b` (inclusive).
    pub(super) fn bytes(&self, a: usize, b: usize) -> Range<usize> {
        let (a, b) = (a.min(b), a.max(b).min(self.len() - 1));
        self.w[a].start..self.w[b].end
    }

    /// The negator before word `i`, if `i` is negated (see the module docs).
    pub(super) fn negated(&self, i: usize) -> Option<usize> {
        let clause = self.clause_of(i);
        let mut k = i;
        while k > clause.start && i - k < 7 {
            k -= 1;
            let s = self.at(k);
            if NEGATORS.contains(&s) {
                // `stop` negates only a gerund or an imperative's object.
                if s == "stop" && !self.at(i).ends_with("ing") {
                    return None;
                }
                return Some(k);
            }
            if !GLUE.contains(&s) {
                break;
            }
        }
        // `do not, under any circumstances, let…`: a negation before an aside.
        if clause.start >= 2 {
            let aside = self.clause_of(clause.start - 1);
            let short = clause.start - aside.start <= 4
                && self.any_in(
                    aside.clone(),
                    &["circumstances", "circumstance", "time", "point"],
                );
            if short && aside.start > 0 && NEGATORS.contains(&self.at(aside.start - 1)) {
                return Some(aside.start - 1);
            }
        }
        // `nothing about the rule should be shown`: a negated subject.
        let subject = matches!(self.at(clause.start), "nothing" | "none")
            && self.any_in(clause.start..i, &["should", "must", "shall", "is", "are"]);
        (clause.start..i)
            .find(|&k| CLAUSE_NEGATIONS.iter().any(|p| self.is(k, p)))
            .or(subject.then_some(clause.start))
    }

    /// Word `i` starts a directive: first in its clause, or after a
    /// subject `you`, a modal, `and`/`then`/`also`/`just`, or an adverb
    /// of manner (`quietly`, `silently`).
    pub(super) fn directive(&self, i: usize) -> bool {
        let clause = self.clause_of(i);
        let mut k = i;
        while k > clause.start {
            k -= 1;
            let s = self.at(k);
            // `swallow the errors and tell the user…`: a second imperative.
            if k + 1 == i && matches!(s, "and" | "but") && k > clause.start {
                return self.directive(clause.start);
            }
            if matches!(
                s,
                "you"
                    | "should"
                    | "must"
                    | "shall"
                    | "and"
                    | "then"
                    | "also"
                    | "just"
                    | "simply"
                    | "always"
                    | "quietly"
                    | "silently"
                    | "please"
                    | "instead"
                    | "now"
                    | "to"
                    | "will"
                    | "ought"
                    | "need"
                    | "merely"
                    | "only"
                    | "discreetly"
                    | "important"
                    | "note"
                    | "first"
                    | "otherwise"
                    | "so"
                    | "finally"
                    | "but"
            ) || s.ends_with("ly")
            {
                continue;
            }
            return false;
        }
        true
    }
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Pushes a word lowercased, with `n't` and `'re` split off as words of
/// their own.
fn push_word(w: &mut Vec<Word>, raw: &str, start: usize, end: usize, clause: u32, sentence: u32) {
    let s = raw.to_lowercase().replace('’', "'");
    let mut push = |s: &str| {
        w.push(Word {
            s: s.to_string(),
            start,
            end,
            clause,
            sentence,
        })
    };
    if let Some(base) = s.strip_suffix("n't") {
        push(match base {
            "won" => "will",
            "can" | "ca" => "can",
            "shan" => "shall",
            b => b,
        });
        push("not");
    } else if let Some(base) = s.strip_suffix("'re") {
        push(base);
        push("are");
    } else if let Some(base) = s.strip_suffix("'ve") {
        push(base);
        push("have");
    } else if let Some(base) = s.strip_suffix("'ll") {
        push(base);
        push("will");
    } else if s == "cannot" {
        push("can");
        push("not");
    } else {
        push(&s);
    }
}
