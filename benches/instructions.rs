//! The regression guard CI trusts: instruction counts (valgrind's callgrind)
//! of cold assembly, repeat assembly, reading the captures into snapshots,
//! one call forwarded by the gateway (`forward`: its in-process part, no
//! process or transport) and the floor over the corpus, compared with
//! `benches/instructions.json`.
//!
//! Instruction counts do not depend on what else the machine does: the same
//! binary on the same input gives the same count, where wall-clock timings
//! on a shared machine drift by tens of percent. The run fails when cold,
//! repeat or read grows more than 10% over the committed baseline; re-save it in the
//! same change with
//!
//! ```text
//! MCP_PREAMBLE_SAVE_BASELINE=1 cargo run --release -p mcp-preamble-guard
//! ```
//!
//! Each scenario runs in a child process of this binary under
//! `valgrind --tool=callgrind`, counting only inside [`measured`] (so
//! loading the corpus and the tokenizer is not counted). Without valgrind
//! the run skips loudly, unless `MCP_PREAMBLE_REQUIRE_VALGRIND=1` or `CI`
//! is set, where it fails.
//!
//! It is the binary of the `mcp-preamble-guard` package (`benches/guard`), not
//! a bench of the root crate: built in `release` like the Python wheel, it does
//! not compile the root crate's dev-dependencies. For `callgrind_annotate` with
//! source lines, add `CARGO_PROFILE_RELEASE_DEBUG=line-tables-only`.

#[path = "callgrind/mod.rs"]
mod callgrind;
mod support;

use std::hint::black_box;

use mcp_preamble::{Assembler, ServerSnapshot};

/// Scenarios the guard fails on when they grow, and the floor they are
/// compared with.
/// `read` is where a tool's input schema is measured, once, for the
/// limit checks of every assembly after.
/// `forward` is one `tools/call` through the gateway: the host's line read,
/// the name mapped, the upstream's request written, its answer read and
/// mapped back, the host's answer written. Built only with the guard's
/// `forward` feature; counted and printed, it joins `GUARDED` with its
/// first entry in `benches/instructions.json`.
const GUARDED: [&str; 3] = ["cold", "repeat", "read"];
#[cfg(feature = "forward")]
const ALL: &[&str] = &["cold", "repeat", "read", "forward", "floor"];
#[cfg(not(feature = "forward"))]
const ALL: &[&str] = &["cold", "repeat", "read", "floor"];
/// How much growth over the baseline is tolerated.
const TOLERANCE: f64 = 0.10;
const CHILD: &str = "--callgrind-child";

/// The input strings a token count cannot avoid (as `benches/assemble.rs`).
fn floor(all: &[ServerSnapshot]) -> usize {
    support::floor(all)
}

#[cfg(feature = "forward")]
mod forward {
    use std::hint::black_box;

    use mcp_preamble::ServerSnapshot;
    use mcp_preamble::serve::{GatewayNames, READER, forward_in_process};

    /// One forwarded call: the gateway's names for every corpus tool, a host's
    /// `tools/call` of one of them with arguments, and the upstream's answer.
    pub struct Forward {
        names: GatewayNames,
        host: String,
        answer: String,
    }

    impl Forward {
        pub fn of(all: &[ServerSnapshot]) -> Forward {
            let pairs: Vec<(&str, &str)> = all
                .iter()
                .flat_map(|s| {
                    let alias = s.alias.as_deref().unwrap_or_default();
                    s.tools.iter().map(move |t| (alias, t.name.as_str()))
                })
                .collect();
            let names = GatewayNames::new(pairs.iter().copied(), READER);
            let (alias, tool) = pairs[pairs.len() / 2];
            let name = names.exposed(alias, tool).expect("a named tool");
            let host = serde_json::json!({
                "jsonrpc": "2.0", "id": 17, "method": "tools/call",
                "params": {"name": name, "arguments": {"owner": "octo", "repo": "hello-world", "state": "open", "perPage": 30}},
            })
            .to_string();
            let answer = serde_json::json!({
                "jsonrpc": "2.0", "id": 4,
                "result": {"content": [{"type": "text", "text": "[{\"number\": 1347, \"title\": \"Found a bug\", \"state\": \"open\"}]"}], "isError": false},
            })
            .to_string();
            Forward {
                names,
                host,
                answer,
            }
        }
    }

    impl Forward {
        /// The call, as `measured` counts it.
        pub fn run(&self) -> usize {
            forward_in_process(&self.names, black_box(&self.host), &self.answer)
                .expect("a forwarded call")
                .iter()
                .map(String::len)
                .sum()
        }
    }
}

/// Without the `forward` feature: no gateway in the build, no `forward` scenario.
#[cfg(not(feature = "forward"))]
mod forward {
    use mcp_preamble::ServerSnapshot;

    pub struct Forward;

    impl Forward {
        pub fn of(_: &[ServerSnapshot]) -> Forward {
            Forward
        }

        pub fn run(&self) -> usize {
            panic!("the forward scenario needs the guard's `forward` feature")
        }
    }
}

use forward::Forward;

/// The only function callgrind counts in (`--toggle-collect`).
#[inline(never)]
fn measured(
    scenario: &str,
    texts: &[(String, String)],
    all: &[ServerSnapshot],
    warm: &Assembler,
    fresh: &Assembler,
    forward: &Forward,
) -> usize {
    match scenario {
        "forward" => forward.run(),
        "read" => support::read(black_box(texts)).len(),
        "cold" => fresh.assemble(black_box(all)).unwrap().total_tokens(),
        "repeat" => warm.assemble(black_box(all)).unwrap().total_tokens(),
        "floor" => floor(black_box(all)),
        other => panic!("unknown scenario {other}"),
    }
}

/// In the child: set up outside the counted region, then run one scenario.
fn child(scenario: &str) {
    let texts = support::corpus_texts();
    let all = support::read(&texts);
    // Process-wide one-time work (the tokenizer, compiled patterns) happens
    // here, as it does before criterion's first timed iteration.
    let warm = Assembler::new();
    warm.assemble(&all).unwrap();
    let fresh = Assembler::new();
    let _ = floor(&all);
    let forward = Forward::of(&all);
    // Once outside the count, as each call after the gateway's first.
    if cfg!(feature = "forward") {
        black_box(forward.run());
    }
    black_box(measured(scenario, &texts, &all, &warm, &fresh, &forward));
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == CHILD) {
        return child(&args[i + 1]);
    }
    let Some(version) = callgrind::version() else {
        if callgrind::required() {
            eprintln!(
                "instructions: valgrind is required (CI or MCP_PREAMBLE_REQUIRE_VALGRIND=1) but not installed"
            );
            std::process::exit(1);
        }
        println!("instructions: SKIPPED: valgrind is not installed (apt-get install valgrind)");
        return;
    };
    let dir =
        std::env::temp_dir().join(format!("mcp-preamble-instructions-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let preload = match callgrind::fixed_seed(&dir) {
        Ok(lib) => Some(lib),
        Err(why) => {
            println!(
                "instructions: no fixed hash seed ({why}): counts may vary by ~0.05% between runs"
            );
            None
        }
    };
    let mut counts = Vec::new();
    for &scenario in ALL {
        let counted = callgrind::count(
            &[CHILD, scenario],
            "*instructions::measured*",
            &[],
            preload.as_deref(),
        );
        match counted {
            Ok(n) => counts.push((scenario, n)),
            Err(why) => {
                eprintln!("instructions: {why}");
                std::process::exit(1);
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let get = |name: &str| counts.iter().find(|(n, _)| *n == name).map_or(0, |c| c.1);
    let floor = get("floor") as f64;
    println!("instructions ({version}):");
    for (name, n) in &counts {
        println!("  {name:<8} {n:>14}  {:.3}x floor", *n as f64 / floor);
    }
    let path = support::root().join("benches/instructions.json");
    if std::env::var("MCP_PREAMBLE_SAVE_BASELINE").is_ok_and(|v| v == "1") {
        let mut json = serde_json::Map::new();
        for (name, n) in &counts {
            json.insert((*name).to_string(), serde_json::json!(n));
        }
        json.insert("valgrind".into(), version.into());
        json.insert("machine".into(), support::machine().into());
        json.insert("date".into(), support::today().into());
        let text = serde_json::to_string_pretty(&json).unwrap_or_default() + "\n";
        std::fs::write(&path, text).expect("benches/instructions.json is writable");
        return println!("wrote {}", path.display());
    }
    let base: serde_json::Value = match std::fs::read_to_string(&path)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(v) => v,
        Err(e) => {
            eprintln!(
                "instructions: no baseline at {} ({e}); save one with \
                 `MCP_PREAMBLE_SAVE_BASELINE=1 cargo run --release -p mcp-preamble-guard`",
                path.display()
            );
            std::process::exit(1);
        }
    };
    let mut failed = false;
    for (name, now) in &counts {
        let Some(then) = base[*name].as_u64() else {
            println!("  {name}: not in the baseline");
            failed |= GUARDED.contains(name);
            continue;
        };
        let ratio = *now as f64 / then as f64;
        let verdict = if GUARDED.contains(name) && ratio > 1.0 + TOLERANCE {
            failed = true;
            "FAILED: more than 10% over the baseline"
        } else if ratio < 1.0 - TOLERANCE {
            "faster than the baseline; consider re-saving it"
        } else {
            "ok"
        };
        println!("  {name}: {ratio:.3}x baseline ({then}) {verdict}");
    }
    if failed {
        eprintln!(
            "instructions: over the baseline; if that is intended, re-save it in the same change: \
             MCP_PREAMBLE_SAVE_BASELINE=1 cargo run --release -p mcp-preamble-guard"
        );
        std::process::exit(1);
    }
}
