//! `serve --prefix always|never|on-collision` and `--separator` (or the
//! policy file's `[gateway]` `prefix` and `separator`): the names
//! tools and prompts are served under, with two upstreams that share names
//! at start (two library servers) or later (an upstream that adds a tool
//! another upstream has).

use crate::common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::gateway::*;
use serde_json::{Value, json};

/// The invoice server as `billing` and changing.mjs as `chg`, which adds
/// `list_periods` (billing's) 500 ms after its first tools/list.
fn later_collision(test: &str) -> (String, std::path::PathBuf) {
    let dir = scratch("serve-naming", test);
    let config = config(
        &dir,
        json!({
            "billing": node("invoice.mjs", json!({})),
            "chg": node("changing.mjs", json!({"SECOND": "list_periods"})),
        }),
    );
    (config, dir.join("gateway.log"))
}

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names
}

/// The separator from the policy file's `[gateway]`, its prefix overridden
/// by the flag (flags win over the file, key by key).
#[test]
fn always_prefixes_with_the_separator_given() {
    let dir = scratch("serve-naming", "always");
    let config = config(&dir, json!({"billing": node("invoice.mjs", json!({}))}));
    let policy = dir.join("policy.toml");
    let naming = "version = 1\n[gateway]\nprefix = \"never\"\nseparator = \"-x-\"\n";
    std::fs::write(&policy, naming).unwrap();
    let mut g = Gateway::start(&[
        "--config",
        &config,
        "--policy",
        policy.to_str().unwrap(),
        "--prefix",
        "always",
        "--ready-within",
        "60",
    ]);
    assert_eq!(
        sorted(g.names()),
        ["billing-x-get_invoice", "billing-x-list_periods"]
    );
    let text = g.text("billing-x-list_periods", json!({}));
    assert!(text.contains("2026"), "{text}");
}

#[test]
fn never_serves_bare_names_and_refuses_a_later_collision() {
    let (config, log) = later_collision("never");
    let log_arg = log.to_str().unwrap();
    let mut g = Gateway::start(&[
        "--config",
        &config,
        "--prefix",
        "never",
        "--log",
        log_arg,
        "--ready-within",
        "60",
    ]);
    assert_eq!(sorted(g.names()), ["first", "get_invoice", "list_periods"]);
    // chg's list_periods comes later: billing keeps the name, chg's is not served.
    wait_until("the refusal logged", Duration::from_secs(15), || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.contains("is not served"))
    });
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains(r#"tool "list_periods" of "chg" is not served"#)
            && logged.contains("billing"),
        "{logged}"
    );
    assert_eq!(sorted(g.names()), ["first", "get_invoice", "list_periods"]);
    let text = g.text("list_periods", json!({}));
    assert!(text.contains("2026"), "billing's tool answers: {text}");
}

#[test]
fn never_is_refused_at_start_when_upstreams_share_a_name() {
    let dir = scratch("serve-naming", "refused");
    let config = config(
        &dir,
        json!({
            "a": node("library.mjs", json!({"PREFIX": "a"})),
            "b": node("library.mjs", json!({"PREFIX": "b"})),
        }),
    );
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
        .args([
            "serve",
            "--config",
            &config,
            "--prefix",
            "never",
            "--ready-within",
            "60",
        ])
        .args(["--state-dir", dir.join("state").to_str().unwrap()])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--prefix never: upstreams share tool names")
            && (stderr.contains(r#""touch" of "b" and of "a""#)
                || stderr.contains(r#""touch" of "a" and of "b""#)),
        "{stderr}"
    );
}

#[test]
fn on_collision_prefixes_only_shared_names_and_keeps_names_given() {
    let dir = scratch("serve-naming", "shared");
    let config = config(
        &dir,
        json!({
            "a": node("library.mjs", json!({"PREFIX": "a"})),
            "b": node("library.mjs", json!({"PREFIX": "b"})),
        }),
    );
    let mut g = Gateway::start(&[
        "--config",
        &config,
        "--prefix",
        "on-collision",
        "--ready-within",
        "60",
    ]);
    // Every tool name is shared: each is prefixed but for the one upstream
    // that held it bare before the other joined (a name given is kept).
    let names = g.names();
    assert_eq!(names.len(), 6, "{names:?}");
    for tool in ["grow", "pid", "touch"] {
        let (a, b) = (format!("a__{tool}"), format!("b__{tool}"));
        let held = [tool.to_string(), a.clone(), b.clone()].map(|n| names.contains(&n));
        assert!(
            held == [false, true, true] || (held[0] && held[1] != held[2]),
            "{names:?}"
        );
    }
    // Prompts are named alike: each library's own prompt keeps its name.
    let prompts: Vec<Value> = g.request("prompts/list", json!({}))["result"]["prompts"]
        .as_array()
        .unwrap()
        .clone();
    let prompts: Vec<&str> = prompts
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        sorted(prompts.iter().map(|p| p.to_string()).collect()),
        ["a_brief", "b_brief"]
    );
    drop(g);

    let (config, _) = later_collision("on-collision");
    let mut g = Gateway::start(&[
        "--config",
        &config,
        "--prefix",
        "on-collision",
        "--ready-within",
        "60",
    ]);
    assert_eq!(sorted(g.names()), ["first", "get_invoice", "list_periods"]);
    wait_until("chg's list_periods", Duration::from_secs(15), || {
        g.names().contains(&"chg__list_periods".to_string())
    });
    assert_eq!(
        sorted(g.names()),
        ["chg__list_periods", "first", "get_invoice", "list_periods"],
        "billing keeps the bare name it was given"
    );
    assert_eq!(g.text("chg__list_periods", json!({})), "second");
}
