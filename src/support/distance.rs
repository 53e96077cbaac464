//! Edit distance, and the closest of several names (for "did you mean").

/// Levenshtein distance between `a` and `b`, in characters.
pub(crate) fn levenshtein(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    table(&a, &b)
}

/// [`levenshtein`] for names a server controls: compares at most the first
/// 64 characters of each, and when their lengths differ by more than 8
/// returns that difference without the table (it is a lower bound, and far
/// past any suggestion's threshold).
pub(crate) fn levenshtein_bounded(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().take(64).collect();
    let b: Vec<char> = b.chars().take(64).collect();
    if a.len().abs_diff(b.len()) > 8 {
        return a.len().abs_diff(b.len());
    }
    table(&a, &b)
}

/// How many edits a typo of `name` may have: two, or a third of its length
/// when that is more.
pub(crate) fn typo_edits(name: &str) -> usize {
    (name.chars().count() / 3).max(2)
}

/// The candidate closest to `name` by [`levenshtein`] distance, if one is
/// within `max` edits; of equally close ones, the smallest.
pub(crate) fn closest<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    max: usize,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (levenshtein(name, c), c))
        .filter(|(d, _)| *d <= max)
        .min()
        .map(|(_, c)| c)
}

/// The candidate `name` is most likely a misspelling of: the [`closest`]
/// within [`typo_edits`] (for "did you mean" hints on keys and aliases).
pub(crate) fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    closest(name, candidates, typo_edits(name))
}

/// The dynamic-programming table, one row at a time.
fn table(a: &[char], b: &[char]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = (diag + usize::from(ca != cb)).min(up + 1).min(row[j] + 1);
            diag = up;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levenshtein_counts_edits() {
        assert_eq!(levenshtein("budgett", "budget"), 1);
        assert_eq!(levenshtein("get_invoice", "get_invoices"), 1);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("abc", ""), 3);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        // A transposition is two edits (Levenshtein, not Damerau).
        assert_eq!(levenshtein("wieght", "weight"), 2);
        // Characters, not bytes; case counts.
        assert_eq!(levenshtein("café", "cafe"), 1);
        assert_eq!(levenshtein("Budget", "budget"), 1);
    }

    #[test]
    fn bounded_matches_levenshtein_on_short_names() {
        for (a, b) in [
            ("get_invoice", "get_invoices"),
            ("", "abc"),
            ("kitten", "sitting"),
            ("list_periods", "list-period"),
        ] {
            assert_eq!(levenshtein_bounded(a, b), levenshtein(a, b));
        }
    }

    #[test]
    fn bounded_caps_length_and_work() {
        // Past 8 characters apart, the difference stands in for the distance.
        assert_eq!(levenshtein_bounded("a", "bbbbbbbbbbbb"), 11);
        assert_eq!(levenshtein("a", "bbbbbbbbbbbb"), 12);
        // Only the first 64 characters count.
        let long_a = format!("{}x", "a".repeat(64));
        let long_b = format!("{}y", "a".repeat(64));
        assert_eq!(levenshtein_bounded(&long_a, &long_b), 0);
        assert_eq!(levenshtein(&long_a, &long_b), 1);
    }

    #[test]
    fn typo_edits_is_two_or_a_third() {
        assert_eq!(typo_edits(""), 2);
        assert_eq!(typo_edits("budget"), 2);
        assert_eq!(typo_edits("abcdefghi"), 3);
        assert_eq!(typo_edits("ééééééééé"), 3);
    }

    #[test]
    fn closest_within_max() {
        let keys = ["budget", "total_budget", "weight", "defaults"];
        assert_eq!(closest("budgett", keys, 2), Some("budget"));
        assert_eq!(closest("wieght", keys, 2), Some("weight"));
        assert_eq!(closest("default", keys, 2), Some("defaults"));
        assert_eq!(closest("zzzzzzzz", keys, 2), None);
        // `max` is inclusive.
        assert_eq!(closest("wieght", keys, 1), None);
        assert_eq!(closest("budget", keys, 0), Some("budget"));
        assert_eq!(closest("x", std::iter::empty(), 5), None);
    }

    #[test]
    fn did_you_mean_allows_two_edits_or_a_third() {
        let keys = ["budget", "total_budget", "weight", "defaults"];
        assert_eq!(did_you_mean("wieght", keys), Some("weight"));
        assert_eq!(did_you_mean("zzzzzzzz", keys), None);
        // Nine characters allow three edits.
        assert_eq!(did_you_mean("totl_budg", keys), Some("total_budget"));
        assert_eq!(did_you_mean("tot_budg", keys), None);
    }

    #[test]
    fn closest_breaks_ties_by_the_smallest_name() {
        // "bat" and "cat" are both one edit from "hat"; order given is irrelevant.
        assert_eq!(closest("hat", ["cat", "bat"], 2), Some("bat"));
        assert_eq!(closest("hat", ["bat", "cat"], 2), Some("bat"));
        // A closer one wins over a smaller one.
        assert_eq!(closest("hat", ["aaa", "hit", "hat"], 2), Some("hat"));
    }
}
