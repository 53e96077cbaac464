//! Hidden characters (MCP009): text a reader of the instructions cannot see
//! but a model may read (smuggled bytes, bidi tricks).

use icu_properties::CodePointSetData;
use icu_properties::props::ExtendedPictographic;

use crate::lint::pass::Pass;
use crate::lint::{LintCode, Severity};
use crate::sanitize::{self, Hidden, HiddenChars};

/// Most hidden characters (outside emoji sequences) that are only a note: a
/// stray byte-order mark or zero-width space is a copy-paste accident; more
/// is a pattern.
pub(crate) const HIDDEN_ALLOWED: usize = 2;

impl Pass<'_> {
    /// `MCP009` on the raw instructions. Variation selectors and joiners
    /// inside emoji sequences (`❤️`, `👨‍👩‍👧`) are what emoji are made of and
    /// are not counted; a variation selector anywhere else is an error.
    pub(super) fn hidden_characters(&mut self, raw: &str) {
        let Some((n, found, severity)) = count_hidden(raw) else {
            return;
        };
        self.push_with(
            LintCode::HiddenCharacters,
            severity,
            format!(
                "instructions hold {n} hidden {} ({found}) that sanitizing removes; nobody reading the text sees them",
                if n == 1 { "character" } else { "characters" }
            ),
            None,
            None,
            LintCode::HiddenCharacters.fix().to_string(),
        );
    }
}

/// The hidden characters of `raw` outside emoji sequences: how many, by
/// kind, and the severity they earn; `None` when there are none.
pub(super) fn count_hidden(raw: &str) -> Option<(usize, HiddenChars, Severity)> {
    {
        let emoji = CodePointSetData::new::<ExtendedPictographic>();
        let chars: Vec<char> = raw.chars().collect();
        let mut found = HiddenChars::default();
        let mut stray_selectors = 0;
        for (i, &c) in chars.iter().enumerate() {
            let Some(kind) = sanitize::hidden(c) else {
                continue;
            };
            let prev = i.checked_sub(1).map(|j| chars[j]);
            let next = chars.get(i + 1).copied();
            let after_emoji = prev.is_some_and(|p| emoji.contains(p));
            let keycap = prev.is_some_and(|p| p.is_ascii_digit() || p == '#' || p == '*')
                && next == Some('\u{20e3}');
            let in_emoji = match c {
                '\u{fe0e}' | '\u{fe0f}' => after_emoji || keycap,
                '\u{200d}' => {
                    (after_emoji || prev == Some('\u{fe0f}'))
                        && next.is_some_and(|n| emoji.contains(n))
                }
                _ => false,
            };
            if in_emoji {
                continue;
            }
            if kind == Hidden::VariationSelector {
                stray_selectors += 1;
            }
            found.tally(kind);
        }
        let n = found.total();
        if n == 0 {
            return None;
        }
        let severity = if n > HIDDEN_ALLOWED || stray_selectors > 0 {
            Severity::Error
        } else {
            Severity::Note
        };
        Some((n, found, severity))
    }
}
