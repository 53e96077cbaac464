//! Quotation marks and brackets: the pairs that a unit keeps whole, so no
//! budget leaves half a quotation or an unclosed parenthesis in the prompt.
//!
//! Straight double quotes pair in order (only when a text has an even number
//! of them: an odd one cannot be told apart); curly double quotes,
//! parentheses and square brackets pair by nesting, each kind on its own
//! (a stray `)` of a "1)" list does not undo a later pair). Single quotes
//! are apostrophes as often as quotes and are not paired.

/// The pairs: opening and closing character (the same for `"`).
const KINDS: [(char, char); 4] = [('"', '"'), ('\u{201C}', '\u{201D}'), ('(', ')'), ('[', ']')];

/// Byte ranges of `text`, from an opening character to just past its closing
/// one, of every matched pair outside `skip` (sorted, not overlapping: code
/// spans and URLs, whose characters pair with nothing). Sorted by start;
/// nested pairs overlap their outer pair.
pub(crate) fn matched(text: &str, skip: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut stacks: [Vec<usize>; KINDS.len()] = Default::default();
    let mut straight = Vec::new();
    let mut out = Vec::new();
    let mut guard = skip.iter().peekable();
    for (i, c) in text.char_indices() {
        while guard.next_if(|(_, end)| *end <= i).is_some() {}
        if guard.peek().is_some_and(|(start, _)| *start <= i) {
            continue;
        }
        if c == '"' {
            straight.push(i);
            continue;
        }
        for (k, (open, close)) in KINDS.iter().enumerate().skip(1) {
            if c == *open {
                stacks[k].push(i);
            } else if c == *close
                && let Some(start) = stacks[k].pop()
            {
                out.push((start, i + c.len_utf8()));
            }
        }
    }
    if straight.len().is_multiple_of(2) {
        out.extend(straight.chunks(2).map(|p| (p[0], p[1] + 1)));
    }
    out.sort_unstable();
    out
}

/// `ranges` (sorted by start) merged where they overlap or nest: the
/// outermost extents, sorted and not overlapping.
pub(crate) fn merged(ranges: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
    for &(a, b) in ranges {
        match out.last_mut() {
            Some(last) if a < last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces<'a>(s: &'a str, skip: &[(usize, usize)]) -> Vec<&'a str> {
        matched(s, skip).iter().map(|(a, b)| &s[*a..*b]).collect()
    }

    #[test]
    fn each_kind_pairs_on_its_own() {
        let s = "1) say \"hi (there)\" [see “a”] (x";
        assert_eq!(
            pieces(s, &[]),
            ["\"hi (there)\"", "(there)", "[see “a”]", "“a”"]
        );
    }

    #[test]
    fn an_odd_number_of_straight_quotes_pairs_none() {
        assert!(pieces("a \"b\" c \"d", &[]).is_empty());
    }

    #[test]
    fn skipped_ranges_pair_nothing() {
        let s = "call `f(\"` then (ok)";
        let code = s.find('`').unwrap();
        let end = s[code + 1..].find('`').unwrap() + code + 2;
        assert_eq!(pieces(s, &[(code, end)]), ["(ok)"]);
    }

    #[test]
    fn nested_and_overlapping_ranges_merge() {
        assert_eq!(
            merged(&[(0, 10), (2, 4), (8, 12), (20, 22)]),
            [(0, 12), (20, 22)]
        );
    }
}
