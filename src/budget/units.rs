//! A server's instructions as units: which are still kept, and the order a
//! budget drops them in.

use std::collections::HashSet;

use crate::dedup::{self, Priority};
use crate::segment::{self, Unit, UnitKind};

/// A server's instructions as units, with what is still kept.
#[derive(Debug, Clone)]
pub(crate) struct Trim {
    pub text: String,
    pub units: Vec<Unit>,
    priority: Vec<Priority>,
    pub(super) keep: Vec<bool>,
    /// Per unit: a heading with content under it (it goes when that goes).
    heads: Vec<bool>,
}

impl Trim {
    /// `text` (sanitized instructions) as units, all kept, with their
    /// priorities; `tool_names` are the server's tools, normalized.
    pub(crate) fn new(text: String, tool_names: &HashSet<String>) -> Trim {
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

    /// `keep` less every heading: structure goes before the shortening
    /// line and before any sentence (issue 55).
    pub(super) fn without_headings(&self, keep: &[bool]) -> Vec<bool> {
        (0..self.units.len())
            .map(|k| keep[k] && !matches!(self.units[k].kind, UnitKind::Heading(_)))
            .collect()
    }

    /// The text of unit `k` (empty when there is no such unit).
    pub(super) fn unit_text(&self, k: usize) -> &str {
        self.units.get(k).map(|u| u.text(&self.text)).unwrap_or("")
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

    /// `keep`, less the headings it leaves with nothing under them.
    pub(super) fn without_orphan_headings(&self, keep: &[bool]) -> Vec<bool> {
        (0..self.units.len())
            .map(|k| keep[k] && (!self.heads_content(k) || self.has_content_under(k, keep)))
            .collect()
    }

    /// Indices of kept units in the order a budget drops them: lowest
    /// priority first; within a priority the longest first (so more of them
    /// fit), then the later. Headings are not in it: they stay while
    /// anything under them does.
    pub(super) fn drop_order(&self) -> Vec<usize> {
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

    /// The priority of unit `k`.
    pub(super) fn priority_of(&self, k: usize) -> Priority {
        self.priority[k]
    }

    /// How many headings `keep` shows.
    pub(super) fn headings_shown(&self, keep: &[bool]) -> usize {
        let shown = self.without_orphan_headings(keep);
        (0..self.units.len())
            .filter(|k| shown[*k] && matches!(self.units[*k].kind, UnitKind::Heading(_)))
            .count()
    }

    /// The length in bytes of unit `k`.
    pub(super) fn len_of(&self, k: usize) -> usize {
        self.units[k].end - self.units[k].start
    }

    /// How many units lead `order` below `priority` (the minor ones).
    pub(super) fn count_below(&self, order: &[usize], priority: Priority) -> usize {
        order
            .iter()
            .take_while(|k| self.priority[**k] < priority)
            .count()
    }

    /// The units kept once the first `m` of `order` are dropped.
    pub(super) fn keep_after(&self, order: &[usize], m: usize) -> Vec<bool> {
        let mut keep = self.keep.clone();
        for k in &order[..m] {
            keep[*k] = false;
        }
        keep
    }
}
