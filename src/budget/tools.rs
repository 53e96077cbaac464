//! Step 2 of the ladder: the loaded tools' descriptions, then their names.

use super::ladder::Ladder;
use super::render::Rendered;
use crate::error::Result;
use crate::segment;

impl Ladder<'_, '_> {
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
        self.tools_cut = Some((all, self.removed.len() - 1));
        self.fits_if(cut.is_some())
    }
}

impl Ladder<'_, '_> {
    /// Room that dropping units left goes back to loaded tool names, as
    /// many as fit.
    pub(super) fn refill_tools(&mut self) -> Result<()> {
        let Some((all, at)) = self.tools_cut.take() else {
            return Ok(());
        };
        let listed = self.view.tools.len();
        let Some(cut) = self.refill_names(&all, listed, self.total_tools, |v| {
            (&mut v.tools, &mut v.more_tools)
        })?
        else {
            return Ok(());
        };
        let names: Vec<&str> = all[all.len() - cut..]
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        self.renamed(at, &names.join(", "));
        Ok(())
    }
}

/// The first sentence of a tool description.
fn first_sentence(description: &str) -> String {
    segment::units(description)
        .first()
        .map(|u| u.text(description).to_string())
        .unwrap_or_default()
}
