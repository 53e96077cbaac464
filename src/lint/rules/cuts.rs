//! What survives each host's cut (the [`HostSurvival`] table) and
//! constraint sentences lost under one (MCP010). Runs only for the hosts
//! given to [`Linter::hosts`](crate::lint::Linter::hosts).

use crate::assemble::Assembler;
use crate::dedup::{self, Priority};
use crate::hosts::Unit as HostUnit;
use crate::lint::LintCode;
use crate::lint::hosts::{HostCut, HostProfile, HostSurvival, LostUnit, TRUNCATED_MARKER};
use crate::lint::pass::Pass;
use crate::report::RemovalReason;
use crate::segment::Unit;
use crate::text;

/// Most characters of a lost unit as printed.
const LOST_CHARS: usize = 160;

impl Pass<'_> {
    pub(super) fn host_cuts(&mut self, text: &str, units: &[Unit]) {
        let profiles = self.linter.hosts.clone();
        for profile in &profiles {
            let survival = self.survival(profile, text, units);
            if profile.forwards()
                && let Some((unit, _)) = units
                    .iter()
                    .zip(&survival.lost_constraint)
                    .find(|(_, lost)| **lost)
            {
                let n = survival.lost_constraints;
                let others = match n {
                    1 => String::new(),
                    2 => " (and 1 more)".to_string(),
                    n => format!(" (and {} more)", n - 1),
                };
                self.push(
                    LintCode::LostUnderHostCut,
                    format!(
                        "{}{} {}; this constraint sentence{others} never reaches the model",
                        profile.name,
                        if profile.reported { " (reported)" } else { "" },
                        profile.cut
                    ),
                    Some((text, unit.text(text), unit)),
                    None,
                    LintCode::LostUnderHostCut.fix().to_string(),
                );
            }
            self.hosts.push(survival.table);
        }
    }

    /// The survival of `text` under one profile.
    fn survival(&mut self, profile: &HostProfile, text: &str, units: &[Unit]) -> Survival {
        let unit = match profile.cut {
            HostCut::Utf16(_) => HostUnit::Utf16,
            _ => HostUnit::Chars,
        };
        let chars = unit.measure(text);
        let counter = self.linter.counter.clone();
        let (lost_flags, chars_kept, tokens_kept) = match profile.cut {
            HostCut::Nothing => (vec![true; units.len()], 0, 0),
            HostCut::Chars(n) => {
                let cut = text.char_indices().nth(n).map_or(text.len(), |(i, _)| i);
                let kept = &text[..cut];
                let flags = units.iter().map(|u| u.end > cut).collect();
                (flags, kept.chars().count(), counter.count(kept))
            }
            HostCut::Utf16(n) => {
                let (cut, kept_units, split) = utf16_cut(text, n);
                // A unit cut anywhere is lost (a pair's lone half included).
                let flags = units.iter().map(|u| u.end > cut).collect();
                let mut seen = text[..cut].to_string();
                if split {
                    seen.push('\u{FFFD}');
                }
                if cut < text.len() {
                    seen.push_str(TRUNCATED_MARKER);
                }
                (flags, kept_units, counter.count(&seen))
            }
            HostCut::Budget(n) => {
                let (flags, tokens) = self.budget_cut(n, units);
                // Characters of the instructions, like `chars`: the block's
                // heading and tool list are no part of them.
                let lost: usize = units
                    .iter()
                    .zip(&flags)
                    .filter(|(_, lost)| **lost)
                    .map(|(u, _)| u.text(text).chars().count())
                    .sum();
                (flags, chars.saturating_sub(lost), tokens)
            }
        };
        let mut lost = Vec::new();
        let mut lost_constraint = Vec::new();
        let lines = text::Lines::new(text);
        let no_tools = std::collections::HashSet::new();
        for (unit, &is_lost) in units.iter().zip(&lost_flags) {
            let unit_text = unit.text(text);
            let constraint = dedup::priority(unit, unit_text, &no_tools) >= Priority::Constraint;
            let entry = LostUnit {
                line: lines.line(unit.start),
                text: text::cut_chars(&text::one_line(&self.redactor.scrub(unit_text)), LOST_CHARS),
                constraint,
            };
            lost_constraint.push(is_lost && constraint);
            if is_lost {
                lost.push(entry);
            }
        }
        let lost_constraints = lost.iter().filter(|u| u.constraint).count();
        Survival {
            table: HostSurvival {
                host: profile.name.to_string(),
                cut: profile.cut.to_string(),
                forwarded: profile.forwards(),
                reported: profile.reported,
                chars,
                chars_kept,
                // Absent for characters, as before units had a type.
                unit: (unit == HostUnit::Utf16).then(|| unit.as_str().to_string()),
                tokens_kept,
                lost,
            },
            lost_constraint,
            lost_constraints,
        }
    }

    /// Which units `mcp-preamble` removes at a budget of `n` tokens, and the
    /// tokens of the server's block as rendered.
    fn budget_cut(&self, n: usize, units: &[Unit]) -> (Vec<bool>, usize) {
        let assembly = Assembler::new()
            .budget(n)
            .assemble(std::slice::from_ref(self.server));
        let Some(report) = assembly.as_ref().ok().and_then(|a| a.servers().first()) else {
            return (vec![true; units.len()], 0);
        };
        if !report.included || report.omitted.is_some() {
            return (vec![true; units.len()], 0);
        }
        // A cut block shows only the head of its last unit: every unit is lost.
        let mut flags = vec![report.truncated; units.len()];
        let budget_units = report
            .removed
            .iter()
            .filter(|r| r.reason == RemovalReason::Budget)
            .filter_map(|r| r.unit);
        for k in budget_units {
            if let Some(lost) = flags.get_mut(k) {
                *lost = true;
            }
        }
        (flags, report.tokens)
    }
}

/// JavaScript's `text.slice(0, n)` on `text`: the byte length of the whole
/// characters kept, the UTF-16 code units kept (`n` or fewer), and whether
/// the cut fell inside a surrogate pair (its first half is kept, and reaches
/// the model as U+FFFD).
fn utf16_cut(text: &str, n: usize) -> (usize, usize, bool) {
    let mut units = 0;
    for (i, c) in text.char_indices() {
        let w = c.len_utf16();
        if units + w > n {
            return (i, n, units < n);
        }
        units += w;
    }
    (text.len(), units, false)
}

struct Survival {
    table: HostSurvival,
    /// One per unit: lost, and a constraint.
    lost_constraint: Vec<bool>,
    lost_constraints: usize,
}

#[cfg(test)]
mod tests {
    use super::utf16_cut;

    #[test]
    fn utf16_cuts_count_astral_characters_twice() {
        assert_eq!(utf16_cut("abc", 2), (2, 2, false));
        assert_eq!(utf16_cut("abc", 5), (3, 3, false));
        // 😀 is 2 units (4 bytes): 2 emoji fit in 4 units, the third is split at 5.
        assert_eq!(utf16_cut("😀😀😀", 4), (8, 4, false));
        assert_eq!(utf16_cut("😀😀😀", 5), (8, 5, true));
        assert_eq!(utf16_cut("日本語", 2), (6, 2, false));
    }
}
