//! The names the gateway exposes its upstream tools under.
//!
//! One scheme, in one place ([`exposed_name`]): `{alias}__{tool}`, with
//! every character outside `[A-Za-z0-9_-]` made `_` (the character set
//! hosts and model APIs accept in a tool name), at most [`MAX_NAME`]
//! characters. A name that is too long, or that two tools would share, is
//! cut and ends with `_` and a hash of the alias and the raw tool name, so
//! the mapping stays collision-free and the same inputs give the same names.

use std::collections::{BTreeMap, BTreeSet};

use crate::support::hash::fnv1a64;

/// The longest tool name the gateway exposes: the cap model APIs put on a
/// tool name (Anthropic's and OpenAI's `^[a-zA-Z0-9_-]{1,64}$`).
pub const MAX_NAME: usize = 64;

/// Between the alias and the tool name.
pub const SEPARATOR: &str = "__";

/// The name one upstream tool is exposed under, before collisions are
/// resolved: `{alias}__{tool}`, made safe and cut to [`MAX_NAME`] with a
/// hash suffix when longer.
pub fn exposed_name(alias: &str, tool: &str) -> String {
    let name = format!("{}{SEPARATOR}{}", safe(alias), safe(tool));
    if name.len() <= MAX_NAME {
        return name;
    }
    hashed(&name, alias, tool, 0)
}

/// `name` cut so that `_` and a hash of `(alias, tool, round)` fit in
/// [`MAX_NAME`].
fn hashed(name: &str, alias: &str, tool: &str, round: u32) -> String {
    let mut key = Vec::new();
    for part in [alias.as_bytes(), &[0], tool.as_bytes(), &[0]] {
        key.extend_from_slice(part);
    }
    key.extend_from_slice(&round.to_le_bytes());
    let suffix = format!("_{:012x}", fnv1a64(&key) & 0xffff_ffff_ffff);
    // `safe` leaves ASCII only, so cutting at a byte index is cutting at a character.
    let keep = name.len().min(MAX_NAME - suffix.len());
    format!("{}{suffix}", &name[..keep])
}

/// Every character outside `[A-Za-z0-9_-]` as `_`; never empty.
fn safe(raw: &str) -> String {
    let out: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() { "_".into() } else { out }
}

/// The exposed names of a set of upstream tools, both ways.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolNames {
    /// Exposed name to `(alias, upstream tool name)`.
    to_upstream: BTreeMap<String, (String, String)>,
    /// `(alias, upstream tool name)` to the exposed name.
    exposed: BTreeMap<(String, String), String>,
}

impl ToolNames {
    /// Names every `(alias, tool)` pair; `reserved` names (the gateway's
    /// own tools) are never given to an upstream tool. Pairs are named in
    /// sorted order, so the result does not depend on the order given.
    pub fn new<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
        reserved: &[&str],
    ) -> ToolNames {
        let pairs: BTreeSet<(&str, &str)> = pairs.into_iter().collect();
        // How many pairs want each plain name: a shared one is hashed for all of them.
        let mut wanted: BTreeMap<String, usize> = BTreeMap::new();
        for (alias, tool) in &pairs {
            *wanted.entry(exposed_name(alias, tool)).or_default() += 1;
        }
        let mut taken: BTreeSet<String> = reserved.iter().map(|r| r.to_string()).collect();
        let mut names = ToolNames::default();
        for (alias, tool) in pairs {
            let plain = exposed_name(alias, tool);
            let mut name = plain.clone();
            let mut round = 0;
            while wanted[&plain] > 1 || taken.contains(&name) {
                name = hashed(&plain, alias, tool, round);
                if !taken.contains(&name) {
                    break;
                }
                round += 1;
            }
            taken.insert(name.clone());
            names
                .to_upstream
                .insert(name.clone(), (alias.to_string(), tool.to_string()));
            names
                .exposed
                .insert((alias.to_string(), tool.to_string()), name);
        }
        names
    }

    /// The `(alias, tool)` behind an exposed name.
    pub fn upstream(&self, exposed: &str) -> Option<(&str, &str)> {
        self.to_upstream
            .get(exposed)
            .map(|(a, t)| (a.as_str(), t.as_str()))
    }

    /// The exposed name of `alias`'s tool `tool`.
    pub fn exposed(&self, alias: &str, tool: &str) -> Option<&str> {
        self.exposed
            .get(&(alias.to_string(), tool.to_string()))
            .map(String::as_str)
    }

    /// How many tools are named.
    pub fn len(&self) -> usize {
        self.exposed.len()
    }

    /// Whether no tool is named.
    pub fn is_empty(&self) -> bool {
        self.exposed.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_join_alias_and_tool() {
        assert_eq!(
            exposed_name("billing", "get_invoice"),
            "billing__get_invoice"
        );
        assert_eq!(exposed_name("my server", "a.b/c"), "my_server__a_b_c");
        assert_eq!(exposed_name("", ""), "____");
    }

    #[test]
    fn long_names_are_cut_with_a_hash() {
        let tool = "t".repeat(80);
        let a = exposed_name("billing", &tool);
        let b = exposed_name("billing", &format!("{tool}x"));
        assert_eq!(a.len(), MAX_NAME);
        assert!(a.starts_with("billing__ttt"));
        assert_ne!(a, b);
        assert_eq!(a, exposed_name("billing", &tool), "deterministic");
    }

    #[test]
    fn collisions_are_impossible() {
        // `a b` and `a_b` make the same safe name; so do `x.y` and `x_y`.
        let pairs = [("a b", "x.y"), ("a_b", "x_y"), ("a_b", "x.y"), ("c", "mcp")];
        let names = ToolNames::new(pairs, &["c__mcp"]);
        assert_eq!(names.len(), 4);
        let all: BTreeSet<&str> = pairs
            .iter()
            .map(|(a, t)| names.exposed(a, t).unwrap())
            .collect();
        assert_eq!(all.len(), 4, "{all:?}");
        assert!(!all.contains("c__mcp"), "a reserved name is never given");
        for (a, t) in pairs {
            let name = names.exposed(a, t).unwrap();
            assert!(name.len() <= MAX_NAME);
            assert_eq!(names.upstream(name), Some((a, t)));
        }
        let reversed = ToolNames::new(pairs.iter().rev().copied(), &["c__mcp"]);
        assert_eq!(names, reversed, "order given does not matter");
    }
}
