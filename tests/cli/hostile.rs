//! Hostile servers against the `mcp-preamble` binary: terminal escapes in
//! anything a server sends must reach neither stdout nor stderr raw.
#![cfg(feature = "cli")]

use crate::common;

use common::cli::{preview_doubling, run};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{ensure_npm, servers_dir};

/// Erase line, fake green text, window title (OSC 0), clipboard (OSC 52),
/// C1 CSI and OSC, a bidi override: as tests/servers/hostile.mjs sends them.
const HOSTILE: &str = "\x1b[2K\r\x1b[32mall servers OK\x1b[0m\x1b]0;pwned title\x07\x1b]52;c;cHduZWQ=\x07\u{9b}2K\u{9d}0;c1 title\u{9c}\u{202e}evil\u{202c}";

/// How [`HOSTILE`] reads once made terminal-safe.
const SHOWN: &str = r"\x1b[2K\x0d\x1b[32mall servers OK\x1b[0m\x1b]0;pwned title\x07\x1b]52;c;cHduZWQ=\x07\u{9b}2K\u{9d}0;c1 title\u{9c}\u{202e}evil\u{202c}";

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "mcp-preamble-cli-hostile-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Valid UTF-8 with no ESC, no C1 control (`\xc2\x80`..`\xc2\x9f`), no
/// U+202E, no other control but newline and tab.
fn assert_terminal_safe(what: &str, bytes: &[u8]) {
    let shown = text(bytes);
    assert!(!bytes.contains(&0x1b), "{what}: ESC in {shown}");
    assert!(
        !bytes
            .windows(2)
            .any(|w| w[0] == 0xc2 && (0x80..=0x9f).contains(&w[1])),
        "{what}: C1 control in {shown}"
    );
    // Valid UTF-8, so no lone C1 byte either.
    assert!(std::str::from_utf8(bytes).is_ok(), "{what}: not UTF-8");
    assert!(!shown.contains('\u{202e}'), "{what}: U+202E in {shown}");
    assert!(
        !shown
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "{what}: control character in {shown}"
    );
}

fn assert_output_safe(what: &str, out: &Output) {
    assert_terminal_safe(&format!("{what} stdout"), &out.stdout);
    assert_terminal_safe(&format!("{what} stderr"), &out.stderr);
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// Capture files whose server sends [`HOSTILE`] in a JSON-RPC error, a
/// `tools/list` error, its name, version, protocol version and instructions,
/// and its tool names (which the lint quotes as sent).
fn hostile_captures(dir: &Path) -> Vec<String> {
    let rpc_error = serde_json::json!({
        "server": "hostile", "sdk": "none", "captured": "2026-01-01",
        "initialize": {"jsonrpc": "2.0", "id": 1,
            "error": {"code": -32000, "message": format!("refused {HOSTILE}")}},
    });
    let tools = |name: &str| {
        serde_json::json!([
            {"name": format!("get_invoice{HOSTILE}"), "description": "Get an invoice.", "inputSchema": {}},
            {"name": name, "description": format!("List the billing periods.{HOSTILE}"), "inputSchema": {}},
        ])
    };
    let names = |pages: serde_json::Value| {
        serde_json::json!({
            "server": "hostile", "sdk": "none", "captured": "2026-01-01",
            "initialize": {"jsonrpc": "2.0", "id": 1, "result": {
                "protocolVersion": format!("2025-11-25{HOSTILE}"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": format!("srv{HOSTILE}"), "version": format!("1{HOSTILE}")},
                "instructions": format!("Always call get_invoise first. Use list_periods to list the billing periods. {HOSTILE}"),
            }},
            "tools_list_pages": pages,
        })
    };
    let page = |cursor: Option<&str>| {
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "result": {
            "tools": tools(&format!("list_periods{HOSTILE}")), "nextCursor": cursor,
        }})
    };
    let tools_error = serde_json::json!([
        page(Some("2")),
        {"jsonrpc": "2.0", "id": 3, "error": {"code": -32000, "message": format!("tools {HOSTILE}")}},
    ]);
    vec![
        write(dir, "rpc-error.json", &rpc_error.to_string()),
        write(
            dir,
            "names.json",
            &names(serde_json::json!([page(None)])).to_string(),
        ),
        write(dir, "tools-error.json", &names(tools_error).to_string()),
    ]
}

#[test]
fn captured_escapes_reach_no_terminal() {
    let dir = scratch("captures");
    let files = hostile_captures(&dir);
    let with = |args: &[&str]| -> Output {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(files.iter().map(String::as_str));
        run(&all)
    };

    let out = with(&["preview"]);
    assert_output_safe("preview", &out);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    // Shown, not dropped: the reader sees what the server tried.
    assert!(
        text(&out.stderr).contains(&format!("initialize failed with -32000: refused {SHOWN}\n")),
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout).contains(&format!(
            "json-rpc error response: initialize failed with -32000: refused {SHOWN}\n"
        )),
        "{}",
        text(&out.stdout)
    );

    let out = with(&["preview", "--json"]);
    assert_output_safe("preview --json", &out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The JSON still carries the message exactly as sent.
    let error = v["connections"][0]["error"].as_str().unwrap();
    assert!(error.ends_with(&format!("refused {HOSTILE}")), "{error}");

    let out = with(&["lint"]);
    assert_output_safe("lint", &out);
    assert_eq!(out.status.code(), Some(2));
    let report = text(&out.stdout);
    // MCP003 quotes the closest real tool name as sent.
    assert!(
        report.contains(&format!("did you mean `list_periods{SHOWN}`?")),
        "{report}"
    );
    assert!(
        report.contains(&format!(
            "not linted: json-rpc error response: initialize failed with -32000: refused {SHOWN}\n"
        )),
        "{report}"
    );

    for format in ["json", "sarif"] {
        let out = with(&["lint", "--format", format]);
        assert_output_safe(&format!("lint --format {format}"), &out);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(v.to_string().contains(r"\u001b]52;c;"), "{format}: {v}");
    }
}

/// The top-level error line: a config error quoting an alias, an `--out`
/// path that cannot be created.
#[test]
fn top_level_errors_reach_no_terminal() {
    let dir = scratch("config");
    let config = write(
        &dir,
        "mcp.json",
        &serde_json::json!({"mcpServers": {HOSTILE: {"command": "a", "args": "b"}}}).to_string(),
    );
    let snaps = dir.join("snaps").display().to_string();
    for args in [
        vec!["preview"],
        vec!["snapshot", "--out", &snaps],
        vec!["lint"],
    ] {
        let out = run(&[&args[..], &["--config", &config]].concat());
        assert_output_safe(args[0], &out);
        assert_eq!(out.status.code(), Some(2), "{}", args[0]);
        assert!(text(&out.stderr).contains("must be an array of strings"));
    }
    let empty = write(&dir, "empty.json", r#"{"mcpServers": {}}"#);
    write(&dir, "file", "");
    let out_dir = dir.join("file").join(HOSTILE).display().to_string();
    let out = run(&["snapshot", "--config", &empty, "--out", &out_dir]);
    assert_output_safe("snapshot --out", &out);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains(SHOWN), "{}", text(&out.stderr));
}

#[test]
fn live_escapes_reach_no_terminal() {
    ensure_npm();
    let dir = scratch("live");
    let server = servers_dir().join("hostile.mjs").display().to_string();
    let entry = |mode: &str| {
        format!(r#"{{"command": "node", "args": [{server:?}], "env": {{"MODE": "{mode}"}}}}"#)
    };
    // The aliases are the user's, but hostile too: they are printed as well.
    let config = write(
        &dir,
        "mcp.json",
        &serde_json::json!({"mcpServers": {
            "dies": serde_json::from_str::<serde_json::Value>(&entry("exit")).unwrap(),
            "refuses": serde_json::from_str::<serde_json::Value>(&entry("rpc-error")).unwrap(),
            format!("alias{HOSTILE}"): serde_json::from_str::<serde_json::Value>(&entry("exit")).unwrap(),
            format!("ok{HOSTILE}"): {"command": "node", "args": [servers_dir().join("invoice.mjs")]},
        }})
        .to_string(),
    );
    let base = [
        "--config",
        &config,
        "--timeout",
        "30",
        "--handshake",
        "legacy",
    ];
    let with = |args: &[&str]| -> Output {
        let mut all = args.to_vec();
        all.extend(base);
        run(&all)
    };

    let out = with(&["preview"]);
    assert_output_safe("preview", &out);
    assert_eq!(out.status.code(), Some(1));
    let report = text(&out.stdout);
    assert!(
        report.contains(&format!("    stderr: fatal: {SHOWN}\n")),
        "{report}"
    );
    assert!(
        report.contains(&format!(
            "JSON-RPC error: -32000: {SHOWN} (initialize refused)"
        )),
        "{report}"
    );

    let out = with(&["preview", "--json"]);
    assert_output_safe("preview --json", &out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let dies = v["connections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["alias"] == "dies")
        .unwrap();
    assert_eq!(dies["stderr"], format!("fatal: {HOSTILE}"));

    let snaps = dir.join("snaps");
    let out = with(&["snapshot", "--out", snaps.to_str().unwrap()]);
    assert_output_safe("snapshot", &out);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).starts_with(&format!("ok{SHOWN}: wrote ")),
        "{}",
        text(&out.stdout)
    );
    assert!(
        text(&out.stderr).contains(&format!("    stderr: fatal: {SHOWN}\n")),
        "{}",
        text(&out.stderr)
    );

    for format in ["text", "json", "sarif"] {
        let out = with(&["lint", "--format", format]);
        assert_output_safe(&format!("lint --format {format}"), &out);
        assert_eq!(out.status.code(), Some(2), "{format}");
    }
}

/// On a terminal, connection progress is redrawn in place: the only escape
/// sequences are the CLI's own (erase line, cursor up, colors).
#[test]
fn progress_on_a_terminal_is_escaped() {
    // util-linux `script` gives the binary a terminal; skip where it is missing.
    let has_script = Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| text(&o.stdout).contains("util-linux"));
    if !has_script {
        eprintln!("skipped: needs util-linux script");
        return;
    }
    ensure_npm();
    let dir = scratch("tty");
    let server = servers_dir().join("hostile.mjs").display().to_string();
    let config = write(
        &dir,
        "mcp.json",
        &serde_json::json!({"mcpServers": {
            // Short alias: the status line is cut at 78 characters.
            "r": {"command": "node", "args": [server], "env": {"MODE": "rpc-error"}},
            format!("a{HOSTILE}"): {"command": "node", "args": [server]},
        }})
        .to_string(),
    );
    let cmd = format!(
        "{} preview --config {config} --timeout 30 --handshake legacy",
        env!("CARGO_BIN_EXE_mcp-preamble")
    );
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .unwrap();
    let shown = text(&out.stdout);
    assert!(shown.contains("r: failed: "), "{shown:?}");
    let own = regex::Regex::new(r"\x1b\[[0-9;]*[mAK]").unwrap();
    let rest = own.replace_all(&shown, "");
    // The terminal turns \n into \r\n.
    assert_terminal_safe("tty", rest.replace("\r\n", "\n").as_bytes());
    assert!(!shown.contains("\x1b]"), "{shown:?}");
    assert!(
        rest.contains(r"a\x1b[2K\x0d\x1b[32mall servers OK"),
        "{rest:?}"
    );
}

/// A user template that doubles a list forty times: minijinja charges no
/// fuel for building the values, so the CLI's memory ceiling stops the run
/// with a clear error instead of the kernel's OOM killer.
#[test]
fn a_template_that_builds_huge_values_stops_at_the_memory_ceiling() {
    let out = preview_doubling(40, ("MCP_PREAMBLE_MAX_RSS_MB", "200"));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "mcp-preamble: out of memory: the run passed 200 MiB (a template that builds huge values?); stopped (MCP_PREAMBLE_MAX_RSS_MB sets the ceiling)\n"
    );
}
