//! Token budgets: exact limits on rendered blocks, the trimming ladder, the
//! fair share of a total, and the corpus under tight budgets.

use crate::common;

use common::*;
use mcp_preamble::report::RemovalReason;
use mcp_preamble::{Assembler, Assembly, Policy, ServerSnapshot, Template, Tool};
use proptest::prelude::*;
use pulldown_cmark::{Event, HeadingLevel, Parser, Tag};

/// Checks every invariant a budgeted assembly promises.
fn check(assembly: &Assembly, budgets: &dyn Fn(&str) -> Option<usize>, total: Option<usize>) {
    let text = assembly.text();
    assert_eq!(assembly.total_tokens(), o200k(text));
    if let Some(total) = total {
        assert!(
            assembly.total_tokens() <= total,
            "section {} > {total}",
            assembly.total_tokens()
        );
    }
    for s in assembly.servers() {
        if !s.included {
            assert!(s.text.is_empty() && s.span.is_none());
            continue;
        }
        let (a, b) = s.span.unwrap();
        assert_eq!(&text[a..b], s.text);
        assert_eq!(s.tokens, o200k(&s.text), "{}", s.name);
        if let Some(limit) = budgets(&s.name) {
            assert!(
                s.tokens <= limit,
                "{}: {} > {limit}\n{}",
                s.name,
                s.tokens,
                s.text
            );
        }
        if let Some(b) = s.budget {
            assert!(
                s.tokens <= b,
                "{}: {} > report budget {b}",
                s.name,
                s.tokens
            );
        }
        assert_eq!(
            s.truncated,
            s.text.contains(" […]") && s.removed.iter().any(|r| r.reason == RemovalReason::Budget)
        );
    }
}

fn included(assembly: &Assembly) -> usize {
    assembly.servers().iter().filter(|s| s.included).count()
}

fn count_markdown_servers(text: &str) -> (usize, usize) {
    let (mut h2, mut h3) = (0, 0);
    for e in Parser::new(text) {
        if let Event::Start(Tag::Heading { level, .. }) = e {
            match level {
                HeadingLevel::H1 | HeadingLevel::H2 => h2 += 1,
                HeadingLevel::H3 => h3 += 1,
                _ => {}
            }
        }
    }
    (h2, h3)
}

fn count_xml_servers(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    let doc = roxmltree::Document::parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    doc.root_element()
        .children()
        .filter(|n| n.has_tag_name("server"))
        .count()
}

// ---- the corpus ------------------------------------------------------------

#[test]
fn corpus_keeps_the_invariants_at_every_budget() {
    let servers = all_snapshots();
    for template in [Template::markdown(), Template::xml()] {
        for budget in [Some(32), Some(64), Some(128), Some(256), None] {
            let mut assembler = Assembler::new().template(template.clone());
            if let Some(b) = budget {
                assembler = assembler.budget(b);
            }
            let a = assembler.assemble(&servers).unwrap();
            check(&a, &|_| budget, None);
            let again = assembler.assemble(&servers).unwrap();
            assert_eq!(a.text(), again.text(), "deterministic");
            if template.name() == "xml" {
                assert_eq!(count_xml_servers(a.text()), included(&a));
            } else {
                assert_eq!(count_markdown_servers(a.text()), (1, included(&a)));
            }
            if budget.is_none() {
                for s in a.servers() {
                    for r in &s.removed {
                        assert!(
                            r.reason == RemovalReason::RestatesTool
                                || r.reason == RemovalReason::Repeated,
                            "{}: {:?} at unlimited budget",
                            s.name,
                            r
                        );
                    }
                    assert!(!s.truncated);
                }
            }
        }
    }
}

#[test]
fn corpus_under_a_total_budget() {
    let servers = all_snapshots();
    for total in [0, 50, 400, 1500, 5000] {
        let assembler = Assembler::new().budget(256).total_budget(total);
        let a = assembler.assemble(&servers).unwrap();
        check(&a, &|_| Some(256), Some(total));
    }
}

// ---- labeled cases from the corpus -----------------------------------------

#[test]
fn restatements_of_tool_descriptions_are_removed() {
    for (server, tool, sentence) in RESTATEMENTS {
        let a = Assembler::new().assemble(&[snapshot(server)]).unwrap();
        let report = &a.servers()[0];
        assert!(!report.text.contains(sentence), "{server}: {sentence}");
        let removal = report
            .removed
            .iter()
            .find(|r| r.text == *sentence)
            .unwrap_or_else(|| panic!("{server}: no removal for {sentence}"));
        assert_eq!(removal.reason, RemovalReason::RestatesTool);
        assert_eq!(removal.tool.as_deref(), Some(*tool));
    }
}

#[test]
fn constraints_survive_a_tight_budget() {
    for (server, sentence) in CONSTRAINTS {
        let s = snapshot(server);
        let full = Assembler::new().assemble(std::slice::from_ref(&s)).unwrap();
        assert!(
            full.servers()[0].text.contains(sentence),
            "{server}: not in the full text: {sentence}"
        );
        let a = Assembler::new().budget(128).assemble(&[s]).unwrap();
        let report = &a.servers()[0];
        assert!(report.tokens <= 128);
        assert!(
            report.text.contains(sentence),
            "{server}: lost at 128 tokens: {sentence}\n{}",
            report.text
        );
    }
}

#[test]
fn prose_goes_before_constraints() {
    // basic-memory is 4.5x over 128 tokens: most prose has to go.
    let a = Assembler::new()
        .budget(128)
        .assemble(&[snapshot("basic-memory")])
        .unwrap();
    let r = &a.servers()[0];
    assert!(r.tokens_before > 500);
    assert!(
        !r.text
            .contains("Basic Memory is the user's personal knowledge base")
    );
    assert!(
        r.removed
            .iter()
            .filter(|x| x.reason == RemovalReason::Budget)
            .count()
            >= 5
    );
}

// ---- the ladder, step by step ----------------------------------------------

fn server_with(instr: &str, tools: usize) -> ServerSnapshot {
    let mut s = ServerSnapshot::new("srv").with_instructions(instr);
    for i in 0..tools {
        s = s.with_tool(Tool::new(
            format!("tool_{i:02}"),
            format!("Does thing number {i}. Has a second sentence."),
        ));
    }
    s
}

#[test]
fn the_ladder_trims_tools_before_instructions() {
    let s = server_with("Always call tool_00 first. This server is a demo.", 30);
    let unlimited = Assembler::new()
        .tool_descriptions(true)
        .assemble(std::slice::from_ref(&s))
        .unwrap();
    let full = unlimited.servers()[0].tokens;

    // Shortened descriptions first.
    let a = Assembler::new()
        .tool_descriptions(true)
        .budget(full - 10)
        .assemble(std::slice::from_ref(&s))
        .unwrap();
    let r = &a.servers()[0];
    assert!(r.tokens <= full - 10);
    assert!(!r.text.contains("Has a second sentence"));
    assert!(r.text.contains("(Does thing number 0.)"));
    assert_eq!(
        r.removed[0].text,
        "tool descriptions after their first sentence"
    );

    // Then a shorter list of names, then no names at all.
    let names_only = Assembler::new()
        .assemble(std::slice::from_ref(&s))
        .unwrap()
        .servers()[0]
        .tokens;
    let a = Assembler::new()
        .budget(names_only - 20)
        .assemble(std::slice::from_ref(&s))
        .unwrap();
    let r = &a.servers()[0];
    assert!(
        r.text.contains(" more\n") || r.text.ends_with(" more"),
        "{}",
        r.text
    );
    assert!(
        r.text.contains("This server is a demo."),
        "instructions untouched while tools shrink"
    );

    let a = Assembler::new()
        .budget(22)
        .assemble(std::slice::from_ref(&s))
        .unwrap();
    let r = &a.servers()[0];
    assert!(r.tokens <= 22, "{}", r.text);
    assert!(r.text.contains("Always call tool_00 first."), "{}", r.text);
    // The tool line goes whole before any unit (issue 39): the prose that
    // fits stays.
    assert!(r.text.contains("This server is a demo."), "{}", r.text);
    assert!(!r.text.contains("Tools:"), "{}", r.text);
}

#[test]
fn the_last_unit_is_cut_at_a_word_with_a_marker() {
    let long = "Never delete production data without asking the operator for a written confirmation \
                that names the exact database, the table, the number of rows and the reason for the change.";
    let s = ServerSnapshot::new("srv").with_instructions(long);
    let a = Assembler::new().budget(20).assemble(&[s]).unwrap();
    let r = &a.servers()[0];
    assert!(r.truncated);
    assert!(r.tokens <= 20);
    assert!(r.text.contains("Never delete production"), "{}", r.text);
    assert!(r.text.trim_end().ends_with("[…]"), "{}", r.text);
    let kept = r
        .text
        .split("\n\n")
        .nth(1)
        .unwrap()
        .trim_end_matches(" […]");
    assert!(long.starts_with(kept), "cut at a word boundary: {kept:?}");
    assert!(long[kept.len()..].starts_with(' '));
    let removal = r
        .removed
        .iter()
        .find(|x| x.reason == RemovalReason::Budget)
        .unwrap();
    assert!(long.ends_with(&removal.text));
}

#[test]
fn a_heading_that_does_not_fit_omits_the_server() {
    let s =
        ServerSnapshot::new("a-server-with-a-rather-long-name").with_instructions("Hello there.");
    let a = Assembler::new().budget(3).assemble(&[s]).unwrap();
    let r = &a.servers()[0];
    assert!(!r.included);
    assert_eq!(a.text(), "");
    assert_eq!(
        r.diagnostics(),
        ["omitted: its heading alone is over the budget of 3 tokens"]
    );
    assert!(
        r.removed
            .iter()
            .any(|x| x.text == "Hello there." && x.reason == RemovalReason::Budget)
    );
}

#[test]
fn repeats_and_twins_are_removed_and_reported() {
    let a = ServerSnapshot::new("alpha")
        .with_instructions("Call x first. Ids expire daily. Call x first.");
    let b = ServerSnapshot::new("beta")
        .with_instructions("call X first!  Ids expire daily.  Call x first.");
    let asm = Assembler::new().assemble(&[b.clone(), a.clone()]).unwrap();
    let alpha = &asm.servers()[0];
    assert_eq!(alpha.removed.len(), 1);
    assert_eq!(alpha.removed[0].reason, RemovalReason::Repeated);
    assert!(
        alpha.text.ends_with("\n\nCall x first. Ids expire daily."),
        "{}",
        alpha.text
    );
    // Across servers only on request, and only for byte-identical text: a
    // look-alike never stands in for another server's rules.
    let beta = &asm.servers()[1];
    assert_eq!(beta.removed[0].reason, RemovalReason::Repeated);
    assert!(beta.text.contains("call X first! Ids expire daily."));
    let across = Assembler::new().dedup_across_servers(true);
    let asm = across.assemble(&[b, a.clone()]).unwrap();
    assert!(asm.servers()[1].text.contains("Ids expire daily"));
    let twin = ServerSnapshot::new("beta")
        .with_instructions("Call x first. Ids expire daily. Call x first.");
    let asm = across.assemble(&[twin, a]).unwrap();
    let beta = &asm.servers()[1];
    assert_eq!(beta.removed[0].reason, RemovalReason::SameAsServer);
    assert_eq!(beta.removed[0].server.as_deref(), Some("alpha"));
    assert!(beta.text.contains("Same instructions as alpha above."));
    assert!(!beta.text.contains("Ids expire"));

    let off = Assembler::new()
        .dedup(false)
        .assemble(&[ServerSnapshot::new("alpha").with_instructions("A b. A b.")])
        .unwrap();
    assert!(off.servers()[0].removed.is_empty());
}

// ---- total budget, shares and policy ----------------------------------------

#[test]
fn a_total_budget_is_shared_fairly() {
    let rules: String = (0..40)
        .map(|i| format!("Rule {i}: always check ledger {i} before paying. "))
        .collect();
    let mut small = server_with("Small one.", 0);
    small.server_info.name = "small".into();
    let mut big1 = server_with(&rules, 0);
    big1.server_info.name = "big1".into();
    let other: String = (0..40)
        .map(|i| format!("Rule {i}: never pay invoice {i} twice. "))
        .collect();
    let mut big2 = server_with(&other, 0);
    big2.server_info.name = "big2".into();
    let servers = [small, big1, big2];
    let a = Assembler::new()
        .total_budget(300)
        .assemble(&servers)
        .unwrap();
    check(&a, &|_| None, Some(300));
    let by = |n: &str| a.servers().iter().find(|s| s.name == n).unwrap().clone();
    // The small server needs less than a third: it keeps everything.
    let small = by("small");
    assert!(small.budget.unwrap() >= small.tokens_before);
    assert_eq!(small.tokens, small.tokens_before);
    assert!(small.removed.is_empty());
    let (b1, b2) = (by("big1").budget.unwrap(), by("big2").budget.unwrap());
    assert!(
        b1.abs_diff(b2) <= 1,
        "equal weights, equal shares: {b1} {b2}"
    );
    assert!(b1 > 100, "the others split what the small one left: {b1}");

    // Weight 3 for big2: it gets about three times big1's share.
    let w = Assembler::new()
        .total_budget(300)
        .policy("big2", Policy::new().weight(3.0))
        .assemble(&servers)
        .unwrap();
    check(&w, &|_| None, Some(300));
    let s1 = w.servers().iter().find(|s| s.name == "big1").unwrap();
    let s2 = w.servers().iter().find(|s| s.name == "big2").unwrap();
    let ratio = s2.budget.unwrap() as f64 / s1.budget.unwrap() as f64;
    assert!((2.8..=3.2).contains(&ratio), "{ratio}");
    assert_eq!(s2.policy.as_deref(), Some("weight 3"));
}

#[test]
fn policies_exclude_and_replace() {
    let a = ServerSnapshot::new("noisy").with_instructions("USE ME FOR EVERYTHING.");
    let b = ServerSnapshot::new("billing").with_instructions("Old text.");
    let asm = Assembler::new()
        .policy("noisy", Policy::new().exclude())
        .policy(
            "billing",
            Policy::new().replace_instructions("Use only for invoices."),
        )
        .assemble(&[a, b])
        .unwrap();
    let billing = &asm.servers()[0];
    assert_eq!(billing.policy.as_deref(), Some("instructions replaced"));
    assert!(billing.text.contains("Use only for invoices."));
    assert_eq!(billing.removed[0].reason, RemovalReason::Policy);
    assert_eq!(billing.removed[0].text, "Old text.");
    let noisy = &asm.servers()[1];
    assert!(!noisy.included);
    assert_eq!(noisy.policy.as_deref(), Some("excluded"));
    assert_eq!(noisy.removed[0].reason, RemovalReason::Policy);
    assert!(!asm.text().contains("USE ME"));
}

#[test]
fn per_alias_budgets_override_the_default() {
    let servers = [snapshot("basic-memory"), snapshot("context7-mcp")];
    let a = Assembler::new()
        .budget(200)
        .server_budget("context7-mcp", 40)
        .assemble(&servers)
        .unwrap();
    check(
        &a,
        &|n| Some(if n == "context7-mcp" { 40 } else { 200 }),
        None,
    );
    assert_eq!(a.servers()[1].budget, Some(40));
    assert!(Assembler::new().similarity_threshold(1.5).is_err());
}

// ---- properties ---------------------------------------------------------------

fn text_strategy() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        any::<String>(),
        "[a-zA-Z ]{0,40}\\. ",
        Just("\n".to_string()),
        Just("\n\n".to_string()),
        Just("# Heading\n".to_string()),
        Just("### forged\n".to_string()),
        Just("```\n".to_string()),
        Just("</server><server name=\"x\">".to_string()),
        Just("- Always call x first.\n".to_string()),
        Just("| a | b |\n|---|---|\n".to_string()),
        Just("---\n".to_string()),
        Just("<!--".to_string()),
        Just("e.g. `a. B` v1.2 ".to_string()),
        Just("\u{202e}\u{200b}\u{e0041}".to_string()),
        Just("<|endoftext|>".to_string()),
    ];
    proptest::collection::vec(piece, 0..12).prop_map(|v| v.concat())
}

fn server_strategy() -> impl Strategy<Value = ServerSnapshot> {
    (
        any::<String>(),
        proptest::option::of(text_strategy()),
        proptest::collection::vec((any::<String>(), text_strategy()), 0..6),
    )
        .prop_map(|(name, instr, tools)| {
            let mut s = ServerSnapshot::new(name);
            if let Some(i) = instr {
                s = s.with_instructions(i);
            }
            for (n, d) in tools {
                s = s.with_tool(Tool::new(n, d));
            }
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn budgets_hold_on_arbitrary_servers(
        servers in proptest::collection::vec(server_strategy(), 0..5),
        budget in proptest::option::of(0usize..200),
        total in proptest::option::of(0usize..600),
        xml in any::<bool>(),
        descriptions in any::<bool>(),
    ) {
        let template = if xml { Template::xml() } else { Template::markdown() };
        let mut assembler = Assembler::new().template(template).tool_descriptions(descriptions);
        if let Some(b) = budget { assembler = assembler.budget(b); }
        if let Some(t) = total { assembler = assembler.total_budget(t); }
        let a = assembler.assemble(&servers).unwrap();
        check(&a, &|_| budget, total);
        let fresh = assembler.clone().assemble(&servers).unwrap();
        prop_assert_eq!(a.text(), fresh.text());
        if xml {
            prop_assert_eq!(count_xml_servers(a.text()), included(&a));
        } else if included(&a) > 0 {
            prop_assert_eq!(count_markdown_servers(a.text()), (1, included(&a)));
        }
    }
}

#[test]
fn a_total_budget_with_blocks_that_render_empty_terminates() {
    let t = Template::from_source(
        "sparse",
        "{% macro server(s) %}{% if s.instructions %}{{ s.instructions | md_block }}{% endif %}{% endmacro %}\
         Servers:{% for b in blocks %}\n{{ b }}{% endfor %}",
    )
    .unwrap();
    let servers = [
        ServerSnapshot::new("tools-only").with_tool(Tool::new("t", "d")),
        ServerSnapshot::new("talky")
            .with_instructions("Always say a great deal of things here. ".repeat(5)),
    ];
    let a = Assembler::new()
        .template(t)
        .total_budget(8)
        .assemble(&servers)
        .unwrap();
    assert!(a.total_tokens() <= 8, "{}", a.text());
}

#[test]
fn headings_only_instructions_are_content_and_cut_headings_are_reported() {
    // Instructions that are only a heading are not dropped before the tools.
    let mut s = ServerSnapshot::new("srv")
        .with_instructions("# Always call list_periods before get_invoice");
    for i in 0..8 {
        s = s.with_tool(Tool::new(format!("tool_{i}"), "d"));
    }
    let a = Assembler::new().budget(40).assemble(&[s]).unwrap();
    let r = &a.servers()[0];
    assert!(r.tokens <= 40);
    assert!(
        r.text
            .contains("Always call list_periods before get_invoice"),
        "{}",
        r.text
    );

    // A heading above a cut sentence is reported when it goes.
    let long = "Never delete production data without asking the operator for a written confirmation that names the database.";
    let s = ServerSnapshot::new("srv").with_instructions(format!("# Setup\n\n{long}"));
    let a = Assembler::new().budget(20).assemble(&[s]).unwrap();
    let r = &a.servers()[0];
    assert!(r.truncated && r.tokens <= 20, "{}", r.text);
    if !r.text.contains("Setup") {
        assert!(
            r.removed
                .iter()
                .any(|x| x.text == "# Setup" && x.reason == RemovalReason::Budget),
            "{:?}",
            r.removed
        );
    }
}

// ---- spending the budget (issue 20) ------------------------------------------

/// Once units go, the room left comes back: server-everything used to end at
/// 184 of 200 and 292 of 300 tokens with "Tools: 14, not listed".
#[test]
fn room_left_after_units_go_is_spent() {
    let s = snapshot("server-everything");
    // The shortening line (16 tokens here) leaves room no dropped unit fits;
    // with it the headings go first (issue 55), which leaves other gaps.
    for (budget, line, at_least) in [
        (200, false, 195),
        (300, false, 295),
        (200, true, 185),
        (300, true, 285),
    ] {
        let assembler = Assembler::new().budget(budget).shortening_note(line);
        let a = assembler.assemble(std::slice::from_ref(&s)).unwrap();
        check(&a, &|_| Some(budget), None);
        let r = &a.servers()[0];
        assert!(r.tokens >= at_least, "{} of {budget}\n{}", r.tokens, r.text);
        assert_eq!(r.text.contains("Shortened to fit:"), line, "{}", r.text);
        // Deterministic: the same block again.
        let again = assembler.assemble(std::slice::from_ref(&s)).unwrap();
        assert_eq!(again.text(), a.text());
    }
    let a = Assembler::new().budget(200).assemble(&[s]).unwrap();
    let r = &a.servers()[0];
    assert!(!r.text.contains("not listed"), "{}", r.text);
    // The names cut are reported once, without the ones listed again.
    let names = r
        .removed
        .iter()
        .find(|x| x.reason == RemovalReason::Budget && x.unit.is_none())
        .unwrap();
    let line = r
        .text
        .lines()
        .find(|l| l.starts_with("Tools:"))
        .unwrap_or("");
    for t in &snapshot("server-everything").tools {
        let listed = line.contains(&format!("`{}`", t.name));
        let reported = names.text.split(", ").any(|n| n == t.name);
        assert!(listed != reported, "{}: {}\n{}", t.name, names.text, r.text);
    }
}

/// The case from issue 20: at a budget of 24 the ordering rule stays when
/// it fits, even though the other constraint is shorter (the ladder used to
/// drop it and end at 16 tokens).
#[test]
fn a_constraint_that_fits_is_kept_over_a_shorter_one() {
    let rule = "Always call list_periods before get_invoice.";
    let instr = format!("{rule} Never pass IDs like `a/b#c?d`.");
    let s = ServerSnapshot::new("invoice-server").with_instructions(&instr);
    let alone = Assembler::new()
        .assemble(&[ServerSnapshot::new("invoice-server").with_instructions(rule)])
        .unwrap()
        .servers()[0]
        .tokens;
    let full = Assembler::new()
        .assemble(std::slice::from_ref(&s))
        .unwrap()
        .servers()[0]
        .tokens;
    assert!(alone <= 24 && 24 < full, "{alone} {full}");
    for budget in alone..full {
        let a = Assembler::new()
            .budget(budget)
            .assemble(std::slice::from_ref(&s))
            .unwrap();
        check(&a, &|_| Some(budget), None);
        let r = &a.servers()[0];
        assert!(r.text.contains(rule), "at {budget}:\n{}", r.text);
    }
    // The seed server too, tools and all.
    let a = Assembler::new()
        .budget(24)
        .assemble(&[snapshot("seed-invoice-server")])
        .unwrap();
    check(&a, &|_| Some(24), None);
    assert!(a.servers()[0].text.contains(rule), "{}", a.text());
}

/// No budget cuts a constraint into a permission (issue 21): the cut keeps
/// every word that narrows the unit, or the unit goes whole.
#[test]
fn a_cut_never_turns_a_constraint_into_a_permission() {
    let rule = "You may delete any invoice only after the user confirms.";
    let s = ServerSnapshot::new("billing").with_instructions(rule);
    let full = Assembler::new()
        .assemble(std::slice::from_ref(&s))
        .unwrap()
        .servers()[0]
        .tokens;
    for budget in 1..=full {
        let a = Assembler::new()
            .budget(budget)
            .assemble(std::slice::from_ref(&s))
            .unwrap();
        check(&a, &|_| Some(budget), None);
        let text = &a.servers()[0].text;
        if text.contains("You may delete") {
            assert!(text.contains("only after"), "at {budget}:\n{text}");
        }
    }
}
