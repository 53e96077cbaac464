//! `serve_host`: bytes from a host, one JSON-RPC message a line, into the
//! gateway as `serve` reads stdio (rmcp's server side, the gateway's
//! handlers), in front of two upstreams whose tools collide once named
//! (`a b` and `a_b`) and which hold instructions.
//!
//! The first byte's bit 0 sends a valid `initialize` and `initialized`
//! first (most inputs then reach the handlers); the rest, read as UTF-8
//! (lossy), is split into lines. The host closes after its last line and
//! the gateway must close its side within 20 s.
//!
//! Oracles: every line the gateway writes is a JSON-RPC 2.0 message; every
//! `tools/list` result meets [`check_tools`]; a `tools/call` of anything
//! but the reader tool is an error (no upstream is connected here), and
//! the reader's text is free of what sanitizing removes.
//!
//! [`check_tools`]: crate::gateway::check_tools

use std::collections::BTreeMap;
use std::time::Duration;

use mcp_preamble::rmcp::model::ListToolsResult;
use mcp_preamble::serve::READER;
use mcp_preamble::{ServerSnapshot, Tool};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::assert_no_hidden;
use crate::gateway::{check_tools, gateway, runtime};

/// Most lines and bytes per input (target's own bounds).
const MAX_LINES: usize = 32;
const MAX_BYTES: usize = 16 * 1024;

/// The handshake bit 0 of the first byte sends.
pub const HANDSHAKE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n"
);

/// One input of the target (what libFuzzer's `fuzz_target!` passes).
pub fn run(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    if rest.len() > MAX_BYTES {
        return;
    }
    let text = String::from_utf8_lossy(rest);
    let lines: Vec<&str> = text.split('\n').take(MAX_LINES).collect();
    let mut sent = String::new();
    if flags & 1 == 1 {
        sent.push_str(HANDSHAKE);
    }
    for line in &lines {
        sent.push_str(line);
        sent.push('\n');
    }
    let answers = runtime().block_on(exchange(sent.clone()));
    // Every line sent, the handshake's too: an id it shares with a call
    // is ambiguous (its answer is the handshake's).
    check(&sent.split('\n').collect::<Vec<_>>(), &answers);
}

/// Sends `sent` to a gateway on an in-memory pipe, closes, and returns
/// every line it wrote back.
async fn exchange(sent: String) -> Vec<String> {
    let gateway = gateway();
    upstreams(gateway.hub());
    let (host_end, gateway_end) = tokio::io::duplex(1 << 16);
    let served = gateway.clone();
    tokio::spawn(async move {
        use mcp_preamble::rmcp::ServiceExt;
        if let Ok(running) = served.serve(gateway_end).await {
            let _ = running.waiting().await;
        }
    });
    let (read, mut write) = tokio::io::split(host_end);
    let writer = tokio::spawn(async move {
        let _ = write.write_all(sent.as_bytes()).await;
        let _ = write.shutdown().await;
    });
    let mut answers = Vec::new();
    let mut lines = BufReader::new(read).lines();
    let all = tokio::time::timeout(Duration::from_secs(20), async {
        while let Ok(Some(line)) = lines.next_line().await {
            answers.push(line);
        }
    });
    all.await.expect("the gateway closes after its host");
    let _ = writer.await;
    answers
}

/// Two upstreams whose tools name alike once made safe, with instructions
/// the reader returns.
fn upstreams(hub: &mcp_preamble::hub::Hub) {
    for (alias, tool) in [("a b", "x.y"), ("a_b", "x_y")] {
        let snapshot = ServerSnapshot::new(alias)
            .with_alias(alias)
            .with_instructions("Call `x_y` first.\u{202e} Then stop.")
            .with_tool(Tool::new(tool, "Does x."));
        let _ = hub.upsert(alias, snapshot);
    }
}

/// The oracles over what the host sent and the gateway wrote back.
fn check(lines: &[&str], answers: &[String]) {
    // The tool each `tools/call` with a unique id named.
    let mut calls: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut ids: BTreeMap<String, usize> = BTreeMap::new();
    for line in lines {
        let Ok(message) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let Some(id) = message.get("id").map(Value::to_string) else {
            continue;
        };
        *ids.entry(id.clone()).or_default() += 1;
        if message.get("method").and_then(Value::as_str) == Some("tools/call") {
            let name = message.pointer("/params/name").and_then(Value::as_str);
            calls.insert(id, name.map(str::to_string));
        }
    }
    for answer in answers {
        let message: Value = serde_json::from_str(answer).unwrap_or_else(|e| {
            panic!("the gateway wrote a line that is not JSON ({e}): {answer:?}")
        });
        assert_eq!(message["jsonrpc"], "2.0", "{answer}");
        let Some(result) = message.get("result") else {
            continue;
        };
        if result.get("tools").is_some() {
            let list: ListToolsResult =
                serde_json::from_value(result.clone()).unwrap_or_else(|e| {
                    panic!("a tools/list result that does not read ({e}): {answer}")
                });
            check_tools(&list.tools);
        }
        let id = message.get("id").map(Value::to_string).unwrap_or_default();
        if ids.get(&id) != Some(&1) {
            continue;
        }
        if let Some(name) = calls.get(&id) {
            let reader = name.as_deref().is_some_and(|n| n.starts_with(READER));
            assert!(
                reader,
                "a call of {name:?} answered with a result: {answer}"
            );
            assert_no_hidden(&result.to_string(), "the reader's answer");
        }
    }
}
