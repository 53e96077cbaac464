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
        let session = self.template.session(count)?;
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
        let session = self.template.session(blocks.len())?;
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

    /// Tokens of the section. When the counter splits after newlines (see
    /// [`TokenCounter::splits_after_newline`](crate::TokenCounter::splits_after_newline)),
    /// the section is counted piece by piece at the block and body starts
    /// that follow a newline, so unchanged pieces come from the memo;
    /// otherwise it is counted whole.
    pub(super) fn count_section(&self, layout: &Layout) -> usize {
        let text = &layout.text;
        if !self.counter.splits_after_newline() {
            return self.counter.count(text);
        }
        let bytes = text.as_bytes();
        let mut cuts: Vec<usize> = layout
            .starts
            .iter()
            .copied()
            .filter(|&p| cuts_after_newline(bytes, p))
            .collect();
        cuts.dedup();
        let mut total = 0;
        let mut from = 0;
        for cut in cuts.into_iter().chain(std::iter::once(text.len())) {
            if cut > from {
                total += self.count_pieces(&text[from..cut]);
                from = cut;
            }
        }
        total
    }

    /// Tokens of `text` (a block, or a piece of the section from a block's
    /// start). When the counter splits after newlines, it is counted in
    /// pieces of at least [`PIECE_BYTES`], each cut at the first place
    /// after that where [`Assembler::count_section`] may cut, so a block
    /// and the same block in the section share all pieces but the last in
    /// the counter's memo (and so do a block and its trimmed versions up
    /// to the first change). The last piece is cut again at the last such
    /// place, so that the section counts only the last lines of each block
    /// anew.
    pub(super) fn count_pieces(&self, text: &str) -> usize {
        if !self.counter.splits_after_newline() {
            return self.counter.count(text);
        }
        let bytes = text.as_bytes();
        let mut total = 0;
        let mut from = 0;
        let mut search = PIECE_BYTES;
        while search < bytes.len() {
            let Some(at) = bytes[search - 1..].iter().position(|b| *b == b'\n') else {
                break;
            };
            let cut = search + at;
            if cuts_after_newline(bytes, cut) {
                total += self.counter.count(&text[from..cut]);
                from = cut;
                search = cut + PIECE_BYTES;
            } else {
                search = cut + 1;
            }
        }
        // The last lines apart too: in the section the last piece goes on
        // into the body, so only they are counted again there.
        let last = bytes[from..]
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, b)| **b == b'\n')
            .map(|(at, _)| from + at + 1)
            .find(|&cut| cuts_after_newline(bytes, cut));
        if let Some(cut) = last {
            total += self.counter.count(&text[from..cut]);
            from = cut;
        }
        total + self.counter.count(&text[from..])
    }
}

/// Fewest bytes of a piece [`Assembler::count_pieces`] counts apart: large
/// enough that the counter is called a few times per block, not per line.
const PIECE_BYTES: usize = 512;

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
