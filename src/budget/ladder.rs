//! A block on its way down the budget ladder: what it has given up so far,
//! how candidates are measured, and the rungs of step 4 and of the end
//! (steps 2, 3 and 5 are in `tools.rs`, `index.rs` and `trim.rs`).

use super::render::{Bound, Measure, Rendered};
use super::units::Trim;
use crate::error::Result;
use crate::report::{Removal, RemovalReason};
use crate::template::{ServerView, ToolView};

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
}

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
            Some(block) => self.refill_index(block),
            None => Ok(None),
        }
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
        let found = self
            .gauge
            .smallest(&self.view, self.dropped + 1, hi, |probe, m| {
                probe.instructions = trim.render(&trim.keep_after(order, m));
            })?;
        let Some(m) = found else {
            return Ok(None);
        };
        let keep = trim.keep_after(order, m);
        self.view.instructions = trim.render(&keep);
        self.record_dropped(trim, &keep);
        self.dropped = m;
        // The search saw it fit.
        self.fits()
    }

    /// Reports the units `keep` no longer shows, each once.
    pub(super) fn record_dropped(&mut self, trim: &Trim, keep: &[bool]) {
        let shown = trim.without_orphan_headings(keep);
        let reported = self.reported.get_or_insert_with(|| trim.keep.clone());
        let mut gone = Vec::new();
        for (k, u) in trim.units.iter().enumerate() {
            if reported[k] && !shown[k] {
                reported[k] = false;
                gone.push((k, u.text(&trim.text)));
            }
        }
        for (k, text) in gone {
            self.remove_unit(k, text);
        }
    }
}
