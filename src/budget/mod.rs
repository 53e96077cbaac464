//! Fitting each server's block into its token budget, and sharing a total
//! budget between servers.
//!
//! The guarantee is on the block as rendered: every candidate is rendered
//! with the real template and counted with the real tokenizer. A block over
//! its budget goes down the ladder the crate docs describe under "Budgets",
//! one rung at a time ([`RUNGS`]), and stops at the first that fits.
//!
//! - `render.rs`: a rendered block ([`Rendered`]), or none ([`Render::OutOfFuel`]).
//! - `units.rs`: the instructions as units, and the order a budget drops them in.
//! - `ladder.rs`: a block on its way down, the search for the smallest cut
//!   that fits, and the rungs of step 4 and of the end.
//! - `tools.rs`: step 2, the loaded tools.
//! - `index.rs`: step 3, the tool index.
//! - `skills.rs`: step 4 for a server with skills: the units below
//!   constraints, then the skills index.
//! - `trim.rs`: step 5, a cut of the last unit at a word boundary that
//!   keeps every word narrowing it.
//! - `fair.rs`: weighted max-min fair shares of a total budget.

mod fair;
mod index;
mod ladder;
mod render;
mod skills;
mod tools;
mod trim;
mod units;

pub(crate) use fair::fair_shares;
pub(crate) use render::{Measure, Render, Rendered};
pub(crate) use units::Trim;

use crate::error::Result;
use crate::report::{Removal, RemovalReason};
use crate::template::ServerView;
use ladder::Ladder;
use render::Bound;

/// A step of the budget ladder, numbered as in the crate docs' "Budgets"
/// section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// 1. De-duplication: done while preparing a server, before any budget,
    ///    so no rung of [`fit`] belongs to it.
    #[allow(dead_code)]
    Dedup = 1,
    /// 2. Tools (loaded).
    Tools = 2,
    /// 3. The tool index.
    ToolIndex = 3,
    /// 4. Instruction units.
    InstructionUnits = 4,
    /// 5. A cut.
    Cut = 5,
    /// After the numbered steps: the tool line and the index go, then a
    /// `same_as_server` reference (the view's note); then the server is
    /// omitted.
    Then = 6,
}

/// One rung of the budget ladder: one thing a block over its budget gives up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rung {
    /// Step 2: tool descriptions to their first sentence, then none.
    ToolDescriptions,
    /// Step 2: the tool line, whole (names come back with room left).
    ToolNames,
    /// Step 3: index summaries, from the last tool back.
    IndexSummaries,
    /// Step 3: every unit but constraints and restatements of deferred tools.
    MinorUnits,
    /// Step 3: fewer names in the index, down to a count.
    IndexNames,
    /// Step 4, with skills: units below constraints, then skills from the
    /// last back (before any constraint).
    Skills,
    /// Step 4: instruction units by priority; room left goes back to names.
    InstructionUnits,
    /// Step 5: the last unit cut at a word boundary, token-exact.
    Cut,
    /// Then: the tool line and the index go, then the note.
    /// `None` from it leaves the server out.
    HeadingOnly,
}

/// The rungs in the order they are tried; each goes further than the last.
pub(crate) const RUNGS: [Rung; 9] = [
    Rung::ToolDescriptions,
    Rung::ToolNames,
    Rung::IndexSummaries,
    Rung::MinorUnits,
    Rung::IndexNames,
    Rung::Skills,
    Rung::InstructionUnits,
    Rung::Cut,
    Rung::HeadingOnly,
];

/// The rungs climb the docs' steps in order (checked when compiling).
const _: () = {
    let mut k = 1;
    while k < RUNGS.len() {
        assert!(RUNGS[k - 1].step() as u8 <= RUNGS[k].step() as u8);
        k += 1;
    }
};

impl Rung {
    /// Whether a block that fits on this rung gets back what fits of what
    /// was dropped or cut on the way ([`Ladder::refill`]): the rungs that
    /// drop instruction units, and the one that drops the tool line.
    const fn refills(self) -> bool {
        matches!(
            self,
            Rung::ToolNames
                | Rung::MinorUnits
                | Rung::IndexNames
                | Rung::Skills
                | Rung::InstructionUnits
                | Rung::Cut
        )
    }

    /// The step of the docs' ladder it belongs to.
    pub(crate) const fn step(self) -> Step {
        match self {
            Rung::ToolDescriptions | Rung::ToolNames => Step::Tools,
            Rung::IndexSummaries | Rung::MinorUnits | Rung::IndexNames => Step::ToolIndex,
            Rung::Skills | Rung::InstructionUnits => Step::InstructionUnits,
            Rung::Cut => Step::Cut,
            Rung::HeadingOnly => Step::Then,
        }
    }
}

impl Ladder<'_, '_> {
    /// Tries `rung`: the block once it fits, else `None` (with what the rung
    /// removed kept removed, for the next).
    fn climb(&mut self, rung: Rung) -> Result<Option<Rendered>> {
        match rung {
            Rung::ToolDescriptions => self.tool_descriptions(),
            Rung::ToolNames => self.tool_names(),
            Rung::IndexSummaries => self.index_summaries(),
            Rung::MinorUnits => self.minor_units(),
            Rung::IndexNames => self.index_names(),
            Rung::Skills => self.skills(),
            Rung::InstructionUnits => self.instruction_units(),
            Rung::Cut => self.cut(),
            Rung::HeadingOnly => self.heading_only(),
        }
    }

    /// The result, with `block` as the ladder left it.
    fn into_fitted(self, block: Option<Rendered>) -> Fitted {
        Fitted {
            block,
            removed: self.removed,
            truncated: self.truncated,
            summaries_cut: self.summaries_cut,
            names_cut: self.names_cut,
            out_of_fuel: false,
        }
    }
}

/// The result of fitting one server.
#[derive(Debug)]
pub(crate) struct Fitted {
    /// The block, or `None` when not even the heading fits.
    pub block: Option<Rendered>,
    pub removed: Vec<Removal>,
    pub truncated: bool,
    /// Deferred tools whose summary went.
    pub summaries_cut: Vec<String>,
    /// Deferred tools left out of the index.
    pub names_cut: Vec<String>,
    /// Not even the bare heading renders within the template's fuel.
    pub out_of_fuel: bool,
}

impl Fitted {
    /// The block as it came, nothing removed.
    fn whole(block: Rendered) -> Fitted {
        Fitted {
            block: Some(block),
            removed: Vec::new(),
            truncated: false,
            summaries_cut: Vec::new(),
            names_cut: Vec::new(),
            out_of_fuel: false,
        }
    }

    /// No block: the template runs out of fuel even on the heading.
    fn out_of_fuel() -> Fitted {
        Fitted {
            block: None,
            removed: vec![Removal::new(
                RemovalReason::Budget,
                "the whole block: the template runs out of fuel even on its heading",
            )],
            truncated: false,
            summaries_cut: Vec::new(),
            names_cut: Vec::new(),
            out_of_fuel: true,
        }
    }
}

/// Fits `view` (already de-duplicated, with `trim` describing its
/// instructions) into `limit` tokens along the ladder, stopping at the
/// first rung that fits. `rendered` is `view` already rendered and counted,
/// when the caller has it.
pub(crate) fn fit(
    view: ServerView,
    trim: Option<&Trim>,
    limit: Option<usize>,
    rendered: Option<Render>,
    measure: &mut Measure<'_>,
) -> Result<Fitted> {
    let first = match rendered {
        Some(r) => r,
        None => measure(&view)?,
    };
    let bound = match (first, limit) {
        (Render::Block(block), Some(limit)) if block.tokens > limit => Bound::Tokens(limit),
        (Render::Block(block), _) => return Ok(Fitted::whole(block)),
        // A block that could not be rendered must shrink even without a
        // budget. When not even its bare heading renders, no rung would:
        // each would only burn the template's fuel again.
        (Render::OutOfFuel, limit) => {
            if measure(&bare_heading(&view))? == Render::OutOfFuel {
                return Ok(Fitted::out_of_fuel());
            }
            limit.map_or(Bound::Renders, Bound::Tokens)
        }
    };
    // The ladder fits the block without the shortening line; the line is
    // added after, headings first, then units (`Ladder::with_line`).
    let mut view = view;
    let full = view.full.take();
    let mut ladder = Ladder::new(view, trim, bound, measure);
    for rung in RUNGS {
        if let Some(block) = ladder.climb(rung)? {
            let block = if rung.refills() {
                ladder.refill(block)?
            } else {
                block
            };
            let block = ladder.with_line(block, full)?;
            return Ok(ladder.into_fitted(Some(block)));
        }
    }
    Ok(ladder.into_fitted(None))
}

/// `view` without instructions, note, tools or index.
fn bare_heading(view: &ServerView) -> ServerView {
    let mut bare = view.clone();
    bare.instructions = None;
    bare.note = None;
    bare.tools.clear();
    bare.more_tools = 0;
    bare.deferred.clear();
    bare.more_deferred = 0;
    bare.skills.clear();
    bare.more_skills = 0;
    bare
}

#[cfg(test)]
mod tests;
