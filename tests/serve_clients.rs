//! The official SDK clients against `mcp-preamble serve` over stdio, in
//! both eras: the TypeScript SDK's `Client` (`@modelcontextprotocol/client`,
//! tests/clients/ts-client.mjs) and the Python SDK's (`mcp` on PyPI,
//! tests/clients/py_client.py). Each reads the instructions, lists the
//! tools, calls one tool on each of two upstreams, and sees the list change
//! when an upstream adds a tool.
//!
//! The clients are installed on first use (`npm ci`, `pip install --user`);
//! with `MCP_PREAMBLE_REQUIRE_CLIENTS=1` (as `.ci/run` sets) a client that
//! cannot be installed fails the test instead of skipping it.
#![cfg(feature = "cli")]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::{ensure_npm, servers_dir};
use serde_json::{Value, json};

fn clients_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients")
}

/// Whether `program args…` runs and exits 0.
fn runs(program: &str, args: &[&str], dir: &Path) -> bool {
    Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The clients are there, installed now if need be; `false` (said loudly)
/// when one cannot be installed and CI does not require it.
fn clients_ready(which: &str) -> bool {
    static TS: OnceLock<bool> = OnceLock::new();
    static PY: OnceLock<bool> = OnceLock::new();
    let dir = clients_dir();
    let ready = if which == "ts" {
        *TS.get_or_init(|| {
            dir.join("node_modules/@modelcontextprotocol/client")
                .is_dir()
                || runs("npm", &["ci", "--no-audit", "--no-fund"], &dir)
        })
    } else {
        *PY.get_or_init(|| {
            let import = ["-c", "import mcp.client.client"];
            runs("python3", &import, &dir)
                || (runs(
                    "python3",
                    &[
                        "-m",
                        "pip",
                        "install",
                        "--quiet",
                        "--user",
                        "-r",
                        "requirements.txt",
                    ],
                    &dir,
                ) && runs("python3", &import, &dir))
        })
    };
    if !ready {
        let required = std::env::var_os("MCP_PREAMBLE_REQUIRE_CLIENTS").is_some();
        assert!(!required, "the {which} SDK client cannot be installed");
        eprintln!("SKIPPED: the {which} SDK client cannot be installed here (see tests/clients)");
    }
    ready
}

/// Runs one client in one era against a gateway in front of `billing`
/// (the invoice server) and `echo` (which adds the tool `later` 3 s after
/// the gateway first lists its tools).
fn run(client: &str, era: &str) -> Value {
    ensure_npm();
    let dir = std::env::temp_dir().join(format!(
        "mcp-preamble-serve-clients-{}-{client}-{era}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let node = |script: &str, env: Value| json!({"command": "node", "args": [servers_dir().join(script)], "env": env});
    let config = json!({"mcpServers": {
        "billing": node("invoice.mjs", json!({})),
        "echo": node("client-echo.mjs", json!({"ADD_AFTER_MS": "3000"})),
    }});
    let config_path = dir.join("mcp.json");
    std::fs::write(&config_path, config.to_string()).unwrap();
    let spec = json!({
        "command": env!("CARGO_BIN_EXE_mcp-preamble"),
        "args": ["serve", "--config", config_path],
        "calls": ["billing__list_periods", "echo__whoami"],
        "waitFor": "echo__later",
    });
    let spec_path = dir.join("spec.json");
    std::fs::write(&spec_path, spec.to_string()).unwrap();
    let (program, script) = match client {
        "ts" => ("node", "ts-client.mjs"),
        _ => ("python3", "py_client.py"),
    };
    let out = Command::new(program)
        .args([script, era, spec_path.to_str().unwrap()])
        .current_dir(clients_dir())
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{client} {era}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{client} {era}: {e}: {stdout}"))
}

fn check(client: &str, era: &str) {
    if !clients_ready(client) {
        return;
    }
    let out = run(client, era);
    let names = |key: &str| -> Vec<&str> {
        out[key]
            .as_array()
            .unwrap_or_else(|| panic!("{key}: {out}"))
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect()
    };
    // The era the client asked for is the one it got.
    let protocol = if era == "modern" {
        "2026-07-28"
    } else {
        "2025-11-25"
    };
    match client {
        "ts" => assert_eq!(out["era"], era, "{out}"),
        _ => assert_eq!(out["protocol"], protocol, "{out}"),
    }
    let instructions = out["instructions"]
        .as_str()
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        instructions.starts_with("## MCP server instructions"),
        "{instructions}"
    );
    assert!(instructions.contains("### billing\n\nAlways call list_periods before get_invoice."));
    // The section's tool list names the tools as the gateway lists them.
    assert!(
        instructions.contains("Tools: `billing__list_periods`, `billing__get_invoice`"),
        "{instructions}"
    );
    assert!(instructions.contains("### echo"), "{instructions}");
    assert!(
        instructions.ends_with(mcp_preamble::serve::NOTE),
        "{instructions}"
    );
    let tools = names("tools");
    for tool in [
        "billing__list_periods",
        "billing__get_invoice",
        "echo__whoami",
    ] {
        assert!(tools.contains(&tool), "{tools:?}");
    }
    assert!(
        !tools.contains(&"echo__later"),
        "added after the first list: {tools:?}"
    );
    assert_eq!(
        out["calls"]["billing__list_periods"]["text"], "2026-07, 2026-08",
        "{out}"
    );
    let whoami = out["calls"]["echo__whoami"]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{out}"));
    // The upstream sees the gateway, not the host.
    assert!(whoami.contains("\"mcp-preamble\""), "{whoami}");
    let changed = names("changed");
    assert!(changed.contains(&"echo__later"), "{changed:?}");
    assert_eq!(changed.len(), tools.len() + 1, "{changed:?}");
}

#[test]
fn typescript_sdk_client_2025_era() {
    check("ts", "legacy");
}

#[test]
fn typescript_sdk_client_2026_era() {
    check("ts", "modern");
}

#[test]
fn python_sdk_client_2025_era() {
    check("py", "legacy");
}

#[test]
fn python_sdk_client_2026_era() {
    check("py", "modern");
}
