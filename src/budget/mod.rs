//! Fitting each server's block into its token budget, and sharing a total
//! budget between servers.
//!
//! The guarantee is on the block as rendered: every candidate is rendered
//! with the real template and counted with the real tokenizer.

use crate::dedup::{self, Priority};
use crate::error::Result;
use crate::report::{Removal, RemovalReason};
use crate::segment::{self, Unit, UnitKind};
use crate::template::{ServerView, ToolView};

/// The marker that ends a cut unit.
pub(crate) const CUT_MARKER: &str = " […]";

/// A server's instructions as units, with what is still kept.
#[derive(Debug, Clone)]
pub(crate) struct Trim {
    pub text: String,
    pub units: Vec<Unit>,
    priority: Vec<Priority>,
    keep: Vec<bool>,
    /// Per unit: a heading with content under it (it goes when that goes).
    heads: Vec<bool>,
}

impl Trim {
    /// `text` (sanitized instructions) as units, all kept, with their
    /// priorities; `tool_names` are the server's tools, normalized.
    pub(crate) fn new(text: String, tool_names: &std::collections::HashSet<String>) -> Trim {
        let units = segment::units(&text);
        let priority = units
            .iter()
            .map(|u| dedup::priority(u, u.text(&text), tool_names))
            .collect();
        let keep = vec![true; units.len()];
        let mut trim = Trim {
            text,
            units,
            priority,
            heads: Vec::new(),
            keep,
        };
        trim.heads = (0..trim.units.len())
            .map(|k| trim.has_content_under(k, &trim.keep))
            .collect();
        trim
    }

    /// The instructions made of the units still kept.
    pub(crate) fn kept(&self) -> Option<String> {
        self.render(&self.keep)
    }

    /// Drops unit `k` (de-duplication).
    pub(crate) fn drop_unit(&mut self, k: usize) {
        self.keep[k] = false;
    }

    /// Ranks unit `k` at least at `priority`.
    pub(crate) fn raise(&mut self, k: usize, priority: Priority) {
        self.priority[k] = self.priority[k].max(priority);
    }

    /// The instructions made of the kept units; headings left with nothing
    /// under them go too. `None` when nothing is left.
    pub(crate) fn render(&self, keep: &[bool]) -> Option<String> {
        let keep = self.without_orphan_headings(keep);
        let s = segment::join(&self.text, &self.units, |k| keep[k]);
        (!s.is_empty()).then_some(s)
    }

    /// Whether anything other than a heading stands under heading `k`
    /// (before the next heading of its level or above), among `keep`.
    fn has_content_under(&self, k: usize, keep: &[bool]) -> bool {
        let UnitKind::Heading(level) = self.units[k].kind else {
            return false;
        };
        self.units[k + 1..]
            .iter()
            .zip(&keep[k + 1..])
            .take_while(|(u, _)| !matches!(u.kind, UnitKind::Heading(l) if l <= level))
            .any(|(u, kept)| *kept && !matches!(u.kind, UnitKind::Heading(_)))
    }

    /// A heading that heads content goes when all of that content has gone.
    /// A heading with nothing under it from the start is content itself.
    fn heads_content(&self, k: usize) -> bool {
        self.heads[k]
    }

    fn without_orphan_headings(&self, keep: &[bool]) -> Vec<bool> {
        (0..self.units.len())
            .map(|k| keep[k] && (!self.heads_content(k) || self.has_content_under(k, keep)))
            .collect()
    }

    /// Indices of kept units in the order a budget drops them: lowest
    /// priority first; within a priority the longest first (so more of them
    /// fit), then the later. Headings are not in it: they stay while
    /// anything under them does.
    fn drop_order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.units.len())
            .filter(|k| self.keep[*k] && !self.heads_content(*k))
            .collect();
        let len = |k: usize| self.units[k].end - self.units[k].start;
        order.sort_by(|a, b| {
            self.priority[*a]
                .cmp(&self.priority[*b])
                .then(len(*b).cmp(&len(*a)))
                .then(b.cmp(a))
        });
        order
    }
}

/// The result of fitting one server.
#[derive(Debug)]
pub(crate) struct Fitted {
    /// The block, or `None` when not even the heading fits.
    pub block: Option<(String, usize)>,
    pub removed: Vec<Removal>,
    pub truncated: bool,
    /// Deferred tools whose summary went.
    pub summaries_cut: Vec<String>,
    /// Deferred tools left out of the index.
    pub names_cut: Vec<String>,
    /// Not even the bare heading renders within the template's fuel.
    pub out_of_fuel: bool,
}

/// Renders a view and counts its tokens.
pub(crate) type Measure<'m> = dyn FnMut(&ServerView) -> Result<(String, usize)> + 'm;

type Block = Option<(String, usize)>;

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

/// Fits `view` (already de-duplicated, with `trim` describing its
/// instructions) into `limit` tokens along the ladder documented in the
/// crate docs, stopping at the first rung that fits. `rendered` is `view`
/// already rendered and counted, when the caller has it.
pub(crate) fn fit(
    view: ServerView,
    trim: Option<&Trim>,
    limit: Option<usize>,
    rendered: Option<(String, usize)>,
    measure: &mut Measure<'_>,
) -> Result<Fitted> {
    let first = match rendered {
        Some(r) => r,
        None => measure(&view)?,
    };
    // A block that could not be rendered (out of fuel) must shrink even
    // without a budget. When not even its bare heading renders, no rung
    // would: each would only burn the template's fuel again.
    if first.1 == usize::MAX {
        let mut bare = view.clone();
        bare.instructions = None;
        bare.note = None;
        bare.tools.clear();
        bare.more_tools = 0;
        bare.deferred.clear();
        bare.more_deferred = 0;
        if measure(&bare)?.1 == usize::MAX {
            return Ok(Fitted {
                block: None,
                removed: vec![Removal::new(
                    RemovalReason::Budget,
                    "the whole block: the template runs out of fuel even on its heading",
                )],
                truncated: false,
                summaries_cut: Vec::new(),
                names_cut: Vec::new(),
                out_of_fuel: true,
            });
        }
    }
    let limit = limit.or((first.1 == usize::MAX).then_some(usize::MAX - 1));
    let Some(limit) = limit.filter(|l| first.1 > *l) else {
        return Ok(Fitted {
            block: Some(first),
            removed: Vec::new(),
            truncated: false,
            summaries_cut: Vec::new(),
            names_cut: Vec::new(),
            out_of_fuel: false,
        });
    };
    let mut ladder = Ladder {
        total_tools: view.tools.len() + view.more_tools,
        total_index: view.deferred.len() + view.more_deferred,
        view,
        trim,
        limit,
        measure,
        removed: Vec::new(),
        truncated: false,
        reported: None,
        dropped: 0,
        summaries_cut: Vec::new(),
        names_cut: Vec::new(),
        index_cut: None,
    };
    // Each rung goes further than the last; the first that fits wins.
    let block = if let Some(b) = ladder.tool_descriptions()? {
        Some(b)
    } else if let Some(b) = ladder.fewer_tools()? {
        Some(b)
    } else if let Some(b) = ladder.index_summaries()? {
        Some(b)
    } else if let Some(b) = ladder.minor_units()? {
        Some(b)
    } else if let Some(b) = ladder.fewer_index()? {
        Some(b)
    } else if let Some(b) = ladder.instruction_units()? {
        Some(b)
    } else {
        ladder.heading_only()?
    };
    Ok(Fitted {
        block,
        removed: ladder.removed,
        truncated: ladder.truncated,
        summaries_cut: ladder.summaries_cut,
        names_cut: ladder.names_cut,
        out_of_fuel: false,
    })
}

/// One server's block on its way down the budget ladder.
struct Ladder<'t, 'm> {
    view: ServerView,
    trim: Option<&'t Trim>,
    limit: usize,
    measure: &'t mut Measure<'m>,
    removed: Vec<Removal>,
    truncated: bool,
    /// Tools listed or counted before any were cut.
    total_tools: usize,
    /// Deferred tools in the index before any were cut.
    total_index: usize,
    /// Units not yet reported as removed (`None`: the de-duplicated ones).
    reported: Option<Vec<bool>>,
    /// How many units of the drop order are gone.
    dropped: usize,
    summaries_cut: Vec<String>,
    names_cut: Vec<String>,
    /// The index before names were cut, and where that cut is in `removed`.
    index_cut: Option<(Vec<ToolView>, usize)>,
}

impl Ladder<'_, '_> {
    /// The block as it stands, when it fits.
    fn fits(&mut self) -> Result<Block> {
        let m = (self.measure)(&self.view)?;
        Ok((m.1 <= self.limit).then_some(m))
    }

    fn remove(&mut self, text: impl Into<String>) {
        self.removed.push(Removal::new(RemovalReason::Budget, text));
    }

    /// (b) Tool descriptions: their first sentences, then none.
    fn tool_descriptions(&mut self) -> Result<Block> {
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

    /// (b) Fewer tool names: as many as fit, then a count.
    fn fewer_tools(&mut self) -> Result<Block> {
        let all_tools = std::mem::take(&mut self.view.tools);
        if all_tools.is_empty() {
            return Ok(None);
        }
        let (n, total) = (all_tools.len(), self.total_tools);
        // Largest number of listed names that fits = n - smallest number cut.
        let mut probe = self.view.clone();
        let (limit, measure) = (self.limit, &mut *self.measure);
        let cut = smallest_fitting(1, n, |cut| {
            probe.tools = all_tools[..n - cut].to_vec();
            probe.more_tools = total - (n - cut);
            Ok(measure(&probe)?.1 <= limit)
        })?;
        let listed = n - cut.unwrap_or(n);
        self.view.tools = all_tools[..listed].to_vec();
        self.view.more_tools = total - listed;
        let names: Vec<&str> = all_tools[listed..]
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        self.remove(names.join(", "));
        if cut.is_some() {
            return self.fits();
        }
        Ok(None)
    }

    /// (c) Summaries in the tool index, from the last tool back: as many
    /// as fit stay, each cut one is reported with its tool.
    fn index_summaries(&mut self) -> Result<Block> {
        let with: Vec<usize> = (0..self.view.deferred.len())
            .filter(|i| self.view.deferred[*i].summary.is_some())
            .collect();
        if with.is_empty() {
            return Ok(None);
        }
        let mut probe = self.view.clone();
        let (limit, measure, all) = (self.limit, &mut *self.measure, &self.view.deferred);
        let cut = smallest_fitting(1, with.len(), |cut| {
            for (j, i) in with.iter().enumerate() {
                probe.deferred[*i].summary =
                    all[*i].summary.clone().filter(|_| j < with.len() - cut);
            }
            Ok(measure(&probe)?.1 <= limit)
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
        if cut.is_some() {
            return self.fits();
        }
        Ok(None)
    }

    /// (c) With a tool index, every unit but constraints and restatements
    /// of deferred tools goes before any name in it: as few as fit, else
    /// all of them.
    fn minor_units(&mut self) -> Result<Block> {
        let Some(trim) = self.trim.filter(|_| self.view.instructions.is_some()) else {
            return Ok(None);
        };
        if self.total_index == 0 {
            return Ok(None);
        }
        let order = trim.drop_order();
        let minor = order
            .iter()
            .take_while(|k| trim.priority[**k] < Priority::RestatesDeferred)
            .count();
        let hi = minor.min(order.len().saturating_sub(1));
        if let Some(block) = self.drop_units(trim, &order, hi)? {
            return Ok(Some(block));
        }
        if hi > 0 {
            let keep = keep_after(trim, &order, hi);
            self.view.instructions = trim.render(&keep);
            self.record_dropped(trim, &keep);
            self.dropped = hi;
        }
        Ok(None)
    }

    /// (c) Fewer names in the tool index: as many as fit, then a count.
    fn fewer_index(&mut self) -> Result<Block> {
        let all = std::mem::take(&mut self.view.deferred);
        if all.is_empty() {
            return Ok(None);
        }
        let (n, total) = (all.len(), self.total_index);
        let mut probe = self.view.clone();
        let (limit, measure) = (self.limit, &mut *self.measure);
        let cut = smallest_fitting(1, n, |cut| {
            probe.deferred = all[..n - cut].to_vec();
            probe.more_deferred = total - (n - cut);
            Ok(measure(&probe)?.1 <= limit)
        })?;
        let listed = n - cut.unwrap_or(n);
        self.view.more_deferred = total - listed;
        let names: Vec<String> = all[listed..].iter().map(|t| t.name.clone()).collect();
        self.view.deferred = all[..listed].to_vec();
        self.index_cut = Some((all, self.removed.len()));
        self.remove(names.join(", "));
        self.names_cut = names;
        if cut.is_some() {
            return self.fits();
        }
        Ok(None)
    }

    /// (d) Instruction units by priority, then (e) a cut of the last one.
    fn instruction_units(&mut self) -> Result<Block> {
        let Some(trim) = self.trim.filter(|_| self.view.instructions.is_some()) else {
            if let Some(text) = self.view.instructions.take() {
                self.remove(text);
                return self.fits();
            }
            return Ok(None);
        };
        let order = trim.drop_order();
        if let Some(block) = self.drop_units(trim, &order, order.len().saturating_sub(1))? {
            return self.refill_index(block);
        }
        self.cut_last(trim, *order.last().unwrap_or(&0))
    }

    /// Room that dropping units left goes back to index names, as many as fit.
    fn refill_index(&mut self, block: (String, usize)) -> Result<Block> {
        let Some((all, at)) = self.index_cut.take() else {
            return Ok(Some(block));
        };
        let (n, listed, total) = (all.len(), self.view.deferred.len(), self.total_index);
        let mut probe = self.view.clone();
        let (limit, measure) = (self.limit, &mut *self.measure);
        let cut = smallest_fitting(0, n - listed - 1, |cut| {
            probe.deferred = all[..n - cut].to_vec();
            probe.more_deferred = total - (n - cut);
            Ok(measure(&probe)?.1 <= limit)
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
    fn drop_units(&mut self, trim: &Trim, order: &[usize], hi: usize) -> Result<Block> {
        let mut probe = self.view.clone();
        let (limit, measure) = (self.limit, &mut *self.measure);
        let found = smallest_fitting(self.dropped + 1, hi, |m| {
            probe.instructions = trim.render(&keep_after(trim, order, m));
            Ok(measure(&probe)?.1 <= limit)
        })?;
        let Some(m) = found else {
            return Ok(None);
        };
        let keep = keep_after(trim, order, m);
        self.view.instructions = trim.render(&keep);
        self.record_dropped(trim, &keep);
        self.dropped = m;
        // The search saw it fit.
        Ok(Some((self.measure)(&self.view)?))
    }

    /// (e) Only the highest-priority unit is left and it does not fit whole:
    /// cut it at a word boundary, or drop it.
    fn cut_last(&mut self, trim: &Trim, last: usize) -> Result<Block> {
        let unit_text = trim
            .units
            .get(last)
            .map(|u| u.text(&trim.text))
            .unwrap_or("");
        let cuts = word_cuts(unit_text);
        let mut probe = self.view.clone();
        let (limit, measure) = (self.limit, &mut *self.measure);
        // i counts words removed from the end; the whole unit is known not to fit.
        let fitting = if cuts.len() > 1 {
            smallest_fitting(1, cuts.len() - 1, |i| {
                let at = cuts[cuts.len() - 1 - i];
                probe.instructions = Some(cut_instructions(trim, last, at));
                Ok(measure(&probe)?.1 <= limit)
            })?
        } else {
            None
        };
        // Only the cut unit is shown: everything else kept so far goes.
        let only_last: Vec<bool> = (0..trim.units.len()).map(|k| k == last).collect();
        self.record_dropped(trim, &only_last);
        if let Some(i) = fitting {
            let at = cuts[cuts.len() - 1 - i];
            self.view.instructions = Some(cut_instructions(trim, last, at));
            self.remove(unit_text[at..].trim_start());
            self.truncated = true;
            return Ok(Some((self.measure)(&self.view)?));
        }
        self.remove(unit_text);
        self.view.instructions = None;
        self.fits()
    }

    /// The heading alone (with the note, if any), then nothing.
    fn heading_only(&mut self) -> Result<Block> {
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

    /// Reports the units `keep` no longer shows, each once.
    fn record_dropped(&mut self, trim: &Trim, keep: &[bool]) {
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

/// The units kept once the first `m` of `order` are dropped.
fn keep_after(trim: &Trim, order: &[usize], m: usize) -> Vec<bool> {
    let mut keep = trim.keep.clone();
    for k in &order[..m] {
        keep[*k] = false;
    }
    keep
}

/// Byte offsets where a word ends (the cut points of a unit), ascending.
fn word_cuts(text: &str) -> Vec<usize> {
    let mut cuts = Vec::new();
    let mut in_word = false;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            if in_word {
                cuts.push(i);
            }
            in_word = false;
        } else {
            in_word = true;
        }
    }
    if in_word {
        cuts.push(text.len());
    }
    cuts
}

/// The instructions when only `unit` is left, cut after byte `at` of it.
fn cut_instructions(trim: &Trim, unit: usize, at: usize) -> String {
    let u = &trim.units[unit];
    let mut s = trim.text[u.start..u.start + at].trim_end().to_string();
    s.push_str(CUT_MARKER);
    s
}

/// The first sentence of a tool description.
fn first_sentence(description: &str) -> String {
    segment::units(description)
        .first()
        .map(|u| u.text(description).to_string())
        .unwrap_or_default()
}

/// Shares `total` tokens between servers by weighted max-min fairness.
///
/// Servers needing less than their weighted share get what they need; the
/// rest split what remains in proportion to their weights, again and again
/// until every remaining server needs more than its share. Shares are whole
/// tokens; leftover tokens go to the largest remainders, then to the earlier
/// server. Integer arithmetic only, so the result is deterministic.
pub(crate) fn fair_shares(total: usize, needs: &[usize], weights: &[u64]) -> Vec<usize> {
    let mut shares = vec![0usize; needs.len()];
    let mut active: Vec<usize> = (0..needs.len()).filter(|i| needs[*i] > 0).collect();
    let mut remaining = total as u128;
    while !active.is_empty() {
        let w_sum: u128 = active.iter().map(|i| weights[*i].max(1) as u128).sum();
        let satisfied: Vec<usize> = active
            .iter()
            .copied()
            .filter(|i| (needs[*i] as u128) * w_sum <= remaining * weights[*i].max(1) as u128)
            .collect();
        if satisfied.is_empty() {
            let mut rems: Vec<(u128, usize)> = Vec::with_capacity(active.len());
            let mut given = 0u128;
            for &i in &active {
                let p = remaining * weights[i].max(1) as u128;
                shares[i] = (p / w_sum) as usize;
                given += p / w_sum;
                rems.push((p % w_sum, i));
            }
            rems.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            let left = (remaining - given) as usize;
            for (_, i) in rems.into_iter().take(left) {
                shares[i] += 1;
            }
            break;
        }
        for i in &satisfied {
            shares[*i] = needs[*i];
            remaining -= needs[*i] as u128;
        }
        active.retain(|i| !satisfied.contains(i));
    }
    shares
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fair_shares_by_hand() {
        // Equal weights: the small need is met, the rest split 250.
        assert_eq!(
            fair_shares(300, &[50, 200, 200], &[1, 1, 1]),
            [50, 125, 125]
        );
        // Weights 1:2:1 of 400 when everyone needs more.
        assert_eq!(
            fair_shares(400, &[500, 500, 500], &[1, 2, 1]),
            [100, 200, 100]
        );
        // Weight 1:3, the first needs less than its 50.
        assert_eq!(fair_shares(200, &[40, 1000], &[1, 3]), [40, 160]);
        // Leftover tokens go to the earliest on equal remainders.
        assert_eq!(fair_shares(10, &[100, 100, 100], &[1, 1, 1]), [4, 3, 3]);
        // 120: meeting the 20 leaves 33.3 each, which does not meet 35.
        assert_eq!(
            fair_shares(120, &[20, 35, 100, 100], &[1, 1, 1, 1]),
            [20, 34, 33, 33]
        );
        // 130: meeting the 20 leaves 36.7 each, which meets 35; the last two split 75.
        assert_eq!(
            fair_shares(130, &[20, 35, 100, 100], &[1, 1, 1, 1]),
            [20, 35, 38, 37]
        );
        // Nothing needed, nothing given.
        assert_eq!(fair_shares(100, &[0, 10], &[1, 1]), [0, 10]);
    }

    #[test]
    fn word_cuts_are_char_boundaries() {
        let s = "Ünïcode wörds 💱 here";
        let cuts = word_cuts(s);
        assert!(cuts.iter().all(|c| s.is_char_boundary(*c)));
        assert_eq!(&s[..cuts[1]], "Ünïcode wörds");
    }
}
