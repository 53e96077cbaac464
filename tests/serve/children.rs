//! Nothing left running (issue 51): `wrap` and `serve` end the servers they
//! started, and what those started (`tests/servers/linger.mjs` ignores its
//! stdin's end and starts a process of its own, as `npx` starts `node`),
//! when the host closes stdin (before the 2 s after which the SDKs send
//! SIGTERM) and at once on SIGTERM, upstreams still starting included.

use crate::common;

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::gateway::{config, node, scratch};
use serde_json::json;

/// Whether process `pid` runs (a zombie does not).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat.rsplit_once(')')?.1.trim_start().chars().next()?;
            Some(state != 'Z' && state != 'X')
        })
        .unwrap_or(false)
}

/// The pids each linger server wrote (server and its child), once all
/// `count` servers have written them.
fn pids(dir: &Path, count: usize) -> Vec<u32> {
    let end = Instant::now() + Duration::from_secs(20);
    loop {
        let found: Vec<u32> = (0..count)
            .filter_map(|i| std::fs::read_to_string(dir.join(format!("pids-{i}"))).ok())
            .flat_map(|s| {
                s.split_whitespace()
                    .filter_map(|p| p.parse().ok())
                    .collect::<Vec<u32>>()
            })
            .collect();
        if found.len() == 2 * count {
            assert!(found.iter().all(|&p| alive(p)), "{found:?}");
            return found;
        }
        assert!(Instant::now() < end, "the servers did not start: {found:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn linger(dir: &Path, i: usize, env: &[(&str, &str)]) -> serde_json::Value {
    let mut vars = json!({"PID_FILE": dir.join(format!("pids-{i}")).display().to_string()});
    for (k, v) in env {
        vars[*k] = json!(v);
    }
    node("linger.mjs", vars)
}

fn mcp_preamble(args: &[String]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
        .args(args)
        .env(
            "XDG_CACHE_HOME",
            std::env::temp_dir().join(format!("mcp-preamble-cache-{}", std::process::id())),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// `wrap` around linger server 0 of `dir`.
fn wrap(dir: &Path, env: &[(&str, &str)]) -> Child {
    let entry = linger(dir, 0, env);
    let mut args = vec!["wrap".to_string(), "--".to_string(), "node".to_string()];
    args.extend(
        entry["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string()),
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-preamble"));
    child
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in entry["env"].as_object().unwrap() {
        child.env(k, v.as_str().unwrap());
    }
    child.spawn().unwrap()
}

/// `serve` over the linger servers of `envs`.
fn serve(dir: &Path, envs: &[&[(&str, &str)]]) -> Child {
    let servers: serde_json::Map<_, _> = envs
        .iter()
        .enumerate()
        .map(|(i, env)| (format!("s{i}"), linger(dir, i, env)))
        .collect();
    let path = config(dir, servers.into());
    let args = ["serve", "--config", &path, "--ready-within", "0"];
    mcp_preamble(&args.map(String::from))
}

/// Waits at most `within` for `child` to exit.
fn exited(child: &mut Child, within: Duration) -> Option<ExitStatus> {
    let end = Instant::now() + within;
    while Instant::now() < end {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    None
}

/// Every pid gone, allowing their new parent a moment to reap them.
fn all_gone(pids: &[u32]) {
    let end = Instant::now() + Duration::from_millis(500);
    while pids.iter().any(|&p| alive(p)) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<u32> = pids.iter().copied().filter(|&p| alive(p)).collect();
    for &p in &left {
        let _ = Command::new("kill").args(["-9", &p.to_string()]).status();
    }
    assert!(left.is_empty(), "still running: {left:?} of {pids:?}");
}

fn initialize(child: &mut Child) {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    writeln!(child.stdin.as_mut().unwrap(), "{init}").unwrap();
}

fn sigterm(child: &Child) {
    let ok = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    assert!(ok.is_ok_and(|s| s.success()));
}

#[test]
fn wrap_ends_its_server_and_its_child_when_the_host_closes_stdin() {
    let dir = scratch("children", "wrap-eof");
    let mut wrap = wrap(&dir, &[]);
    let pids = pids(&dir, 1);
    initialize(&mut wrap);
    drop(wrap.stdin.take());
    // Before the SDKs' SIGTERM (2 s after they close stdin), and with 0.
    let status = exited(&mut wrap, Duration::from_millis(1900));
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
    all_gone(&pids);
}

#[test]
fn wrap_ends_a_server_that_ignores_sigterm_at_once_on_sigterm() {
    let dir = scratch("children", "wrap-term");
    let mut wrap = wrap(&dir, &[("STUBBORN", "1")]);
    let pids = pids(&dir, 1);
    initialize(&mut wrap);
    sigterm(&wrap);
    let status = exited(&mut wrap, Duration::from_millis(1500));
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
    all_gone(&pids);
}

#[test]
fn serve_ends_every_upstream_even_one_still_starting_when_the_host_closes_stdin() {
    let dir = scratch("children", "serve-eof");
    let mut serve = serve(&dir, &[&[], &[("HANG", "1")]]);
    // Over stdio the servers start after the host's `initialize` (they are
    // told what it declared).
    initialize(&mut serve);
    let pids = pids(&dir, 2);
    drop(serve.stdin.take());
    let status = exited(&mut serve, Duration::from_millis(1900));
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
    all_gone(&pids);
}

#[test]
fn serve_ends_its_upstreams_at_once_on_sigterm_with_stdin_open() {
    let dir = scratch("children", "serve-term");
    let mut serve = serve(&dir, &[&[("STUBBORN", "1")], &[("HANG", "1")]]);
    // Over stdio the servers start after the host's `initialize` (they are
    // told what it declared).
    initialize(&mut serve);
    let pids = pids(&dir, 2);
    sigterm(&serve);
    let status = exited(&mut serve, Duration::from_millis(1500));
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
    all_gone(&pids);
}

/// The pids the linger server of `file` wrote, once `processes` of it have.
fn pids_of(file: &Path, processes: usize) -> Vec<u32> {
    let end = Instant::now() + Duration::from_secs(20);
    loop {
        let found: Vec<u32> = std::fs::read_to_string(file)
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        if found.len() == 2 * processes {
            return found;
        }
        assert!(
            Instant::now() < end,
            "{processes} processes did not start: {found:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn serve_over_http_ends_the_connections_it_opened_for_a_hosts_capabilities() {
    use common::raw_http::exchange;
    let dir = scratch("children", "serve-told");
    let path = config(&dir, json!({"s0": linger(&dir, 0, &[("PID_APPEND", "1")])}));
    let args = [
        "--config",
        &path,
        "--ready-within",
        "30",
        "--handshake",
        "legacy",
    ];
    let (mut serve, url) = common::gateway::serve_listening(&args);
    let authority = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let post = |headers: &str, body: serde_json::Value| {
        exchange(&authority, "POST /mcp HTTP/1.1", headers, &body.to_string())
    };
    // A 2025 session whose host declared sampling; the shared connection was told nothing.
    let init = post(
        "",
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"sampling": {}},
        "clientInfo": {"name": "raw", "version": "1"}}}),
    );
    let session = init
        .header("mcp-session-id")
        .expect("a session")
        .to_string();
    let headers = format!("\r\nMcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-11-25");
    post(
        &headers,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    let called = post(
        &headers,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "s0__ping", "arguments": {}}}),
    );
    assert_eq!(
        called.expect_result()["content"][0]["text"],
        "pong",
        "{called:?}"
    );
    // The shared connection and the one told this host's set: two processes, each with its child.
    let pids = pids_of(&dir.join("pids-0"), 2);
    sigterm(&serve);
    let status = exited(&mut serve, Duration::from_millis(1500));
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
    all_gone(&pids);
}
