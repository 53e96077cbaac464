//! What rendering a server's block gives, and what it must fit in.

use crate::error::Result;
use crate::template::ServerView;

/// A server's block as rendered, with its token count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rendered {
    /// The block's text, as it stands in the section.
    pub text: String,
    /// Its tokens, counted with the assembler's tokenizer.
    pub tokens: usize,
}

/// The outcome of rendering a view: a block, or none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Render {
    /// The block rendered and was counted.
    Block(Rendered),
    /// The template ran out of fuel (or the block grew past
    /// [`MAX_BLOCK_BYTES`](crate::template::MAX_BLOCK_BYTES)): there is no
    /// block, and it fits no budget.
    OutOfFuel,
}

impl Render {
    /// Its tokens; `None` when it did not render.
    pub(crate) fn tokens(&self) -> Option<usize> {
        match self {
            Render::Block(r) => Some(r.tokens),
            Render::OutOfFuel => None,
        }
    }

    /// Whether it fits `bound`.
    pub(crate) fn fits(&self, bound: Bound) -> bool {
        match self {
            Render::Block(r) => bound.holds(r),
            Render::OutOfFuel => false,
        }
    }

    /// The block, when it fits `bound`.
    pub(crate) fn within(self, bound: Bound) -> Option<Rendered> {
        match self {
            Render::Block(r) if bound.holds(&r) => Some(r),
            _ => None,
        }
    }
}

/// What a block on the ladder must fit in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bound {
    /// At most this many tokens (its budget or share).
    Tokens(usize),
    /// Anything that renders: a block that ran out of fuel without a budget
    /// shrinks only until it renders.
    Renders,
}

impl Bound {
    /// Whether `block` is within it.
    fn holds(self, block: &Rendered) -> bool {
        match self {
            Bound::Tokens(limit) => block.tokens <= limit,
            Bound::Renders => true,
        }
    }
}

/// Renders a view and counts its tokens.
pub(crate) type Measure<'m> = dyn FnMut(&ServerView) -> Result<Render> + 'm;

#[cfg(test)]
mod tests {
    use super::*;

    fn block(tokens: usize) -> Render {
        Render::Block(Rendered {
            text: format!("{tokens} tokens"),
            tokens,
        })
    }

    #[test]
    fn a_block_fits_a_bound_by_its_tokens() {
        assert!(block(10).fits(Bound::Tokens(10)));
        assert!(!block(11).fits(Bound::Tokens(10)));
        assert!(block(1 << 20).fits(Bound::Renders));
        assert_eq!(block(3).within(Bound::Tokens(3)).map(|r| r.tokens), Some(3));
        assert_eq!(block(4).within(Bound::Tokens(3)), None);
    }

    #[test]
    fn out_of_fuel_fits_nothing() {
        assert!(!Render::OutOfFuel.fits(Bound::Renders));
        assert!(!Render::OutOfFuel.fits(Bound::Tokens(u32::MAX as usize)));
        assert_eq!(Render::OutOfFuel.within(Bound::Renders), None);
        assert_eq!(Render::OutOfFuel.tokens(), None);
        assert_eq!(block(7).tokens(), Some(7));
    }
}
