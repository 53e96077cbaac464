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

    /// Step 2, tools: the tool line goes whole, before any instruction
    /// unit: the host sends the model its tools anyway, and a rule of the
    /// instructions it reads nowhere else. The refill then lists as many
    /// names as the room left holds (the rung refills).
    pub(super) fn tool_names(&mut self) -> Result<Option<Rendered>> {
        let all = std::mem::take(&mut self.view.tools);
        if all.is_empty() && self.view.more_tools == 0 {
            return Ok(None);
        }
        self.view.more_tools = 0;
        let names: Vec<&str> = all.iter().map(|t| t.name.as_str()).collect();
        self.remove(match names.is_empty() {
            true => "tool list".to_string(),
            false => names.join(", "),
        });
        if !all.is_empty() {
            self.tools_cut = Some((all, self.removed.len() - 1));
        }
        self.fits()
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
