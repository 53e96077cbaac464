//! What users run besides one assembly of the corpus: the lint over the
//! corpus, and a gateway's fifty servers assembled with one changing between
//! requests (no hub: a plain assembler, as a gateway without `hub` keeps
//! one), each against the floor of the same run and the same servers
//! (tiktoken counting their instructions and descriptions once); and the
//! redaction every log line of `serve` passes through, over a thousand
//! lines such as it writes (a few with a key), against one look at each of
//! their bytes.
//!
//! After criterion runs, `main` prints each median over its floor and
//! against `benches/workloads-baseline.json`
//! (`MCP_PREAMBLE_SAVE_BASELINE=1` rewrites it).

mod support;

use std::hint::black_box;
use std::time::{Duration, SystemTime};

use criterion::{BatchSize, Criterion};
use mcp_preamble::lint::Linter;
use mcp_preamble::{Assembler, ServerSnapshot};

/// Each bench and the floor it is compared with.
const NAMES: [(&str, &str); 4] = [
    ("lint", "floor_corpus"),
    ("gateway_one_changed", "floor_fifty"),
    ("gateway_cold", "floor_fifty"),
    ("redact_log", "floor_log"),
];

/// A thousand log lines as `serve --listen` writes them: access lines, and
/// every hundredth an upstream's stderr line holding a key.
fn log_lines() -> Vec<String> {
    let key = ["sk-proj-", "9fK2mQ7xLp4Rt8Zb3Nc6Vd1Wy5Hs0Ja2"].concat();
    (0..1000)
        .map(|i| match i % 100 {
            0 => format!(
                "2026-12-04T12:00:00.{i:06}Z  WARN mcp_preamble::connect: upstream billing: \
                 stderr: retrying with token={key} (attempt {i})"
            ),
            _ => format!(
                "2026-12-04T12:00:00.{i:06}Z  INFO mcp_preamble::access: request \
                 caller=127.0.0.1:{port} http_method=POST path=/mcp method=tools/call \
                 tool=billing__list_periods upstream=billing status=200 duration_ms=1.{i}",
                port = 40000 + i
            ),
        })
        .collect()
}

fn bench(c: &mut Criterion, corpus: &[ServerSnapshot], fifty: &[ServerSnapshot]) {
    let mut group = c.benchmark_group("workloads");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(4));

    let linter = Linter::new();
    group.bench_function("lint", |b| b.iter(|| linter.report(black_box(corpus))));
    group.bench_function("floor_corpus", |b| {
        b.iter(|| support::floor(black_box(corpus)))
    });

    // One server's instructions change on every request (two versions in
    // turn); the other 49 are as before.
    let gateway = Assembler::new();
    gateway.assemble(fifty).unwrap();
    let mut servers = fifty.to_vec();
    let target = servers[17].clone();
    let versions = [
        target
            .clone()
            .with_instructions("Never call anything twice."),
        target.with_instructions("Always call the list tool first."),
    ];
    let mut turn = 0;
    group.bench_function("gateway_one_changed", |b| {
        b.iter(|| {
            turn += 1;
            servers[17] = versions[turn % 2].clone();
            gateway.assemble(black_box(&servers)).unwrap()
        })
    });
    group.bench_function("gateway_cold", |b| {
        b.iter_batched_ref(
            Assembler::new,
            |a| a.assemble(black_box(fifty)).unwrap(),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("floor_fifty", |b| {
        b.iter(|| support::floor(black_box(fifty)))
    });

    let lines = log_lines();
    group.bench_function("redact_log", |b| {
        b.iter(|| {
            (lines.iter())
                .map(|l| mcp_preamble::redact::printed(black_box(l)).len())
                .sum::<usize>()
        })
    });
    group.bench_function("floor_log", |b| {
        b.iter(|| {
            (lines.iter())
                .map(|l| {
                    black_box(l)
                        .bytes()
                        .filter(u8::is_ascii_alphanumeric)
                        .count()
                })
                .sum::<usize>()
        })
    });
    group.finish();
}

fn report(since: SystemTime) {
    println!();
    let get = |name: &str| support::median_ns("workloads", name, since);
    let mut medians = Vec::new();
    for (name, floor_name) in NAMES {
        let (Ok(ns), Ok(floor)) = (get(name), get(floor_name)) else {
            println!("workloads/{name}: not measured in this run; skipping");
            continue;
        };
        println!(
            "{name}: {:.3} ms, {:.2}x its floor ({floor_name} {:.3} ms)",
            ns / 1e6,
            ns / floor,
            floor / 1e6
        );
        medians.push((name, ns));
    }
    for floor_name in ["floor_corpus", "floor_fifty", "floor_log"] {
        if let Ok(ns) = get(floor_name) {
            medians.push((floor_name, ns));
        }
    }
    if !medians.is_empty() {
        support::baseline("workloads-baseline.json", "workloads", &medians);
    }
}

fn main() {
    let start = SystemTime::now();
    let corpus = support::corpus();
    let fifty = support::fifty();
    let _ = Assembler::new(); // loads the tokenizer outside any timing
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c, &corpus, &fifty);
    c.final_summary();
    report(start);
}
