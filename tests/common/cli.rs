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

/// `preview` of the seed capture through a user template that doubles a
/// list `times` times for each server (minijinja charges no fuel for the
/// values it builds), with `env` set: what the CLI's ceilings stop.
pub fn preview_doubling(times: u32, env: (&str, &str)) -> Output {
    let dir = std::env::temp_dir().join(format!(
        "mcp-preamble-doubling-{}-{times}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let template = dir.join("double.j2");
    std::fs::write(
        &template,
        format!(
            "{{% macro server(s) %}}{{% set ns = namespace(x=[s.name]) %}}{{% for i in range({times}) %}}{{% set ns.x = ns.x + ns.x %}}{{% endfor %}}{{{{ ns.x | length }}}}{{% endmacro %}}{{% for b in blocks %}}{{{{ b }}}}{{% endfor %}}"
        ),
    )
    .unwrap();
    let seed = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/corpus/seed-invoice-server.json"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
        .args(["preview", seed, "--template", template.to_str().unwrap()])
        .env(env.0, env.1)
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    out
}
