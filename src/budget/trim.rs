//! Step 5 of the ladder: a cut of the last unit at a word boundary,
//! token-exact, that never drops a word narrowing what the unit allows.

use super::ladder::Ladder;
use super::render::Rendered;
use super::units::Trim;
use crate::dedup;
use crate::error::Result;
use crate::segment::{self, UnitKind};

/// The marker that ends a cut unit.
pub(crate) const CUT_MARKER: &str = " […]";

impl Ladder<'_, '_> {
    /// Only the highest-priority unit, `last`, is left and it does not fit
    /// whole: cut it at the last boundary that fits ([`cut_points`]), or
    /// drop it.
    pub(super) fn cut_last(&mut self, trim: &Trim, last: usize) -> Result<Option<Rendered>> {
        let unit_text = trim.unit_text(last);
        let cuts = match trim.units.get(last).map(|u| u.kind) {
            // A cut code block would leave its fence open.
            Some(UnitKind::Code) => vec![unit_text.len()],
            _ => cut_points(unit_text),
        };
        // `i` counts words removed from the end; the whole unit is known not
        // to fit.
        let at = |i: usize| cuts[cuts.len() - 1 - i];
        let fitting = match cuts.len() {
            0 | 1 => None,
            n => self.gauge.smallest(&self.view, 1, n - 1, |probe, i| {
                probe.instructions = Some(cut_instructions(trim, last, at(i)));
            })?,
        };
        // Only the cut unit is shown: everything else kept so far goes.
        let only_last: Vec<bool> = (0..trim.units.len()).map(|k| k == last).collect();
        self.record_dropped(trim, &only_last);
        if let Some(i) = fitting {
            self.view.instructions = Some(cut_instructions(trim, last, at(i)));
            self.remove_unit(last, unit_text[at(i)..].trim_start());
            self.truncated = true;
            return self.fits();
        }
        // Dropped whole: reported as step 4 reports units, so a refill can
        // bring a lower-priority unit back into the room.
        let none = vec![false; trim.units.len()];
        self.record_dropped(trim, &none);
        self.dropped = trim.drop_order().len();
        self.view.instructions = None;
        self.fits()
    }
}

/// Words that narrow what a sentence allows without marking it a
/// constraint: a cut must not drop them either.
const QUALIFIERS: &[&str] = &[
    "unless",
    "except",
    "excluding",
    "without",
    "if",
    "when",
    "whenever",
    "while",
    "where",
    "provided",
    "but",
    "not",
    "no",
    "nor",
    "otherwise",
];

/// Byte offsets where `text` (a unit) may be cut, ascending, the last its
/// end. A cut must not turn a constraint into a permission ("You may delete
/// any invoice […]" from "You may delete any invoice only after the user
/// confirms."): it ends at a word, and what it cuts off carries no
/// constraint word and no qualifier ([`QUALIFIERS`]), so every word that
/// narrows the unit stays. A unit ending in one has no cut point but its
/// end, and is dropped whole. Nor does a cut split a code span or leave a
/// quotation or bracket open.
fn cut_points(text: &str) -> Vec<usize> {
    let words = word_cuts(text);
    // The cut-off tail grows from the end: once it holds a restricting
    // word, no earlier cut is allowed either.
    let mut allowed = words.len().saturating_sub(1);
    for (j, at) in words.iter().enumerate().rev().skip(1) {
        if restricts(&text[*at..words[j + 1]]) {
            break;
        }
        allowed = j;
    }
    // Nor may it end inside a code span, a URL, a quotation or brackets.
    let guards = segment::protected(text);
    words[allowed..]
        .iter()
        .copied()
        .filter(|at| !segment::inside_guard(&guards, *at))
        .collect()
}

/// Whether `words` (a piece of a unit) holds a constraint word or a
/// qualifier.
fn restricts(words: &str) -> bool {
    dedup::carries_constraint(words)
        || words
            .split(|c: char| !c.is_alphanumeric() && c != '\'')
            .any(|w| QUALIFIERS.iter().any(|q| w.eq_ignore_ascii_case(q)))
}

/// Byte offsets where a word ends (the cut points of a unit), ascending.
fn word_cuts(text: &str) -> Vec<usize> {
    let mut cuts = Vec::new();
    let mut in_word = false;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            if in_word {
                cuts.push(i);
            }
            in_word = false;
        } else {
            in_word = true;
        }
    }
    if in_word {
        cuts.push(text.len());
    }
    cuts
}

/// The instructions when only `unit` is left, cut after byte `at` of it.
fn cut_instructions(trim: &Trim, unit: usize, at: usize) -> String {
    let u = &trim.units[unit];
    let mut s = trim.text[u.start..u.start + at].trim_end().to_string();
    s.push_str(CUT_MARKER);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_cuts_are_char_boundaries() {
        let s = "Ünïcode wörds 💱 here";
        let cuts = word_cuts(s);
        assert!(cuts.iter().all(|c| s.is_char_boundary(*c)));
        assert_eq!(&s[..cuts[1]], "Ünïcode wörds");
    }

    /// What the cut at `at` keeps, for a unit `s`.
    fn kept(s: &str, at: usize) -> &str {
        &s[..at]
    }

    #[test]
    fn a_cut_never_drops_a_word_that_narrows_the_unit() {
        let s = "You may delete any invoice only after the user confirms.";
        let cuts = cut_points(s);
        assert!(cuts.iter().all(|at| kept(s, *at).contains("only after")));
        assert_eq!(kept(s, cuts[0]), "You may delete any invoice only after");
        let s = "You may delete drafts unless they are paid.";
        assert!(
            cut_points(s)
                .iter()
                .all(|at| kept(s, *at).ends_with("unless") || kept(s, *at).contains("unless they"))
        );
        let s = "Delete drafts freely; never delete a paid invoice.";
        assert!(
            cut_points(s)
                .iter()
                .all(|at| kept(s, *at).contains("never"))
        );
        // Ending in a narrowing word: no cut point but the end.
        let s = "Delete the drafts first.";
        assert_eq!(cut_points(s), [s.len()]);
        let s = "Notes may be removed, but not archived, by the owner of the notebook.";
        assert_eq!(kept(s, cut_points(s)[0]), "Notes may be removed, but not");
    }

    #[test]
    fn prose_without_qualifiers_is_cut_at_any_word() {
        let s = "Notes are plain markdown files.";
        assert_eq!(cut_points(s), word_cuts(s));
    }

    #[test]
    fn a_cut_ends_at_a_word_with_the_marker() {
        let trim = Trim::new("Keep every line short.".to_string(), &Default::default());
        let cuts = word_cuts(trim.unit_text(0));
        assert_eq!(cuts, [4, 10, 15, 22]);
        assert_eq!(cut_instructions(&trim, 0, cuts[1]), "Keep every […]");
    }
}
