//! The rungs of the budget ladder, steps 2 to 4 and what comes after step 5
//! (step 5, the cut, is in `trim.rs`), numbered as the crate docs' "Budgets"
//! section numbers them.

use super::render::{Bound, Measure, Rendered};
use super::units::Trim;
use crate::dedup::Priority;
use crate::error::Result;
use crate::report::{Removal, RemovalReason};
use crate::segment;
use crate::template::{ServerView, ToolView};

/// One server's block on its way down the budget ladder.
pub(super) struct Ladder<'t, 'm> {
    pub(super) view: ServerView,
    pub(super) trim: Option<&'t Trim>,
    pub(super) gauge: Gauge<'t, 'm>,
    pub(super) removed: Vec<Removal>,
    pub(super) truncated: bool,
    /// Tools listed or counted before any were cut.
    total_tools: usize,
    /// Deferred tools in the index before any were cut.
    total_index: usize,
    /// Units not yet reported as removed (`None`: the de-duplicated ones).
    reported: Option<Vec<bool>>,
    /// How many units of the drop order are gone.
    dropped: usize,
    pub(super) summaries_cut: Vec<String>,
    pub(super) names_cut: Vec<String>,
    /// The index before names were cut, and where that cut is in `removed`.
    index_cut: Option<(Vec<ToolView>, usize)>,
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
    fn instruction_trim(&self) -> Option<&'t Trim> {
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

    /// Step 2, tools: descriptions to their first sentence, then none.
    pub(super) fn tool_descriptions(&mut self) -> Result<Option<Rendered>> {
        if !self.view.tools.iter().any(|t| t.description.is_some()) {
            return Ok(None);
        }
        let mut shortened = false;
        for t in self.view.tools.iter_mut() {
            if let Some(d) = &t.description {
                let first = first_sentence(d);
                shortened |= first != *d;
                t.description = Some(first);
            }
        }
        if shortened {
            self.remove("tool descriptions after their first sentence");
            if let Some(block) = self.fits()? {
                return Ok(Some(block));
            }
        }
        for t in self.view.tools.iter_mut() {
            t.description = None;
        }
        self.remove("tool descriptions");
        self.fits()
    }

    /// Step 2, tools: fewer tool names, as many as fit, then a count.
    pub(super) fn tool_names(&mut self) -> Result<Option<Rendered>> {
        let all = std::mem::take(&mut self.view.tools);
        if all.is_empty() {
            return Ok(None);
        }
        let (n, total) = (all.len(), self.total_tools);
        // Largest number of listed names that fits = n - smallest number cut.
        let cut = self.gauge.smallest(&self.view, 1, n, |probe, cut| {
            probe.tools = all[..n - cut].to_vec();
            probe.more_tools = total - (n - cut);
        })?;
        let listed = n - cut.unwrap_or(n);
        self.view.tools = all[..listed].to_vec();
        self.view.more_tools = total - listed;
        let names: Vec<&str> = all[listed..].iter().map(|t| t.name.as_str()).collect();
        self.remove(names.join(", "));
        self.fits_if(cut.is_some())
    }

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
    fn fits_if(&mut self, found: bool) -> Result<Option<Rendered>> {
        if found { self.fits() } else { Ok(None) }
    }

    /// Room that dropping units left goes back to index names, as many as fit.
    fn refill_index(&mut self, block: Rendered) -> Result<Option<Rendered>> {
        let Some((all, at)) = self.index_cut.take() else {
            return Ok(Some(block));
        };
        let (n, listed, total) = (all.len(), self.view.deferred.len(), self.total_index);
        let cut = self
            .gauge
            .smallest(&self.view, 0, n - listed - 1, |probe, cut| {
                probe.deferred = all[..n - cut].to_vec();
                probe.more_deferred = total - (n - cut);
            })?;
        let Some(cut) = cut else {
            return Ok(Some(block));
        };
        self.view.deferred = all[..n - cut].to_vec();
        self.view.more_deferred = total - (n - cut);
        self.names_cut = all[n - cut..].iter().map(|t| t.name.clone()).collect();
        if cut == 0 {
            self.removed.remove(at);
        } else {
            self.removed[at].text = self.names_cut.join(", ");
        }
        self.fits()
    }

    /// The fewest more units of `order` dropped, up to `hi` in all, that fit.
    fn drop_units(&mut self, trim: &Trim, order: &[usize], hi: usize) -> Result<Option<Rendered>> {
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
                gone.push(u.text(&trim.text));
            }
        }
        for text in gone {
            self.remove(text);
        }
    }
}

/// The first sentence of a tool description.
fn first_sentence(description: &str) -> String {
    segment::units(description)
        .first()
        .map(|u| u.text(description).to_string())
        .unwrap_or_default()
}
