//! Every example runs to exit 0 (the README's `cargo run --example …`),
//! against the repository's test servers. `cargo test` builds the examples;
//! a filtered run (`--test packages`) builds them here first.

use crate::common;

use std::path::PathBuf;
use std::process::Command;

/// The built example `name`, next to this test's own binary.
fn example(name: &str) -> PathBuf {
    let deps = std::env::current_exe().unwrap();
    let dir = deps.parent().unwrap().parent().unwrap().join("examples");
    let path = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    if !path.is_file() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "--all-features", "--example", name])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .unwrap();
        assert!(status.success(), "cannot build example {name}");
    }
    path
}

/// Runs example `name` with `args` from the repository root; its stdout.
fn run(name: &str, args: &[&str]) -> String {
    let out = Command::new(example(name))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success(),
        "example {name} {args:?}: {}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    stdout.into_owned()
}

#[cfg(feature = "rmcp")]
#[test]
fn agent_loop_runs_to_the_end_and_closes_at_once() {
    common::ensure_npm();
    let started = std::time::Instant::now();
    let out = run("agent_loop", &[]);
    assert!(out.contains("--- turn 5"), "{out}");
    assert!(out.contains("closed: the section is now \"\""), "{out}");
    // Five turns of about a second; a close that waited for the 30 s grace would show.
    assert!(started.elapsed() < std::time::Duration::from_secs(25));
}

#[test]
fn host_counter_caches_by_digest_and_falls_back_on_a_slow_endpoint() {
    let out = run("host_counter", &[]);
    assert!(out.contains("same servers again: "), "{out}");
    assert!(out.contains(", 0 new calls"), "{out}");
    assert!(out.contains("exact: false, "), "{out}");
    assert!(out.contains("counts by claude-sonnet-4"), "{out}");
    assert!(out.ends_with("exact: true\n"), "{out}");
}

#[test]
fn preview_runs_on_the_sample_and_on_captures() {
    assert!(!run("preview", &[]).is_empty());
    let out = run(
        "preview",
        &["tests/corpus/seed-invoice-server.json", "--json"],
    );
    assert!(out.trim_start().starts_with('{'), "{out}");
}

#[test]
fn pin_review_runs() {
    assert!(!run("pin_review", &[]).is_empty());
}

#[cfg(feature = "testing")]
#[test]
fn budget_test_runs() {
    assert!(!run("budget_test", &[]).is_empty());
}
