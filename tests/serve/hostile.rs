//! `mcp-preamble serve` in front of hostile upstreams (`tests/servers/gateway-hostile.mjs`), driven over
//! its stdio with raw JSON-RPC: what reaches the host is sanitized and within `Limits`, an upstream's
//! stderr reaches the log inert and attributed, a `list_changed` flood is paced, and a crash loop is given
//! up (issue 35, items 3 and 4).
#![cfg(feature = "cli")]

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::gateway::{Gateway, node, wait_until};
use serde_json::{Value, json};

fn scratch(name: &str) -> PathBuf {
    common::gateway::scratch("serve-hostile", name)
}

fn hostile(mode: &str) -> Value {
    node("gateway-hostile.mjs", json!({"MODE": mode}))
}

/// A gateway on `servers`, logging to `dir/gateway.log`.
fn start(dir: &Path, servers: Value) -> Gateway {
    let config = dir.join("mcp.json");
    std::fs::write(&config, json!({"mcpServers": servers}).to_string()).unwrap();
    let log = dir.join("gateway.log");
    // Every upstream waited for (as the tests read their tools at once), its state in `dir`.
    let state = dir.join("state");
    Gateway::start(&[
        "--config",
        config.to_str().unwrap(),
        "--log",
        log.to_str().unwrap(),
        "--ready-within",
        "30",
        "--state-dir",
        state.to_str().unwrap(),
    ])
}

fn log_of(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("gateway.log")).unwrap_or_default()
}

/// Characters a model reads and a person does not see: tag characters,
/// bidi controls, zero-width and other format characters, C0/C1 controls.
fn is_hidden(c: char) -> bool {
    matches!(c,
        '\u{e0000}'..='\u{e007f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        | '\u{200b}'..='\u{200f}' | '\u{feff}' | '\u{80}'..='\u{9f}')
        || (c.is_control() && c != '\n' && c != '\t')
}

#[test]
fn hidden_characters_in_schemas_never_reach_the_host() {
    let dir = scratch("schema");
    let mut g = start(&dir, json!({"evil": hostile("schema")}));
    let tools = g.tools();
    let find = tools.iter().find(|t| t["name"] == "evil__find").unwrap();
    let served = serde_json::to_string(&tools).unwrap();
    let hidden: Vec<char> = served.chars().filter(|c| is_hidden(*c)).collect();
    assert!(hidden.is_empty(), "{hidden:?} in {served}");
    // What was visible is served as sent.
    let schema = &find["inputSchema"];
    assert_eq!(schema["title"], "Find");
    let query = &schema["properties"]["query"];
    assert_eq!(query["description"], "What to find. gnp.exe");
    assert_eq!(query["default"], "all");
    assert_eq!(query["examples"], json!(["x"]));
    assert_eq!(
        schema["properties"]["mode"]["enum"],
        json!(["fast", "slow"])
    );
    assert_eq!(schema["properties"]["mode"]["title"], "Mode");
    assert_eq!(schema["required"], json!(["query"]));
    assert_eq!(find["description"], "Find things.");
}

#[test]
fn an_upstream_with_8_mib_of_instructions_is_served_within_the_limits() {
    let dir = scratch("huge");
    let mut g = start(&dir, json!({"big": hostile("huge")}));
    let limit = 64 * 1024;
    assert!(g.instructions.len() <= limit, "{}", g.instructions.len());
    let read = g.request(
        "tools/call",
        json!({"name": "mcp_preamble__instructions", "arguments": {"server": "big"}}),
    );
    let text = read["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{read}"));
    assert!(text.starts_with("Use the tools."), "{read}");
    assert!(
        text.len() <= limit,
        "the reader returned {} bytes",
        text.len()
    );
    let tools = g.tools();
    let wordy = tools.iter().find(|t| t["name"] == "big__wordy").unwrap();
    let description = wordy["description"].as_str().unwrap();
    assert!(description.len() <= 16 * 1024, "{}", description.len());
    // A schema over 64 KiB is not read: the tool is served with the empty object schema.
    let wide = tools.iter().find(|t| t["name"] == "big__wide").unwrap();
    assert_eq!(wide["inputSchema"], json!({"type": "object"}));
    // Each cut is in the log, with the server's name.
    wait_until("the limits logged", Duration::from_secs(10), || {
        let log = log_of(&dir);
        [
            "instructions_bytes",
            "tool_description_bytes",
            "limit schema",
        ]
        .iter()
        .all(|hit| {
            log.lines()
                .any(|l| l.contains(hit) && l.contains("upstream=big"))
        })
    });
}

#[test]
fn an_upstreams_stderr_reaches_the_log_inert_and_attributed() {
    let dir = scratch("stderr");
    let servers = json!({
        "evil": hostile("stderr"),
        // Escapes on stderr, then exit 3 during the handshake: never started.
        "dead": node("hostile.mjs", json!({"MODE": "exit"})),
    });
    let _g = start(&dir, servers);
    let ours = |l: &&str| l.contains("upstream{alias=evil}") && l.contains("stderr: ");
    wait_until("evil's stderr logged", Duration::from_secs(10), || {
        log_of(&dir).lines().filter(ours).count() >= 3
    });
    wait_until("dead's failure logged", Duration::from_secs(10), || {
        log_of(&dir).contains("server not started")
    });
    let log = log_of(&dir);
    let raw: Vec<char> = log.chars().filter(|c| is_hidden(*c)).collect();
    assert!(raw.is_empty(), "{raw:?} in the log:\n{log}");
    // One stderr line, one log line, named after its upstream.
    let lines: Vec<&str> = log.lines().filter(ours).collect();
    assert_eq!(lines.len(), 3, "{log}");
    assert!(
        lines[0].contains("stderr: starting\\x1b[2K\\x0d\\x1b[32m"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].ends_with(
            "stderr: 2026-01-01T00:00:00.000000Z  INFO mcp_preamble: all upstreams verified OK"
        ),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].contains("name \\u{202e}txt.exe\\u{202c} and \\u{9b}2K c1"),
        "{}",
        lines[2]
    );
    // No line of the log is one the upstream wrote.
    for line in log.lines() {
        assert!(!line.starts_with("2026-01-01T00:00:00.000000Z"), "{line}");
        assert!(
            !line.starts_with("fatal") && !line.starts_with("name "),
            "{line}"
        );
        if line.contains("verified OK") || line.contains("all servers OK") {
            assert!(
                line.contains("upstream{alias=") || line.contains("upstream=dead"),
                "{line}"
            );
        }
    }
}

#[test]
fn an_upstream_flooding_list_changed_reaches_the_host_paced_and_on_its_last_state() {
    let dir = scratch("flood");
    let mut g = start(&dir, json!({"flood": hostile("flood")}));
    assert!(g.names().contains(&"flood__flood".to_string()));
    g.take_list_changes();
    let started = Instant::now();
    let n = 3000;
    let answer = g.request(
        "tools/call",
        json!({"name": "flood__flood", "arguments": {"n": n}}),
    );
    assert_eq!(
        answer["result"]["content"][0]["text"],
        format!("v{n}"),
        "{answer}"
    );
    let last = format!("flood__v{n}");
    wait_until("the last state served", Duration::from_secs(60), || {
        g.names().contains(&last)
    });
    // Time for a notification still paced to arrive.
    std::thread::sleep(Duration::from_millis(600));
    let told = g.take_list_changes();
    let elapsed = started.elapsed();
    // At most one per 250 ms of the flood, and at least the last one.
    let allowed = (elapsed.as_millis() / 250) as usize + 2;
    assert!(told >= 1, "no list_changed reached the host");
    assert!(
        told <= allowed,
        "{told} list_changed in {elapsed:?} (at most {allowed})"
    );
    let upstream: Vec<String> = (g.names().into_iter())
        .filter(|n| n.starts_with("flood__"))
        .collect();
    assert_eq!(upstream, ["flood__flood", last.as_str()]);
}

#[test]
fn a_crash_looping_upstream_is_given_up() {
    let dir = scratch("crash");
    let spawns = dir.join("spawns.log");
    let mut looping = hostile("crash");
    looping["env"]["SPAWN_LOG"] = json!(spawns.to_str().unwrap());
    let mut g = start(&dir, json!({"loop": looping, "good": hostile("schema")}));
    // The library's line, then the gateway's state line after it.
    wait_until("the gateway gives up", Duration::from_secs(60), || {
        let log = log_of(&dir);
        log.contains("gave up on the upstream") && log.contains("loop: gone (gave_up")
    });
    let log = log_of(&dir);
    let gone: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("loop: gone (gave_up"))
        .collect();
    assert_eq!(gone.len(), 1, "{log}");
    assert!(gone[0].contains("upstream=loop"), "{}", gone[0]);
    let count = || std::fs::read_to_string(&spawns).unwrap().lines().count();
    // The first start and five restarts (the default budget), then no more.
    assert_eq!(count(), 6, "{log}");
    let names = g.names();
    assert!(!names.iter().any(|n| n.starts_with("loop__")), "{names:?}");
    assert!(names.contains(&"good__find".to_string()), "{names:?}");
    assert!(g.take_list_changes() >= 1);
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(count(), 6, "restarted after giving up");
}
