//! `mcp-preamble serve`'s log (issue 34, item 5): at the default level, one line per lifecycle event of a real
//! upstream killed and restarted (started with its pid, connected with its handshake and time, exited with its
//! signal, each restart attempt with its delay, gave up after `--restart-max`), one line per failed call naming the
//! upstream and the tool, a reload; every line a sentence (no Rust type paths, no debug structs); `serve --status`
//! shows each upstream's state.
#![cfg(feature = "cli")]

use crate::common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::gateway::{Gateway, config, node, scratch, wait_until};
use serde_json::json;

fn log_of(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// The lines of `log` about `alias` (its `upstream=` field) that contain `text`.
fn lines<'a>(log: &'a str, alias: &str, text: &str) -> Vec<&'a str> {
    let field = format!("upstream={alias}");
    log.lines()
        .filter(|l| l.contains(&field) && l.contains(text))
        .collect()
}

fn kill(pid: &str) {
    let killed = Command::new("kill").args(["-9", pid]).status().unwrap();
    assert!(killed.success());
}

fn pid_of(g: &mut Gateway) -> String {
    let answer = g.call("slow__pid", json!({}));
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{answer}"))
        .to_string()
}

/// `serve --status` for `config` and `state`: what it printed.
fn status_of(config: &str, state: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
        .args(["serve", "--status", "--config", config, "--state-dir"])
        .arg(state)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_killed_and_restarted_upstream_tells_each_step_of_its_life() {
    let dir = scratch("serve-log", "life");
    let log = dir.join("gateway.log");
    let state = dir.join("state");
    let policy = dir.join("policy.toml");
    std::fs::write(&policy, "version = 1\n").unwrap();
    let config = config(
        &dir,
        json!({"slow": node("slow-tool.mjs", json!({})), "billing": node("invoice.mjs", json!({}))}),
    );
    let mut g = Gateway::start(&[
        "--config",
        &config,
        "--policy",
        policy.to_str().unwrap(),
        "--log",
        log.to_str().unwrap(),
        "--restart-max",
        "1",
        "--restart-window",
        "600",
        "--state-dir",
        state.to_str().unwrap(),
    ]);
    let first = pid_of(&mut g);
    let text = log_of(&log);
    // Each spawn logged (issue 54): its pid, why, and its command line.
    let slow = common::servers_dir()
        .join("slow-tool.mjs")
        .display()
        .to_string();
    assert_eq!(
        lines(
            &text,
            "slow",
            &format!("started (pid {first}), at start: node {slow}")
        )
        .len(),
        1,
        "{text}"
    );
    let connected = lines(&text, "slow", "connected in ");
    assert_eq!(connected.len(), 1, "{text}");
    assert!(
        connected[0].contains(" ms: protocol 2026-07-28 (server/discover), 4 tools")
            || connected[0].contains(" ms: protocol 2025-11-25 (initialize), 4 tools"),
        "{}",
        connected[0]
    );

    // A call in flight when its upstream dies: one line naming both.
    let waiting = g.ask(
        "tools/call",
        json!({"name": "slow__wait", "arguments": {"ms": 30000}}),
    );
    std::thread::sleep(Duration::from_millis(200));
    kill(&first);
    let failed = g.answer(waiting, Duration::from_secs(10));
    assert!(failed["error"].is_object(), "{failed}");
    wait_until("a restart", Duration::from_secs(20), || {
        lines(&log_of(&log), "slow", "started (pid ").len() == 2
    });
    let text = log_of(&log);
    let again = format!("), a restart after it ended: node {slow}");
    assert_eq!(lines(&text, "slow", &again).len(), 1, "{text}");
    assert_eq!(
        lines(&text, "slow", "was killed by signal 9 (SIGKILL)").len(),
        1,
        "{text}"
    );
    let restarting = lines(&text, "slow", "restarting in ");
    assert_eq!(restarting.len(), 1, "{text}");
    assert!(
        restarting[0].contains(" ms: restart 1 of 1 within 600 s, attempt 1 of 5"),
        "{}",
        restarting[0]
    );
    let call = lines(&text, "slow", "call failed: ");
    assert_eq!(call.len(), 1, "{text}");
    assert!(call[0].ends_with("upstream=slow tool=wait"), "{}", call[0]);
    assert!(
        call[0].contains("upstream \"slow\" closed its connection during the call to \"wait\""),
        "{}",
        call[0]
    );

    // The budget is spent: the next end is the last.
    let second = {
        let mut pid = String::new();
        wait_until(
            "the restarted upstream answers",
            Duration::from_secs(20),
            || {
                let answer = g.call("slow__pid", json!({}));
                match answer["result"]["content"][0]["text"].as_str() {
                    Some(p) => {
                        pid = p.to_string();
                        true
                    }
                    None => false,
                }
            },
        );
        pid
    };
    assert_ne!(second, first);
    let status = || status_of(&config, &state);
    wait_until(
        "the status tells of the restart",
        Duration::from_secs(10),
        || {
            status().contains(&format!(
            "slow     connected (restarted), pid {second}, 1 restarts, last ended: signal: 9 (SIGKILL)\n"
        ))
        },
    );
    assert!(
        status().contains("billing  connected (connected), pid "),
        "{}",
        status()
    );
    kill(&second);
    wait_until("the gateway gives up", Duration::from_secs(20), || {
        !lines(&log_of(&log), "slow", "gave up on the upstream").is_empty()
    });
    let text = log_of(&log);
    let gave_up = lines(&text, "slow", "gave up on the upstream");
    assert_eq!(gave_up.len(), 1, "{text}");
    assert!(
        gave_up[0].contains(
            "it ended again after 1 restarts within 600 s; its tools are no longer served"
        ),
        "{}",
        gave_up[0]
    );
    assert_eq!(lines(&text, "slow", "started (pid ").len(), 2, "{text}");

    wait_until(
        "the status tells the gateway gave up",
        Duration::from_secs(10),
        || {
            status()
                .contains("slow     gone (gave_up), 1 restarts, last ended: signal: 9 (SIGKILL)\n")
        },
    );
    assert!(status().starts_with("gateway (pid "), "{}", status());

    // A reload.
    std::fs::write(&policy, "version = 1\n\n[defaults]\n").unwrap();
    wait_until("a reload", Duration::from_secs(10), || {
        log_of(&log).contains("reloaded the policy and the lock")
    });

    // Sentences only: no Rust paths or debug structs, and rmcp's own debug-struct line is not there.
    let text = log_of(&log);
    for line in text.lines() {
        let message = line.split_once(": ").map_or(line, |(_, m)| m);
        for rust in ["ErrorData", "ErrorCode(", "::", " { "] {
            assert!(!message.contains(rust), "{rust:?} in {line}");
        }
    }
    assert!(!text.contains("response error"), "{text}");
    // The default level keeps rmcp's info lines out.
    assert!(!text.contains("rmcp::service"), "{text}");
    // Every call, restart and the reload above: no command was started but
    // the config's, at start and by the restart policy (issue 54).
    assert!(
        lines(&text, "billing", "started (pid ").len() == 1,
        "{text}"
    );
    let started: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" started (pid "))
        .collect();
    assert_eq!(started.len(), 3, "{text}");
}

#[test]
fn a_refused_http_upstream_is_told_in_a_sentence() {
    let dir = scratch("serve-log", "refused");
    let log = dir.join("gateway.log");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = config(
        &dir,
        json!({"gone": {"url": format!("http://127.0.0.1:{port}/mcp")},
               "billing": node("invoice.mjs", json!({}))}),
    );
    let state = dir.join("state");
    let mut g = Gateway::start(&[
        "--config",
        &config,
        "--log",
        log.to_str().unwrap(),
        "--state-dir",
        state.to_str().unwrap(),
    ]);
    assert!(g.names().contains(&"billing__list_periods".to_string()));
    let status = status_of(&config, &state);
    assert!(
        status.contains("gone     not_started (cannot connect: handshake failed: "),
        "{status}"
    );
    let text = log_of(&log);
    let refused = lines(&text, "gone", "server not started: ");
    assert_eq!(refused.len(), 1, "{text}");
    let message = refused[0].split_once("server not started: ").unwrap().1;
    assert!(
        !message.contains("::") && !message.contains('<'),
        "{message}"
    );
}

#[test]
fn restart_max_0_never_restarts() {
    let dir = scratch("serve-log", "never");
    let log = dir.join("gateway.log");
    let config = config(&dir, json!({"slow": node("slow-tool.mjs", json!({}))}));
    let mut g = Gateway::start(&[
        "--config",
        &config,
        "--log",
        log.to_str().unwrap(),
        "--restart-max",
        "0",
    ]);
    kill(&pid_of(&mut g));
    wait_until("the gateway gives up", Duration::from_secs(20), || {
        !lines(&log_of(&log), "slow", "gave up on the upstream").is_empty()
    });
    std::thread::sleep(Duration::from_secs(1));
    let text = log_of(&log);
    assert!(
        lines(&text, "slow", "gave up on the upstream")[0]
            .contains("it ended, and it is not to be restarted; its tools are no longer served"),
        "{text}"
    );
    assert_eq!(lines(&text, "slow", "started (pid ").len(), 1, "{text}");
    assert!(lines(&text, "slow", "restarting in ").is_empty(), "{text}");
    assert!(g.names().iter().all(|n| !n.starts_with("slow__")));
}

/// A tool rule of the policy that matches none of an upstream's tools is told
/// once, with the closest name when there is one (issue 39, item 2).
#[test]
fn a_tool_rule_that_matches_nothing_is_told_once() {
    let dir = scratch("serve-log", "rules");
    let log = dir.join("gateway.log");
    let policy = dir.join("policy.toml");
    std::fs::write(
        &policy,
        "version = 1\n[servers.billing]\ntools = { deny = [\"get_invoce\", \"delete_everything\"] }\n",
    )
    .unwrap();
    let config = config(&dir, json!({"billing": node("invoice.mjs", json!({}))}));
    let mut g = Gateway::start(&[
        "--config",
        &config,
        "--policy",
        policy.to_str().unwrap(),
        "--log",
        log.to_str().unwrap(),
    ]);
    assert!(g.names().iter().any(|n| n == "billing__get_invoice"));
    wait_until("the rules are told", Duration::from_secs(20), || {
        lines(&log_of(&log), "billing", "policy: tools deny").len() >= 2
    });
    std::thread::sleep(Duration::from_secs(1));
    let text = log_of(&log);
    let told = lines(&text, "billing", "policy: tools deny");
    assert_eq!(told.len(), 2, "{text}");
    assert!(
        told.iter().any(|l| l.contains(
            "\"get_invoce\" matches no tool the server lists (did you mean \"get_invoice\"?)"
        )),
        "{text}"
    );
    assert!(
        told.iter()
            .all(|l| l.contains("the name is still left out of the instructions")),
        "{text}"
    );
}
