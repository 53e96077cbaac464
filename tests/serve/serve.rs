//! `mcp-preamble serve` driven over its stdio with raw JSON-RPC: faults
//! that stay with their upstream, and a held change approved while the
//! gateway runs. (The official SDK clients are in `serve_clients.rs`.)
#![cfg(feature = "cli")]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::ensure_npm;
use common::gateway::{Gateway, node, wait_until};
use serde_json::{Value, json};

fn scratch(name: &str) -> PathBuf {
    common::gateway::scratch("serve", name)
}

/// `mcp-preamble ARGS…` with `env`, initialized; the answer is `notes[0]`.
fn started(args: &[&str], env: &[(&str, &str)]) -> Gateway {
    let mut g = Gateway::command(args, env);
    let init = g.initialize();
    assert!(init["result"]["instructions"].is_string(), "{init}");
    g.notes.push(init);
    g
}

/// `serve ARGS…`, waiting for every upstream before the host is served
/// (these tests read every upstream's tools at once; a Node server on a
/// loaded machine can take longer than the default 5 s).
fn start(args: &[&str]) -> Gateway {
    started(&[&["serve", "--ready-within", "30"], args].concat(), &[])
}

#[test]
fn an_upstream_killed_mid_call_fails_its_call_only_and_comes_back() {
    ensure_npm();
    let dir = scratch("killed");
    let config = dir.join("mcp.json");
    let servers = json!({"mcpServers": {
        "slow": node("slow-tool.mjs", json!({})),
        "billing": node("invoice.mjs", json!({})),
        // Escapes on stderr, then exit 3: never started, never on stdout.
        "broken": node("hostile.mjs", json!({"MODE": "exit"})),
    }});
    std::fs::write(&config, servers.to_string()).unwrap();
    let mut g = start(&["--config", config.to_str().unwrap()]);
    let tools = g.names();
    assert!(tools.contains(&"slow__wait".to_string()), "{tools:?}");
    assert!(
        !tools.iter().any(|t| t.starts_with("broken__")),
        "{tools:?}"
    );

    let pid = g.text("slow__pid", json!({}));
    let waiting = g.ask(
        "tools/call",
        json!({"name": "slow__wait", "arguments": {"ms": 30000}}),
    );
    // A call in flight holds up no other.
    assert_eq!(
        g.text("billing__list_periods", json!({})),
        "2026-07, 2026-08"
    );
    std::thread::sleep(Duration::from_millis(200));
    let killed = Command::new("kill").args(["-9", &pid]).status().unwrap();
    assert!(killed.success());
    let failed = g.answer(waiting, Duration::from_secs(10));
    let message = failed["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("{failed}"));
    assert!(message.contains("upstream \"slow\""), "{message}");
    assert_eq!(failed["error"]["data"]["upstream"], "slow");

    // The others keep answering, while the dead one is restarted.
    assert_eq!(
        g.text("billing__list_periods", json!({})),
        "2026-07, 2026-08"
    );
    let started = Instant::now();
    let mut again = String::new();
    wait_until("a restart", Duration::from_secs(10), || {
        let answer = g.call("slow__pid", json!({}));
        if let Some(t) = answer["result"]["content"][0]["text"].as_str() {
            again = t.to_string();
            return true;
        }
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.starts_with("upstream \"slow\""), "{answer}");
        false
    });
    assert_ne!(again, pid, "a new process");
    // Restart::new(): 250 ms before the first attempt (jittered down to half).
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // The upstream's own answers come back as they were sent.
    let failing = g.call("slow__fail", json!({}));
    assert_eq!(failing["result"]["isError"], true, "{failing}");
    let unknown = g.call("slow__nope", json!({}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn pin(args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
        .arg("pin")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_held_change_is_served_only_once_approved_and_the_running_gateway_hears_of_it() {
    ensure_npm();
    let dir = scratch("held");
    let text = write(&dir, "chg.txt", "Call first before second. Reviewed text.");
    // ttlMs 200: the hub asks server/discover again, and sees the new text.
    let servers = json!({"mcpServers": {
        "chg": node("changing.mjs", json!({"INSTRUCTIONS_FILE": text, "TTL_MS": "200"})),
    }});
    let config = write(&dir, "mcp.json", &servers.to_string());
    let lock = dir.join("lock.json").display().to_string();
    let policy = write(
        &dir,
        "policy.toml",
        "version = 1\n[defaults]\non_change = \"hold\"\n",
    );
    let log = dir.join("serve.log");
    pin(&["--config", &config, "--lock", &lock]);

    let mut g = start(&[
        "--config",
        &config,
        "--policy",
        &policy,
        "--lock",
        &lock,
        "--log",
        log.to_str().unwrap(),
    ]);
    let reader = json!({"server": "chg"});
    assert!(
        g.notes[0]["result"]["instructions"]
            .as_str()
            .unwrap()
            .contains("Reviewed text.")
    );
    // `second` comes 500 ms after the first tools/list: one change, then quiet.
    wait_until("chg__second", Duration::from_secs(10), || {
        g.names().contains(&"chg__second".into())
    });
    g.list_changes(Duration::from_millis(500));

    std::fs::write(&text, "Call first before second. Changed text.").unwrap();
    let logged = || std::fs::read_to_string(&log).unwrap_or_default();
    wait_until("the change held", Duration::from_secs(10), || {
        logged().contains("awaits review")
    });
    assert!(logged().contains("chg"), "{}", logged());
    let served = g.text("mcp_preamble__instructions", reader.clone());
    assert_eq!(served, "Call first before second. Reviewed text.");
    assert_eq!(
        g.list_changes(Duration::from_millis(300)),
        0,
        "nothing new was served"
    );

    // The log's hint runs as printed.
    let hint = logged()
        .lines()
        .find_map(|l| {
            l.split_once("approve it with: ")
                .map(|(_, c)| c.to_string())
        })
        .unwrap();
    let words = shell_words(&hint);
    assert_eq!(words[..2], ["mcp-preamble", "pin"], "{hint}");
    assert_eq!(words.last().map(String::as_str), Some("chg"), "{hint}");
    let args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
    pin(&args[1..]);
    wait_until("the approval", Duration::from_secs(10), || {
        g.text("mcp_preamble__instructions", reader.clone())
            .contains("Changed text.")
    });
    assert_eq!(
        g.list_changes(Duration::from_millis(800)),
        1,
        "one list_changed"
    );
    assert!(logged().contains("reloaded"), "{}", logged());
}

/// `line` split as a POSIX shell splits plain and single-quoted words.
fn shell_words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut quoted, mut any) = (Vec::new(), String::new(), false, false);
    for c in line.chars() {
        match c {
            '\'' => (quoted, any) = (!quoted, true),
            ' ' if !quoted => {
                if any || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                any = false;
            }
            c => word.push(c),
        }
    }
    if any || !word.is_empty() {
        words.push(word);
    }
    words
}

/// The README's host configs (Claude Desktop / Claude Code / Cursor, VS Code), read
/// as those hosts read them, start a working gateway.
#[test]
fn the_readme_configs_start_the_gateway() {
    ensure_npm();
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let section = &readme[readme.find("## `serve`").unwrap()..];
    let section = &section[..section.find("\n## ").unwrap()];
    let blocks: Vec<&str> = section
        .split("```json\n")
        .skip(1)
        .map(|b| &b[..b.find("```").unwrap()])
        .collect();
    assert_eq!(
        blocks.len(),
        2,
        "Claude Desktop / Claude Code / Cursor and VS Code"
    );
    let dir = scratch("readme");
    let upstream = json!({"mcpServers": {"billing": node("invoice.mjs", json!({}))}});
    let upstream = write(&dir, "mcp.json", &upstream.to_string());
    std::fs::create_dir_all(dir.join(".vscode")).unwrap();
    std::fs::create_dir_all(dir.join(".cursor")).unwrap();
    for (block, file) in [
        (blocks[0], "claude_desktop_config.json"),
        (blocks[0], ".cursor/mcp.json"),
        (blocks[1], ".vscode/mcp.json"),
    ] {
        let host = write(&dir, file, block);
        let config = mcp_preamble::files::McpConfig::from_path(&host).unwrap();
        let entry = &config.servers[0];
        assert_eq!(entry.alias, "preamble");
        let mcp_preamble::files::ServerTransport::Stdio { command, args, .. } = &entry.transport
        else {
            panic!("{file}: a stdio server");
        };
        assert_eq!(command, "mcp-preamble");
        // The host's paths, pointed at this test's: the VS Code one is ours already.
        let mut args = args.clone();
        let at = args.iter().position(|a| a == "--config").unwrap() + 1;
        if file.starts_with(".vscode") {
            assert_eq!(
                Path::new(&args[at]),
                Path::new(&upstream),
                "${{workspaceFolder}} expanded"
            );
        }
        args[at] = upstream.clone();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut g = started(&args, &[]);
        assert_eq!(
            g.text("billing__list_periods", json!({})),
            "2026-07, 2026-08",
            "{file}"
        );
    }
}

#[test]
fn a_hanging_call_times_out_and_a_host_cancel_reaches_the_upstream() {
    ensure_npm();
    let dir = scratch("hanging");
    let servers = json!({"mcpServers": {
        "slow": node("slow-tool.mjs", json!({})),
        "billing": node("invoice.mjs", json!({})),
    }});
    let config = write(&dir, "mcp.json", &servers.to_string());
    let mut g = start(&["--config", &config, "--call-timeout", "1"]);
    let started = Instant::now();
    let hung = g.call("slow__wait", json!({"ms": 20000}));
    let message = hung["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("{hung}"));
    assert!(
        message.starts_with("upstream \"slow\" did not answer \"wait\" within 1 s"),
        "{message}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        g.text("billing__list_periods", json!({})),
        "2026-07, 2026-08"
    );
    // The timeout cancelled the upstream request: the server saw it.
    wait_until("the upstream cancel", Duration::from_secs(5), || {
        g.text("slow__cancelled", json!({})) == "1"
    });

    // The host's own cancel goes upstream too.
    let waiting = g.ask(
        "tools/call",
        json!({"name": "slow__wait", "arguments": {"ms": 800}}),
    );
    std::thread::sleep(Duration::from_millis(200));
    g.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": waiting, "reason": "the user stopped it"}}),
    );
    wait_until("the host's cancel upstream", Duration::from_secs(5), || {
        g.text("slow__cancelled", json!({})) == "2"
    });
}

/// Each mention of `tool` in `text` with the name characters before it
/// (`billing__get_invoice`, or a bare `get_invoice`): what a model could
/// take for a tool name.
fn mentions<'a>(text: &'a str, tool: &str) -> Vec<&'a str> {
    let mut found = Vec::new();
    for (at, _) in text.match_indices(tool) {
        let start = text[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .map_or(0, |i| i + 1);
        found.push(&text[start..at + tool.len()]);
    }
    found
}

#[test]
fn served_prose_names_listed_tools_and_the_policy_filters_and_overrides_tools() {
    ensure_npm();
    let dir = scratch("policy");
    let billing = write(
        &dir,
        "billing.md",
        "Always call `get_invoice` after list_periods() to check the period.",
    );
    let audit = write(
        &dir,
        "audit.md",
        "Call list_periods() for the open periods first.\n\nUse `get_invoice` for one invoice of an audit.",
    );
    let config = dir.join("mcp.json");
    let servers = json!({"mcpServers": {
        "billing": node("invoice.mjs", json!({"INSTRUCTIONS_FILE": billing})),
        "audit": node("invoice.mjs", json!({"INSTRUCTIONS_FILE": audit})),
    }});
    std::fs::write(&config, servers.to_string()).unwrap();
    let policy = write(
        &dir,
        "policy.toml",
        "version = 1\n[servers.audit.tools]\ndeny = [\"list_*\"]\n\
         [servers.audit.tool.get_invoice]\ndescription = \"One audited invoice.\"\n\
         title = \"Audited invoice\"\nannotations = { readOnlyHint = true }\n",
    );
    let mut g = start(&["--config", config.to_str().unwrap(), "--policy", &policy]);
    let text = g.notes[0]["result"]["instructions"]
        .as_str()
        .unwrap()
        .to_string();
    let answer = g.request("tools/list", json!({}));
    let tools = answer["result"]["tools"].as_array().unwrap().clone();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();

    // The prose names tools as the gateway lists them.
    assert!(
        text.contains("call `billing__get_invoice` after billing__list_periods()"),
        "{text}"
    );
    assert!(
        text.contains("Use `audit__get_invoice` for one invoice"),
        "{text}"
    );
    // The sentence about the hidden tool is gone; no name the gateway does
    // not list is left in the text.
    assert!(!text.contains("open periods"), "{text}");
    for tool in ["get_invoice", "list_periods"] {
        for name in mentions(&text, tool) {
            assert!(names.contains(&name), "{name} is not listed: {text}");
        }
    }
    // The reader tool (issue 34): without the sentence the section removed
    // for the hidden tool, naming the kept tool as served.
    let read = g.text("mcp_preamble__instructions", json!({"server": "audit"}));
    assert_eq!(
        read, "Use `audit__get_invoice` for one invoice of an audit.",
        "{read}"
    );
    assert!(!read.contains("list_periods"), "{read}");

    // tools/list: filtered, overridden.
    assert!(names.contains(&"billing__list_periods"), "{names:?}");
    assert!(!names.contains(&"audit__list_periods"), "{names:?}");
    let audited = tools
        .iter()
        .find(|t| t["name"] == "audit__get_invoice")
        .unwrap_or_else(|| panic!("{names:?}"));
    assert_eq!(audited["description"], "One audited invoice.");
    assert_eq!(audited["title"], "Audited invoice");
    assert_eq!(audited["annotations"]["readOnlyHint"], true);
    let plain = tools
        .iter()
        .find(|t| t["name"] == "billing__get_invoice")
        .unwrap();
    assert_eq!(plain["description"], "Get an invoice by id.");

    // tools/call: the hidden tool is refused as hidden; the rest are served.
    let refused = g.call("audit__list_periods", json!({}));
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(
        refused["error"]["message"],
        "tool \"audit__list_periods\" is not served: the operator's policy hides \"list_periods\" of upstream \"audit\""
    );
    assert_eq!(refused["error"]["data"]["upstream"], "audit");
    assert_eq!(
        g.text("audit__get_invoice", json!({"id": "7"})),
        "invoice 7"
    );
    assert_eq!(
        g.text("billing__list_periods", json!({})),
        "2026-07, 2026-08"
    );
    let unknown = g.call("audit__nope", json!({}));
    assert_eq!(
        unknown["error"]["message"], "unknown tool \"audit__nope\"",
        "{unknown}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--as claude-code --name team` (issue 34, item 4): the prose names each
/// tool as Claude Code shows it (`mcp__team__` and the served name), the
/// tools are served under their own gateway names, the section has no
/// tool list (Claude Code sends the tools itself), and the reader, listed
/// only once some text is shortened, names tools as the prose does.
#[test]
fn under_claude_code_the_prose_names_tools_as_the_host_shows_them() {
    ensure_npm();
    let dir = scratch("shown");
    let billing = write(
        &dir,
        "billing.md",
        "Always call `get_invoice` after list_periods() to check the period.",
    );
    let config = dir.join("mcp.json");
    let servers = json!({"mcpServers": {
        "billing": node("invoice.mjs", json!({"INSTRUCTIONS_FILE": billing})),
    }});
    std::fs::write(&config, servers.to_string()).unwrap();
    let args = ["--config", config.to_str().unwrap(), "--as", "claude-code"];
    let mut g = start(&[&args[..], &["--name", "team"]].concat());
    let text = g.notes[0]["result"]["instructions"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        text.contains(
            "call `mcp__team__billing__get_invoice` after mcp__team__billing__list_periods()"
        ),
        "{text}"
    );
    assert!(!text.contains("Tools:"), "{text}");
    let answer = g.request("tools/list", json!({}));
    let names: Vec<&str> = answer["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["billing__list_periods", "billing__get_invoice"]);
    // Not listed, as nothing was shortened, but it answers when called.
    assert_eq!(
        g.text("mcp_preamble__instructions", json!({"server": "billing"})),
        "Always call `mcp__team__billing__get_invoice` after mcp__team__billing__list_periods() to check the period."
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every message up to the answers to all of `ids`, in the order written.
fn until_answered(g: &mut Gateway, ids: &[u64], within: Duration) -> Vec<Value> {
    let end = Instant::now() + within;
    let mut seen = std::mem::take(&mut g.notes);
    let mut left: Vec<Value> = ids.iter().map(|id| json!(id)).collect();
    while !left.is_empty() {
        let wait = end.saturating_duration_since(Instant::now());
        let line = g
            .lines
            .recv_timeout(wait)
            .unwrap_or_else(|e| panic!("answers to {left:?} within {within:?}: {e}"));
        let message: Value = serde_json::from_str(&line).unwrap();
        left.retain(|id| *id != message["id"]);
        seen.push(message);
    }
    seen
}

/// The host-side progress of one call: (progress, total, message) of every
/// notification under `token` whose message starts with `label`.
fn progress_of(seen: &[Value], token: &Value, label: &str) -> Vec<(f64, f64, String)> {
    seen.iter()
        .filter(|m| m["method"] == "notifications/progress")
        .filter(|m| m["params"]["progressToken"] == *token)
        .filter(|m| m["params"]["message"].as_str().unwrap().starts_with(label))
        .map(|m| {
            let p = &m["params"];
            let text = p["message"].as_str().unwrap().to_string();
            (
                p["progress"].as_f64().unwrap(),
                p["total"].as_f64().unwrap(),
                text,
            )
        })
        .collect()
}

fn steps_call(g: &mut Gateway, tool: &str, token: Value, label: &str, n: u32) -> u64 {
    g.ask(
        "tools/call",
        json!({"name": tool, "arguments": {"n": n, "gap_ms": 15, "label": label},
               "_meta": {"progressToken": token}}),
    )
}

#[test]
fn upstream_progress_reaches_the_call_that_asked_under_its_token_and_nothing_else() {
    ensure_npm();
    let dir = scratch("progress");
    let servers = json!({"mcpServers": {
        "job": node("progress.mjs", json!({})),
        "other": node("progress.mjs", json!({})),
    }});
    let config = write(&dir, "mcp.json", &servers.to_string());
    let log = dir.join("serve.log");
    let args = [
        "serve",
        "--config",
        &config,
        "--log",
        log.to_str().unwrap(),
        "--ready-within",
        "30",
    ];
    let mut g = started(&args, &[("MCP_PREAMBLE_LOG", "debug")]);

    // One call: every step, in order, under the host's token, before the answer.
    let id = steps_call(&mut g, "job__steps", json!("tok"), "a", 5);
    let seen = until_answered(&mut g, &[id], Duration::from_secs(20));
    let expected: Vec<(f64, f64, String)> = (1..=5)
        .map(|i| (f64::from(i), 5.0, format!("a {i}/5")))
        .collect();
    assert_eq!(progress_of(&seen, &json!("tok"), "a"), expected, "{seen:?}");
    assert_eq!(
        seen.last().unwrap()["result"]["content"][0]["text"],
        "a done"
    );
    // Without a token from the host, nothing is relayed.
    let quiet = g.ask(
        "tools/call",
        json!({"name": "job__steps", "arguments": {"n": 3}}),
    );
    let seen = until_answered(&mut g, &[quiet], Duration::from_secs(20));
    assert_eq!(seen.len(), 1, "{seen:?}");

    // Concurrent calls on both upstreams, some under the same host token
    // value (as two hosts of one HTTP gateway may send): each gets its own
    // progress, complete and in order, before its own answer.
    let calls = [
        ("job__steps", json!(7), "a"),
        ("other__steps", json!("7"), "b"),
        ("job__steps", json!(8), "c"),
        ("job__steps", json!(9), "d"),
        ("other__steps", json!(9), "e"),
        ("job__steps", json!(9), "f"),
    ];
    let ids: Vec<u64> = calls
        .iter()
        .map(|(tool, token, label)| steps_call(&mut g, tool, token.clone(), label, 4))
        .collect();
    let seen = until_answered(&mut g, &ids, Duration::from_secs(30));
    for ((_, token, label), id) in calls.iter().zip(&ids) {
        let expected: Vec<(f64, f64, String)> = (1..=4)
            .map(|i| (f64::from(i), 4.0, format!("{label} {i}/4")))
            .collect();
        assert_eq!(
            progress_of(&seen, token, label),
            expected,
            "{label}: {seen:?}"
        );
        let answered = seen.iter().position(|m| m["id"] == json!(id)).unwrap();
        let last = seen
            .iter()
            .rposition(|m| m["params"]["message"] == format!("{label} 4/4"))
            .unwrap();
        assert!(
            last < answered,
            "{label}'s progress after its answer: {seen:?}"
        );
        assert_eq!(
            seen[answered]["result"]["content"][0]["text"],
            format!("{label} done")
        );
    }
    let progress = seen
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .count();
    assert_eq!(
        progress, 24,
        "nothing but the calls' own progress: {seen:?}"
    );

    // An upstream sending progress under tokens it was not given for the
    // call (every small number): dropped, not relayed to a call of
    // another upstream in flight meanwhile.
    let mine = steps_call(&mut g, "job__steps", json!("s"), "s", 6);
    let stray = g.ask(
        "tools/call",
        json!({"name": "other__stray", "arguments": {"n": 100}}),
    );
    let seen = until_answered(&mut g, &[mine, stray], Duration::from_secs(20));
    assert_eq!(progress_of(&seen, &json!("s"), "s").len(), 6, "{seen:?}");
    assert!(
        !seen.iter().any(|m| m["params"]["message"] == "stray"),
        "{seen:?}"
    );

    // Progress after the answer is not relayed: the call is over.
    let late = g.ask(
        "tools/call",
        json!({"name": "job__steps", "arguments": {"n": 2, "label": "l", "late": true},
               "_meta": {"progressToken": "late"}}),
    );
    let seen = until_answered(&mut g, &[late], Duration::from_secs(20));
    assert_eq!(progress_of(&seen, &json!("late"), "l").len(), 2, "{seen:?}");
    let logged = || std::fs::read_to_string(&log).unwrap_or_default();
    let drops = |text: &str| {
        text.matches("progress for no call in flight: dropped")
            .count()
    };
    let before = drops(&logged());
    wait_until(
        "the late notification dropped",
        Duration::from_secs(5),
        || drops(&logged()) > before,
    );
    let _ = g.request("ping", json!({}));
    assert!(
        !g.notes.iter().any(|m| m["params"]["message"] == "l late"),
        "{:?}",
        g.notes
    );
    assert!(
        before >= 100,
        "the stray notifications are logged: {before}"
    );
    assert_eq!(
        g.text("job__steps", json!({"n": 0, "label": "still"})),
        "still done"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_cancelled_call_reaches_the_upstream_and_its_progress_stops() {
    ensure_npm();
    let dir = scratch("progress-cancel");
    let servers = json!({"mcpServers": {"job": node("progress.mjs", json!({}))}});
    let config = write(&dir, "mcp.json", &servers.to_string());
    let mut g = start(&["--config", &config]);
    let steps = |g: &Gateway| {
        g.notes
            .iter()
            .filter(|m| m["params"]["progressToken"] == "c")
            .count()
    };
    let id = g.ask(
        "tools/call",
        json!({"name": "job__steps", "arguments": {"n": 100, "gap_ms": 50, "label": "c"},
               "_meta": {"progressToken": "c"}}),
    );
    wait_until("two steps relayed", Duration::from_secs(10), || {
        let _ = g.request("ping", json!({}));
        steps(&g) >= 2
    });
    g.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": id, "reason": "the user stopped it"}}),
    );
    wait_until(
        "the upstream saw the cancel",
        Duration::from_secs(5),
        || g.text("job__cancelled", json!({})) == "1",
    );
    // Nothing more of the cancelled call reaches the host: no progress, no answer.
    let relayed = steps(&g);
    std::thread::sleep(Duration::from_millis(300));
    let _ = g.request("ping", json!({}));
    assert_eq!(steps(&g), relayed, "{:?}", g.notes);
    assert!(relayed < 100, "{relayed}");
    assert!(
        !g.notes.iter().any(|m| m["id"] == json!(id)),
        "{:?}",
        g.notes
    );
    // The gateway keeps serving, progress included.
    let again = steps_call(&mut g, "job__steps", json!("again"), "again", 2);
    let seen = until_answered(&mut g, &[again], Duration::from_secs(20));
    assert_eq!(progress_of(&seen, &json!("again"), "again").len(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Our own rmcp client, in process, on a gateway whose upstream was
/// connected by hand (`Hub::connect` with `Gateway::connect_options`, then
/// `Gateway::add`).
mod in_process {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use mcp_preamble::Assembler;
    use mcp_preamble::connect::ConnectOptions;
    use mcp_preamble::rmcp::model::{
        CallToolRequest, CallToolRequestParams, ClientRequest, ProgressNotificationParam,
        ServerResult,
    };
    use mcp_preamble::rmcp::service::{NotificationContext, PeerRequestOptions, RoleClient};
    use mcp_preamble::rmcp::{ClientHandler, ServiceExt};
    use mcp_preamble::serve::{Gateway, ServeAs};

    use super::common::node_entry;

    #[derive(Clone, Default)]
    struct Host(Arc<Mutex<Vec<ProgressNotificationParam>>>);

    impl ClientHandler for Host {
        async fn on_progress(
            &self,
            params: ProgressNotificationParam,
            _context: NotificationContext<RoleClient>,
        ) {
            self.0.lock().unwrap().push(params);
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_rmcp_client_gets_the_progress_of_a_server_added_by_hand() {
        let gateway = Gateway::new(Assembler::new(), ServeAs::Plain).unwrap();
        let hub = gateway.hub().clone();
        let entry = node_entry("job", "progress.mjs", &[]);
        let options = gateway.connect_options(&ConnectOptions::new());
        let live = hub.connect(&entry, &options).await.unwrap();
        gateway.add(live);

        let (near, far) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(far);
        let server = gateway.clone();
        tokio::spawn(async move {
            let running = server.serve((read, write)).await.unwrap();
            let _ = running.waiting().await;
        });
        let host = Host::default();
        let (read, write) = tokio::io::split(near);
        let client = host.clone().serve((read, write)).await.unwrap();

        // Two calls at once, each with the token rmcp gives it.
        let call = |label: &str| {
            let mut params = CallToolRequestParams::new("job__steps");
            let args = serde_json::json!({"n": 3, "label": label, "gap_ms": 10});
            params.arguments = args.as_object().cloned();
            ClientRequest::CallToolRequest(CallToolRequest::new(params))
        };
        let peer = client.peer().clone();
        let a = peer
            .send_request_with_option(call("a"), PeerRequestOptions::no_options())
            .await
            .unwrap();
        let b = peer
            .send_request_with_option(call("b"), PeerRequestOptions::no_options())
            .await
            .unwrap();
        let (ta, tb) = (a.progress_token.clone(), b.progress_token.clone());
        assert_ne!(ta, tb);
        for (handle, label) in [(a, "a"), (b, "b")] {
            let ServerResult::CallToolResult(r) = handle.await_response().await.unwrap() else {
                panic!("{label}: not a tool result");
            };
            let text = serde_json::to_value(&r.content).unwrap()[0]["text"].clone();
            assert_eq!(text, format!("{label} done"));
        }
        // rmcp hands each notification to the handler on a task of its own.
        let seen = || host.0.lock().unwrap().clone();
        let end = std::time::Instant::now() + Duration::from_secs(5);
        while seen().len() < 6 && std::time::Instant::now() < end {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut got: Vec<(String, f64, Option<f64>)> = seen()
            .into_iter()
            .map(|p| (p.message.unwrap(), p.progress, p.total))
            .collect();
        got.sort_by(|x, y| x.0.cmp(&y.0));
        let want: Vec<(String, f64, Option<f64>)> = ["a", "b"]
            .iter()
            .flat_map(|l| (1..=3).map(move |i| (format!("{l} {i}/3"), f64::from(i), Some(3.0))))
            .collect();
        assert_eq!(got, want);
        for p in seen() {
            let mine = if p.message.as_deref().unwrap().starts_with('a') {
                &ta
            } else {
                &tb
            };
            assert_eq!(&p.progress_token, mine, "{p:?}");
        }
        client.cancel().await.unwrap();
        gateway.close().await;
    }
}

/// stdin from a file and stdout on stderr's pipe: the gateway reads and
/// writes them as tokio's (not as its own non-blocking pipes), and serves.
#[test]
fn the_gateway_serves_a_file_on_stdin_and_stdout_shared_with_stderr() {
    let dir = std::env::temp_dir().join(format!("mcp-preamble-serve-{}-files", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("mcp.json");
    std::fs::write(&config, r#"{"mcpServers": {}}"#).unwrap();
    let input = dir.join("in.jsonl");
    let lines = [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"file","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    ];
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(r#"exec "$0" serve --config "$1" --state-dir "$2" < "$3" 2>&1"#)
        .arg(env!("CARGO_BIN_EXE_mcp-preamble"))
        .arg(&config)
        .arg(dir.join("state"))
        .arg(&input)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion""#),
        "{text}"
    );
    assert!(
        text.contains(r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#),
        "{text}"
    );
}

/// `serve --config` reads a hand-written JSONC config (issue 51, item 5): a
/// byte-order mark, CRLF, comments, trailing commas, `${VAR:-default}` and
/// `${VAR}`.
#[test]
fn serve_reads_jsonc_and_claude_code_variables() {
    ensure_npm();
    let dir = scratch("jsonc");
    let text = "\u{feff}{\r\n  // edited by hand\r\n  \"mcpServers\": {\r\n    \"billing\": {\r\n      \"command\": \"${MCP_PREAMBLE_TEST_NODE:-node}\", /* the default */\r\n      \"args\": [\"${MCP_PREAMBLE_TEST_DIR}/invoice.mjs\",],\r\n    },\r\n  },\r\n}\r\n";
    let config = write(&dir, "mcp.json", text);
    let servers = common::servers_dir().display().to_string();
    let mut g = started(
        &["serve", "--config", &config, "--ready-within", "20"],
        &[("MCP_PREAMBLE_TEST_DIR", servers.as_str())],
    );
    let names = g.names();
    assert!(
        names.iter().any(|n| n == "billing__list_periods"),
        "{names:?}"
    );
}

/// Calls (answered by the stdio lane and the upstream's pipe) and lists
/// (answered by rmcp) sent at once, without waiting: every line of stdout
/// is whole JSON-RPC, and each request is answered once, rightly.
#[test]
fn a_burst_of_calls_and_lists_is_answered_whole_and_each_once() {
    ensure_npm();
    let dir = scratch("burst");
    let servers = json!({"mcpServers": {"billing": node("invoice.mjs", json!({}))}});
    let config = write(&dir, "mcp.json", &servers.to_string());
    let mut g = start(&["--config", &config]);
    let mut asked = std::collections::BTreeMap::new();
    for i in 0..40 {
        let arguments = json!({"id": format!("i{i}")});
        let call = g.ask(
            "tools/call",
            json!({"name": "billing__get_invoice", "arguments": arguments}),
        );
        asked.insert(call, Some(format!("invoice i{i}")));
        asked.insert(g.ask("tools/list", json!({})), None);
    }
    let mut answered = std::collections::BTreeMap::new();
    let end = Instant::now() + Duration::from_secs(30);
    while answered.len() < asked.len() {
        let left = end.saturating_duration_since(Instant::now());
        let line = (g.lines.recv_timeout(left)).unwrap_or_else(|e| panic!("{e}: {answered:?}"));
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout is not JSON-RPC ({e}): {line:?}"));
        let Some(id) = message["id"].as_u64() else {
            continue;
        };
        assert!(
            answered.insert(id, message).is_none(),
            "{id} answered twice"
        );
    }
    for (id, text) in &asked {
        let answer = &answered[id];
        match text {
            Some(text) => assert_eq!(answer["result"]["content"][0]["text"], json!(text)),
            None => assert!(answer["result"]["tools"].is_array(), "{answer}"),
        }
    }
    // No answer more: the ping's is the next one.
    let ping = g.ask("ping", json!({}));
    loop {
        let line = g.lines.recv_timeout(Duration::from_secs(10)).unwrap();
        let next: Value = serde_json::from_str(&line).unwrap();
        if next.get("id").is_some() {
            assert_eq!(next["id"], json!(ping), "{next}");
            break;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
