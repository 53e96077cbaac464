//! Host profiles: what known hosts do with a server's instructions, kept as
//! data with the source of each fact, and what survives each host's cut.
//!
//! Each cut counts in the units the host counts in. Claude Code is
//! JavaScript and cuts by `String.prototype.length`, in UTF-16 code units
//! ([`HostCut::Utf16`]): an emoji outside the Basic Multilingual Plane
//! (`😀`) is 2 units, and a cut can fall between the two halves of one (the
//! half left over reaches the model as U+FFFD). Hosts whose unit is not
//! known ([`HostCut::Chars`]) are counted in Unicode scalar values (Rust's
//! `chars()`): `日本語` is 3 characters and `😀` is 1. For text without
//! astral characters (ASCII, Latin, CJK in the BMP) the two counts agree.
//!
//! Cuts are measured on the sanitized instructions (see
//! [`Linter`](super::Linter)), the text the other rules read. A host that
//! forwards the raw string with indentation cuts earlier; `MCP008` reports
//! that waste.
//!
//! # Adding a host
//!
//! The hosts are the rows of [`crate::hosts`]: add one there. Every row
//! whose cut is known is a profile here ([`HostProfile::known`]), and
//! `FromStr`, [`HostProfile::parse_list`], `all`, the error for an unknown
//! host, the binary's `--hosts` help and `MCP010` follow from it. A new
//! *kind* of cut also needs a [`HostCut`] variant and the rule in
//! `rules/cuts.rs` that computes what survives it.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::error::{Error, ErrorKind, Result};
use crate::hosts::{Cut, Host, Unit};

/// What a host forwards of a server's instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "limit")]
#[non_exhaustive]
pub enum HostCut {
    /// Nothing: the instructions never reach the model.
    Nothing,
    /// The first this many characters (Unicode scalar values), cut
    /// wherever that falls, mid-word included.
    Chars(usize),
    /// The first this many UTF-16 code units (JavaScript's `.length`), cut
    /// wherever that falls, mid-word and mid-surrogate-pair included, then
    /// [`TRUNCATED_MARKER`] appended.
    Utf16(usize),
    /// `mcp-preamble`'s own assembly at this token budget per server block:
    /// whole units (sentences, list items) are removed, constraints last.
    /// Assembled with [`Assembler::new`](crate::Assembler::new)'s defaults
    /// (markdown template, `o200k_base`), whatever the linter's encoding.
    Budget(usize),
}

/// What Claude Code appends to instructions it cut ([`HostCut::Utf16`]).
pub const TRUNCATED_MARKER: &str = "… [truncated]";

/// One host's handling of instructions, with where each fact comes from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[non_exhaustive]
pub struct HostProfile {
    /// The profile's name, as `--hosts` takes it: `claude-code`.
    pub name: &'static str,
    /// What the host forwards.
    pub cut: HostCut,
    /// Where in the request the instructions go, as far as known.
    pub placement: &'static str,
    /// The source of the facts above.
    pub source: &'static str,
    /// `true` when the facts are reported by users or authors and not
    /// documented by the host or checked against its code.
    pub reported: bool,
}

/// The profile of a row of the host table, for hosts whose cut is known.
fn of_row(host: Host) -> Option<HostProfile> {
    let row = host.profile();
    let cut = match row.cut {
        Cut::Nothing => HostCut::Nothing,
        Cut::Cap(cap) => match cap.unit {
            Unit::Utf16 => HostCut::Utf16(cap.limit),
            _ => HostCut::Chars(cap.limit),
        },
        _ => return None,
    };
    Some(HostProfile {
        name: row.name,
        cut,
        placement: row.placement,
        source: row.source,
        reported: row.reported,
    })
}

/// The name of [`HostProfile::mcp_preamble`]'s profile, also the `--hosts`
/// prefix that gives its budget (`mcp-preamble=N`).
const MCP_PREAMBLE: &str = "mcp-preamble";

/// The `--hosts` word for every profile.
const ALL: &str = "all";

impl HostProfile {
    /// The known hosts, in the order of the host table (today:
    /// `claude-code`, `codex`, `claude-desktop`, `generic-4000`, `none`). `mcp-preamble` at
    /// a budget is [`HostProfile::mcp_preamble`].
    pub fn known() -> Vec<HostProfile> {
        Host::all().filter_map(of_row).collect()
    }

    /// `mcp-preamble` itself, assembling each server's block within
    /// `budget` tokens ([`Assembler::budget`](crate::Assembler::budget)).
    pub fn mcp_preamble(budget: usize) -> HostProfile {
        HostProfile {
            name: MCP_PREAMBLE,
            cut: HostCut::Budget(budget),
            placement: "the system-prompt section mcp-preamble assembles, in the server's own block",
            source: "this crate: Assembler::new().budget(n), removals as reported",
            reported: false,
        }
    }

    /// Every known host and `mcp-preamble` at `budget`.
    pub fn all(budget: usize) -> Vec<HostProfile> {
        let mut all = HostProfile::known();
        all.push(HostProfile::mcp_preamble(budget));
        all
    }

    /// Whether the host forwards anything.
    pub fn forwards(&self) -> bool {
        self.cut != HostCut::Nothing
    }

    /// Parses a list as `--hosts` takes it: names separated by commas,
    /// `all` for every profile, `mcp-preamble` (at `budget`) or
    /// `mcp-preamble=N`. Fails with [`ErrorKind::InvalidConfig`] on an
    /// unknown name.
    pub fn parse_list(list: &str, budget: usize) -> Result<Vec<HostProfile>> {
        let mut out: Vec<HostProfile> = Vec::new();
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let add: Vec<HostProfile> = if name == ALL {
                HostProfile::all(budget)
            } else if name == MCP_PREAMBLE {
                vec![HostProfile::mcp_preamble(budget)]
            } else if let Some(n) = name
                .strip_prefix(MCP_PREAMBLE)
                .and_then(|rest| rest.strip_prefix('='))
            {
                let n = n
                    .parse::<usize>()
                    .ok()
                    .filter(|_| n.bytes().all(|b| b.is_ascii_digit()))
                    .ok_or_else(|| {
                        Error::new(
                            ErrorKind::InvalidConfig,
                            format!("{name:?}: the budget must be a number of tokens"),
                        )
                    })?;
                vec![HostProfile::mcp_preamble(n)]
            } else {
                vec![name.parse::<HostProfile>()?]
            };
            for p in add {
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
        Ok(out)
    }
}

impl fmt::Display for HostCut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostCut::Nothing => f.write_str("forwards nothing"),
            HostCut::Chars(n) => write!(f, "forwards the first {n} characters"),
            HostCut::Utf16(n) => write!(
                f,
                "forwards the first {n} UTF-16 code units, then {TRUNCATED_MARKER:?}"
            ),
            HostCut::Budget(n) => write!(f, "assembles within {n} tokens"),
        }
    }
}

impl FromStr for HostProfile {
    type Err = Error;

    /// A known profile by name (`mcp-preamble` needs a budget: see
    /// [`HostProfile::parse_list`]).
    fn from_str(s: &str) -> Result<HostProfile> {
        Host::named(s).and_then(of_row).ok_or_else(|| {
            // Every name `--hosts` takes: the table's, then mcp-preamble's.
            let names: Vec<&str> = HostProfile::known().iter().map(|p| p.name).collect();
            Error::new(
                ErrorKind::InvalidConfig,
                format!(
                    "unknown host {s:?} (use {}, {MCP_PREAMBLE}, {MCP_PREAMBLE}=N or {ALL})",
                    names.join(", ")
                ),
            )
        })
    }
}

/// What of one server's instructions survives one host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct HostSurvival {
    /// The host's profile name.
    pub host: String,
    /// What the host does, e.g. `"forwards the first 2048 characters"`.
    pub cut: String,
    /// Whether the host forwards the instructions at all.
    pub forwarded: bool,
    /// Whether the profile's facts are reported rather than documented.
    pub reported: bool,
    /// Characters of the sanitized instructions, in the host's unit:
    /// Unicode scalar values, or UTF-16 code units when `unit` says so.
    pub chars: usize,
    /// Characters of the sanitized instructions that reach the model, in
    /// the same unit as `chars` and never more (for `mcp-preamble`: those of
    /// the units its assembly keeps whole; a marker the host appends is not
    /// counted here, but is in `tokens_kept`).
    pub chars_kept: usize,
    /// `"utf16"` when `chars` and `chars_kept` are UTF-16 code units
    /// ([`HostCut::Utf16`]); absent for Unicode scalar values.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// Tokens that reach the model, in the linter's encoding (for
    /// `mcp-preamble`: of the server's block as rendered, heading and tool
    /// list included).
    pub tokens_kept: usize,
    /// The units (sentences, list items, headings) that do not reach the
    /// model whole, in order.
    pub lost: Vec<LostUnit>,
}

/// A unit a host cuts off, whole or in part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct LostUnit {
    /// The 1-based line in the sanitized instructions.
    pub line: usize,
    /// The unit on one line, shortened, secrets redacted.
    pub text: String,
    /// It carries a constraint (an order, an obligation, identifier scope,
    /// a safety rule: must, never, always, before, after, only, IDs…).
    pub constraint: bool,
}

impl HostSurvival {
    /// How many lost units carry a constraint.
    pub fn lost_constraints(&self) -> usize {
        self.lost.iter().filter(|u| u.constraint).count()
    }

    /// The survival as lines for people: `host codex (reported): forwards
    /// the first 512 characters: 512 of 3602 characters, 128 tokens reach the
    /// model; 26 units lost, 9 with a constraint`, then one `lost
    /// constraint, line N: …` line per lost constraint sentence (indented by
    /// two spaces more than `indent`).
    pub fn describe(&self, indent: &str) -> String {
        use std::fmt::Write as _;
        let reported = if self.reported { " (reported)" } else { "" };
        let lost = self.lost.len();
        let fate = if !self.forwarded {
            format!("all {lost} units lost")
        } else if lost == 0 {
            "everything survives".to_string()
        } else {
            format!(
                "{lost} {} lost, {} with a constraint",
                if lost == 1 { "unit" } else { "units" },
                self.lost_constraints()
            )
        };
        let unit = match self.unit.as_deref() {
            Some("utf16") => "UTF-16 code units",
            _ => "characters",
        };
        let mut out = format!(
            "{indent}host {}{reported}: {}: {} of {} {unit}, {} tokens reach the model; {fate}\n",
            self.host, self.cut, self.chars_kept, self.chars, self.tokens_kept
        );
        if self.forwarded {
            for u in self.lost.iter().filter(|u| u.constraint) {
                let _ = writeln!(
                    out,
                    "{indent}  lost constraint, line {}: {}",
                    u.line, u.text
                );
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse() {
        let names = |l: &str| -> Vec<String> {
            HostProfile::parse_list(l, 400)
                .unwrap()
                .iter()
                .map(|p| format!("{} {}", p.name, p.cut))
                .collect()
        };
        assert_eq!(
            names("claude-code, mcp-preamble=200"),
            [
                "claude-code forwards the first 2048 UTF-16 code units, then \"… [truncated]\"",
                "mcp-preamble assembles within 200 tokens"
            ]
        );
        assert_eq!(names("all").len(), 6);
        assert_eq!(names("all,claude-code").len(), 6);
        let err = HostProfile::parse_list("cursor", 400).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidConfig);
        assert!(HostProfile::parse_list("mcp-preamble=+5", 400).is_err());
    }

    #[test]
    fn the_table_gives_the_names_and_the_error() {
        let names: Vec<&str> = HostProfile::known().iter().map(|p| p.name).collect();
        assert_eq!(
            names,
            [
                "claude-code",
                "codex",
                "claude-desktop",
                "generic-4000",
                "none"
            ]
        );
        let err = "cursor".parse::<HostProfile>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid configuration: unknown host \"cursor\" (use claude-code, codex, claude-desktop, generic-4000, none, mcp-preamble, mcp-preamble=N or all)"
        );
        let all: Vec<&str> = HostProfile::all(1).iter().map(|p| p.name).collect();
        assert_eq!(
            all,
            [
                "claude-code",
                "codex",
                "claude-desktop",
                "generic-4000",
                "none",
                "mcp-preamble"
            ]
        );
    }

    #[test]
    fn every_known_host_parses_by_its_name() {
        let mut seen = std::collections::HashSet::new();
        for p in &HostProfile::known() {
            assert!(seen.insert(p.name), "{} twice", p.name);
            assert!(
                p.name != ALL
                    && !p.name.starts_with(MCP_PREAMBLE)
                    && !p.name.contains(',')
                    && p.name == p.name.trim()
                    && !p.name.is_empty(),
                "{:?} cannot be given to --hosts",
                p.name
            );
            assert_eq!(&p.name.parse::<HostProfile>().unwrap(), p);
            assert_eq!(
                HostProfile::parse_list(p.name, 1).unwrap(),
                std::slice::from_ref(p)
            );
            // An older name gives the same profile, under its new name.
            for alias in Host::named(p.name).unwrap().profile().aliases {
                assert_eq!(&alias.parse::<HostProfile>().unwrap(), p);
            }
            assert!(
                !p.source.is_empty() && !p.placement.is_empty(),
                "{}",
                p.name
            );
        }
    }
}
