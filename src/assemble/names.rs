//! Section order and shown names: both depend on every server at once.

use std::collections::{HashMap, HashSet};

use super::builder::Order;
use crate::model::ServerSnapshot;
use crate::sanitize::MAX_LINE_CHARS;
use crate::server_key::ServerKey;
use crate::text::cut_chars;

/// Where each server goes and what it is called there.
pub(super) struct Placement {
    /// Input indices, in section order.
    pub order: Vec<usize>,
    /// Per section position: the shown name, and the name it had when a
    /// suffix was added to it.
    pub shown: Vec<(String, Option<String>)>,
    /// Per input index: the key budgets and policies are looked up by.
    pub config_keys: Vec<Option<ServerKey>>,
}

/// Orders `servers` and names them.
///
/// Budgets and policies go by [`ServerKey`]: a server without an alias is
/// found by its own name only when no alias claims that name.
pub(super) fn place(servers: &[&ServerSnapshot], how: Order) -> Placement {
    let mut order: Vec<usize> = (0..servers.len()).collect();
    let names: Vec<String> = servers.iter().map(|s| s.display_name()).collect();
    if how == Order::Name {
        let key = |i: usize| {
            let s = servers[i];
            (
                &names[i],
                s.alias.is_none(),
                &s.server_info.name,
                &s.server_info.version,
                s.instructions.raw(),
                s.tools.len(),
            )
        };
        // Full content breaks the remaining ties, so input order never shows.
        let content = |i: usize| serde_json::to_string(servers[i]).unwrap_or_default();
        order.sort_by(|a, b| {
            key(*a)
                .cmp(&key(*b))
                .then_with(|| content(*a).cmp(&content(*b)))
                .then(a.cmp(b))
        });
    }
    let shown = disambiguate(
        &order
            .iter()
            .map(|i| (names[*i].as_str(), servers[*i].alias.is_some()))
            .collect::<Vec<_>>(),
    );
    let config_keys = ServerKey::resolve(servers);
    Placement {
        order,
        shown,
        config_keys,
    }
}

/// The shown names, in section order. A name a host alias claims is kept
/// by that server; any other server that would show the same name gets a
/// suffix ` (2)`, ` (3)`, … that no other server's name has (the original
/// name is kept beside it).
fn disambiguate(names: &[(&str, bool)]) -> Vec<(String, Option<String>)> {
    let mut taken: HashSet<String> = names.iter().map(|(n, _)| n.to_string()).collect();
    let mut owner: HashMap<&str, usize> = HashMap::new();
    // Aliased servers claim their names first, then the rest in order.
    for (k, (name, aliased)) in names.iter().enumerate() {
        if *aliased {
            owner.entry(name).or_insert(k);
        }
    }
    for (k, (name, _)) in names.iter().enumerate() {
        owner.entry(name).or_insert(k);
    }
    names
        .iter()
        .enumerate()
        .map(|(k, (name, _))| {
            if owner.get(name) == Some(&k) {
                return (name.to_string(), None);
            }
            let mut n = 2;
            let renamed = loop {
                // The suffix must survive the one-line cut every renderer applies.
                let suffix = format!(" ({n})");
                let room = MAX_LINE_CHARS.saturating_sub(suffix.chars().count());
                let candidate = format!("{}{suffix}", cut_chars(name, room));
                if !taken.contains(&candidate) {
                    break candidate;
                }
                n += 1;
            };
            taken.insert(renamed.clone());
            (renamed, Some(name.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suffix_fits_the_line_limit() {
        // Found by the `section` fuzz target: a 120-character name twice.
        let long = "n".repeat(MAX_LINE_CHARS);
        let shown = disambiguate(&[(&long, false), (&long, false)]);
        assert_eq!(shown[0].0, long);
        assert!(shown[1].0.ends_with("… (2)"), "{}", shown[1].0);
        assert_eq!(shown[1].0.chars().count(), MAX_LINE_CHARS);
        assert_eq!(crate::sanitize::line(&shown[1].0), shown[1].0);
    }
}
