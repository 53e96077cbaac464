//! The section around the blocks, and its token count.

use super::builder::Assembler;
use crate::budget::Rendered;
use crate::error::Result;

/// The section text, each server's byte span in it, and the start of every
/// body part and block.
pub(super) struct Layout {
    pub text: String,
    pub spans: Vec<Option<(usize, usize)>>,
    starts: Vec<usize>,
}

impl Assembler {
    /// Tokens of the section around `count` blocks.
    pub(super) fn overhead(&self, count: usize) -> Result<usize> {
        if count == 0 {
            return Ok(0);
        }
        let session = self.template.session_in(count, self.own_room)?;
        Ok(self.counter.count(&session.body_parts(count)?.concat()))
    }

    /// Lays the fitted blocks (`None`: no block) out in the template's body.
    pub(super) fn layout(&self, fitted: &[Option<Rendered>]) -> Result<Layout> {
        let mut layout = Layout {
            text: String::new(),
            spans: vec![None; fitted.len()],
            starts: Vec::new(),
        };
        let blocks: Vec<(usize, &str)> = fitted
            .iter()
            .enumerate()
            .filter_map(|(i, f)| f.as_ref().map(|b| (i, b.text.as_str())))
            .collect();
        if blocks.is_empty() {
            return Ok(layout);
        }
        let session = self.template.session_in(blocks.len(), self.own_room)?;
        let text = &mut layout.text;
        for (k, part) in session.body_parts(blocks.len())?.iter().enumerate() {
            layout.starts.push(text.len());
            text.push_str(part);
            if let Some((i, block)) = blocks.get(k) {
                let start = text.len();
                layout.starts.push(start);
                text.push_str(block);
                layout.spans[*i] = Some((start, text.len()));
            }
        }
        Ok(layout)
    }

    /// Tokens of the section. When the counter splits after newlines or
    /// before words (see
    /// [`TokenCounter::splits_after_newline`](crate::TokenCounter::splits_after_newline)
    /// and [`TokenCounter::splits_before_word`](crate::TokenCounter::splits_before_word)),
    /// the section is cut where each block is cut by
    /// [`Assembler::count_pieces`] (at the same offsets from the block's
    /// start) and at the body and block starts where it may be cut, so the
    /// pieces of a block are its own pieces from the memo and only the
    /// text from a block's last cut to the next cut is counted anew;
    /// otherwise it is counted whole.
    pub(super) fn count_section(&self, layout: &Layout) -> usize {
        let text = &layout.text;
        let rule = self.cuts();
        if !rule.any() {
            return self.counter.count(text);
        }
        let bytes = text.as_bytes();
        let mut cuts: Vec<usize> = layout
            .starts
            .iter()
            .copied()
            .filter(|&p| rule.allows(bytes, p))
            .collect();
        for &(start, end) in layout.spans.iter().flatten() {
            cuts.extend(rule.of_block(&bytes[start..end]).iter().map(|c| start + c));
        }
        cuts.sort_unstable();
        cuts.dedup();
        self.count_at(text, &cuts)
    }

    /// Tokens of `text` (a block). When the counter splits after newlines,
    /// it is counted in pieces of at least [`PIECE_BYTES`], each cut at the
    /// first place after that where it may be cut, so a block and its
    /// trimmed versions share all pieces up to the first change in the
    /// counter's memo. The last piece is cut again at its last such place,
    /// and, when the counter splits before words, once more at its last
    /// word: in the section the block goes on into the body, and
    /// [`Assembler::count_section`] cuts it at the same places, so only the
    /// last word is counted again there.
    pub(super) fn count_pieces(&self, text: &str) -> usize {
        let rule = self.cuts();
        if !rule.any() {
            return self.counter.count(text);
        }
        let cuts = rule.of_block(text.as_bytes());
        self.count_at(text, &cuts)
    }

    /// The sum of the counts of `text` cut at `cuts` (ascending, each on a
    /// character boundary: every place a [`Cuts`] allows is after an ASCII
    /// byte).
    fn count_at(&self, text: &str, cuts: &[usize]) -> usize {
        let mut total = 0;
        let mut from = 0;
        for &cut in cuts.iter().chain(std::iter::once(&text.len())) {
            if cut > from {
                total += self.counter.count(&text[from..cut]);
                from = cut;
            }
        }
        total
    }

    /// Where this assembler's counter lets text be cut.
    fn cuts(&self) -> Cuts {
        Cuts {
            newline: self.counter.splits_after_newline(),
            word: self.counter.splits_before_word(),
            newline_after_word: self.counter.splits_before_newline(),
        }
    }
}

/// Fewest bytes of a piece [`Assembler::count_pieces`] counts apart: large
/// enough that the counter is called a few times per block, not per line.
const PIECE_BYTES: usize = 512;

/// The places a counter lets text be cut without changing its count.
#[derive(Clone, Copy)]
struct Cuts {
    /// After a newline ([`cuts_after_newline`]).
    newline: bool,
    /// Before a word ([`cuts_before_word`]).
    word: bool,
    /// Between a word and a newline ([`cuts_before_newline`]); only the
    /// section uses it, at a block's end.
    newline_after_word: bool,
}

impl Cuts {
    fn any(self) -> bool {
        self.newline || self.word || self.newline_after_word
    }

    /// Whether `bytes` may be cut at `p`. Each rule looks only at the bytes
    /// next to `p`, so a place allowed in a block is allowed at the same
    /// place of the section, and in any piece around it.
    fn allows(self, bytes: &[u8], p: usize) -> bool {
        (self.newline && cuts_after_newline(bytes, p))
            || (self.word && cuts_before_word(bytes, p))
            || (self.newline_after_word && cuts_before_newline(bytes, p))
    }

    /// The places [`Assembler::count_pieces`] cuts a block at, ascending:
    /// every first newline cut at least [`PIECE_BYTES`] after the last cut,
    /// then the last newline cut, then the last word cut after it.
    fn of_block(self, bytes: &[u8]) -> Vec<usize> {
        let mut cuts = Vec::new();
        let mut from = 0;
        if self.newline {
            let mut search = PIECE_BYTES;
            while search < bytes.len() {
                let Some(at) = bytes[search - 1..].iter().position(|b| *b == b'\n') else {
                    break;
                };
                let cut = search + at;
                if cuts_after_newline(bytes, cut) {
                    cuts.push(cut);
                    from = cut;
                    search = cut + PIECE_BYTES;
                } else {
                    search = cut + 1;
                }
            }
            let last = bytes[from..]
                .iter()
                .enumerate()
                .rev()
                .filter(|(_, b)| **b == b'\n')
                .map(|(at, _)| from + at + 1)
                .find(|&cut| cuts_after_newline(bytes, cut));
            if let Some(cut) = last {
                cuts.push(cut);
                from = cut;
            }
        }
        if self.word {
            let last = bytes[from..]
                .iter()
                .enumerate()
                .rev()
                .filter(|(_, b)| **b == b' ')
                .map(|(at, _)| from + at)
                .find(|&cut| cut > from && cuts_before_word(bytes, cut));
            cuts.extend(last);
        }
        cuts
    }
}

/// Whether text may be cut at byte `p` for counting: right after a newline
/// and before a character other than whitespace or `/` (see
/// [`TokenCounter::splits_after_newline`](crate::TokenCounter::splits_after_newline)).
fn cuts_after_newline(bytes: &[u8], p: usize) -> bool {
    p > 0
        && p < bytes.len()
        && bytes[p - 1] == b'\n'
        && !bytes[p].is_ascii_whitespace()
        && bytes[p] != b'/'
}

/// Whether text may be cut at byte `p` for counting: before a single space
/// between two printable ASCII characters (`"word,| next"`; see
/// [`TokenCounter::splits_before_word`](crate::TokenCounter::splits_before_word)).
fn cuts_before_word(bytes: &[u8], p: usize) -> bool {
    p > 0
        && p + 1 < bytes.len()
        && bytes[p - 1].is_ascii_graphic()
        && bytes[p] == b' '
        && bytes[p + 1].is_ascii_graphic()
}

/// Whether text may be cut at byte `p` for counting: between an ASCII
/// letter or digit and a newline (`"word|\n"`; see
/// [`TokenCounter::splits_before_newline`](crate::TokenCounter::splits_before_newline)).
fn cuts_before_newline(bytes: &[u8], p: usize) -> bool {
    p > 0 && p < bytes.len() && bytes[p - 1].is_ascii_alphanumeric() && bytes[p] == b'\n'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word_cuts(text: &str) -> Vec<usize> {
        (0..=text.len())
            .filter(|&p| cuts_before_word(text.as_bytes(), p))
            .collect()
    }

    #[test]
    fn a_word_cut_is_a_space_between_printable_ascii() {
        assert_eq!(word_cuts("abc def"), [3]);
        assert_eq!(word_cuts("A1 Z x9 q"), [2, 4, 7]);
        assert_eq!(word_cuts("`a`, `b` 12 .x"), [4, 8, 11]);
        // Refused: two spaces, a space before or after a non-ASCII letter,
        // a newline, a tab or the text's end; a tab or a no-break space
        // for the space.
        for text in [
            "abc  def",
            "abc \u{e9}t\u{e9}",
            "abc\u{e9} def",
            "\u{65e5} def",
            "abc\n def",
            "abc \ndef",
            "abc \r\ndef",
            "abc\tdef",
            "abc\u{a0}def",
            "abc ",
            " def",
        ] {
            assert_eq!(word_cuts(text), [] as [usize; 0], "{text:?}");
        }
    }

    #[test]
    fn a_newline_cut_is_after_an_ascii_letter_or_digit() {
        let at = |text: &str| -> Vec<usize> {
            (0..=text.len())
                .filter(|&p| cuts_before_newline(text.as_bytes(), p))
                .collect()
        };
        assert_eq!(at("word\nnext"), [4]);
        assert_eq!(at("a1\n\nZ\r\n9\n"), [2, 8]);
        // Refused: after punctuation, a space, a newline or a non-ASCII
        // letter (tiktoken's symbol pieces take the newlines after them),
        // before a carriage return, at either end.
        for text in [
            "`a`\n",
            "a.\n",
            "a \n",
            "\n\n",
            "caf\u{e9}\n",
            "a\r\n",
            "\nx",
        ] {
            assert_eq!(at(text), [] as [usize; 0], "{text:?}");
        }
        // Blocks are not cut there: only the section, at a block's end.
        let only = Cuts {
            newline: false,
            word: false,
            newline_after_word: true,
        };
        assert!(only.any());
        assert_eq!(only.of_block(b"word\nnext"), [] as [usize; 0]);
        assert!(only.allows(b"word\nnext", 4));
    }

    #[test]
    fn a_block_is_cut_at_its_last_word_after_its_last_newline() {
        let all = Cuts {
            newline: true,
            word: true,
            newline_after_word: true,
        };
        let cuts = |rule: Cuts, text: &str| rule.of_block(text.as_bytes());
        // "# Head\n" | "Use the tool" | " now."
        assert_eq!(cuts(all, "# Head\nUse the tool now."), [7, 19]);
        let words = Cuts {
            newline: false,
            word: true,
            newline_after_word: false,
        };
        assert_eq!(cuts(words, "# Head\nUse the tool now."), [19]);
        let lines = Cuts {
            newline: true,
            word: false,
            newline_after_word: false,
        };
        assert_eq!(cuts(lines, "# Head\nUse the tool now."), [7]);
        // No word cut after the last newline cut: none before it either.
        assert_eq!(cuts(all, "Use the tool\nnow."), [13]);
        assert_eq!(cuts(all, "Use the tool\n- `now`, `then`"), [13, 21]);
        // Long blocks: pieces of at least PIECE_BYTES, then the last line's
        // last word.
        let line = format!("{}\n", "word ".repeat(30).trim_end());
        let long = line.repeat(20);
        let got = cuts(all, &long);
        let (tail, pieces) = got.split_last().unwrap();
        assert!(
            pieces
                .windows(2)
                .all(|w| w[1] - w[0] >= PIECE_BYTES || w[1] == long.len() - line.len())
        );
        assert_eq!(*tail, long.len() - "word\n".len() - 1);
        assert!(got.iter().all(|&p| all.allows(long.as_bytes(), p)));
    }
}
