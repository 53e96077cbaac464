//! Each limit: just under it nothing is cut; just over, the diagnostic names
//! the limit and the other servers are intact.

use crate::common;

use mcp_preamble::report::Limit;
use mcp_preamble::{Assembler, Limits, ServerSnapshot, Tool};
use serde_json::json;

fn healthy() -> ServerSnapshot {
    ServerSnapshot::new("billing")
        .with_instructions("Always call list_periods before get_invoice.")
        .with_tool(Tool::new("list_periods", "List billing periods."))
}

/// Assembles the healthy server beside `hostile`; returns the hostile
/// report's limits and diagnostics, after checking the healthy block.
fn run(assembler: &Assembler, hostile: ServerSnapshot) -> (Vec<Limit>, Vec<String>) {
    let alone = assembler.assemble(&[healthy()]).unwrap();
    let both = assembler.assemble(&[healthy(), hostile]).unwrap();
    let billing = both.servers().iter().find(|s| s.name == "billing").unwrap();
    assert_eq!(billing.text, alone.servers()[0].text);
    assert!(billing.limits.is_empty());
    let h = both.servers().iter().find(|s| s.name == "hostile").unwrap();
    (h.limits.iter().map(|l| l.limit).collect(), h.diagnostics())
}

fn named(name: &str) -> ServerSnapshot {
    ServerSnapshot::new(name)
}

#[test]
fn instructions_bytes() {
    let a = Assembler::new().limits(Limits::default().instructions_bytes(100));
    let (limits, _) = run(&a, named("hostile").with_instructions("x".repeat(100)));
    assert_eq!(limits, []);
    let (limits, diagnostics) = run(&a, named("hostile").with_instructions("é".repeat(51)));
    assert_eq!(limits, [Limit::InstructionsBytes]);
    assert!(
        diagnostics.contains(
            &"limit instructions_bytes reached: 102 bytes of instructions sent, the first 100 read"
                .to_string()
        ),
        "{diagnostics:?}"
    );
}

#[test]
fn tools() {
    let a = Assembler::new().limits(Limits::default().tools(3));
    let with = |n: usize| {
        let mut s = named("hostile").with_instructions("Hi.");
        s.tools = (0..n).map(|i| Tool::new(format!("t{i}"), "T.")).collect();
        s
    };
    assert_eq!(run(&a, with(3)).0, []);
    let (limits, diagnostics) = run(&a, with(4));
    assert_eq!(limits, [Limit::Tools]);
    assert!(diagnostics.contains(&"limit tools reached: 4 tools sent, the first 3 read".into()));
}

#[test]
fn tool_description_bytes() {
    // The healthy server's description is 21 bytes.
    let a = Assembler::new()
        .tool_descriptions(true)
        .limits(Limits::default().tool_description_bytes(30));
    let with = |d: &str| named("hostile").with_tool(Tool::new("t", d));
    assert_eq!(run(&a, with(&"d".repeat(30))).0, []);
    let (limits, diagnostics) = run(&a, with(&"d".repeat(31)));
    assert_eq!(limits, [Limit::ToolDescriptionBytes]);
    assert!(diagnostics.contains(
        &"limit tool_description_bytes reached: 1 tool description(s) over 30 bytes (up to 31) cut"
            .into()
    ));
}

#[test]
fn schema_depth_and_bytes() {
    let deep = |n: usize| {
        let mut v = json!("leaf");
        for _ in 0..n {
            v = json!({ "a": v });
        }
        v
    };
    let with = |schema: serde_json::Value| {
        named("hostile").with_instructions("Hi.").with_tool(Tool {
            input_schema: schema.into(),
            ..Tool::new("t", "T.")
        })
    };
    let a = Assembler::new().limits(Limits::default().schema_depth(4));
    assert_eq!(run(&a, with(deep(4))).0, []);
    assert_eq!(run(&a, with(deep(5))).0, [Limit::Schema]);
    let a = Assembler::new().limits(Limits::default().schema_bytes(20));
    assert_eq!(run(&a, with(json!({"type": "string"}))).0, []); // 17 bytes
    assert_eq!(
        run(&a, with(json!({"type": "string", "x": 1}))).0,
        [Limit::Schema]
    );
}

#[test]
fn dedup_units() {
    let a = Assembler::new().limits(Limits::default().dedup_units(3));
    let (limits, _) = run(&a, named("hostile").with_instructions("A. B. C."));
    assert_eq!(limits, []);
    let (limits, diagnostics) = run(&a, named("hostile").with_instructions("A. B. C. A."));
    assert_eq!(limits, [Limit::DedupUnits]);
    assert!(diagnostics.contains(
        &"limit dedup_units reached: 4 units of instructions, the first 3 checked for de-duplication"
            .into()
    ));
}

/// A user template that spends fuel per tool: a block with many tools runs
/// out on its own.
const SPENDTHRIFT: &str = "{%- macro server(s) -%}
### {{ s.name | md_line }}
{%- if s.instructions %}

{{ s.instructions | md_block(3) }}
{%- endif %}
{%- for t in s.tools %}{% for i in range(50000) %}{% endfor %} {{ t.name | md_code }}{% endfor %}
{%- if s.more_tools %} and {{ s.more_tools }} more{% endif %}
{%- endmacro -%}
{% for block in blocks %}{{ block }}
{% endfor %}";

#[test]
fn a_block_out_of_fuel_is_cut_and_the_others_render() {
    let template = mcp_preamble::Template::from_source("spendthrift", SPENDTHRIFT).unwrap();
    let a = Assembler::new().template(template);
    let mut big = named("hostile").with_instructions("Call t1 first.");
    big.tools = (0..100).map(|i| Tool::new(format!("t{i}"), "")).collect();
    let (limits, diagnostics) = run(&a, big.clone());
    assert_eq!(limits, [Limit::RenderFuel], "{diagnostics:?}");
    let both = a.assemble(&[healthy(), big]).unwrap();
    let h = both.servers().iter().find(|s| s.name == "hostile").unwrap();
    assert!(h.included);
    assert!(h.text.contains("Call t1 first."));
    assert!(h.text.contains(" more"), "{}", h.text);
    assert!(h.text.contains("`t0`"), "{}", h.text);
}

/// The largest budget is a budget like any other: a block that runs out of
/// fuel is cut to what renders, as without a budget (it used to be kept as
/// an empty block of `usize::MAX` tokens, the old out-of-fuel sentinel).
#[test]
fn the_largest_budget_cuts_a_block_out_of_fuel_like_no_budget() {
    let template = mcp_preamble::Template::from_source("spendthrift", SPENDTHRIFT).unwrap();
    let mut big = named("hostile").with_instructions("Call t1 first.");
    big.tools = (0..100).map(|i| Tool::new(format!("t{i}"), "")).collect();
    let unbudgeted = Assembler::new().template(template.clone());
    let largest = Assembler::new().template(template).budget(usize::MAX);
    let (a, b) = (
        unbudgeted.assemble(std::slice::from_ref(&big)).unwrap(),
        largest.assemble(&[big]).unwrap(),
    );
    let (a, b) = (&a.servers()[0], &b.servers()[0]);
    assert!(
        b.included && b.text.contains("Call t1 first."),
        "{}",
        b.text
    );
    assert_eq!((&a.text, a.tokens), (&b.text, b.tokens));
    assert_eq!(b.budget, Some(usize::MAX));
}

/// A user template whose `server` macro is `body`.
fn server_macro(body: &str) -> mcp_preamble::Template {
    let source = format!(
        "{{% macro server(s) %}}{body}{{% endmacro %}}{{% for b in blocks %}}{{{{ b }}}}{{% endfor %}}"
    );
    mcp_preamble::Template::from_source("user", source).unwrap()
}

/// Whether the server's report says its block was cut for template fuel or size.
fn cut_for_fuel(s: &mcp_preamble::ServerReport) -> bool {
    s.limits.iter().any(|h| h.limit == Limit::RenderFuel)
}

/// Fuzz finding (`template`, 20-minute run): a block that runs out of fuel
/// whatever its content used to go down every rung of the budget ladder,
/// burning the block's fuel on each (over 10 s under the sanitizer). When
/// not even the bare heading renders, the block is left out at once.
#[test]
fn a_block_that_never_renders_is_left_out_without_the_ladder() {
    let template = server_macro(
        "{% for i in range(200) %}{{ s.name | md_line }}{% for j in range(755) %}{{- s.name | md_line }}{% endfor %}{% endfor %}",
    );
    for a in [
        Assembler::new().template(template.clone()),
        Assembler::new()
            .template(template)
            .budget(24)
            .total_budget(60),
    ] {
        let out = a
            .assemble(&[healthy(), named("hostile").with_instructions("Hi.")])
            .unwrap();
        for s in out.servers() {
            assert_eq!(
                s.omitted,
                Some(mcp_preamble::report::Omission::RenderFuel),
                "{}",
                s.name
            );
            assert_eq!(s.tokens_before, 0, "unknown, not usize::MAX");
            assert_eq!(
                s.removed.last().map(|r| r.text.as_str()),
                Some("the whole block: the template runs out of fuel even on its heading")
            );
        }
        assert_eq!(out.text(), "");
    }
}

/// Fuzz finding (`template`, second 20-minute run): a block that renders
/// within fuel but is huge (60,000 copies of the name) made every rung of
/// the budget ladder count its tokens again. A block past 256 KiB is cut
/// like one out of fuel.
#[test]
fn the_ladder_cannot_multiply_a_huge_block() {
    let template = server_macro(
        "{% for i in range(300) %}{{ s.name | md_line }}{% for j in range(200) %}{{ s.name | md_line }}{% endfor %}{% endfor %}",
    );
    let out = Assembler::new()
        .template(template)
        .budget(24)
        .assemble(&[healthy(), named("hostile").with_instructions("Hi.")])
        .unwrap();
    for s in out.servers() {
        assert!(!s.included, "{}", s.name);
        assert!(cut_for_fuel(s), "{}: {:?}", s.name, s.limits);
    }
}

/// Fuzz finding (`template`, third 20-minute run): 80,000 filter calls per
/// render, each within fuel, made one render slow (over 10 s under the
/// sanitizer with four fuzzers sharing two cores). Fuel is now 250,000 per
/// block render, which such a render exceeds.
#[test]
fn a_render_of_many_filter_calls_runs_out_of_fuel() {
    let template = server_macro(
        "{% for i in range(400) %}{% for j in range(200) %}{% set x = s.name | md_line %}{% endfor %}{% endfor %}### {{ s.name | md_line }}",
    );
    let out = Assembler::new()
        .template(template)
        .assemble(&[named("hostile").with_instructions("Hi.")])
        .unwrap();
    let s = &out.servers()[0];
    assert_eq!(s.omitted, Some(mcp_preamble::report::Omission::RenderFuel));
    assert!(cut_for_fuel(s));
}

/// Fuzz finding (`template`, fourth 20-minute run): 20,000 `md_line` calls
/// per render fit the fuel as one instruction each, and the budget ladder
/// paid for them on every rung. The crate's filters charge fuel for their
/// own work (16 plus one per 4 bytes), so such a render runs out of fuel.
#[test]
fn filter_calls_are_charged_for_their_work() {
    let template = server_macro(
        "{% for i in range(100) %}{{ s.name | md_line }}{% for j in range(199) %}{{ s.name | md_line }}{% endfor %}{% endfor %}",
    );
    let out = Assembler::new()
        .template(template)
        .budget(24)
        .assemble(&[named("hostile").with_instructions("Hi.")])
        .unwrap();
    let s = &out.servers()[0];
    assert_eq!(s.omitted, Some(mcp_preamble::report::Omission::RenderFuel));
    assert!(cut_for_fuel(s));
}

/// The fuel and the size cap are far above what the built-in templates
/// need: every corpus server, tool descriptions shown, under budgets that
/// walk the whole ladder, stays clear of both.
#[test]
fn the_builtin_templates_stay_within_fuel_and_size() {
    let servers = common::all_snapshots();
    for template in [
        mcp_preamble::Template::markdown(),
        mcp_preamble::Template::xml(),
    ] {
        for budget in [8, 40, 120, 100_000] {
            let out = Assembler::new()
                .template(template.clone())
                .tool_descriptions(true)
                .budget(budget)
                .assemble(&servers)
                .unwrap();
            assert!(
                out.servers()
                    .iter()
                    .all(|s| s.included || s.omitted.is_some())
            );
            for s in out.servers() {
                assert!(
                    !s.limits.iter().any(|h| h.limit == Limit::RenderFuel),
                    "{} at {budget}: {:?}",
                    s.name,
                    s.limits
                );
            }
        }
    }
}

#[test]
fn a_user_template_that_spins_stops_on_fuel() {
    let spin = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}";
    // In the body: the template is rejected when compiled.
    let source = format!(
        "{{% macro server(s) %}}x{{% endmacro %}}{spin}{{% for b in blocks %}}{{{{ b }}}}{{% endfor %}}"
    );
    let err = mcp_preamble::Template::from_source("spin", source).unwrap_err();
    assert_eq!(err.kind(), mcp_preamble::ErrorKind::Template);
    assert!(err.to_string().contains("out of fuel"), "{err}");
    // In one server's block: that server is left out, the others render.
    let source = format!(
        "{{% macro server(s) %}}{{% if s.name == 'hostile' %}}{spin}{{% endif %}}### {{{{ s.name }}}}{{% endmacro %}}{{% for b in blocks %}}{{{{ b }}}}\n{{% endfor %}}"
    );
    let a = Assembler::new().template(mcp_preamble::Template::from_source("spin", source).unwrap());
    let out = a
        .assemble(&[healthy(), named("hostile").with_instructions("Hi.")])
        .unwrap();
    assert_eq!(out.text(), "### billing\n");
    let h = out.servers().iter().find(|s| s.name == "hostile").unwrap();
    assert_eq!(h.omitted, Some(mcp_preamble::report::Omission::RenderFuel));
}
