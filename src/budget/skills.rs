//! Step 4 of the ladder, for a server with skills (`skills/list`): the
//! instruction units below constraints go first, then skills from the
//! last back, and only then (the next rung) constraints. A server without
//! skills skips this rung: its ladder is as it was.

use super::ladder::Ladder;
use super::render::Rendered;
use crate::dedup::Priority;
use crate::error::Result;
use crate::report::{Removal, RemovalReason};

impl Ladder<'_, '_> {
    /// Step 4 with skills: every unit but constraints (as few as fit, the
    /// last unit always kept for the cut), then skills, as many as fit
    /// (with a count of the rest; none, and no count, when none fits).
    pub(super) fn skills(&mut self) -> Result<Option<Rendered>> {
        let all = self.view.skills.clone();
        if all.is_empty() {
            return Ok(None);
        }
        if let Some(trim) = self.instruction_trim() {
            let order = trim.drop_order();
            let low = trim.count_below(&order, Priority::Constraint);
            let hi = low.min(order.len().saturating_sub(1));
            if hi > self.dropped {
                if let Some(block) = self.drop_units(trim, &order, hi)? {
                    return Ok(Some(block));
                }
                let keep = trim.keep_after(&order, hi);
                self.view.instructions = trim.render(&keep);
                self.record_dropped(trim, &keep);
                self.dropped = hi;
            }
        }
        let (n, total) = (all.len(), all.len() + self.view.more_skills);
        let shape = |listed: usize| {
            (
                all[..listed].to_vec(),
                if listed > 0 { total - listed } else { 0 },
            )
        };
        let cut = self.gauge.smallest(&self.view, 1, n, |probe, cut| {
            (probe.skills, probe.more_skills) = shape(n - cut);
        })?;
        let listed = n - cut.unwrap_or(n);
        (self.view.skills, self.view.more_skills) = shape(listed);
        for k in &all[listed..] {
            let text = format!("skill {} ({})", k.name, k.uri);
            self.removed.push(Removal::new(RemovalReason::Budget, text));
        }
        self.fits_if(cut.is_some())
    }
}
