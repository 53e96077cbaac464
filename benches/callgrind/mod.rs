//! Counting instructions with valgrind's callgrind, shared by the
//! instruction guard (`benches/instructions.rs`) and the forwarded call's
//! guard in the test profile (`tests/serve/forward.rs`): a child process of
//! the calling binary runs under callgrind, counted only inside the
//! functions `toggle` names, with a fixed hash seed when `cc` can build it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether a missing valgrind fails the run instead of skipping it: in CI,
/// or with `MCP_PREAMBLE_REQUIRE_VALGRIND=1`.
pub fn required() -> bool {
    std::env::var("MCP_PREAMBLE_REQUIRE_VALGRIND").is_ok_and(|v| v == "1")
        || std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false")
}

/// `valgrind --version`, or `None` without valgrind.
pub fn version() -> Option<String> {
    let out = Command::new("valgrind").arg("--version").output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// `getrandom` that fills with a fixed pattern, for the child only: std's
/// hash maps take random keys, and their probe sequences (so the counts)
/// would vary by a few hundredths of a percent from run to run. The
/// library is not changed: only the child process sees it.
const FIXED_SEED_C: &str = r#"
#include <stddef.h>
#include <sys/types.h>
ssize_t getrandom(void *buf, size_t len, unsigned int flags) {
    (void)flags;
    unsigned char *b = buf;
    for (size_t i = 0; i < len; i++) b[i] = (unsigned char)(i * 151 + 7);
    return (ssize_t)len;
}
"#;

/// Builds the fixed-seed preload library in `dir` with `cc` (the C compiler
/// Rust links with), or says why not.
pub fn fixed_seed(dir: &Path) -> Result<PathBuf, String> {
    let src = dir.join("fixed_seed.c");
    let lib = dir.join("libfixed_seed.so");
    std::fs::write(&src, FIXED_SEED_C).map_err(|e| format!("{}: {e}", src.display()))?;
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-O2", "-o"])
        .arg(&lib)
        .arg(&src)
        .status()
        .map_err(|e| format!("cc: {e}"))?;
    status
        .success()
        .then_some(lib)
        .ok_or_else(|| format!("cc: {status}"))
}

/// The instructions this binary executes inside functions matching
/// `toggle` (a callgrind `--toggle-collect` pattern) when run again with
/// `args`, in a clean environment (`PATH` only, plus `env`).
pub fn count(
    args: &[&str],
    toggle: &str,
    env: &[(&str, &str)],
    preload: Option<&Path>,
) -> Result<u64, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = std::env::temp_dir().join(format!(
        "mcp-preamble-callgrind-{}-{}.out",
        std::process::id(),
        args.join("-").replace(['/', ' '], "_")
    ));
    let mut valgrind = Command::new("valgrind");
    // The same environment wherever it runs: the child's start-up reads it.
    valgrind.env_clear();
    if let Some(path) = std::env::var_os("PATH") {
        valgrind.env("PATH", path);
    }
    if let Some(lib) = preload {
        valgrind.env("LD_PRELOAD", lib);
    }
    valgrind.envs(env.iter().copied());
    let status = valgrind
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg("--collect-atstart=no")
        .arg(format!("--toggle-collect={toggle}"))
        .arg("--quiet")
        .arg(&exe)
        .args(args)
        // The child's own report (a test harness's summary) is not the caller's.
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("valgrind: {e}"))?;
    if !status.success() {
        return Err(format!("valgrind on {}: {status}", args.join(" ")));
    }
    let total = totals(&out);
    let _ = std::fs::remove_file(&out);
    // Nothing counted means the toggle matched no function (a stripped
    // binary: zig's linker strips every symbol for rustc's `--strip-debug`),
    // not a free scenario: a guard reading 0 would pass every change.
    match total {
        Ok(0) => Err(format!(
            "callgrind counted nothing inside {toggle} for {}: is the binary stripped of its symbols?",
            args.join(" ")
        )),
        other => other,
    }
}

/// The `totals:` (or `summary:`) line of a callgrind output file.
fn totals(path: &Path) -> Result<u64, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .find_map(|l| {
            l.strip_prefix("totals:")
                .or_else(|| l.strip_prefix("summary:"))
        })
        .and_then(|n| n.split_whitespace().next()?.parse().ok())
        .ok_or_else(|| format!("{}: no totals line", path.display()))
}
