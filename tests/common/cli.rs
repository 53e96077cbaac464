//! The `mcp-preamble` binary run as a user runs it.

use std::process::{Command, Output};

/// `mcp-preamble ARGS…`, waited for.
pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
        .args(args)
        .output()
        .unwrap()
}

/// What a run printed on stdout.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// What a run printed on stderr.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
