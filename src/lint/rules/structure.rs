//! Rules on the instructions as a whole: blank (MCP001), too long (MCP004),
//! wasted whitespace (MCP008).

use crate::lint::LintCode;
use crate::lint::pass::Pass;

/// Fewest tokens of whitespace and invisible characters that get `MCP008`:
/// a trailing newline or two is noise, an indented block is a habit.
const WASTED_TOKENS: usize = 8;

impl Pass<'_> {
    pub(super) fn blank(&mut self, raw: &str) {
        let n = raw.chars().count();
        self.push(
            LintCode::BlankInstructions,
            format!(
                "instructions are blank: {n} {} of whitespace or invisible text, which hosts drop",
                if n == 1 { "character" } else { "characters" }
            ),
            None,
            None,
            LintCode::BlankInstructions.fix().to_string(),
        );
    }

    pub(super) fn too_long(&mut self, tokens: usize) {
        if tokens > self.linter.max_tokens {
            self.push(
                LintCode::TooLong,
                format!(
                    "instructions are {tokens} tokens, over the threshold of {}",
                    self.linter.max_tokens
                ),
                None,
                None,
                LintCode::TooLong.fix().to_string(),
            );
        }
    }

    pub(super) fn wasted_whitespace(&mut self, raw: &str, tokens: usize) {
        let raw_tokens = self.linter.counter.count(raw);
        let wasted = raw_tokens.saturating_sub(tokens);
        if wasted >= WASTED_TOKENS {
            self.push(
                LintCode::WastedWhitespace,
                format!(
                    "{wasted} of the {raw_tokens} tokens of the instructions as sent are indentation, blank lines or invisible characters"
                ),
                None,
                None,
                LintCode::WastedWhitespace.fix().to_string(),
            );
        }
    }
}
