//! `wire`: bytes from a hostile server (or a hostile file) into every reader
//! of the wire and file formats. Each must return a value or a typed error,
//! never panic.
//!
//! The first byte picks the reader (mod 9), the rest is the text:
//! 0 `initialize` response, 1 `server/discover` response, 2 `tools/list`
//! pages (a JSON array is read as several pages), 3 capture file, 4 snapshot
//! file, 5 MCP config, 6 the capture-or-snapshot dispatch of
//! `load_server_file` (from a string), 7 lock file, 8 policy file.
//! Whatever reads as a snapshot is then assembled with both templates and
//! linted, when small.

use crate::{MAX_INPUT, QuarterCounter};
use mcp_preamble::files::{Capture, McpConfig, SnapshotFile};
use mcp_preamble::lint::Linter;
use mcp_preamble::pin::Lock;
use mcp_preamble::settings::PolicyFile;
use mcp_preamble::{Assembler, Era, Error, ServerSnapshot, Template};
use serde_json::Value;

/// Snapshots this big or smaller also go through assembly and lint (target's
/// own bound: the point here is the readers).
const DOWNSTREAM_MAX: usize = 16 * 1024;

/// A typed error: its kind and message are readable.
fn check_error(e: &Error) {
    let _ = e.kind();
    let _ = e.to_string();
    let _ = e.rpc_error();
}

fn downstream(snapshot: &ServerSnapshot, input_len: usize) {
    let _ = snapshot.display_name();
    if input_len > DOWNSTREAM_MAX {
        return;
    }
    for template in [Template::markdown(), Template::xml()] {
        // Only a template error may fail an assembly, and these are built in.
        // The readers are the point here: a stand-in counter (tiktoken took
        // most of each run; `budgets` checks real counts).
        let assembly = Assembler::new()
            .token_counter(QuarterCounter)
            .template(template)
            .assemble(std::slice::from_ref(snapshot))
            .expect("built-in templates assemble any snapshot");
        let _ = assembly.to_json();
    }
    let report = Linter::new()
        .token_counter(QuarterCounter)
        .report(std::slice::from_ref(snapshot));
    let _ = report.to_text();
    let _ = report.to_json();
    let _ = report.to_sarif();
}

fn read(selector: u8, text: &str) {
    let result = match selector % 9 {
        0 => ServerSnapshot::from_initialize_json(text),
        1 => ServerSnapshot::from_discover_json(text),
        2 => tools_pages(text),
        3 => Capture::from_json(text).and_then(|c| {
            let _ = c.eras();
            for era in [Era::Legacy, Era::Modern] {
                match c.snapshot_in(era) {
                    Ok(s) => downstream(&s, text.len()),
                    Err(e) => check_error(&e),
                }
            }
            c.snapshot()
        }),
        4 => SnapshotFile::from_json(text).map(|f| {
            // What is written reads back the same.
            let again = SnapshotFile::from_json(&f.to_json())
                .unwrap_or_else(|e| panic!("a written snapshot file does not read back: {e}"));
            assert_eq!(again, f, "snapshot file round trip");
            f.snapshot
        }),
        5 => {
            match McpConfig::from_json(text, "fuzz.json") {
                Ok(config) => {
                    let aliases: Vec<&str> =
                        config.servers.iter().map(|s| s.alias.as_str()).collect();
                    let sorted = aliases.windows(2).all(|w| w[0] <= w[1]);
                    assert!(sorted, "config servers are sorted by alias");
                }
                Err(e) => check_error(&e),
            }
            return;
        }
        7 => {
            match Lock::from_str(text, "fuzz.lock") {
                // A lock reads back as written, and writes the same bytes again.
                Ok(lock) => {
                    let written = lock.to_json();
                    let again = Lock::from_str(&written, "fuzz.lock")
                        .unwrap_or_else(|e| panic!("a written lock does not read back: {e}"));
                    assert_eq!(again, lock, "lock round trip");
                    assert_eq!(again.to_json(), written, "lock bytes are stable");
                }
                Err(e) => check_error(&e),
            }
            return;
        }
        8 => {
            match PolicyFile::from_str(text, "fuzz.toml") {
                Ok(policy) => {
                    // A template file would be read from disk: only built-in names here.
                    let builtin = policy
                        .defaults
                        .template
                        .as_deref()
                        .is_none_or(|t| Template::builtin(t).is_ok());
                    if builtin && let Err(e) = Assembler::from_policy(&policy) {
                        check_error(&e);
                    }
                }
                Err(e) => check_error(&e),
            }
            return;
        }
        _ => {
            // `load_server_file` without the file system: the same dispatch.
            if text.contains("\"mcp_preamble_snapshot\"") {
                SnapshotFile::from_json(text).map(|f| f.snapshot)
            } else {
                Capture::from_json(text).and_then(|c| c.snapshot())
            }
        }
    };
    match result {
        Ok(snapshot) => downstream(&snapshot, text.len()),
        Err(e) => check_error(&e),
    }
}

/// `tools/list` pages onto an empty snapshot: one page, or each element of
/// a top-level array.
fn tools_pages(text: &str) -> mcp_preamble::Result<ServerSnapshot> {
    let mut snapshot = ServerSnapshot::new("fuzz");
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(_) => return Ok(snapshot),
    };
    let pages = match &value {
        Value::Array(pages) => pages.iter().collect(),
        page => vec![page],
    };
    for page in pages {
        let before = snapshot.tools.len();
        match snapshot.push_tools_page(page) {
            Ok(_cursor) => {}
            Err(e) => {
                check_error(&e);
                // A failed page leaves the snapshot as it was.
                assert_eq!(snapshot.tools.len(), before);
            }
        }
    }
    Ok(snapshot)
}

/// One input of the target (what libFuzzer's `fuzz_target!` passes).
pub fn run(data: &[u8]) {
    // Target's own bound (the library has no input limit yet).
    if data.is_empty() || data.len() > MAX_INPUT {
        return;
    }
    let Ok(text) = std::str::from_utf8(&data[1..]) else {
        return;
    };
    read(data[0], text);
}
