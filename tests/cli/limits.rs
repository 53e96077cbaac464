//! The CLI's time ceiling: a user template that runs too long stops with
//! exit 2 and a clear message (the memory ceiling is in `cli_hostile.rs`).

#![cfg(feature = "cli")]

use crate::common;

use std::process::Command;

use common::cli::preview_doubling;

/// A user template that doubles a list thirty-three times stays small
/// enough for the memory ceiling and runs for minutes; the time ceiling
/// stops it.
#[test]
fn a_template_that_runs_too_long_stops_at_the_time_ceiling() {
    let out = preview_doubling(33, ("MCP_PREAMBLE_MAX_SECONDS", "2"));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "mcp-preamble: out of time: assembling took more than 2 s (a template that runs too long?); stopped (MCP_PREAMBLE_MAX_SECONDS sets the ceiling)\n"
    );
    assert!(out.stdout.is_empty());
}

/// A ceiling that is not a number warns and keeps the default; a fast run
/// is not stopped.
#[test]
fn a_bad_time_ceiling_warns_and_keeps_the_default() {
    let seed = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/corpus/seed-invoice-server.json"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
        .args(["preview", seed])
        .env("MCP_PREAMBLE_MAX_SECONDS", "soon")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "mcp-preamble: warning: MCP_PREAMBLE_MAX_SECONDS=\"soon\" is not a number of seconds; using 60\n"
        ),
        "{out:?}"
    );
}
