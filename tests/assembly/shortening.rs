//! Shortening is visible (issue 39, item 3): a block that lost units says
//! so in one line, counted inside its budget, in both built-in templates and
//! to user templates; on by default, off with
//! `Assembler::shortening_note(false)` (the policy's `shortening_note`).
//! The line takes the room of the lowest-ranked units, never a block's
//! last unit or a cut's words, with or without a full-text hint (issue 55:
//! a constraint too).

use crate::common;

use common::*;
use mcp_preamble::{Assembler, ServerSnapshot, Template};

const LINE: &str = "Shortened to fit:";

/// Issue 55, item 3: at budgets from 40 to 400 tokens (every fourth), for every corpus
/// server in both templates, a block that lost instruction units carries
/// the line unless it is down to one unit (or a cut of one), hint or not;
/// without a hint the line says how much is shown.
#[test]
fn a_shortened_block_says_so_at_every_budget_in_both_templates() {
    use std::collections::{BTreeSet, HashMap};
    let servers = all_snapshots();
    let units_of = |r: &mcp_preamble::ServerReport| -> BTreeSet<usize> {
        r.removed.iter().filter_map(|x| x.unit).collect()
    };
    for template in [Template::markdown(), Template::xml()] {
        let whole = Assembler::new()
            .shortening_note(true)
            .template(template.clone())
            .assemble(&servers)
            .unwrap();
        assert!(!whole.text().contains(LINE), "{}", template.name());
        // Every unit a server has: all of them go at a budget of 1.
        let all = Assembler::new()
            .template(template.clone())
            .budget(1)
            .assemble(&servers)
            .unwrap();
        let total: HashMap<String, usize> = all
            .servers()
            .iter()
            .map(|r| (r.name.clone(), units_of(r).len()))
            .collect();
        let mut said = 0;
        for budget in (40..=400).step_by(4) {
            let a = Assembler::new()
                .shortening_note(true)
                .template(template.clone())
                .budget(budget)
                .assemble(&servers)
                .unwrap();
            for s in a.servers().iter().filter(|s| s.included) {
                assert!(s.tokens <= budget, "{}: {}", s.name, s.tokens);
                let lost = s.removed.iter().any(|r| {
                    r.reason == mcp_preamble::report::RemovalReason::Budget && r.unit.is_some()
                });
                let shown = total[&s.name].saturating_sub(units_of(s).len());
                if lost && !s.truncated && shown > 1 {
                    assert!(
                        s.text.contains(LINE),
                        "{} {} at {budget}: {shown} units shown, no line:\n{}",
                        template.name(),
                        s.name,
                        s.text
                    );
                    assert!(
                        s.text.contains("% shown") || s.text.contains("left out"),
                        "{}",
                        s.text
                    );
                    said += 1;
                } else if !lost && !s.truncated {
                    assert!(
                        !s.text.contains(LINE),
                        "{} at {budget}:\n{}",
                        s.name,
                        s.text
                    );
                }
            }
        }
        assert!(said > 100, "{}: {said}", template.name());
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

/// Without a hint the line says how much is shown, and it may cost any
/// unit but the last, a constraint too (issue 55): a reader not told that
/// text is missing takes what is left for all of it. The rule, the last
/// unit, stays either way.
#[test]
fn without_a_hint_the_line_still_shows_and_keeps_the_last_unit() {
    let rule = "Always call list_periods before get_invoice.";
    let s = ServerSnapshot::new("invoice-server")
        .with_instructions(format!("{rule} Never pass IDs like `a/b#c?d`."));
    let alone = Assembler::new()
        .assemble(&[ServerSnapshot::new("invoice-server").with_instructions(rule)])
        .unwrap()
        .servers()[0]
        .tokens;
    let mut lined = 0;
    for budget in alone..alone + 30 {
        for hint in [None, Some("the reader tool")] {
            let mut a = Assembler::new().budget(budget);
            if let Some(h) = hint {
                a = a.full_text_hint(h);
            }
            let a = a.assemble(std::slice::from_ref(&s)).unwrap();
            let r = &a.servers()[0];
            assert!(r.text.contains(rule), "{budget}: {}", r.text);
            assert!(r.tokens <= budget);
            if r.text.contains(LINE) {
                lined += 1;
                assert!(hint.is_some() || r.text.contains("% shown"), "{}", r.text);
            }
        }
    }
    assert!(lined > 0);
    let everything = all_snapshots()
        .into_iter()
        .filter(|s| s.alias.as_deref() == Some("server-everything"))
        .collect::<Vec<_>>();
    for budget in [96, 100] {
        let plain = Assembler::new()
            .budget(budget)
            .assemble(&everything)
            .unwrap();
        let p = &plain.servers()[0];
        assert!(p.text.contains(LINE), "{budget}: {}", p.text);
        assert!(p.tokens <= budget);
    }
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
