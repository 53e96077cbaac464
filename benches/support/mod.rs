//! Shared by the benches: the corpus, criterion's estimates, and baselines.
#![allow(dead_code)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use mcp_preamble::files::Capture;
use mcp_preamble::{Assembler, ServerSnapshot, Tool};

/// The repository's root: the crate's folder for the root crate's benches, two
/// folders up for the instruction guard (`benches/guard`, its own package).
pub fn root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .find(|p| p.join("tests/corpus").is_dir())
        .unwrap_or(here)
        .to_path_buf()
}

/// Every capture in `tests/corpus`, aliased by file stem, in file-name order.
pub fn corpus() -> Vec<ServerSnapshot> {
    read(&corpus_texts())
}

/// The text of every capture in `tests/corpus`, by file stem, in file-name order.
pub fn corpus_texts() -> Vec<(String, String)> {
    let dir = root().join("tests/corpus");
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
            let text =
                std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (stem, text)
        })
        .collect()
}

/// Captures read into the snapshots a host would hold, aliased by name.
pub fn read(texts: &[(String, String)]) -> Vec<ServerSnapshot> {
    texts
        .iter()
        .map(|(stem, text)| {
            Capture::from_json(text)
                .and_then(|c| c.snapshot())
                .unwrap_or_else(|e| panic!("{stem}: {e}"))
                .with_alias(stem)
        })
        .collect()
}

/// Fifty servers, a gateway's worth: the corpus's real captures and made-up
/// ones to fill up.
pub fn fifty() -> Vec<ServerSnapshot> {
    let mut all = corpus();
    for i in 0..50usize.saturating_sub(all.len()) {
        let name = format!("extra-{i:02}");
        all.push(
            ServerSnapshot::new(&name)
                .with_alias(&name)
                .with_instructions(format!(
                    "Always call {name}_list before {name}_get. Records of area {i} are scoped to one day."
                ))
                .with_tool(Tool::new(format!("{name}_list"), "List records."))
                .with_tool(Tool::new(format!("{name}_get"), "Get a record by id.")),
        );
    }
    all
}

/// The floor: tiktoken counting, once, the input strings a token count
/// cannot avoid (instructions and tool descriptions).
pub fn floor(all: &[ServerSnapshot]) -> usize {
    let bpe = tiktoken_rs::o200k_base_singleton();
    let tools = all.iter().flat_map(|s| &s.tools);
    all.iter()
        .filter_map(|s| s.instructions.raw())
        .chain(tools.filter_map(|t| t.description.as_deref()))
        .map(|text| bpe.count_ordinary(std::hint::black_box(text)))
        .sum()
}

/// Cold, repeat and floor timed in turn, one iteration each per round, in
/// an order that rotates (each runs after each of the others as often, so
/// what one leaves in the caches favours none); the median of the rounds'
/// cold/floor and repeat/floor. Criterion measures them seconds apart, and
/// on a shared machine the speed drifts between them by more than the
/// ratio's margin; within a round it hardly can. `make` builds each cold
/// assembler (outside the timing, as criterion's cold does).
pub fn paired(all: &[ServerSnapshot], rounds: usize, make: impl Fn() -> Assembler) -> (f64, f64) {
    let warm = make();
    warm.assemble(all).unwrap();
    let (mut cold, mut repeat) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let fresh = make();
        let mut took = [0.0; 3];
        for k in 0..3 {
            let which = (round + k) % 3;
            let start = Instant::now();
            match which {
                0 => drop(black_box(fresh.assemble(black_box(all)).unwrap())),
                1 => drop(black_box(warm.assemble(black_box(all)).unwrap())),
                _ => drop(black_box(floor(black_box(all)))),
            }
            took[which] = start.elapsed().as_secs_f64();
        }
        cold.push(took[0] / took[2]);
        repeat.push(took[1] / took[2]);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    (median(&mut cold), median(&mut repeat))
}

/// Where criterion writes its estimates (same rules as criterion itself).
pub fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return root().join(home);
    }
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| "target".into(), PathBuf::from);
    // `join` keeps an absolute target dir; a relative one is taken from the
    // crate root, which is the directory `cargo bench` runs benches in.
    root().join(target).join("criterion")
}

/// The median of one benchmark in nanoseconds (steadier than the mean on a
/// shared machine), if this process measured it
/// (older files are left over from earlier runs, e.g. under a name filter).
pub fn median_ns(group: &str, name: &str, since: SystemTime) -> Result<f64, String> {
    let path = criterion_dir().join(format!("{group}/{name}/new/estimates.json"));
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

/// CPU model and thread count, so a baseline says where it came from.
pub fn machine() -> String {
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
pub fn today() -> String {
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

/// Compares `medians` (nanoseconds, by name) with `file` under benches/, or
/// rewrites it when `MCP_PREAMBLE_SAVE_BASELINE=1`.
pub fn baseline(file: &str, bench: &str, medians: &[(&str, f64)]) {
    let path = root().join("benches").join(file);
    if std::env::var("MCP_PREAMBLE_SAVE_BASELINE").is_ok_and(|v| v == "1") {
        let mut json = serde_json::Map::new();
        for (name, ns) in medians {
            json.insert(format!("{name}_ns"), serde_json::json!(ns.round()));
        }
        json.insert("machine".into(), machine().into());
        json.insert("date".into(), today().into());
        let text = serde_json::to_string_pretty(&json).unwrap_or_default() + "\n";
        match std::fs::write(&path, text) {
            Ok(()) => println!("wrote {}", path.display()),
            Err(e) => println!("could not write {}: {e}", path.display()),
        }
        return;
    }
    let Ok(text) = std::fs::read_to_string(&path) else {
        println!(
            "no benches/{file}; write one with \
             `MCP_PREAMBLE_SAVE_BASELINE=1 cargo bench --bench {bench}`"
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
    for (name, now) in medians {
        match base[format!("{name}_ns")].as_f64() {
            Some(then) => println!("  {name}: {:.2}x baseline", now / then),
            None => println!("  {name}: no {name}_ns in baseline"),
        }
    }
}
