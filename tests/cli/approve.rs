//! Approvals that mean what was reviewed (issue 52, item 1): `pin --review`
//! shows a change's digest; `pin --approve DIGEST` pins exactly that text,
//! or, when the server moved on, nothing (naming the newer change); each
//! pin records who approved it and when, in a lock file and in Redis, and
//! both replicas following Redis serve what was approved. And `serve
//! --status` after a warm restart (issue 52, item 4).
#![cfg(feature = "cli")]

use crate::common;

use common::cli::{run, stderr, stdout};

use std::path::Path;
use std::time::Duration;

use common::gateway::{Gateway, node, scratch, wait_until};
use common::redis::Redis;
use mcp_preamble::pin::Lock;
use mcp_preamble::state::SharedState;
use serde_json::{Value, json};

fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// The digest `pin --review` offers to approve `alias`'s change with.
fn reviewed_digest(out: &std::process::Output, alias: &str) -> String {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    let text = stdout(out);
    let line = (text.lines())
        .find(|l| l.starts_with(&format!("{alias}: changed (")))
        .unwrap_or_else(|| panic!("{alias} changed in:\n{text}"));
    let digest = line.rsplit_once("sha256 ").unwrap().1.to_string();
    assert_eq!(digest.len(), 64, "{line}");
    assert!(
        text.contains(&format!(
            "approve exactly this: --approve {}",
            &digest[..12]
        )),
        "{text}"
    );
    digest
}

/// Review version 3, the server moves to version 4, approve version 3's
/// digest: refused, naming version 4 (its digest and diff), nothing
/// pinned, both replicas still serve version 2; version 4 reviewed and
/// approved: both serve it, and Redis records who approved it.
#[test]
fn an_approval_pins_what_was_reviewed_or_nothing_on_both_replicas() {
    let Some(redis) = Redis::start("approve") else {
        return;
    };
    let dir = scratch("approve", "replicas");
    let text = dir.join("billing.txt");
    let version = |n: u32| format!("Call first before second. Version {n}.");
    std::fs::write(&text, version(2)).unwrap();
    let config = common::gateway::config(
        &dir,
        json!({"billing": node("changing.mjs", json!({
            "INSTRUCTIONS_FILE": text.display().to_string(), "TTL_MS": "200"}))}),
    );
    let policy = dir.join("mcp-preamble.toml");
    std::fs::write(&policy, "version = 1\n[defaults]\non_change = \"hold\"\n").unwrap();
    let (url, policy) = (redis.url(), policy.to_str().unwrap().to_string());
    let pin = |extra: &[&str]| {
        let mut args = vec![
            "pin", "--config", &config, "--state", &url, "--policy", &policy,
        ];
        args.extend(extra);
        run(&args)
    };
    let out = pin(&["--approver", "ann"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let state = SharedState::open(&url).unwrap();
    let approved = |state: &SharedState| {
        let lock = block_on(state.load()).unwrap();
        lock.get("billing").unwrap().approved.clone().unwrap()
    };
    assert_eq!(approved(&state).by, "ann");

    let replica = |name: &str| {
        let state_dir = dir.join(name);
        let args = [
            "serve",
            "--config",
            &config,
            "--policy",
            &policy,
            "--state",
            &url,
            "--state-dir",
            state_dir.to_str().unwrap(),
            "--ready-within",
            "30",
        ];
        let mut g = Gateway::command(&args, &[]);
        g.initialize();
        g
    };
    let mut replicas = [replica("a"), replica("b")];
    let reader = json!({"server": "billing"});
    let mut served = |n: usize| replicas[n].text("mcp_preamble__instructions", reader.clone());
    assert_eq!((served(0), served(1)), (version(2), version(2)));

    std::fs::write(&text, version(3)).unwrap();
    let v3 = reviewed_digest(&pin(&["--review"]), "billing");
    std::fs::write(&text, version(4)).unwrap();
    let out = pin(&["--approve", &v3[..12], "--approver", "bob"]);
    assert_eq!(out.status.code(), Some(2), "refused: {}", stdout(&out));
    let v4 = reviewed_digest(&pin(&["--review"]), "billing");
    assert!(
        stderr(&out).contains(&format!(
            "--approve {}: no server says the reviewed text any more; it changed since the review: billing now has {} (instructions changed)",
            &v3[..12],
            &v4[..12]
        )),
        "{}",
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("+Call first before second. Version 4."),
        "{}",
        stdout(&out)
    );
    assert_eq!(approved(&state).by, "ann", "nothing was pinned");
    assert_eq!((served(0), served(1)), (version(2), version(2)));

    let out = pin(&["--approve", &v4, "--approver", "bob"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("billing: pinned again"),
        "{}",
        stdout(&out)
    );
    wait_until("version 4 on both replicas", Duration::from_secs(5), || {
        served(0) == version(4) && served(1) == version(4)
    });
    let record = approved(&state);
    assert_eq!(record.by, "bob");
    assert!(
        record.at.starts_with("20") && record.at.ends_with('Z'),
        "{}",
        record.at
    );
    let last: Value = block_on(state.approvals()).unwrap()[0].clone();
    assert_eq!(
        (&last["key"], &last["by"], &last["sha256"]),
        (&json!("billing"), &json!("bob"), &json!(v4))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// In a lock file: the approver and the time are kept with each pin, an
/// unchanged server pinned again keeps its first approval (the same
/// bytes), and a digest of text no server has is refused.
#[test]
fn a_lock_file_records_who_approved_each_pin() {
    let dir = scratch("approve", "lock");
    let text = dir.join("billing.txt");
    std::fs::write(&text, "Call first. Version 1.").unwrap();
    let config = common::gateway::config(
        &dir,
        json!({"billing": node("changing.mjs", json!({"INSTRUCTIONS_FILE": text.display().to_string()}))}),
    );
    let lock = dir.join("mcp-preamble.lock");
    let lock_s = lock.to_str().unwrap();
    let out = run(&[
        "pin",
        "--config",
        &config,
        "--lock",
        lock_s,
        "--approver",
        "carol",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let first = std::fs::read_to_string(&lock).unwrap();
    assert!(first.starts_with("{\n  \"version\": 4,"), "{first}");
    let entry = Lock::from_path(&lock)
        .unwrap()
        .get("billing")
        .unwrap()
        .clone();
    assert_eq!(entry.approved.as_ref().unwrap().by, "carol");
    let out = run(&[
        "pin",
        "--config",
        &config,
        "--lock",
        lock_s,
        "--approver",
        "dave",
        "--all",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&lock).unwrap(),
        first,
        "unchanged: the same bytes"
    );
    let out = run(&["pin", "--config", &config, "--lock", lock_s, "--review"]);
    assert!(
        stdout(&out).contains("nothing awaits review"),
        "{}",
        stdout(&out)
    );
    let out = run(&[
        "pin",
        "--config",
        &config,
        "--lock",
        lock_s,
        "--approve",
        "0123456789abcdef",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no server differs from its pin"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(&lock).unwrap(), first);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `serve --status` after a warm restart (the servers' snapshots kept
/// from the last run): each upstream is `connected` once it answered, not
/// `starting` for ever.
#[test]
fn status_after_a_warm_restart_shows_the_upstreams_connected() {
    let dir = scratch("approve", "warm");
    let config = common::gateway::config(&dir, json!({"billing": node("invoice.mjs", json!({}))}));
    let state_dir = dir.join("state");
    let args = [
        "serve",
        "--config",
        &config,
        "--state-dir",
        state_dir.to_str().unwrap(),
        "--ready-within",
        "30",
    ];
    let status = || {
        let out = run(&[
            "serve",
            "--status",
            "--config",
            &config,
            "--state-dir",
            state_dir.to_str().unwrap(),
        ]);
        stdout(&out)
    };
    let connected = |s: &str| {
        s.lines()
            .any(|l| l.trim_start().starts_with("billing") && l.contains("connected"))
    };
    for run_number in 0..2 {
        let mut g = Gateway::command(&args, &[]);
        g.initialize();
        wait_until(
            &format!("run {run_number} connected"),
            Duration::from_secs(30),
            || connected(&status()),
        );
        drop(g);
        assert!(Path::new(&state_dir).join("servers.json").exists());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
