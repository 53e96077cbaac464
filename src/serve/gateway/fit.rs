//! Fitting the served instructions to the host that reads them.
//!
//! A host that cuts instructions cuts the gateway's too, blindly (the caps
//! and their units are rows of [`crate::hosts`]; Claude Code keeps the
//! first UTF-16 units of a server's instructions, mid-word). A gateway is
//! one server to its host, so the whole served text gets the host's cap.
//! Fitted with [`ServeAs`], the assembler keeps counting the policy's
//! budgets in the model's tokens and also fits the whole section in the
//! host's unit ([`Assembler::host_cap`]): the ladder removes whole units,
//! constraints last, and every server keeps a fair share instead of the
//! last ones losing everything.

use crate::assemble::Assembler;
use crate::error::{Error, ErrorKind, Result};
use crate::hosts::{Host, HostCap, Reads};

/// The host the gateway's instructions are fitted to (`serve --as`): a row
/// of the host table with a cap ([`crate::hosts::Cut::Cap`]) or that reads
/// instructions nowhere, or [`ServeAs::Plain`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ServeAs(Option<Host>);

/// `serve --as`'s word for no host cut.
const PLAIN: &str = "plain";

// Named choices for the hosts code and tests refer to most.
#[allow(non_upper_case_globals)]
impl ServeAs {
    /// No host cut: the policy's token budgets as they are.
    pub const Plain: ServeAs = ServeAs(None);
    /// Claude Code.
    pub const ClaudeCode: ServeAs = ServeAs(Some(Host::ClaudeCode));
    /// Codex.
    pub const Codex: ServeAs = ServeAs(Some(Host::Codex));
}

impl ServeAs {
    /// Fitted to `host`; `None` when its cut is not known. A host that
    /// reads instructions nowhere ([`Reads::Nowhere`]) is a choice too:
    /// `wrap` then delivers them in its reader tool's description.
    pub fn host(host: Host) -> Option<ServeAs> {
        let row = host.profile();
        (row.cut.cap().is_some() || row.reads == Reads::Nowhere).then_some(ServeAs(Some(host)))
    }

    /// Every choice `--as` takes: [`ServeAs::Plain`], then each host of
    /// the table with a cap.
    pub fn all() -> Vec<ServeAs> {
        std::iter::once(ServeAs::Plain)
            .chain(Host::all().filter_map(ServeAs::host))
            .collect()
    }

    /// The host's row, if any.
    pub fn as_host(self) -> Option<Host> {
        self.0
    }

    /// `plain` or the host's name.
    pub fn as_str(self) -> &'static str {
        self.0.map_or(PLAIN, Host::as_str)
    }

    /// The host's cap, in its own unit (`None` for [`ServeAs::Plain`]).
    pub fn cap(self) -> Option<HostCap> {
        self.0.and_then(|h| h.profile().cut.cap())
    }

    /// The length of `text` in the host's unit (bytes for
    /// [`ServeAs::Plain`]).
    pub fn measure(self, text: &str) -> usize {
        self.cap().map_or(text.len(), |c| c.measure(text))
    }

    /// `assembler` with the whole section (its frame included) less
    /// `reserve` units the gateway appends within the host's cap
    /// ([`Assembler::host_cap`]), besides its token budgets, which stay
    /// in the model's tokens. [`ServeAs::Plain`] returns it unchanged.
    /// Fails when the reserve alone does not fit.
    ///
    /// A host that sends the model the tools itself gets no tool list in
    /// the section ([`Assembler::tool_list`]), and no block gets a
    /// shortening line ([`Assembler::shortening_note`]): the gateway's note
    /// names the reader tool once.
    pub fn fit(self, assembler: Assembler, reserve: usize) -> Result<Assembler> {
        let sends = self.0.is_some_and(|h| h.profile().sends_tools);
        let assembler = if sends {
            assembler.tool_list(false)
        } else {
            assembler
        };
        // A host that reads instructions nowhere has no cap to fit.
        let Some(cap) = self.cap() else {
            return Ok(assembler);
        };
        // Under a cut the gateway's one note ([`super::NOTE`]) says where
        // full texts are: a line per shortened block would spend the cap.
        let assembler = assembler.shortening_note(false);
        match cap.less(reserve) {
            Some(room) => Ok(assembler.host_cap(room)),
            None => Err(Error::new(
                ErrorKind::InvalidConfig,
                format!(
                    "the gateway's note ({reserve} units) leaves nothing of {self}'s {}",
                    cap.limit
                ),
            )),
        }
    }
}

impl std::fmt::Display for ServeAs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

impl std::str::FromStr for ServeAs {
    type Err = Error;

    /// `plain`, or the name (or an older name) of a host with a cap; fails
    /// with [`ErrorKind::InvalidConfig`] naming the choices.
    fn from_str(s: &str) -> Result<ServeAs> {
        if s == PLAIN {
            return Ok(ServeAs::Plain);
        }
        let known: Vec<&str> = ServeAs::all().into_iter().map(ServeAs::as_str).collect();
        let known = known.join(", ");
        let why = match Host::named(s) {
            Some(host) => match ServeAs::host(host) {
                Some(fitted) => return Ok(fitted),
                None => format!("host {s:?} has no known cut (fit to one of: {known})"),
            },
            None => format!("unknown host {s:?} (known: {known})"),
        };
        Err(Error::new(ErrorKind::InvalidConfig, why))
    }
}

/// `text` within the host's cap: whole lines kept from the start, the rest
/// dropped. A last resort for an assembler that was not fitted
/// ([`ServeAs::fit`]): a fitted one never needs it.
pub(crate) fn within(host: ServeAs, text: &str) -> String {
    let Some(cap) = host.cap() else {
        return text.to_string();
    };
    if cap.fits(text) {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for line in text.split_inclusive('\n') {
        let n = cap.measure(line);
        if used + n > cap.limit {
            break;
        }
        used += n;
        out.push_str(line);
    }
    out
}
