//! `mcp-preamble serve --listen` as replicas and as an operated service
//! (issue 36, items 2 and 4): two gateways reading one session key serve
//! each other's sessions (lists, calls, progress); a changed, malformed or
//! expired id is refused with the transport spec's status; `/healthz`,
//! `/readyz` and `/metrics` tell what they should; SIGTERM lets a call in
//! flight finish and exits 0. Loopback only; every wait is bounded.
#![cfg(feature = "cli")]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::gateway::{node, scratch, wait_until};
use serde_json::{Value, json};

/// A gateway process on a free loopback port, killed on drop.
struct Replica {
    child: Child,
    authority: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Replica {
    /// `serve --config config --listen 127.0.0.1:0 flags…`, its state in `state`.
    fn start(config: &Path, state: &Path, flags: &[&str]) -> Replica {
        let mut args = vec!["serve", "--config", config.to_str().unwrap()];
        args.extend([
            "--listen",
            "127.0.0.1:0",
            "--state-dir",
            state.to_str().unwrap(),
        ]);
        args.extend(flags);
        Replica::spawn(&args, &std::env::temp_dir())
    }

    /// `mcp-preamble args…` in `cwd`, once it logged where it serves.
    fn spawn(args: &[&str], cwd: &Path) -> Replica {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
            .args(args)
            .current_dir(cwd)
            .env("MCP_PREAMBLE_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let log = Arc::new(Mutex::new(Vec::new()));
        let authority = loop {
            let line = lines
                .next()
                .unwrap_or_else(|| panic!("the gateway stopped before it listened: {log:?}"))
                .unwrap();
            log.lock().unwrap().push(line.clone());
            if let Some(at) = line.find("serving on http://") {
                let url = &line[at + "serving on http://".len()..];
                break url.split('/').next().unwrap().to_string();
            }
        };
        let kept = log.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                kept.lock().unwrap().push(line);
            }
        });
        Replica {
            child,
            authority,
            log,
        }
    }

    fn logged(&self, what: &str) -> bool {
        self.log.lock().unwrap().iter().any(|l| l.contains(what))
    }

    fn get(&self, path: &str) -> Answer {
        exchange(&self.authority, &format!("GET {path} HTTP/1.1"), "", "")
    }

    /// A JSON-RPC POST to `/mcp`, in session `session` when given.
    fn post(&self, session: Option<&str>, message: &Value) -> Answer {
        let mut headers = String::from("\r\nMCP-Protocol-Version: 2025-11-25");
        if let Some(id) = session {
            headers.push_str(&format!("\r\nMcp-Session-Id: {id}"));
        }
        exchange(
            &self.authority,
            "POST /mcp HTTP/1.1",
            &headers,
            &message.to_string(),
        )
    }

    /// A new session: `initialize`, then `notifications/initialized`; its id.
    fn initialize(&self) -> String {
        let answer = self.post(
            None,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "replica-test", "version": "1"}}}),
        );
        assert_eq!(answer.status, 200, "{answer:?}");
        let id = answer.header("mcp-session-id").expect("a session id");
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(self.post(Some(&id), &note).status, 202);
        id
    }

    /// `method` in `session`: the messages of the answer's event stream.
    fn request(&self, session: &str, id: u64, method: &str, params: Value) -> Answer {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.post(Some(session), &message)
    }

    fn tool_names(&self, session: &str) -> Vec<String> {
        let answer = self.request(session, 2, "tools/list", json!({}));
        assert_eq!(answer.status, 200, "{answer:?}");
        let result = answer.result();
        let tools = result["tools"].as_array().cloned().unwrap_or_default();
        tools
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    }

    fn call_text(&self, session: &str, tool: &str) -> String {
        let answer = self.request(
            session,
            3,
            "tools/call",
            json!({"name": tool, "arguments": {}}),
        );
        assert_eq!(answer.status, 200, "{answer:?}");
        answer.result()["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}

#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<String> {
        (self.headers.iter())
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    }

    /// The JSON-RPC messages of an event-stream body.
    fn messages(&self) -> Vec<Value> {
        (self.body.lines())
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect()
    }

    /// The `result` of the answer's response.
    fn result(&self) -> Value {
        (self.messages().into_iter())
            .find_map(|m| m.get("result").cloned())
            .unwrap_or_else(|| panic!("no result in {self:?}"))
    }
}

/// One request on a fresh connection (`Connection: close`), read whole.
fn exchange(authority: &str, line: &str, headers: &str, body: &str) -> Answer {
    let mut s = TcpStream::connect(authority).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "{line}\r\nHost: {authority}{headers}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let raw = String::from_utf8_lossy(&raw).to_string();
    let (head, rest) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let mut head_lines = head.lines();
    let status = head_lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = head_lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_string()
    };
    Answer {
        status,
        headers,
        body,
    }
}

/// A chunked body's data.
fn dechunk(mut rest: &str) -> String {
    let mut body = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || after.len() < n {
            break;
        }
        body.push_str(&after[..n]);
        rest = after[n..].strip_prefix("\r\n").unwrap_or(&after[n..]);
    }
    body
}

/// A key file of 32 bytes in hex, written in `dir`.
fn key_file(dir: &Path) -> PathBuf {
    let path = dir.join("session.key");
    let hex: String = (0..32u8).map(|b| format!("{:02x}", b * 7 + 3)).collect();
    std::fs::write(&path, format!("{hex}\n")).unwrap();
    path
}

fn config(dir: &Path, servers: Value) -> PathBuf {
    let path = dir.join("mcp.json");
    std::fs::write(&path, json!({"mcpServers": servers}).to_string()).unwrap();
    path
}

#[test]
fn a_session_begun_on_one_replica_goes_on_on_the_other() {
    let dir = scratch("serve-replicas", "two");
    let config = config(&dir, json!({"progress": node("progress.mjs", json!({}))}));
    let key = key_file(&dir);
    let key = key.to_str().unwrap();
    let a = Replica::start(&config, &dir.join("a"), &["--session-key-file", key]);
    // B seals ids that expire within 2 s (the expiry check below).
    let b = Replica::start(
        &config,
        &dir.join("b"),
        &["--session-key-file", key, "--session-ttl", "1"],
    );

    let id = a.initialize();
    assert!(id.starts_with("mp1."), "{id}");
    assert!(!id.contains(char::is_whitespace));
    // B never saw this session: it rebuilds it from the id.
    assert!(b.tool_names(&id).contains(&"progress__steps".to_string()));
    let call = b.request(
        &id,
        7,
        "tools/call",
        json!({"name": "progress__steps", "arguments": {"n": 3, "gap_ms": 10},
               "_meta": {"progressToken": "through-b"}}),
    );
    assert_eq!(call.status, 200, "{call:?}");
    let messages = call.messages();
    let progress: Vec<&Value> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 3, "{messages:?}");
    for (i, p) in progress.iter().enumerate() {
        assert_eq!(p["params"]["progressToken"], "through-b");
        assert_eq!(p["params"]["progress"].as_f64(), Some((i + 1) as f64));
    }
    assert_eq!(call.result()["content"][0]["text"], "job done");
    // And back on A, which still holds it.
    assert!(a.tool_names(&id).contains(&"progress__steps".to_string()));

    // One changed character: an unknown session (404), on both.
    let mut forged: Vec<char> = id.chars().collect();
    let mid = forged.len() / 2;
    forged[mid] = if forged[mid] == 'A' { 'B' } else { 'A' };
    let forged: String = forged.into_iter().collect();
    for replica in [&a, &b] {
        let answer = replica.request(&forged, 8, "tools/list", json!({}));
        assert_eq!(answer.status, 404, "{answer:?}");
    }
    // Not an id of this gateway at all: a bad request (400).
    let answer = b.request(
        "0b9f6c1e-4d7a-4f36-9a55-0c4b7e1f2a3d",
        9,
        "tools/list",
        json!({}),
    );
    assert_eq!(answer.status, 400, "{answer:?}");
    assert!(answer.body.contains("malformed session id"), "{answer:?}");

    // An id B sealed expires after its 1 s, on B and on A alike.
    let short = b.initialize();
    assert!(
        a.tool_names(&short)
            .contains(&"progress__steps".to_string())
    );
    std::thread::sleep(Duration::from_millis(2_200));
    for replica in [&a, &b] {
        let answer = replica.request(&short, 10, "tools/list", json!({}));
        assert_eq!(answer.status, 404, "{answer:?}");
        assert!(answer.body.contains("expired"), "{answer:?}");
    }
    // The long-lived one still works.
    assert!(b.tool_names(&id).contains(&"progress__steps".to_string()));

    // A 2026-07-28 client has no session: either replica answers it.
    let stateless = json!({"jsonrpc": "2.0", "id": 12, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "stateless", "version": "1"}}}});
    for replica in [&a, &b] {
        let answer = exchange(
            &replica.authority,
            "POST /mcp HTTP/1.1",
            "\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list",
            &stateless.to_string(),
        );
        assert_eq!(answer.status, 200, "{answer:?}");
        assert!(answer.body.contains("progress__steps"), "{answer:?}");
        assert_eq!(answer.header("mcp-session-id"), None);
    }
}

#[test]
fn health_readiness_metrics_and_a_drain_on_sigterm() {
    let dir = scratch("serve-replicas", "ops");
    let config = config(
        &dir,
        json!({
            "late": node("slow-start.mjs", json!({"SILENT_MS": "2500"})),
            "slow": node("slow-tool.mjs", json!({})),
            "odd": node("gateway-hostile.mjs", json!({"MODE": "names"})),
            // Ends on its own 1.5 s after each start: restarted.
            "flaky": node("exit-after.mjs", json!({"EXIT_AFTER_MS": "1500"})),
        }),
    );
    let mut g = Replica::start(
        &config,
        &dir.join("state"),
        &["--ready-within", "0", "--drain-seconds", "20"],
    );
    let health = g.get("/healthz");
    assert_eq!((health.status, health.body.as_str()), (200, "ok\n"));
    // `late` is silent for 2.5 s and has no snapshot: not ready yet.
    let ready = g.get("/readyz");
    assert_eq!(ready.status, 503, "{ready:?}");
    assert!(ready.body.starts_with("not ready: upstreams"), "{ready:?}");
    wait_until("ready", Duration::from_secs(30), || {
        g.get("/readyz").status == 200
    });

    let id = g.initialize();
    let names = g.tool_names(&id);
    let odd = names
        .iter()
        .find(|n| n.starts_with("odd__") && *n != "odd__ok")
        .unwrap_or_else(|| panic!("no odd tool in {names:?}"))
        .clone();
    assert_eq!(g.call_text(&id, &odd), "ok");
    assert_eq!(g.call_text(&id, "odd__ok"), "ok");
    assert_eq!(g.call_text(&id, "slow__fail"), "failed on purpose");

    let metrics = g.get("/metrics");
    assert_eq!(metrics.status, 200);
    assert!(
        (metrics.header("content-type").unwrap()).starts_with("text/plain; version=0.0.4"),
        "{metrics:?}"
    );
    let lines: Vec<&str> = metrics.body.lines().collect();
    let has = |line: &str| lines.contains(&line);
    // The upstream's own tool name, escaped: one sample, one line.
    let escaped = r#"mcp_preamble_tool_calls_total{upstream="odd",tool="q\"uo\\te\nx}"} 1"#;
    assert!(has(escaped), "{}", metrics.body);
    assert!(has(
        r#"mcp_preamble_tool_calls_total{upstream="odd",tool="ok"} 1"#
    ));
    assert!(has(
        r#"mcp_preamble_tool_call_errors_total{upstream="slow",tool="fail"} 1"#
    ));
    assert!(has(
        r#"mcp_preamble_tool_call_errors_total{upstream="odd",tool="ok"} 0"#
    ));
    assert!(has(
        r#"mcp_preamble_tool_call_duration_seconds_count{upstream="odd",tool="ok"} 1"#
    ));
    assert!(has("mcp_preamble_http_sessions 1"), "{}", metrics.body);
    assert!(has("mcp_preamble_pending_reviews 0"));
    assert!(has(r#"mcp_preamble_upstream_connected{upstream="late"} 1"#));
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with(r#"mcp_preamble_section_tokens{server="slow"} "#)),
        "{}",
        metrics.body
    );
    wait_until("a restart counted", Duration::from_secs(30), || {
        (g.get("/metrics").body.lines())
            .any(|l| l.starts_with(r#"mcp_preamble_upstream_restarts_total{upstream="flaky"} "#))
    });
    for line in lines.iter().filter(|l| !l.starts_with('#')) {
        let value = line.rsplit_once(' ').map(|(_, v)| v);
        assert!(value.is_some_and(|v| v.parse::<f64>().is_ok()), "{line}");
    }

    // A call of 1.5 s in flight when SIGTERM comes: it is answered, then
    // the gateway exits 0.
    let authority = g.authority.clone();
    let session = id.clone();
    let call = std::thread::spawn(move || {
        let message = json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call",
            "params": {"name": "slow__wait", "arguments": {"ms": 1500}}});
        exchange(
            &authority,
            "POST /mcp HTTP/1.1",
            &format!("\r\nMCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: {session}"),
            &message.to_string(),
        )
    });
    wait_until("the call in flight", Duration::from_secs(10), || {
        (g.get("/metrics").body.lines()).any(|l| l == "mcp_preamble_http_requests_in_flight 1")
    });
    let pid = g.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let answer = call.join().unwrap();
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.result()["content"][0]["text"], "waited 1500");
    let end = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = g.child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < end, "still running 20 s after SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    wait_until("the drain logged", Duration::from_secs(5), || {
        g.logged("drained: every request in flight finished")
    });
    assert!(g.logged("SIGTERM: shutting down"));
    // Nothing listens any more.
    assert!(TcpStream::connect(&g.authority).is_err());
}

#[test]
fn the_readmes_two_replicas_run_as_written() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let block = readme
        .split("```sh")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .find(|b| b.contains("--session-key-file session.key"))
        .expect("the README's replica commands");
    let dir = scratch("serve-replicas", "readme");
    config(&dir, json!({"billing": node("invoice.mjs", json!({}))}));
    let mut replicas: Vec<(String, Replica)> = Vec::new();
    let mut fetched = Vec::new();
    for line in block.lines().map(|l| l.split(" # ").next().unwrap().trim()) {
        if line.starts_with("head -c 32") {
            let made = Command::new("sh")
                .args(["-c", line])
                .current_dir(&dir)
                .status();
            assert!(made.unwrap().success(), "{line}");
            assert_eq!(std::fs::read(dir.join("session.key")).unwrap().len(), 32);
        } else if let Some(args) = line.strip_prefix("mcp-preamble ") {
            let mut args: Vec<&str> = args.split_whitespace().collect();
            let at = args.iter().position(|a| *a == "--listen").unwrap() + 1;
            let port = args[at].rsplit(':').next().unwrap().to_string();
            // A free port rather than the README's.
            args[at] = "127.0.0.1:0";
            replicas.push((port, Replica::spawn(&args, &dir)));
        } else if let Some(url) = line.strip_prefix("curl -s http://127.0.0.1:") {
            let (port, path) = url.split_once('/').unwrap();
            let (_, replica) = replicas.iter().find(|(p, _)| p == port).unwrap();
            let path = format!("/{path}");
            wait_until(&path, Duration::from_secs(30), || {
                replica.get(&path).status == 200
            });
            fetched.push(replica.get(&path));
        } else {
            assert!(line.is_empty(), "a line the test does not know: {line}");
        }
    }
    assert_eq!(replicas.len(), 2);
    assert_eq!(fetched[0].body, "ready\n");
    assert!(
        fetched[1]
            .body
            .contains("# TYPE mcp_preamble_tool_calls_total counter")
    );
    let (a, b) = (&replicas[0].1, &replicas[1].1);
    let id = a.initialize();
    assert!(
        b.tool_names(&id)
            .contains(&"billing__list_periods".to_string())
    );
    assert!(
        b.call_text(&id, "billing__list_periods").contains("2026"),
        "a period"
    );
}
