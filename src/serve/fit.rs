//! Fitting the served instructions to the host that reads them.
//!
//! A host that cuts instructions cuts the gateway's too, blindly: Claude
//! Code keeps the first 2,048 UTF-16 units of a server's instructions
//! (mid-word), Codex surfaces about the first 512 characters of a
//! namespace description. Fitted with [`ServeAs`], the hub assembles in
//! the host's own unit with the whole section as the budget, so the ladder
//! removes whole units, constraints last, and every server keeps a fair
//! share instead of the last ones losing everything.

use crate::assemble::Assembler;
use crate::error::{Error, ErrorKind, Result};
use crate::support::string_enum;
use crate::tokens::TokenCounter;

string_enum! {
    /// The host the gateway's instructions are fitted to (`serve --as`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    #[non_exhaustive]
    pub enum ServeAs {
        /// No host cut: the policy's token budgets as they are.
        #[default]
        Plain => "plain",
        /// Claude Code: the whole text within 2,048 UTF-16 units.
        ClaudeCode => "claude-code",
        /// Codex: the whole text within the 512 characters it surfaces.
        Codex => "codex",
    }
    /// `plain`, `claude-code` or `codex`.
    fn as_str;
    impl FromStr, Err = Error, |s| Error::new(
        ErrorKind::InvalidConfig,
        format!("unknown host {s:?} (known: plain, claude-code, codex)"),
    );
}

impl ServeAs {
    /// The host's cap, in its own unit (`None` for [`ServeAs::Plain`]).
    pub fn cap(self) -> Option<usize> {
        match self {
            ServeAs::Plain => None,
            ServeAs::ClaudeCode => Some(2048),
            ServeAs::Codex => Some(512),
        }
    }

    /// The length of `text` in the host's unit: UTF-16 units for Claude
    /// Code (JavaScript's `length`), characters for Codex, bytes otherwise.
    pub fn measure(self, text: &str) -> usize {
        match self {
            ServeAs::ClaudeCode => text.encode_utf16().count(),
            ServeAs::Codex => text.chars().count(),
            ServeAs::Plain => text.len(),
        }
    }

    /// `assembler` counting in the host's unit, with the whole section
    /// (its frame included) less `reserve` units the gateway appends as
    /// the total budget. [`ServeAs::Plain`] returns it unchanged. Fails when
    /// the reserve alone does not fit.
    pub fn fit(self, assembler: Assembler, reserve: usize) -> Result<Assembler> {
        let Some(cap) = self.cap() else {
            return Ok(assembler);
        };
        match cap.checked_sub(reserve) {
            Some(budget) if budget > 0 => {
                Ok(assembler.token_counter(Units(self)).total_budget(budget))
            }
            _ => Err(Error::new(
                ErrorKind::InvalidConfig,
                format!("the gateway's note ({reserve} units) leaves nothing of {self}'s {cap}"),
            )),
        }
    }
}

/// A [`TokenCounter`] that counts in a host's unit.
#[derive(Debug, Clone, Copy)]
struct Units(ServeAs);

impl TokenCounter for Units {
    fn name(&self) -> &str {
        match self.0 {
            ServeAs::ClaudeCode => "utf16_units",
            ServeAs::Codex => "chars",
            ServeAs::Plain => "bytes",
        }
    }

    fn count(&self, text: &str) -> usize {
        self.0.measure(text)
    }

    fn splits_after_newline(&self) -> bool {
        // Counting units is additive everywhere.
        true
    }

    fn splits_before_word(&self) -> bool {
        true
    }

    fn splits_before_newline(&self) -> bool {
        true
    }
}

/// `text` within `cap` units of `host`: whole lines kept from the start,
/// the rest dropped. A last resort for an assembler that was not fitted
/// ([`ServeAs::fit`]): a fitted one never needs it.
pub(crate) fn within(host: ServeAs, text: &str) -> String {
    let Some(cap) = host.cap() else {
        return text.to_string();
    };
    if host.measure(text) <= cap {
        return text.to_string();
    }
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        if host.measure(&out) + host.measure(line) > cap {
            break;
        }
        out.push_str(line);
    }
    out
}
