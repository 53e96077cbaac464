//! De-duplicating one server's skills (`skills/list`).
//!
//! A skill is identified by its URI within its server (the Skills
//! extension: "the identity of an MCP-served skill is the pair of the
//! host's identity for the originating server and the skill's `uri`"). So
//! an entry whose URI, once sanitized, an earlier entry has is a repeat:
//! the first is kept. Two entries with one name at different URIs are two
//! skills: both stay, told apart by their URIs (the extension forbids
//! silently discarding or preferring one).

use std::collections::HashSet;

/// Of `uris` (sanitized, in the server's order), which to keep: each URI's
/// first entry, and no empty one.
pub(crate) fn skills_to_keep<'a>(uris: impl IntoIterator<Item = &'a str>) -> Vec<bool> {
    let mut seen = HashSet::new();
    uris.into_iter()
        .map(|uri| !uri.is_empty() && seen.insert(uri))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_uri_keeps_its_first_entry_and_same_names_stay() {
        let keep = skills_to_keep([
            "skill://a/SKILL.md",
            "skill://b/a/SKILL.md",
            "skill://a/SKILL.md",
            "",
        ]);
        assert_eq!(keep, [true, true, false, false]);
    }
}
