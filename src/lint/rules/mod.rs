//! The rules, one file a family, each an `impl Pass` block that pushes
//! findings: `structure` (MCP001, MCP004, MCP008, MCP022), `tools` (MCP002, MCP003,
//! MCP007, with `names` telling tool names in prose), `secrets` (MCP005), `host`
//! (MCP006, and MCP020 and MCP021 for two of its shapes), `hidden` (MCP009), `cuts` (MCP010 and what survives each
//! host), `descriptions` (MCP011 to MCP014, on tool descriptions),
//! `drift` (MCP015 and MCP016, between snapshots of one server) and
//! `confusables` (MCP018, look-alike tool names) and `host_names` (MCP019,
//! names over a host's cap, with `lint --hosts`); `learned` is the lexical
//! model read beside MCP020 and MCP021's phrases (`acts`) and clause readers
//! (`conceal`, `lies`, `outcomes`, `overrule`, `rank`, `headers`), which skip
//! a phrase that is only mentioned (`mention`).

mod acts;
mod clause;
mod conceal;
mod confusables;
mod covers;
mod cuts;
mod descriptions;
mod drift;
mod guards;
mod headers;
mod hidden;
mod host;
mod host_names;
mod learned;
mod lexicon;
mod lies;
mod mention;
mod names;
mod outcomes;
mod overrule;
mod rank;
mod secrets;
mod standing;
mod structure;
mod tools;

use crate::model::Instructions;
use crate::sanitize;
use crate::segment;

use super::pass::Pass;

impl Pass<'_> {
    /// Runs the rules that apply to the server's instructions; returns the
    /// tokens of the sanitized instructions (0 unless present).
    pub(super) fn run(&mut self) -> usize {
        let server = self.server;
        self.tool_descriptions();
        self.names_over_host_caps();
        if let Instructions::Present(raw) = &server.instructions {
            self.confusable_names(Some(&sanitize::text(raw)));
        } else {
            self.confusable_names(None);
        }
        match &server.instructions {
            Instructions::Absent => 0,
            Instructions::Blank(raw) => {
                self.blank(raw);
                self.hidden_characters(raw);
                0
            }
            Instructions::Present(raw) => {
                let text = sanitize::text(raw);
                let tokens = self.linter.counter.count(&text);
                self.present(raw, &text, tokens);
                tokens
            }
        }
    }

    fn present(&mut self, raw: &str, text: &str, tokens: usize) {
        let units = segment::units(text);
        let tools_known = !self.server.tools.is_empty() && self.server.tools_error.is_none();

        self.too_long(tokens);
        self.wasted_whitespace(raw, tokens);
        self.hidden_characters(raw);
        self.secrets(text);
        for unit in &units {
            self.acts_on_host(text, unit);
        }
        if !self.linter.hosts.is_empty() {
            self.host_cuts(text, &units);
        }
        if !tools_known {
            // Without the tool list, restatements and tool names cannot be judged.
            return;
        }
        self.over_tool_descriptions(tokens);
        let restated = self.restatements(text, &units);
        self.unknown_tools(text, &units);
        self.descriptions_only(text, &units, &restated);
    }
}
