//! What an upstream's endless event costs another upstream (issue 54): a
//! gateway (`serve --listen`, one thread) in front of `billing` (http.mjs,
//! the invoice server, stateless: its calls take the direct post) and of
//! hostile upstreams, one call of `billing` at a time timed idle and while
//! one of them floods the gateway:
//!
//! - `answer`: http.mjs `endless`, whose every call is answered by an event
//!   that never ends (16 KiB a millisecond), read by the direct post until
//!   the answer's bound; a flooding call is kept in flight all along;
//! - `stream`: endless-stream.mjs, a 2025 session whose GET stream (the
//!   subscription stream, held to 4 MiB an event) sends an event that never
//!   ends, as fast as the socket takes it, once its tool `flood` is called:
//!   the calls timed between that call and the server seeing the gateway
//!   hang up, over [`EPISODES`] upstreams flooded one after another;
//! - `wrap --url` against endless-stream.mjs: its own `ok` calls, idle and
//!   while its GET stream floods (held to 4 MiB an event). wrap has one
//!   upstream, so the flood's cost falls on that upstream's own calls: the
//!   goal (another upstream's) does not apply, and the line says how long
//!   that upstream's stream took to be cut.
//!
//! Each line prints the p50 idle, beside the flood, and their ratio against
//! the goal of 2x where there is another upstream.

use std::time::{Duration, Instant};

use mcp_preamble::connect::{ConnectOptions, connect};
use mcp_preamble::rmcp::model::CallToolRequestParams;
use mcp_preamble::rmcp::service::{Peer, RoleClient};
use serde_json::{Value, json};

use super::load::Run;
use super::{Spawned, config, free_port, gateway_bin, listening, servers, stdio_entry};

/// Calls timed idle, and beside the flooding answer.
const CALLS: usize = 300;
/// GET streams flooded one after another (one upstream each).
const EPISODES: usize = 24;
/// The goal: another upstream's p50 within this of idle.
const GOAL: f64 = 2.0;

/// A node test server on an ephemeral port, and its base URL (no path).
fn node(script: &str, args: &[&str]) -> (Spawned, String) {
    use std::io::BufRead;
    let mut child = std::process::Command::new("node")
        .arg(script)
        .arg("0")
        .args(args)
        .current_dir(servers())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("node {script}: {e}"));
    let mut line = String::new();
    let out = child.stdout.take().expect("a pipe");
    std::io::BufReader::new(out)
        .read_line(&mut line)
        .expect("the listening line");
    let url = line.trim().rsplit(' ').next().expect("a URL");
    let base = url.strip_suffix("/mcp").expect("an /mcp endpoint");
    (Spawned(child), base.to_string())
}

/// One stateless (2026-07-28) `tools/call` of `name` to the gateway at
/// `url`: whether it was answered with a result.
async fn call(http: &reqwest::Client, url: &str, id: u64, name: &str) -> bool {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": name, "arguments": {}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"}}}});
    let sent = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", name)
        .json(&body)
        .send()
        .await;
    let Ok(answer) = sent else { return false };
    let text = answer.text().await.unwrap_or_default();
    // A JSON body, or an event stream whose last `data:` line is the answer.
    let last = text.lines().rev().find_map(|l| l.strip_prefix("data: "));
    let value: Value = serde_json::from_str(last.unwrap_or(&text)).unwrap_or_default();
    value["result"]["content"].is_array()
}

/// `n` calls of `billing__list_periods`, one at a time.
async fn billing(http: &reqwest::Client, url: &str, n: usize) -> Vec<Duration> {
    let mut took = Vec::with_capacity(n);
    for id in 0..n {
        let t = Instant::now();
        assert!(call(http, url, id as u64, "billing__list_periods").await);
        took.push(t.elapsed());
    }
    took
}

fn run(latencies: Vec<Duration>) -> Run {
    Run {
        latencies,
        wall: Duration::ZERO,
        cpu: None,
    }
}

/// One line: the p50s and their ratio, against the goal when the calls
/// timed are `another` upstream's.
fn report(case: &str, idle: &Run, during: &Run, another: bool, note: &str) {
    let (i, d) = (idle.quantile(0.5), during.quantile(0.5));
    let ratio = d.as_secs_f64() / i.as_secs_f64();
    let verdict = match (another, ratio <= GOAL) {
        (false, _) => "the flooding upstream's own calls, no goal".to_string(),
        (true, true) => format!("within the {GOAL}x goal"),
        (true, false) => format!("OVER the {GOAL}x goal"),
    };
    println!(
        "flood {case:<7}: p50 idle {i:>8.2?}, beside it {d:>8.2?} ({} calls; p99 {:.2?} vs {:.2?}): {ratio:.2}x, {verdict}{note}",
        during.latencies.len(),
        during.quantile(0.99),
        idle.quantile(0.99),
    );
}

/// GET `path` of a test server, as JSON.
async fn counters(http: &reqwest::Client, base: &str, path: &str) -> Value {
    let answer = http.get(format!("{base}{path}")).send().await;
    let text = match answer {
        Ok(a) => a.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    };
    serde_json::from_str(&text).unwrap_or_default()
}

/// The gateway cases: `answer` and `stream`.
pub async fn gateway(dir: &std::path::Path) {
    let (_billing, billing_at) = node("http.mjs", &[]);
    let (_flood, flood_at) = node("http.mjs", &["endless"]);
    let (_stream, stream_at) = node("endless-stream.mjs", &[]);
    let mut servers = json!({
        "billing": {"url": format!("{billing_at}/mcp")},
        "flood": {"url": format!("{flood_at}/mcp")},
    });
    for i in 0..EPISODES {
        servers[format!("stream{i}")] = json!({"url": format!("{stream_at}/mcp")});
    }
    let cfg = config(dir, "flood.json", servers);
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let args = [
        "serve",
        "--listen",
        &listen,
        "--config",
        &cfg,
        "--ready-within",
        "60",
    ];
    let _gateway = super::spawn(&gateway_bin(), &args.map(String::from));
    listening(port);
    let url = format!("http://{listen}/mcp");
    let http = reqwest::Client::new();
    let ready = Instant::now() + Duration::from_secs(60);
    while !call(&http, &url, 0, "billing__list_periods").await {
        assert!(Instant::now() < ready, "the gateway never answered");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    billing(&http, &url, 20).await;
    let idle = run(billing(&http, &url, CALLS).await);

    // `answer`: a flooding call in flight all along (each ends at the bound).
    let flooding = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let flooder = {
        let (http, url, flooding) = (http.clone(), url.clone(), flooding.clone());
        tokio::spawn(async move {
            let mut floods = 0;
            while flooding.load(std::sync::atomic::Ordering::Relaxed) {
                call(&http, &url, 1 << 20, "flood__list_periods").await;
                floods += 1;
            }
            floods
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let during = run(billing(&http, &url, CALLS).await);
    flooding.store(false, std::sync::atomic::Ordering::Relaxed);
    let floods = flooder.await.expect("the flooding task");
    report(
        "answer",
        &idle,
        &during,
        true,
        &format!(" ({floods} flooding calls)"),
    );

    // `stream`: each upstream's GET stream flooded in turn, to its cut.
    let mut during = Vec::new();
    let mut windows = Vec::new();
    for i in 0..EPISODES {
        let started = Instant::now();
        assert!(call(&http, &url, 7, &format!("stream{i}__flood")).await);
        loop {
            during.extend(billing(&http, &url, 1).await);
            let seen = counters(&http, &stream_at, "/streams").await;
            if seen["closed"].as_u64().unwrap_or(0) > i as u64 {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "never cut: {seen}"
            );
        }
        windows.push(started.elapsed());
    }
    let seen = counters(&http, &stream_at, "/streams").await;
    windows.sort();
    let note = format!(
        " ({EPISODES} streams cut, each within {:.1?} (median), {} MiB sent in all)",
        windows[EPISODES / 2],
        seen["sent"].as_u64().unwrap_or(0) >> 20
    );
    report("stream", &idle, &run(during), true, &note);
    let after = run(billing(&http, &url, CALLS).await);
    report("(after)", &idle, &after, true, "");
}

/// One call of `ok`, timed.
async fn timed(peer: &Peer<RoleClient>) -> Duration {
    let t = Instant::now();
    let answer = peer.call_tool(CallToolRequestParams::new("ok")).await;
    answer.expect("an ok call");
    t.elapsed()
}

/// `wrap --url` in front of endless-stream.mjs: its `ok` calls idle and
/// while its GET stream floods.
pub async fn wrap() {
    let (_stream, at) = node("endless-stream.mjs", &[]);
    let args = ["wrap", "--url", &format!("{at}/mcp")];
    let entry = stdio_entry("wrapped", &gateway_bin(), args.map(String::from).to_vec());
    let options = ConnectOptions::new().timeout(Duration::from_secs(60));
    let connection = connect(&entry, &options).await.expect("wrap starts");
    let peer = connection.client.peer().clone();
    let http = reqwest::Client::new();
    for _ in 0..20 {
        timed(&peer).await;
    }
    let mut idle = Vec::new();
    for _ in 0..CALLS {
        idle.push(timed(&peer).await);
    }
    let opened = Instant::now() + Duration::from_secs(10);
    while counters(&http, &at, "/streams").await["opened"] != 1 {
        assert!(Instant::now() < opened, "wrap opened no GET stream");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let started = Instant::now();
    (peer.call_tool(CallToolRequestParams::new("flood")).await).expect("the flood starts");
    let mut during = Vec::new();
    while counters(&http, &at, "/streams").await["closed"] != 1 {
        during.push(timed(&peer).await);
        assert!(started.elapsed() < Duration::from_secs(120), "never cut");
    }
    let took = started.elapsed();
    let sent = counters(&http, &at, "/streams").await["sent"]
        .as_u64()
        .unwrap_or(0);
    let note = format!(" (the stream cut after {} MiB, {took:.1?})", sent >> 20);
    report("wrap", &run(idle), &run(during), false, &note);
    connection.close().await;
}
