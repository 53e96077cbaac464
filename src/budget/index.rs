//! Step 3 of the ladder: the tool index (deferred tools): its summaries,
//! the minor instruction units, then its names; and names back when step 4
//! leaves room.

use super::ladder::Ladder;
use super::render::Rendered;
use crate::dedup::Priority;
use crate::error::Result;
use crate::report::{Removal, RemovalReason};

impl Ladder<'_, '_> {
    /// Step 3, the tool index: summaries from the last tool back, as many
    /// as fit stay; each cut one is reported with its tool.
    pub(super) fn index_summaries(&mut self) -> Result<Option<Rendered>> {
        let deferred = &self.view.deferred;
        let with: Vec<usize> = (0..deferred.len())
            .filter(|i| deferred[*i].summary.is_some())
            .collect();
        if with.is_empty() {
            return Ok(None);
        }
        let cut = self
            .gauge
            .smallest(&self.view, 1, with.len(), |probe, cut| {
                for (j, i) in with.iter().enumerate() {
                    probe.deferred[*i].summary = deferred[*i]
                        .summary
                        .clone()
                        .filter(|_| j < with.len() - cut);
                }
            })?;
        for i in &with[with.len() - cut.unwrap_or(with.len())..] {
            let tool = &mut self.view.deferred[*i];
            let (Some(text), name) = (tool.summary.take(), tool.name.clone()) else {
                continue;
            };
            let mut removal = Removal::new(RemovalReason::Budget, text);
            removal.tool = Some(name.clone());
            self.removed.push(removal);
            self.summaries_cut.push(name);
        }
        self.fits_if(cut.is_some())
    }

    /// Step 3, the tool index: every instruction unit but constraints and
    /// restatements of deferred tools goes before any name in it, as few as
    /// fit, else all of them.
    pub(super) fn minor_units(&mut self) -> Result<Option<Rendered>> {
        let Some(trim) = self.instruction_trim() else {
            return Ok(None);
        };
        if self.total_index == 0 {
            return Ok(None);
        }
        let order = trim.drop_order();
        let minor = trim.count_below(&order, Priority::RestatesDeferred);
        let hi = minor.min(order.len().saturating_sub(1));
        if let Some(block) = self.drop_units(trim, &order, hi)? {
            return Ok(Some(block));
        }
        if hi > 0 {
            let keep = trim.keep_after(&order, hi);
            self.view.instructions = trim.render(&keep);
            self.record_dropped(trim, &keep);
            self.dropped = hi;
        }
        Ok(None)
    }

    /// Step 3, the tool index: fewer names, as many as fit, then a count.
    pub(super) fn index_names(&mut self) -> Result<Option<Rendered>> {
        let all = std::mem::take(&mut self.view.deferred);
        if all.is_empty() {
            return Ok(None);
        }
        let (n, total) = (all.len(), self.total_index);
        let cut = self.gauge.smallest(&self.view, 1, n, |probe, cut| {
            probe.deferred = all[..n - cut].to_vec();
            probe.more_deferred = total - (n - cut);
        })?;
        let listed = n - cut.unwrap_or(n);
        self.view.more_deferred = total - listed;
        let names: Vec<String> = all[listed..].iter().map(|t| t.name.clone()).collect();
        self.view.deferred = all[..listed].to_vec();
        self.index_cut = Some((all, self.removed.len()));
        self.remove(names.join(", "));
        self.names_cut = names;
        self.fits_if(cut.is_some())
    }

    /// Room that dropping units left goes back to index names, as many as fit.
    pub(super) fn refill_index(&mut self) -> Result<()> {
        let Some((all, at)) = self.index_cut.take() else {
            return Ok(());
        };
        let listed = self.view.deferred.len();
        let Some(cut) = self.refill_names(&all, listed, self.total_index, |v| {
            (&mut v.deferred, &mut v.more_deferred)
        })?
        else {
            return Ok(());
        };
        self.names_cut = all[all.len() - cut..]
            .iter()
            .map(|t| t.name.clone())
            .collect();
        self.renamed(at, &self.names_cut.join(", "));
        Ok(())
    }
}
