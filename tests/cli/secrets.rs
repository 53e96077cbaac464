//! Secrets are never printed: planted in a config `url`'s query string, in
//! a server's stderr (from its environment), in a command line that fails
//! to spawn, and in a server's instructions, none reaches the stdout or
//! stderr of any command (`preview`, `preview --json`, `pin`, `snapshot`,
//! `lint` in every format), and the URL's other query values do not either.
//!
//! Files are another matter: a snapshot or a lock stores server text as
//! sent, because it is what a reviewer approves and what digests cover; the
//! test checks that they hold no config URL, error or stderr tail.
#![cfg(feature = "cli")]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Split so the source holds no secret-shaped literal.
fn key() -> String {
    ["sk-proj-", "9fK2mQ7xLp4Rt8Zb3Nc6Vd1Wy5Hs0Ja2"].concat()
}
fn token() -> String {
    ["ghp_", "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"].concat()
}
fn stripe() -> String {
    ["sk_live_", "ZYW2mZp0zVZomHFwUbbYrEqm"].concat()
}
/// A query value that is no secret by shape: only the URL rule hides it.
const SESSION: &str = "s3ss10nQ";

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "mcp-preamble-secrets-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Eight-character slices of every planted secret: none may be printed.
fn needles() -> Vec<String> {
    let mut out = vec![SESSION.to_string()];
    for s in [key(), token(), stripe()] {
        let chars: Vec<char> = s.chars().collect();
        // The prefixes (`sk-proj-`, `ghp_`) are shown on purpose.
        for w in chars[8..].windows(8) {
            out.push(w.iter().collect());
        }
    }
    out
}

fn assert_clean(what: &str, text: &str) {
    for n in needles() {
        assert!(!text.contains(&n), "{what} prints {n:?}:\n{text}");
    }
}

fn config(dir: &Path) -> String {
    let p = dir.join("mcp.json");
    let stderr_server = format!("echo \"starting with TOKEN={}\" >&2; exit 3", "$TOKEN");
    std::fs::write(
        &p,
        serde_json::json!({"mcpServers": {
            // Nothing listens on port 1: the error quotes the URL.
            "remote": {"url": format!("http://127.0.0.1:1/mcp?key={}&session={SESSION}", key())},
            "noisy": {"command": "sh", "args": ["-c", stderr_server], "env": {"TOKEN": token()}},
            "missing": {"command": format!("/nonexistent/{}", stripe())},
        }})
        .to_string(),
    )
    .unwrap();
    p.display().to_string()
}

/// A capture whose instructions hold a key: the section and the findings
/// quote server text, which is redacted too.
fn capture(dir: &Path) -> String {
    let p = dir.join("leaky.json");
    std::fs::write(
        &p,
        serde_json::json!({
            "server": "leaky", "sdk": "none", "captured": "2026-01-01",
            "initialize": {"jsonrpc": "2.0", "id": 1, "result": {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "leaky", "version": "1"},
                "instructions": format!("Call get_invoice with api_key={}. Use list_periods first.", stripe()),
            }},
            "tools_list_pages": [{"jsonrpc": "2.0", "id": 2, "result": {"tools": [
                {"name": "get_invoice", "description": format!("Get an invoice (token {}).", token()), "inputSchema": {}},
                {"name": "list_periods", "description": "List periods.", "inputSchema": {}},
            ]}}],
        })
        .to_string(),
    )
    .unwrap();
    p.display().to_string()
}

#[test]
fn no_command_prints_a_planted_secret() {
    let dir = scratch("all");
    let config = config(&dir);
    let capture = capture(&dir);
    let lock = dir.join("mcp-preamble.lock").display().to_string();
    let snaps = dir.join("snaps").display().to_string();
    let commands: Vec<Vec<&str>> = vec![
        vec!["preview"],
        vec!["preview", "--json"],
        vec!["preview", "--hosts", "all"],
        vec!["pin", "--lock", &lock],
        vec!["preview", "--lock", &lock],
        vec!["snapshot", "--out", &snaps],
        vec!["lint"],
        vec!["lint", "--format", "json"],
        vec!["lint", "--format", "sarif"],
        vec!["lint", "--hosts", "all"],
    ];
    for args in commands {
        // With the config, and with the capture file as well (snapshot
        // takes no files).
        let mut runs = vec![[&args[..], &["--config", &config, "--timeout", "20"]].concat()];
        if args[0] != "snapshot" {
            runs.push([&args[..], &[capture.as_str()]].concat());
        }
        for run in runs {
            let out = Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
                .args(&run)
                .output()
                .unwrap();
            let what = run.join(" ");
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_clean(&format!("{what} (stdout)"), &stdout);
            assert_clean(&format!("{what} (stderr)"), &stderr);
            let all = format!("{stdout}{stderr}");
            if run.contains(&config.as_str()) {
                // Each failure is still reported, with what is safe to show.
                assert!(all.contains("remote"), "{what}: {all}");
                assert!(all.contains("noisy"), "{what}: {all}");
                if args != ["snapshot", "--out", &snaps] && !run.contains(&"--json") {
                    assert!(
                        all.contains("/mcp?key=[redacted]&session=[redacted]"),
                        "{what}: {all}"
                    );
                }
            } else if args[0] != "pin" && !run.contains(&"--lock") {
                // The server's text is shown, its secret is not.
                assert!(all.contains("sk_l…, 32 characters"), "{what}: {all}");
            }
        }
    }
    // The written files hold no config URL, error or stderr tail: only the
    // text that servers sent (none of the configured servers answered).
    for entry in std::fs::read_dir(dir.join("snaps"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        assert!(
            !text.contains(SESSION) && !text.contains(&token()),
            "{text}"
        );
    }
    if let Ok(text) = std::fs::read_to_string(&lock) {
        assert!(!text.contains(SESSION) && !text.contains(&key()), "{text}");
    }
}

/// The stderr tail and the URL in `preview --json`'s connection rows.
#[test]
fn json_connection_rows_are_redacted() {
    let dir = scratch("json");
    let config = config(&dir);
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
        .args(["preview", "--json", "--config", &config, "--timeout", "20"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["connections"].as_array().unwrap();
    let row = |alias: &str| {
        rows.iter()
            .find(|c| c["alias"] == alias)
            .unwrap_or_else(|| panic!("{alias}: {v}"))
    };
    let remote = row("remote")["error"].as_str().unwrap();
    assert!(
        remote.contains("?key=[redacted]&session=[redacted]"),
        "{remote}"
    );
    let noisy = row("noisy")["stderr"].as_str().unwrap_or_default();
    if !noisy.is_empty() {
        assert!(
            noisy.starts_with("starting with TOKEN=[redacted: ghp_…, 40 characters]"),
            "{noisy}"
        );
    }
    assert_clean("preview --json", &v.to_string());
}
