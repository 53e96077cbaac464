//! The worst shapes a hostile server can send, each at the default limits,
//! against the floor of tiktoken counting the same bytes once.
//!
//! After criterion runs, `main` prints each shape's median over its floor
//! and against `benches/hostile-baseline.json`
//! (`MCP_PREAMBLE_SAVE_BASELINE=1` rewrites it).

mod support;

use std::hint::black_box;
use std::time::{Duration, SystemTime};

use criterion::{BatchSize, Criterion};
use mcp_preamble::{Assembler, Limits, ServerSnapshot, Tool};
use serde_json::json;

/// 64 KiB: the default `instructions_bytes`.
const BYTES: usize = 64 * 1024;

fn shapes() -> Vec<(&'static str, ServerSnapshot)> {
    let tools = Limits::default().max_tools();
    let near_tools: Vec<Tool> = (0..tools)
        .map(|i| {
            Tool::new(
                format!("list_invoices_{i}"),
                format!("List the invoices of billing period {i} for the account."),
            )
        })
        .collect();
    let mention_all: String = (0..tools)
        .map(|i| format!("Use list_invoices_{i} to list the invoices of period {i}. "))
        .collect();
    let mut deep = json!({"type": "string"});
    for _ in 0..30 {
        deep = json!({"type": "object", "properties": {"a": deep}});
    }
    let deep_tools: Vec<Tool> = (0..tools)
        .map(|i| Tool {
            input_schema: deep.clone().into(),
            ..Tool::new(format!("t{i}"), "Deep.")
        })
        .collect();
    let server = |instructions: String, tools: Vec<Tool>| {
        let mut s = ServerSnapshot::new("hostile").with_instructions(instructions);
        s.tools = tools;
        s
    };
    vec![
        ("huge_word", server("a".repeat(BYTES), vec![])),
        ("tiny_sentences", server("Go. ".repeat(BYTES / 4), vec![])),
        (
            "near_identical_tools",
            server(
                mention_all[..BYTES.min(mention_all.len())].to_string(),
                near_tools,
            ),
        ),
        ("deep_schemas", server("Call t1 first.".into(), deep_tools)),
    ]
}

/// Counting the bytes the server sent, once: instructions, and each tool's
/// name, description and input schema (as JSON).
fn floor(s: &ServerSnapshot, schemas: &[String]) -> usize {
    let bpe = tiktoken_rs::o200k_base_singleton();
    let tools = s
        .tools
        .iter()
        .flat_map(|t| [Some(t.name.as_str()), t.description.as_deref()]);
    s.instructions
        .raw()
        .into_iter()
        .chain(tools.flatten())
        .chain(schemas.iter().map(String::as_str))
        .map(|t| bpe.count_ordinary(black_box(t)))
        .sum()
}

fn bench(c: &mut Criterion, shapes: &[(&'static str, ServerSnapshot)]) {
    let mut group = c.benchmark_group("hostile");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(4));
    for (name, server) in shapes {
        let one = std::slice::from_ref(server);
        for (budget, label) in [(None, "unlimited"), (Some(100), "budget100")] {
            group.bench_function(format!("{name}_{label}"), |b| {
                b.iter_batched_ref(
                    || match budget {
                        Some(n) => Assembler::new().budget(n),
                        None => Assembler::new(),
                    },
                    |asm| asm.assemble(black_box(one)).unwrap(),
                    BatchSize::SmallInput,
                )
            });
        }
        let schemas: Vec<String> = server
            .tools
            .iter()
            .map(|t| t.input_schema.to_string())
            .collect();
        group.bench_function(format!("{name}_floor"), |b| {
            b.iter(|| floor(black_box(server), &schemas))
        });
    }
    group.finish();
}

fn report(since: SystemTime, shapes: &[(&'static str, ServerSnapshot)]) {
    println!();
    let mut medians = Vec::new();
    for (name, _) in shapes {
        let get = |label: &str| support::median_ns("hostile", &format!("{name}_{label}"), since);
        let (Ok(unlimited), Ok(budgeted), Ok(floor)) =
            (get("unlimited"), get("budget100"), get("floor"))
        else {
            println!("hostile/{name}: not measured in this run; skipping");
            continue;
        };
        println!(
            "{name}: unlimited {:.2} ms ({:.2}x floor), budget 100 {:.2} ms ({:.2}x floor), floor {:.2} ms",
            unlimited / 1e6,
            unlimited / floor,
            budgeted / 1e6,
            budgeted / floor,
            floor / 1e6
        );
        medians.push((*name, unlimited, budgeted, floor));
    }
    let names: Vec<(String, f64)> = medians
        .iter()
        .flat_map(|(n, u, b, f)| {
            [
                (format!("{n}_unlimited"), *u),
                (format!("{n}_budget100"), *b),
                (format!("{n}_floor"), *f),
            ]
        })
        .collect();
    let refs: Vec<(&str, f64)> = names.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    if !refs.is_empty() {
        support::baseline("hostile-baseline.json", "hostile", &refs);
    }
}

fn main() {
    let start = SystemTime::now();
    let shapes = shapes();
    let _ = Assembler::new(); // loads the tokenizer outside any timing
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c, &shapes);
    c.final_summary();
    report(start, &shapes);
}
