//! A block on its way down the budget ladder: what it has given up so far,
//! how candidates are measured, and the rungs of step 4 and of the end
//! (steps 2, 3 and 5 are in `tools.rs`, `index.rs` and `trim.rs`).

use super::render::{Bound, Measure, Rendered};
use super::units::Trim;
use crate::dedup::Priority;
use crate::error::Result;
use crate::report::{Removal, RemovalReason};
use crate::template::{Full, ServerView, ToolView};

/// One server's block on its way down the budget ladder.
pub(super) struct Ladder<'t, 'm> {
    pub(super) view: ServerView,
    pub(super) trim: Option<&'t Trim>,
    pub(super) gauge: Gauge<'t, 'm>,
    pub(super) removed: Vec<Removal>,
    pub(super) truncated: bool,
    /// Tools listed or counted before any were cut.
    pub(super) total_tools: usize,
    /// Deferred tools in the index before any were cut.
    pub(super) total_index: usize,
    /// Units not yet reported as removed (`None`: the de-duplicated ones).
    reported: Option<Vec<bool>>,
    /// How many units of the drop order are gone.
    pub(super) dropped: usize,
    pub(super) summaries_cut: Vec<String>,
    pub(super) names_cut: Vec<String>,
    /// The index before names were cut, and where that cut is in `removed`.
    pub(super) index_cut: Option<(Vec<ToolView>, usize)>,
    /// The loaded tools before names were cut, and where that cut is in
    /// `removed`.
    pub(super) tools_cut: Option<(Vec<ToolView>, usize)>,
    /// The units kept, when they are not the drop order's first `dropped`
    /// gone.
    kept_units: Option<Vec<bool>>,
}

/// At most this many swaps are tried within the priority a budget splits.
const SWAP_TRIES: usize = 16;
/// At most this many dropped units are tried again once a block fits.
const REFILL_TRIES: usize = 32;

/// Renders and counts candidate views against the block's bound.
pub(super) struct Gauge<'t, 'm> {
    bound: Bound,
    measure: &'t mut Measure<'m>,
}

impl Gauge<'_, '_> {
    /// `view` rendered, when it fits.
    fn fit(&mut self, view: &ServerView) -> Result<Option<Rendered>> {
        Ok((self.measure)(view)?.within(self.bound))
    }

    /// Smallest `m` in `lo..=hi` for which `view`, reshaped by `shape(m)`,
    /// fits (see [`smallest_fitting`]).
    pub(super) fn smallest(
        &mut self,
        view: &ServerView,
        lo: usize,
        hi: usize,
        mut shape: impl FnMut(&mut ServerView, usize),
    ) -> Result<Option<usize>> {
        let mut probe = view.clone();
        smallest_fitting(lo, hi, |m| {
            shape(&mut probe, m);
            Ok((self.measure)(&probe)?.fits(self.bound))
        })
    }
}

/// Smallest `m` in `lo..=hi` with `fits(m)`, assuming `fits` is (nearly)
/// monotone; checks upward from the binary-search result so the answer is
/// exact even when it is not. `None` when no `m` fits.
fn smallest_fitting(
    lo: usize,
    hi: usize,
    mut fits: impl FnMut(usize) -> Result<bool>,
) -> Result<Option<usize>> {
    let (mut a, mut b) = (lo, hi + 1);
    while a < b {
        let mid = a + (b - a) / 2;
        if fits(mid)? {
            b = mid;
        } else {
            a = mid + 1;
        }
    }
    for m in a..=hi {
        if fits(m)? {
            return Ok(Some(m));
        }
    }
    Ok(None)
}

impl<'t, 'm> Ladder<'t, 'm> {
    /// `view` to fit within `bound`, rendered by `measure`.
    pub(super) fn new(
        view: ServerView,
        trim: Option<&'t Trim>,
        bound: Bound,
        measure: &'t mut Measure<'m>,
    ) -> Self {
        Ladder {
            total_tools: view.tools.len() + view.more_tools,
            total_index: view.deferred.len() + view.more_deferred,
            view,
            trim,
            gauge: Gauge { bound, measure },
            removed: Vec::new(),
            truncated: false,
            reported: None,
            dropped: 0,
            summaries_cut: Vec::new(),
            names_cut: Vec::new(),
            index_cut: None,
            tools_cut: None,
            kept_units: None,
        }
    }

    /// The instructions' units, while there are instructions to cut.
    pub(super) fn instruction_trim(&self) -> Option<&'t Trim> {
        self.trim.filter(|_| self.view.instructions.is_some())
    }
}

impl Ladder<'_, '_> {
    /// The block as it stands, when it fits.
    pub(super) fn fits(&mut self) -> Result<Option<Rendered>> {
        self.gauge.fit(&self.view)
    }

    pub(super) fn remove(&mut self, text: impl Into<String>) {
        self.removed.push(Removal::new(RemovalReason::Budget, text));
    }

    /// Removes unit `k` of the instructions (or what is cut of it).
    pub(super) fn remove_unit(&mut self, k: usize, text: impl Into<String>) {
        let removal = Removal::new(RemovalReason::Budget, text);
        self.removed.push(removal.of_unit(k));
    }

    /// Step 4, instruction units: dropped by priority down to the last one
    /// (step 5 cuts that); room this leaves goes back to index names.
    /// Instructions not split into units go whole.
    pub(super) fn instruction_units(&mut self) -> Result<Option<Rendered>> {
        let Some(trim) = self.instruction_trim() else {
            let Some(text) = self.view.instructions.take() else {
                return Ok(None);
            };
            self.remove(text);
            return self.fits();
        };
        let order = trim.drop_order();
        match self.drop_units(trim, &order, order.len().saturating_sub(1))? {
            Some(block) => Ok(Some(block)),
            None => self.another_last(trim, &order),
        }
    }

    /// Once the block fits without it, the shortening line (`full`), when
    /// the block lost instructions: in the room left, else in room made by
    /// dropping more units in the drop order (lowest priority first), any
    /// unit but the last, hint or not: a reader who is not told that text is
    /// missing takes what is left for all of it. It never takes a block's
    /// last unit or a cut's words: the block goes without it then.
    pub(super) fn with_line(&mut self, block: Rendered, full: Option<Full>) -> Result<Rendered> {
        self.view.full = full;
        if self.view.full.is_none() || self.view.shortened().is_none() {
            return Ok(block);
        }
        if let Some(lined) = self.fits()? {
            return Ok(lined);
        }
        if let Some(trim) = self.instruction_trim().filter(|_| !self.truncated) {
            let order = trim.drop_order();
            let last = order.len().saturating_sub(1);
            // Structure goes first: the headings, then units without them.
            if let Some(lined) = self.flat_with_line(trim, &order, last)? {
                return Ok(lined);
            }
            // Shortening is always visible (issue 55): the line may take any
            // unit but the last, a constraint too, hint or not.
            let hi = last;
            if hi > self.dropped
                && let Some(m) = self.search_units(trim, &order, hi)?
                && let Some(lined) = self.drop_first(trim, &order, m)?
            {
                // What the line left room for comes back.
                return self.refill(lined);
            }
        }
        self.view.full = None;
        // No room for the line: a block shortened without saying so is
        // down to its last unit, never more (issue 55).
        if let Some(trim) = self.instruction_trim().filter(|_| !self.truncated) {
            let order = trim.drop_order();
            // The shown unit the drop order keeps longest.
            let shown = self.reported.clone().unwrap_or_else(|| trim.keep.clone());
            let mut keep = vec![false; shown.len()];
            if let Some(&k) = order.iter().rev().find(|k| shown[**k]) {
                keep[k] = true;
            }
            let one_unit = trim.render(&keep);
            // (A refill may have brought units back: `dropped` is not the count.)
            if one_unit.is_some() && one_unit != self.view.instructions {
                let before = std::mem::replace(&mut self.view.instructions, one_unit);
                if let Some(one) = self.fits()? {
                    self.record_dropped(trim, &keep);
                    self.dropped = order.len().saturating_sub(1);
                    return Ok(one);
                }
                self.view.instructions = before;
            }
        }
        Ok(block)
    }

    /// The line in room made by dropping the headings (structure goes
    /// before any sentence), then as few more units as fit, none but the
    /// last; `None` (nothing changed) when even that does not fit.
    fn flat_with_line(
        &mut self,
        trim: &Trim,
        order: &[usize],
        last: usize,
    ) -> Result<Option<Rendered>> {
        let kept = match &self.kept_units {
            Some(k) => k.clone(),
            None => trim.keep_after(order, self.dropped),
        };
        let flat = trim.without_headings(&kept);
        if flat == trim.without_orphan_headings(&kept) && flat == kept {
            return Ok(None);
        }
        let before = self.view.instructions.clone();
        self.view.instructions = trim.render(&flat);
        if let Some(lined) = self.fits()? {
            self.record_dropped(trim, &flat);
            self.kept_units = Some(flat);
            return self.refill(lined).map(Some);
        }
        let lo = (self.dropped + 1).min(last);
        let found = self.gauge.smallest(&self.view, lo, last, |probe, m| {
            probe.instructions =
                trim.render(&trim.without_headings(&trim.keep_after(order, m.min(last))));
        })?;
        if let Some(m) = found.filter(|m| *m <= last && *m > 0) {
            let keep = trim.without_headings(&trim.keep_after(order, m));
            self.view.instructions = trim.render(&keep);
            if let Some(lined) = self.fits()? {
                self.record_dropped(trim, &keep);
                self.dropped = m;
                self.kept_units = Some(keep);
                return self.refill(lined).map(Some);
            }
        }
        self.view.instructions = before;
        Ok(None)
    }

    /// When the last unit of the drop order does not fit alone, the longest
    /// other unit of its priority that does (then the earlier), rather than
    /// a cut: a constraint that fits is not dropped for one that does not.
    fn another_last(&mut self, trim: &Trim, order: &[usize]) -> Result<Option<Rendered>> {
        let Some((&last, rest)) = order.split_last() else {
            return Ok(None);
        };
        let top = trim.priority_of(last);
        let none = trim.keep_after(order, order.len());
        for &k in rest
            .iter()
            .filter(|k| trim.priority_of(**k) == top)
            .take(SWAP_TRIES)
        {
            let mut keep = none.clone();
            keep[k] = true;
            if self.try_units(trim, &keep)? {
                self.view.instructions = trim.render(&keep);
                self.record_dropped(trim, &keep);
                self.dropped = order.len() - 1;
                self.kept_units = Some(keep);
                return self.fits();
            }
        }
        Ok(None)
    }

    /// Step 5, a cut: the last unit standing, cut at a word boundary.
    pub(super) fn cut(&mut self) -> Result<Option<Rendered>> {
        let Some(trim) = self.instruction_trim() else {
            return Ok(None);
        };
        let order = trim.drop_order();
        self.cut_last(trim, *order.last().unwrap_or(&0))
    }

    /// After step 5: the heading alone (with the note, if any), then
    /// without the note; `None` leaves the server out.
    pub(super) fn heading_only(&mut self) -> Result<Option<Rendered>> {
        self.view.tools.clear();
        self.view.more_tools = 0;
        if self.total_tools > 0 {
            self.remove("tool list");
        }
        self.view.deferred.clear();
        self.view.more_deferred = 0;
        if self.total_index > 0 {
            self.remove("tool index");
        }
        if let Some(block) = self.fits()? {
            return Ok(Some(block));
        }
        if self.view.note.take().is_some() {
            return self.fits();
        }
        Ok(None)
    }

    /// The block when `found` (a search saw it fit), else `None`.
    pub(super) fn fits_if(&mut self, found: bool) -> Result<Option<Rendered>> {
        if found { self.fits() } else { Ok(None) }
    }

    /// The fewest more units of `order` dropped, up to `hi` in all, that fit.
    pub(super) fn drop_units(
        &mut self,
        trim: &Trim,
        order: &[usize],
        hi: usize,
    ) -> Result<Option<Rendered>> {
        match self.search_units(trim, order, hi)? {
            Some(m) => self.drop_first(trim, order, m),
            None => Ok(None),
        }
    }

    /// The fewest more units of `order` dropped, up to `hi` in all, that
    /// fit, without dropping them.
    fn search_units(&mut self, trim: &Trim, order: &[usize], hi: usize) -> Result<Option<usize>> {
        self.gauge
            .smallest(&self.view, self.dropped + 1, hi, |probe, m| {
                probe.instructions = trim.render(&trim.keep_after(order, m));
            })
    }

    /// Drops the first `m` units of `order` (a search saw them fit).
    fn drop_first(&mut self, trim: &Trim, order: &[usize], m: usize) -> Result<Option<Rendered>> {
        let keep = trim.keep_after(order, m);
        self.view.instructions = trim.render(&keep);
        self.record_dropped(trim, &keep);
        self.dropped = m;
        // The search saw it fit.
        self.fits()
    }

    /// Reports the units `keep` no longer shows, each once; a unit shown
    /// again (a refill) is no longer reported.
    pub(super) fn record_dropped(&mut self, trim: &Trim, keep: &[bool]) {
        let shown = trim.without_orphan_headings(keep);
        let reported = self.reported.get_or_insert_with(|| trim.keep.clone());
        let mut gone = Vec::new();
        let mut back = Vec::new();
        for (k, u) in trim.units.iter().enumerate() {
            if reported[k] && !shown[k] {
                reported[k] = false;
                gone.push((k, u.text(&trim.text)));
            } else if !reported[k] && shown[k] && trim.keep[k] {
                reported[k] = true;
                back.push(k);
            }
        }
        if !back.is_empty() {
            self.unreport(&back);
        }
        for (k, text) in gone {
            self.remove_unit(k, text);
        }
    }

    /// Takes the budget removals of units `back` out of `removed`, keeping
    /// the positions of the name cuts in step.
    fn unreport(&mut self, back: &[usize]) {
        let old = std::mem::take(&mut self.removed);
        let before = |at: usize| {
            old[..at.min(old.len())]
                .iter()
                .filter(|r| is_unit_of(r, back))
                .count()
        };
        if let Some((_, at)) = &mut self.index_cut {
            *at -= before(*at);
        }
        if let Some((_, at)) = &mut self.tools_cut {
            *at -= before(*at);
        }
        self.removed = old.into_iter().filter(|r| !is_unit_of(r, back)).collect();
    }

    /// Once a block fits after units were dropped, the room left is spent
    /// again, the ladder run backwards (steps 4, 3, 2): dropped units by
    /// priority, highest first, each that fits, then a swap within the
    /// priority the budget split; then index names; then the units step 3
    /// drops before index names; then loaded tool names, as many as fit.
    pub(super) fn refill(&mut self, block: Rendered) -> Result<Rendered> {
        // A cut unit fills the room itself: only names may follow it.
        let trim = self.trim.filter(|_| self.dropped > 0 && !self.truncated);
        // With an index, step 3 ranks its names above the minor units.
        let major = if self.total_index > 0 {
            Priority::RestatesDeferred
        } else {
            Priority::Example
        };
        let mut keep = self.kept_units.take();
        if let Some(trim) = trim {
            keep = Some(self.refill_units(trim, keep, major)?);
        }
        self.refill_index()?;
        if let (Some(trim), Some(keep)) = (trim, keep) {
            self.refill_units(trim, Some(keep), Priority::Example)?;
        }
        self.refill_tools()?;
        // Every change above was measured to fit.
        Ok(self.fits()?.unwrap_or(block))
    }

    /// The units of [`Ladder::refill`] from priority `from` up, starting
    /// from `keep` (else from where the ladder left them); the units kept.
    fn refill_units(
        &mut self,
        trim: &Trim,
        keep: Option<Vec<bool>>,
        from: Priority,
    ) -> Result<Vec<bool>> {
        let order = trim.drop_order();
        let dropped = self.dropped.min(order.len());
        let mut keep = keep.unwrap_or_else(|| trim.keep_after(&order, dropped));
        let Some(&last) = order[..dropped].last() else {
            return Ok(keep);
        };
        let mut changed = false;
        // Every dropped unit, highest priority first (within one, the
        // shortest first), each kept when it fits.
        let again: Vec<usize> = order
            .iter()
            .rev()
            .filter(|k| !keep[**k] && trim.priority_of(**k) >= from)
            .copied()
            .collect();
        for k in again.into_iter().take(REFILL_TRIES) {
            let mut probe = keep.clone();
            probe[k] = true;
            if self.try_units(trim, &probe)? {
                keep = probe;
                changed = true;
            }
        }
        // Then room still left goes to a swap within the priority the
        // budget split: the drop order kept its shortest units, and a
        // longer, earlier one that fits in place of a shorter, later one
        // keeps more of that priority and no fewer of its units (earlier:
        // the drop order prefers it at equal length). A swap never takes a
        // heading with it.
        let split = trim.priority_of(last);
        let at_split = |k: &&usize| trim.priority_of(**k) == split && split >= from;
        let out: Vec<usize> = order
            .iter()
            .filter(at_split)
            .filter(|k| !keep[**k])
            .copied()
            .collect();
        let mut kept: Vec<usize> = order
            .iter()
            .filter(at_split)
            .filter(|k| keep[**k])
            .rev()
            .copied()
            .collect();
        let mut tries = 0;
        'swap: for d in out {
            for slot in kept.iter_mut() {
                if d > *slot || trim.len_of(d) <= trim.len_of(*slot) {
                    continue;
                }
                if tries == SWAP_TRIES {
                    break 'swap;
                }
                tries += 1;
                let mut probe = keep.clone();
                probe[*slot] = false;
                probe[d] = true;
                if trim.headings_shown(&probe) >= trim.headings_shown(&keep)
                    && self.try_units(trim, &probe)?
                {
                    keep = probe;
                    *slot = d;
                    changed = true;
                    break;
                }
            }
        }
        if changed {
            self.view.instructions = trim.render(&keep);
            self.record_dropped(trim, &keep);
        }
        Ok(keep)
    }

    /// Lists more of `all` (of which `listed` are listed, `total` in all)
    /// in the list `field` picks, as many as fit: the number still cut, or
    /// `None` when not one more fits.
    pub(super) fn refill_names(
        &mut self,
        all: &[ToolView],
        listed: usize,
        total: usize,
        field: fn(&mut ServerView) -> (&mut Vec<ToolView>, &mut usize),
    ) -> Result<Option<usize>> {
        let n = all.len();
        if listed >= n {
            return Ok(None);
        }
        let cut = self
            .gauge
            .smallest(&self.view, 0, n - listed - 1, |probe, cut| {
                let (list, more) = field(probe);
                *list = all[..n - cut].to_vec();
                *more = total - (n - cut);
            })?;
        if let Some(cut) = cut {
            let (list, more) = field(&mut self.view);
            *list = all[..n - cut].to_vec();
            *more = total - (n - cut);
        }
        Ok(cut)
    }

    /// The names cut reported at `at` in `removed` are now `names`; none
    /// takes the report out.
    pub(super) fn renamed(&mut self, at: usize, names: &str) {
        if names.is_empty() {
            self.removed.remove(at);
        } else {
            self.removed[at].text = names.to_string();
        }
    }

    /// Whether the block fits with the units `keep`.
    fn try_units(&mut self, trim: &Trim, keep: &[bool]) -> Result<bool> {
        let mut probe = self.view.clone();
        probe.instructions = trim.render(keep);
        Ok(self.gauge.fit(&probe)?.is_some())
    }
}

/// Whether `r` reports the budget's removal of one of the units `units`.
fn is_unit_of(r: &Removal, units: &[usize]) -> bool {
    r.reason == RemovalReason::Budget && r.unit.is_some_and(|u| units.contains(&u))
}
