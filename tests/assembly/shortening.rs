//! Shortening is visible (issue 39, item 3): a block that lost units says
//! so in one line, counted inside its budget, in both built-in templates and
//! to user templates; on by default, off with
//! `Assembler::shortening_note(false)` (the policy's `shortening_note`).
//! The line takes the room of the lowest-ranked units, never a block's
//! last unit or a cut's words, and without a full-text hint never a
//! constraint: there the block goes without it.

use crate::common;

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
            let off = Assembler::new()
                .shortening_note(false)
                .template(template.clone())
                .budget(budget)
                .assemble(&servers)
                .unwrap();
            let mut said = 0;
            let mut went = 0;
            for (s, bare) in a.servers().iter().zip(off.servers()) {
                assert_eq!(s.name, bare.name);
                if !s.included {
                    continue;
                }
                assert!(s.tokens <= budget, "{}: {}", s.name, s.tokens);
                assert_eq!(s.tokens, o200k(&s.text));
                let lost_units = s.removed.iter().any(|r| r.unit.is_some())
                    && s.removed.iter().any(|r| {
                        r.reason == mcp_preamble::report::RemovalReason::Budget && r.unit.is_some()
                    });
                if (lost_units || s.truncated) && !s.text.contains(LINE) {
                    // The line would have taken the last unit or a cut's
                    // words: the block is the one without the setting.
                    assert_eq!(s.text, bare.text, "{} at {budget}", s.name);
                    went += 1;
                } else if lost_units || s.truncated {
                    assert!(s.text.contains("; full text: the reader"), "{}", s.text);
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
            // At 48 most blocks are down to their last unit or a cut (the
            // line takes neither); at 96 markdown says so in 8 of 8.
            let least = if budget < 96 { 0 } else { 4 };
            assert!(
                said >= least,
                "{} at {budget}: {said} say so, {went} without room",
                template.name()
            );
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
    assert!(text.contains("% shown."), "{text}");
    let off = Assembler::new()
        .shortening_note(false)
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
        .budget(28)
        .assemble(std::slice::from_ref(&s))
        .unwrap();
    assert!(a.text().contains(LINE), "{}", a.text());
    assert!(a.servers()[0].tokens <= 28);
    let a = Assembler::new()
        .shortening_note(true)
        .template(t)
        .assemble(&[s])
        .unwrap();
    assert!(!a.text().contains(LINE));
}

/// Without a hint the line only says text is missing: it never costs a
/// constraint. With one it leads to everything dropped and may take any
/// unit but the last.
#[test]
fn without_a_hint_the_line_never_costs_a_constraint() {
    let rule = "Always call list_periods before get_invoice.";
    let s = ServerSnapshot::new("invoice-server")
        .with_instructions(format!("{rule} Never pass IDs like `a/b#c?d`."));
    let alone = Assembler::new()
        .assemble(&[ServerSnapshot::new("invoice-server").with_instructions(rule)])
        .unwrap()
        .servers()[0]
        .tokens;
    for budget in alone..alone + 10 {
        let plain = Assembler::new().budget(budget);
        let a = plain.assemble(std::slice::from_ref(&s)).unwrap();
        let r = &a.servers()[0];
        assert!(r.text.contains(rule), "{budget}: {}", r.text);
        assert!(!r.text.contains(LINE), "{budget}: {}", r.text);
        assert!(r.tokens <= budget);
        // The rule is the last unit: a hint does not take it either.
        let hinted = Assembler::new()
            .budget(budget)
            .full_text_hint("the reader tool");
        let a = hinted.assemble(std::slice::from_ref(&s)).unwrap();
        let r = &a.servers()[0];
        assert!(r.text.contains(rule), "{budget}: {}", r.text);
    }
    let everything = all_snapshots()
        .into_iter()
        .filter(|s| s.alias.as_deref() == Some("server-everything"))
        .collect::<Vec<_>>();
    let plain = Assembler::new().budget(96).assemble(&everything).unwrap();
    let hinted = Assembler::new()
        .budget(96)
        .full_text_hint("the reader tool")
        .assemble(&everything)
        .unwrap();
    let (p, h) = (&plain.servers()[0], &hinted.servers()[0]);
    assert!(!p.text.contains(LINE), "{}", p.text);
    assert!(h.text.contains(LINE), "{}", h.text);
    assert!(h.tokens <= 96 && p.tokens <= 96);
}

/// Issue 55, item 4: a desktop user's tracker server (`data/tracker/`), a
/// call-order rule after three sentences of trivia. At its 34-token budget
/// the rule stays and the trivia goes: a sentence ordering tool calls is a
/// constraint wherever it stands.
#[test]
fn the_call_order_rule_stays_at_the_trackers_budget() {
    let rule = "Always call list_periods before get_invoice.";
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tracker/tracker.json");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut s = ServerSnapshot::new(v["name"].as_str().unwrap())
        .with_instructions(v["instructions"].as_str().unwrap());
    for t in v["tools"].as_array().unwrap() {
        s = s.with_tool(mcp_preamble::Tool::new(
            t["name"].as_str().unwrap(),
            t["description"].as_str().unwrap(),
        ));
    }
    for template in [Template::markdown(), Template::xml()] {
        for note in [true, false] {
            let a = Assembler::new()
                .template(template.clone())
                .shortening_note(note)
                .budget(34)
                .assemble(std::slice::from_ref(&s))
                .unwrap();
            let r = &a.servers()[0];
            assert!(r.tokens <= 34, "{}", r.tokens);
            assert!(
                r.text.contains(rule),
                "{} note={note}:\n{}",
                template.name(),
                r.text
            );
            assert!(!r.text.contains("tray icon"), "{}", r.text);
        }
    }
}
