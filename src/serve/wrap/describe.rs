//! Tool descriptions fitted to a host's per-description cap (issue 51.3;
//! Claude Code cuts each at 2,048 UTF-16 units, blindly, with the cap in
//! the host table's `description_cap`). A description over the cap goes
//! through the same ladder as instructions: whole units removed, the
//! constraints last, and the block's shortening line says so.

use crate::assemble::Assembler;
use crate::hosts::HostCap;
use crate::model::ServerSnapshot;
use crate::template::Template;

/// The template a fitted description renders through: the kept units,
/// then the shortening line, and nothing else (no heading, no framing:
/// the host shows the text as the tool's description).
const SOURCE: &str = "{%- macro server(s) -%}{{ s.instructions }}{% if s.shortened %}\n\n\
{{ s.shortened }}{% endif %}{%- endmacro -%}{%- for block in blocks %}{{ block }}{% endfor -%}";

/// Fits descriptions to one cap.
#[derive(Debug, Clone)]
pub(crate) struct Describer {
    cap: HostCap,
    assembler: Assembler,
}

impl Describer {
    /// A describer for `cap`; `None` when the template does not compile
    /// (it is fixed: covered by the tests below).
    pub(crate) fn new(cap: HostCap) -> Option<Describer> {
        let template = Template::from_source("tool-description", SOURCE).ok()?;
        // No token budget: the host's cap is the only bound on a description.
        // Nothing removed but by the ladder: a description's repeats stay.
        let assembler = Assembler::new()
            .dedup(false)
            .template(template)
            .tool_list(false)
            .shortening_note(true)
            .host_cap(cap);
        Some(Describer { cap, assembler })
    }

    /// `text` as it is when within the cap; else shortened by the ladder,
    /// with its shortening line. `None` when nothing fits.
    pub(crate) fn fit(&self, tool: &str, text: &str) -> Option<String> {
        if self.cap.fits(text) {
            return Some(text.to_string());
        }
        let one = ServerSnapshot::new(tool).with_instructions(text);
        let fitted = self.assembler.assemble(&[one]).ok()?;
        let fitted = fitted.text().trim_end();
        (!fitted.is_empty() && self.cap.fits(fitted)).then(|| fitted.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosts::{Host, Unit};

    #[test]
    fn a_long_description_keeps_its_constraint_and_says_it_was_shortened() {
        let cap = Host::ClaudeCode.profile().description_cap.unwrap();
        let d = Describer::new(cap).unwrap();
        let trivia = |i: usize| {
            format!("Invoice field {i} holds a number, a date, lines and totals in a currency. ")
        };
        let half = |r: std::ops::Range<usize>| r.map(trivia).collect::<String>();
        let text = format!(
            "{}Never call get_invoice before list_periods. {}",
            half(0..20),
            half(20..40)
        );
        assert!(cap.measure(&text) > cap.limit);
        let fitted = d.fit("get_invoice", &text).unwrap();
        assert!(cap.fits(&fitted), "{}", cap.measure(&fitted));
        assert!(fitted.contains("Never call get_invoice before list_periods."));
        assert!(fitted.contains("Shortened to fit"), "{fitted}");
        // Within the cap: as it is, byte for byte.
        assert_eq!(d.fit("t", "Short.").unwrap(), "Short.");
        let small = HostCap::per_server(Unit::Chars, 2);
        assert_eq!(Describer::new(small).unwrap().fit("t", &text), None);
    }
}
