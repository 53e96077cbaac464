//! `wrap_relay`: `mcp-preamble wrap`'s relay (`serve::Wrapper`) between a
//! host and one upstream, both scripted by the input, over in-memory pipes.
//!
//! The input, read as UTF-8 (lossy), is split at its first line `---`: the
//! lines before are the host's (sent in order, then the host closes); the
//! lines after are the upstream's script. The upstream answers each request
//! it is sent (a line with `id` and `method`) with the next script lines:
//! lines that are not a response (notifications, its own requests, garbage)
//! go out as they are, up to the first response (an `id`, no `method`),
//! which goes out under the id of the request it answers (so the wrapper's own `tools/list` requests meet
//! the script too). With the script spent, a request is answered with an
//! empty result. The first byte's bit 0 prepends a valid `initialize` to the
//! host's lines.
//!
//! Oracles: the relay ends within 20 s of the host closing; every line the
//! wrapper writes to the host is JSON; an answer to the host's `initialize`
//! carries instructions within Claude Code's 2,048 UTF-16 units and free of
//! what sanitizing removes; an answer to the host's `tools/list` lists no
//! tool the policy denies (`void_*`) and no description with what
//! sanitizing removes.

use std::time::Duration;

use mcp_preamble::Assembler;
use mcp_preamble::serve::{ServeAs, Wrapper, relay_streams};
use mcp_preamble::settings::Settings;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

use crate::assert_no_hidden;
use crate::gateway::runtime;

/// Most lines and bytes per input (target's own bounds).
const MAX_LINES: usize = 32;
const MAX_BYTES: usize = 16 * 1024;

/// The policy the wrapper runs under.
const POLICY: &str = "version = 1\n[servers.billing.tools]\ndeny = [\"void_*\"]\n";

/// The `initialize` bit 0 of the first byte sends.
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}"#;

/// One input of the target (what libFuzzer's `fuzz_target!` passes).
pub fn run(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    if rest.len() > MAX_BYTES {
        return;
    }
    let text = String::from_utf8_lossy(rest);
    let mut host: Vec<String> = Vec::new();
    if flags & 1 == 1 {
        host.push(INITIALIZE.to_string());
    }
    let mut script: Vec<String> = Vec::new();
    let mut upstream = false;
    for line in text.split('\n').take(MAX_LINES) {
        match (upstream, line == "---") {
            (false, true) => upstream = true,
            (false, false) => host.push(line.to_string()),
            (true, _) => script.push(line.to_string()),
        }
    }
    let written = runtime().block_on(exchange(&host, script));
    check(&host, &written);
}

/// Runs the relay on the host's lines and the upstream's script; every line
/// it wrote to the host.
async fn exchange(host: &[String], script: Vec<String>) -> Vec<String> {
    let settings = Settings::from_str(POLICY, "policy.toml").expect("the policy reads");
    let assembler = Assembler::from_settings(&settings).expect("an assembler");
    let wrapper = Wrapper::new(assembler, ServeAs::ClaudeCode)
        .expect("a wrapper")
        .alias("billing");
    let (host_side, wrap_host) = tokio::io::duplex(1 << 16);
    let (up_side, wrap_up) = tokio::io::duplex(1 << 16);
    tokio::spawn(upstream(up_side, script));
    let relay = tokio::spawn(async move {
        let (host_in, host_out) = tokio::io::split(wrap_host);
        let (up_out, up_in) = tokio::io::split(wrap_up);
        relay_streams(&wrapper, host_in, host_out, up_out, up_in).await
    });
    let (read, mut write) = tokio::io::split(host_side);
    let sent: String = host.iter().map(|l| format!("{l}\n")).collect();
    let _ = write.write_all(sent.as_bytes()).await;
    // The host waits for an answer to each of its requests (the upstream
    // answers every request it is sent), at most 3 s, then closes.
    let expected = host.iter().map(|l| requests(l)).sum::<usize>();
    let mut written = Vec::new();
    let mut lines = BufReader::new(read).lines();
    let answered = tokio::time::timeout(Duration::from_secs(3), async {
        let mut answers = 0;
        while answers < expected {
            let Ok(Some(line)) = lines.next_line().await else {
                return;
            };
            answers += usize::from(is_answer(&line));
            written.push(line);
        }
    });
    let _ = answered.await;
    let _ = write.shutdown().await;
    let rest = tokio::time::timeout(Duration::from_secs(20), async {
        while let Ok(Some(line)) = lines.next_line().await {
            written.push(line);
        }
    });
    rest.await.expect("the wrapper closes after its host");
    let _ = relay.await;
    written
}

/// How many requests (objects with an `id` and a `method`) a host line holds.
fn requests(line: &str) -> usize {
    let is_request = |v: &Value| v.get("id").is_some() && v.get("method").is_some();
    match serde_json::from_str::<Value>(line) {
        Ok(Value::Array(all)) => all.iter().filter(|v| is_request(v)).count(),
        Ok(v) => usize::from(is_request(&v)),
        Err(_) => 0,
    }
}

/// Whether a line to the host answers a request (an `id`, no `method`).
fn is_answer(line: &str) -> bool {
    serde_json::from_str::<Value>(line)
        .is_ok_and(|v| v.get("id").is_some() && v.get("method").is_none())
}

/// The scripted upstream: each request it reads is answered by the next
/// script lines (see the module docs).
async fn upstream(side: DuplexStream, script: Vec<String>) {
    let (read, mut write) = tokio::io::split(side);
    let mut lines = BufReader::new(read).lines();
    let mut script = script.into_iter();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(Value::Object(request)) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let (Some(id), true) = (request.get("id"), request.contains_key("method")) else {
            continue;
        };
        let mut out = String::new();
        let answer = loop {
            let Some(next) = script.next() else {
                break json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string();
            };
            match serde_json::from_str::<Value>(&next) {
                Ok(Value::Object(mut m)) if m.contains_key("id") && !m.contains_key("method") => {
                    m.insert("id".into(), id.clone());
                    break Value::Object(m).to_string();
                }
                _ => {
                    out.push_str(&next);
                    out.push('\n');
                }
            }
        };
        out.push_str(&answer);
        out.push('\n');
        if write.write_all(out.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// The oracles over what the host sent and the wrapper wrote back.
fn check(host: &[String], written: &[String]) {
    // The method of each host request, by id (the last one sent under it).
    let mut methods = std::collections::BTreeMap::new();
    for line in host {
        if let Ok(Value::Object(m)) = serde_json::from_str::<Value>(line)
            && let (Some(id), Some(Value::String(method))) = (m.get("id"), m.get("method"))
        {
            methods.insert(id.to_string(), method.clone());
        }
    }
    for line in written {
        let message: Value = serde_json::from_str(line).unwrap_or_else(|e| {
            panic!("the wrapper wrote a line that is not JSON ({e}): {line:?}")
        });
        let Some(id) = message.get("id") else {
            continue;
        };
        let Some(result) = message.get("result") else {
            continue;
        };
        match methods.get(&id.to_string()).map(String::as_str) {
            Some("initialize") => {
                if let Some(text) = result.get("instructions").and_then(Value::as_str) {
                    let units = text.encode_utf16().count();
                    assert!(
                        units <= 2048,
                        "instructions of {units} UTF-16 units: {text:?}"
                    );
                    assert_no_hidden(text, "the wrapped instructions");
                }
            }
            Some("tools/list") => {
                let tools = result.get("tools").and_then(Value::as_array);
                for tool in tools.into_iter().flatten() {
                    let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
                    assert!(!name.starts_with("void_"), "a denied tool listed: {line}");
                    if let Some(d) = tool.get("description").and_then(Value::as_str) {
                        assert_no_hidden(d, "a wrapped tool description");
                    }
                }
            }
            _ => {}
        }
    }
}
