//! Shortening is visible (issue 39, item 3): with
//! `Assembler::shortening_note(true)` a block that lost units says so in
//! one line, counted inside its budget, in both built-in templates and to
//! user templates; off by default for now.

mod common;

use common::*;
use mcp_preamble::{Assembler, ServerSnapshot, Template};

const LINE: &str = "Shortened to fit:";

#[test]
fn a_shortened_block_says_so_within_its_budget_in_both_templates() {
    let servers = all_snapshots();
    for template in [Template::markdown(), Template::xml()] {
        let whole = Assembler::new()
            .shortening_note(true)
            .template(template.clone())
            .assemble(&servers)
            .unwrap();
        assert!(!whole.text().contains(LINE), "{}", template.name());
        for budget in [48, 96, 200] {
            let a = Assembler::new()
                .shortening_note(true)
                .template(template.clone())
                .budget(budget)
                .full_text_hint("the reader tool")
                .assemble(&servers)
                .unwrap();
            let mut said = 0;
            for s in a.servers().iter().filter(|s| s.included) {
                assert!(s.tokens <= budget, "{}: {}", s.name, s.tokens);
                assert_eq!(s.tokens, o200k(&s.text));
                let lost_units = s.removed.iter().any(|r| r.unit.is_some())
                    && s.removed.iter().any(|r| {
                        r.reason == mcp_preamble::report::RemovalReason::Budget && r.unit.is_some()
                    });
                if lost_units || s.truncated {
                    assert!(s.text.contains(LINE), "{} at {budget}:\n{}", s.name, s.text);
                    assert!(s.text.contains("; the full text: the reader"), "{}", s.text);
                    said += 1;
                } else if !s.trimmed() {
                    assert!(
                        !s.text.contains(LINE),
                        "{} at {budget}:\n{}",
                        s.name,
                        s.text
                    );
                }
            }
            assert!(said > 3, "{} at {budget}: {said}", template.name());
        }
    }
}

#[test]
fn the_line_says_how_much_is_shown_and_goes_with_a_setting() {
    let s = ServerSnapshot::new("notes").with_instructions(
        "Never delete a note without asking. Notes are markdown files in folders that you can browse \
         and search freely, with tags and links between them.",
    );
    let a = Assembler::new()
        .shortening_note(true)
        .budget(30)
        .assemble(std::slice::from_ref(&s))
        .unwrap();
    let text = &a.servers()[0].text;
    assert!(
        text.contains("Never delete a note without asking."),
        "{text}"
    );
    assert!(
        text.contains("% of this server's instructions is shown."),
        "{text}"
    );
    let off = Assembler::new()
        .budget(30)
        .assemble(std::slice::from_ref(&s))
        .unwrap();
    assert!(!off.text().contains(LINE));
    // A user template reads it as `s.shortened`.
    let t = Template::from_source(
        "mine",
        "{% macro server(s) %}{{ s.name }}: {{ s.instructions }}{% if s.shortened %} ({{ s.shortened }}){% endif %}{% endmacro %}{% for b in blocks %}{{ b }}\n{% endfor %}",
    )
    .unwrap();
    let a = Assembler::new()
        .shortening_note(true)
        .template(t.clone())
        .budget(20)
        .assemble(std::slice::from_ref(&s))
        .unwrap();
    assert!(a.text().contains(LINE), "{}", a.text());
    assert!(a.servers()[0].tokens <= 20);
    let a = Assembler::new()
        .shortening_note(true)
        .template(t)
        .assemble(&[s])
        .unwrap();
    assert!(!a.text().contains(LINE));
}
