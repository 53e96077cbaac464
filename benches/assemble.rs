//! Assembling the whole corpus: cold (fresh memo), repeat (warm memo), and the
//! floor (tiktoken counting every input string once).
//!
//! After criterion runs, `main` prints cold/floor, cold/repeat and each median
//! against `benches/baseline.json`. `MCP_PREAMBLE_SAVE_BASELINE=1` rewrites it.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use criterion::{BatchSize, Criterion};
use mcp_preamble::{Assembler, Capture, ServerSnapshot};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const NAMES: [&str; 3] = ["cold", "repeat", "floor"];

/// Every capture in `tests/corpus`, aliased by file stem, in file-name order.
fn corpus() -> Vec<ServerSnapshot> {
    let dir = Path::new(ROOT).join("tests/corpus");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/corpus is readable")
        .map(|e| e.expect("corpus entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            Capture::from_path(p)
                .and_then(|c| c.snapshot())
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
                .with_alias(stem)
        })
        .collect()
}

/// The input strings a token count cannot avoid: instructions and tool descriptions.
fn floor(all: &[ServerSnapshot]) -> usize {
    let bpe = tiktoken_rs::o200k_base_singleton();
    let tools = all.iter().flat_map(|s| &s.tools);
    all.iter()
        .filter_map(|s| s.instructions.raw())
        .chain(tools.filter_map(|t| t.description.as_deref()))
        .map(|text| bpe.count_ordinary(black_box(text)))
        .sum()
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

/// Where criterion writes its estimates (same rules as criterion itself).
fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return Path::new(ROOT).join(home);
    }
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| "target".into(), PathBuf::from);
    // `join` keeps an absolute target dir; a relative one is taken from the
    // crate root, which is the directory `cargo bench` runs benches in.
    Path::new(ROOT).join(target).join("criterion")
}

/// The median of one benchmark in nanoseconds (steadier than the mean on a
/// shared machine), if this process measured it
/// (older files are left over from earlier runs, e.g. under a name filter).
fn median_ns(name: &str, since: SystemTime) -> Result<f64, String> {
    let path = criterion_dir().join(format!("assemble/{name}/new/estimates.json"));
    let fresh = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .map_err(|_| format!("no estimates at {}", path.display()))?;
    if fresh < since {
        return Err(format!("not measured in this run ({})", path.display()));
    }
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    json["median"]["point_estimate"]
        .as_f64()
        .ok_or_else(|| format!("{}: no median.point_estimate", path.display()))
}

fn report(since: SystemTime) {
    let mut means = [0.0; 3];
    for (mean, name) in means.iter_mut().zip(NAMES) {
        match median_ns(name, since) {
            Ok(ns) => *mean = ns,
            Err(why) => {
                println!("assemble/{name}: {why}; skipping the summary");
                return;
            }
        }
    }
    let [cold, repeat, floor] = means;
    println!();
    println!(
        "medians: cold {:.3} ms, repeat {:.3} ms, floor {:.3} ms",
        cold / 1e6,
        repeat / 1e6,
        floor / 1e6
    );
    println!("cold/floor = {:.2} (target <= 1.3)", cold / floor);
    println!("cold/repeat = {:.1}", cold / repeat);

    let path = Path::new(ROOT).join("benches/baseline.json");
    if std::env::var("MCP_PREAMBLE_SAVE_BASELINE").is_ok_and(|v| v == "1") {
        let json = serde_json::json!({
            "cold_ns": cold.round(),
            "repeat_ns": repeat.round(),
            "floor_ns": floor.round(),
            "machine": machine(),
            "date": today(),
        });
        let text = serde_json::to_string_pretty(&json).unwrap() + "\n";
        match std::fs::write(&path, text) {
            Ok(()) => println!("wrote {}", path.display()),
            Err(e) => println!("could not write {}: {e}", path.display()),
        }
        return;
    }
    let Ok(text) = std::fs::read_to_string(&path) else {
        println!(
            "no benches/baseline.json; write one with \
             `MCP_PREAMBLE_SAVE_BASELINE=1 cargo bench --bench assemble`"
        );
        return;
    };
    let base: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => return println!("{}: {e}", path.display()),
    };
    println!(
        "baseline: {} ({})",
        base["machine"].as_str().unwrap_or("?"),
        base["date"].as_str().unwrap_or("?")
    );
    for (name, now) in NAMES.into_iter().zip(means) {
        match base[format!("{name}_ns")].as_f64() {
            Some(then) => println!("  {name}: {:.2}x baseline", now / then),
            None => println!("  {name}: no {name}_ns in baseline"),
        }
    }
}

/// CPU model and thread count, so a baseline says where it came from.
fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("model name"))?;
            Some(line.split_once(':')?.1.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{cpu}, {threads} threads, {}", std::env::consts::OS)
}

/// Today's UTC date as YYYY-MM-DD (civil-from-days; avoids a date crate).
fn today() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let z = (secs.as_secs() / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

fn main() {
    // Files older than this are from earlier runs and must not be reported.
    let start = SystemTime::now();
    let all = corpus();
    let _ = Assembler::new(); // loads the tokenizer singleton outside any timing
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c, &all);
    c.final_summary();
    report(start);
}
