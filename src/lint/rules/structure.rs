//! Rules on the instructions as a whole: blank (MCP001), too long (MCP004),
//! wasted whitespace (MCP008), longer than every tool description (MCP022).

use crate::lint::LintCode;
use crate::lint::pass::Pass;

/// Fewest tokens of whitespace and invisible characters that get `MCP008`:
/// a trailing newline or two is noise, an indented block is a habit.
const WASTED_TOKENS: usize = 8;

/// Fewest tokens of instructions MCP022 compares with the descriptions.
const MIN_OVER_DESCRIPTIONS: usize = 100;

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

    /// MCP022: instructions of more tokens than all tool descriptions
    /// together (servers whose tools have descriptions), from
    /// [`MIN_OVER_DESCRIPTIONS`] tokens on: a few sentences of rules are
    /// what instructions are for, however terse the descriptions.
    pub(super) fn over_tool_descriptions(&mut self, tokens: usize) {
        if tokens < MIN_OVER_DESCRIPTIONS {
            return;
        }
        let counter = self.linter.counter.as_ref();
        let descriptions: Vec<&str> = self
            .server
            .tools
            .iter()
            .filter_map(|t| t.description.as_deref())
            .collect();
        if descriptions.is_empty() {
            return;
        }
        let total: usize = descriptions.iter().map(|d| counter.count(d)).sum();
        if tokens > total {
            self.push(
                LintCode::InstructionsOverToolDescriptions,
                format!(
                    "instructions are {tokens} tokens, more than all {} tool descriptions together ({total} tokens)",
                    descriptions.len()
                ),
                None,
                None,
                LintCode::InstructionsOverToolDescriptions.fix().to_string(),
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
