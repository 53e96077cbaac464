//! The ladder's rung list against the crate docs, and `fit` on a stand-in
//! renderer.

use super::*;
use crate::template::ToolView;

/// Each step's number and name in the crate docs' "Budgets" list.
fn documented(step: Step) -> Option<(u8, &'static str)> {
    let title = match step {
        Step::Dedup => "De-duplication",
        Step::Tools => "Tools",
        Step::ToolIndex => "The tool index",
        Step::InstructionUnits => "Instruction units",
        Step::Cut => "A cut",
        Step::Then => return None,
    };
    Some((step as u8, title))
}

/// The numbered items of the "Budgets" section of `src/lib.rs`: number and
/// bold name.
fn docs_steps() -> Vec<(u8, String)> {
    let lib = include_str!("../lib.rs");
    let budgets = lib
        .split("//! ## Budgets")
        .nth(1)
        .expect("a Budgets section");
    let section = budgets.split("//! ## ").next().unwrap_or_default();
    section
        .lines()
        .filter_map(|line| {
            let item = line.strip_prefix("//! ")?;
            let (number, rest) = item.split_once(". **")?;
            let (name, _) = rest.split_once("**")?;
            Some((number.parse().ok()?, name.to_string()))
        })
        .collect()
}

#[test]
fn the_steps_are_numbered_and_named_as_the_docs() {
    let steps = [
        Step::Dedup,
        Step::Tools,
        Step::ToolIndex,
        Step::InstructionUnits,
        Step::Cut,
    ];
    let ours: Vec<(u8, String)> = steps
        .iter()
        .filter_map(|s| documented(*s))
        .map(|(n, t)| (n, t.to_string()))
        .collect();
    assert_eq!(docs_steps(), ours);
    let lib = include_str!("../lib.rs");
    assert!(lib.contains("//! Then the tool line and the index go"));
}

#[test]
fn the_rungs_run_in_the_documented_order() {
    let steps: Vec<Step> = RUNGS.iter().map(|r| r.step()).collect();
    // Every step but de-duplication (done while preparing) has a rung, in
    // the docs' order, and the heading comes last.
    let mut seen = steps.clone();
    seen.dedup();
    assert_eq!(
        seen,
        [
            Step::Tools,
            Step::ToolIndex,
            Step::InstructionUnits,
            Step::Cut,
            Step::Then
        ]
    );
    assert_eq!(RUNGS.last(), Some(&Rung::HeadingOnly));
    // Each rung once.
    for (k, rung) in RUNGS.iter().enumerate() {
        assert!(!RUNGS[..k].contains(rung), "{rung:?} twice");
    }
}

fn tool(name: &str, description: &str) -> ToolView {
    ToolView {
        name: name.to_string(),
        title: None,
        description: Some(description.to_string()),
        summary: None,
    }
}

fn view(instructions: &str, tools: Vec<ToolView>) -> ServerView {
    ServerView {
        name: "billing".to_string(),
        alias: None,
        server_name: "billing".to_string(),
        title: None,
        version: "1.0".to_string(),
        era: "",
        protocol_version: String::new(),
        instructions: Some(instructions.to_string()),
        label: None,
        note: None,
        tools,
        more_tools: 0,
        deferred: Vec::new(),
        more_deferred: 0,
        full: None,
        ..ServerView::default()
    }
}

/// A stand-in renderer: the name, instructions and tools one a line, one
/// token a word; out of fuel past `fuel` words.
fn words(fuel: usize) -> impl FnMut(&ServerView) -> Result<Render> {
    move |v: &ServerView| {
        let mut text = v.name.clone();
        for part in v.instructions.iter().chain(&v.note) {
            text.push('\n');
            text.push_str(part);
        }
        for t in &v.tools {
            text.push_str(&format!(
                "\n- {} {}",
                t.name,
                t.description.as_deref().unwrap_or("")
            ));
        }
        if v.more_tools > 0 {
            text.push_str(&format!("\n{} more", v.more_tools));
        }
        let tokens = text.split_whitespace().count();
        Ok(if tokens > fuel {
            Render::OutOfFuel
        } else {
            Render::Block(Rendered { text, tokens })
        })
    }
}

fn trim_of(v: &ServerView) -> Trim {
    Trim::new(
        v.instructions.clone().unwrap_or_default(),
        &Default::default(),
    )
}

#[test]
fn a_block_within_its_limit_is_kept_whole() {
    let v = view("Be brief.", vec![tool("list", "List periods.")]);
    let trim = trim_of(&v);
    let fitted = fit(v, Some(&trim), Some(100), None, &mut words(1000)).unwrap();
    let block = fitted.block.unwrap();
    assert_eq!(block.tokens, 7);
    assert!(fitted.removed.is_empty() && !fitted.out_of_fuel);
}

#[test]
fn a_block_over_its_limit_stops_at_the_first_rung_that_fits() {
    let v = view(
        "Be brief.",
        vec![tool("list", "List periods. Pages of fifty.")],
    );
    let trim = trim_of(&v);
    // 10 tokens; the first sentence of the description alone makes 7.
    let fitted = fit(v, Some(&trim), Some(7), None, &mut words(1000)).unwrap();
    let block = fitted.block.unwrap();
    assert_eq!(block.tokens, 7);
    assert!(block.text.contains("List periods.") && !block.text.contains("fifty"));
    assert_eq!(fitted.removed.len(), 1);
    assert_eq!(
        fitted.removed[0].text,
        "tool descriptions after their first sentence"
    );
}

#[test]
fn out_of_fuel_without_a_budget_shrinks_until_it_renders() {
    let v = view(
        "Be brief.",
        vec![tool("list", "List periods. Pages of fifty.")],
    );
    let trim = trim_of(&v);
    let fitted = fit(v, Some(&trim), None, None, &mut words(8)).unwrap();
    assert_eq!(fitted.block.map(|b| b.tokens), Some(7));
    assert!(!fitted.out_of_fuel);
}

#[test]
fn out_of_fuel_even_on_the_heading_leaves_no_block() {
    let v = view("Be brief.", Vec::new());
    let trim = trim_of(&v);
    let fitted = fit(v, Some(&trim), Some(50), None, &mut words(0)).unwrap();
    assert!(fitted.block.is_none() && fitted.out_of_fuel);
    assert_eq!(fitted.removed.len(), 1);
}

fn bare(name: &str) -> ToolView {
    ToolView {
        name: name.to_string(),
        title: None,
        description: None,
        summary: None,
    }
}

#[test]
fn a_longer_earlier_unit_of_the_split_priority_is_kept_when_it_fits() {
    // Two constraints; the drop order drops the longer first, which alone
    // fits: 1 + 5 words, where both make 9.
    let v = view(
        "Always call list_periods before get_invoice. Never guess IDs.",
        Vec::new(),
    );
    let trim = trim_of(&v);
    let fitted = fit(v, Some(&trim), Some(7), None, &mut words(1000)).unwrap();
    let block = fitted.block.unwrap();
    assert!(
        block
            .text
            .contains("Always call list_periods before get_invoice."),
        "{}",
        block.text
    );
    assert!(!block.text.contains("Never guess IDs."));
    assert_eq!(block.tokens, 6);
    // The report names what is gone, not what came back.
    let removed: Vec<_> = fitted.removed.iter().map(|r| (r.unit, &*r.text)).collect();
    assert_eq!(removed, [(Some(1), "Never guess IDs.")]);
}

#[test]
fn room_left_by_dropped_units_goes_back_to_tool_names() {
    let tools = (0..5).map(|i| bare(&format!("t{i}"))).collect();
    let v = view(
        "Notes are kept as plain markdown files on disk. Always confirm before deleting.",
        tools,
    );
    let trim = trim_of(&v);
    // 24 words whole; no name list fits beside the prose, so the prose
    // goes (7 words left) and two names come back: 1 + 4 + 2 * 2 + 2.
    let fitted = fit(v, Some(&trim), Some(12), None, &mut words(1000)).unwrap();
    let block = fitted.block.unwrap();
    assert_eq!(block.tokens, 11, "{}", block.text);
    assert!(block.text.contains("- t1 \n3 more"), "{}", block.text);
    assert!(!block.text.contains("markdown"));
    let removed: Vec<_> = fitted.removed.iter().map(|r| &*r.text).collect();
    assert_eq!(
        removed,
        [
            "t2, t3, t4",
            "Notes are kept as plain markdown files on disk."
        ]
    );
}

#[test]
fn a_unit_dropped_by_the_cut_leaves_room_for_a_shorter_one() {
    // The constraint has no cut point but its end (its last words narrow
    // it), so it goes whole and the prose comes back.
    let v = view(
        "Notes are plain. You may delete any invoice only after the user confirms it.",
        Vec::new(),
    );
    let trim = trim_of(&v);
    let fitted = fit(v, Some(&trim), Some(5), None, &mut words(1000)).unwrap();
    let block = fitted.block.unwrap();
    assert_eq!(block.text, "billing\nNotes are plain.");
    assert!(!fitted.truncated);
    let removed: Vec<_> = fitted.removed.iter().map(|r| r.unit).collect();
    assert_eq!(removed, [Some(1)]);
}
