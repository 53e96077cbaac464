//! Assembling the whole corpus: cold (fresh memo), repeat (warm memo), and the
//! floor (tiktoken counting every input string once).
//!
//! After criterion runs, `main` prints cold/floor, cold/repeat and each median
//! against `benches/baseline.json`. `MCP_PREAMBLE_SAVE_BASELINE=1` rewrites it.
//! Then it times the three in turn, one iteration each, for [`ROUNDS`]
//! rounds, and prints the median of each round's ratios
//! (`support::paired`).

mod support;

use std::hint::black_box;
use std::time::{Duration, SystemTime};

use criterion::{BatchSize, Criterion};
use mcp_preamble::{Assembler, ServerSnapshot};
const NAMES: [&str; 3] = ["cold", "repeat", "floor"];
/// Rounds of the paired timing (about 20 ms each).
const ROUNDS: usize = 200;

/// The input strings a token count cannot avoid: instructions and tool descriptions.
fn floor(all: &[ServerSnapshot]) -> usize {
    support::floor(all)
}

fn bench(c: &mut Criterion, all: &[ServerSnapshot]) {
    let mut group = c.benchmark_group("assemble");
    // Small enough that a full run takes about a minute on two cores.
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(5));

    // The constructor stays out of the timing: only the empty memo matters.
    group.bench_function("cold", |b| {
        // By reference, so dropping the assembler and its memo is not timed either.
        b.iter_batched_ref(
            Assembler::new,
            |asm| asm.assemble(black_box(all)).unwrap(),
            BatchSize::SmallInput,
        )
    });

    let warm = Assembler::new();
    warm.assemble(all).unwrap(); // fills the memo before timing starts
    group.bench_function("repeat", |b| {
        b.iter(|| warm.assemble(black_box(all)).unwrap())
    });

    group.bench_function("floor", |b| b.iter(|| floor(black_box(all))));
    group.finish();
}

/// Prints the medians and ratios; false when criterion did not measure
/// all three (a name filter, `--profile-time`).
fn report(since: SystemTime) -> bool {
    let mut medians = [0.0; 3];
    for (median, name) in medians.iter_mut().zip(NAMES) {
        match support::median_ns("assemble", name, since) {
            Ok(ns) => *median = ns,
            Err(why) => {
                println!("assemble/{name}: {why}; skipping the summary");
                return false;
            }
        }
    }
    let [cold, repeat, floor] = medians;
    println!();
    println!(
        "medians: cold {:.3} ms, repeat {:.3} ms, floor {:.3} ms",
        cold / 1e6,
        repeat / 1e6,
        floor / 1e6
    );
    println!("cold/floor = {:.2} (target <= 1.3)", cold / floor);
    println!("cold/repeat = {:.1}", cold / repeat);
    support::baseline(
        "baseline.json",
        "assemble",
        &[("cold", cold), ("repeat", repeat), ("floor", floor)],
    );
    true
}

fn main() {
    // Files older than this are from earlier runs and must not be reported.
    let start = SystemTime::now();
    let all = support::corpus();
    let _ = Assembler::new(); // loads the tokenizer singleton outside any timing
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c, &all);
    c.final_summary();
    if !report(start) {
        return;
    }
    let (cold, repeat) = support::paired(&all, ROUNDS, Assembler::new);
    println!(
        "paired, median of {ROUNDS} rounds: cold/floor = {cold:.2}, repeat/floor = {repeat:.2} (targets <= 1.3, <= 0.25)"
    );
}
