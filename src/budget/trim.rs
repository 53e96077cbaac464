//! Step 5 of the ladder: a cut of the last unit at a word boundary,
//! token-exact.

use super::ladder::Ladder;
use super::render::Rendered;
use super::units::Trim;
use crate::error::Result;

/// The marker that ends a cut unit.
pub(crate) const CUT_MARKER: &str = " […]";

impl Ladder<'_, '_> {
    /// Only the highest-priority unit, `last`, is left and it does not fit
    /// whole: cut it at the last word boundary that fits, or drop it.
    pub(super) fn cut_last(&mut self, trim: &Trim, last: usize) -> Result<Option<Rendered>> {
        let unit_text = trim.unit_text(last);
        let cuts = word_cuts(unit_text);
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
        self.remove_unit(last, unit_text);
        self.view.instructions = None;
        self.fits()
    }
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

    #[test]
    fn a_cut_ends_at_a_word_with_the_marker() {
        let trim = Trim::new("Keep every line short.".to_string(), &Default::default());
        let cuts = word_cuts(trim.unit_text(0));
        assert_eq!(cuts, [4, 10, 15, 22]);
        assert_eq!(cut_instructions(&trim, 0, cuts[1]), "Keep every […]");
    }
}
