//! The hub in an agent loop: reading the section when nothing changed vs a
//! full re-assembly, and one server changing among fifty vs a cold assembly
//! of fifty. Prints both ratios (targets: >= 10,000x and >= 20x), and each
//! median against the floor of the same run (tiktoken counting the fifty
//! servers' instructions and descriptions once).

mod support;

use std::hint::black_box;
use std::time::{Duration, SystemTime};

use criterion::{BatchSize, Criterion};
use mcp_preamble::hub::Hub;
use mcp_preamble::{Assembler, ServerSnapshot};

const NAMES: [&str; 5] = ["read", "reassemble", "one_changed", "cold_fifty", "floor"];

/// The assembler the hub runs (o200k). Re-assembly under the other counters
/// (tokenizer files, the Claude estimate) is `benches/counters.rs`'s `repeat_*`.
fn assembler() -> Assembler {
    Assembler::new()
}

fn bench(c: &mut Criterion, all: &[ServerSnapshot]) {
    let mut group = c.benchmark_group("hub");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(4));

    let hub = Hub::new(assembler());
    for s in all {
        hub.upsert(s.alias.clone().unwrap(), s.clone()).unwrap();
    }
    group.bench_function("read", |b| b.iter(|| black_box(hub.section())));

    let warm = assembler();
    warm.assemble(all).unwrap();
    group.bench_function("reassemble", |b| {
        b.iter(|| warm.assemble(black_box(all)).unwrap())
    });

    // Each iteration changes one server's instructions (two versions in turn).
    let target = all[17].clone();
    let alias = target.alias.clone().unwrap();
    let versions = [
        target
            .clone()
            .with_instructions("Never call anything twice."),
        target
            .clone()
            .with_instructions("Always call the list tool first."),
    ];
    let mut turn = 0;
    group.bench_function("one_changed", |b| {
        b.iter(|| {
            turn += 1;
            hub.upsert(&alias, versions[turn % 2].clone()).unwrap()
        })
    });

    group.bench_function("cold_fifty", |b| {
        b.iter_batched_ref(
            assembler,
            |a| a.assemble(black_box(all)).unwrap(),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("floor", |b| b.iter(|| support::floor(black_box(all))));
    group.finish();
}

fn main() {
    let start = SystemTime::now();
    // Fifty servers: the 37 real captures and 13 made-up ones.
    let all = support::fifty();
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c, &all);
    c.final_summary();
    let mut medians = [0.0; 5];
    for (m, name) in medians.iter_mut().zip(NAMES) {
        match support::median_ns("hub", name, start) {
            Ok(ns) => *m = ns,
            Err(why) => return println!("hub/{name}: {why}; skipping the summary"),
        }
    }
    let [read, reassemble, one, cold, floor] = medians;
    println!();
    println!(
        "medians: read {:.1} ns, reassemble {:.3} ms, one_changed {:.3} ms, cold_fifty {:.3} ms",
        read,
        reassemble / 1e6,
        one / 1e6,
        cold / 1e6
    );
    println!(
        "reassemble/read = {:.0} (target >= 10000)",
        reassemble / read
    );
    println!("cold_fifty/one_changed = {:.1} (target >= 20)", cold / one);
    println!(
        "against the floor ({:.3} ms): read {:.6}, reassemble {:.3}, one_changed {:.3}, cold_fifty {:.3}",
        floor / 1e6,
        read / floor,
        reassemble / floor,
        one / floor,
        cold / floor
    );
    support::baseline(
        "hub-baseline.json",
        "hub",
        &[
            ("read", read),
            ("reassemble", reassemble),
            ("one_changed", one),
            ("cold_fifty", cold),
            ("floor", floor),
        ],
    );
}
