//! `mcp-preamble serve --listen` as replicas and as an operated service
//! (issue 36, items 2 and 4): two gateways reading one session key serve
//! each other's sessions (lists, calls, progress); a changed, malformed or
//! expired id is refused with the transport spec's status; `/healthz`,
//! `/readyz` and `/metrics` tell what they should; SIGTERM lets a call in
//! flight finish and exits 0; and issue 36's team deployment end to end:
//! two replicas on a non-loopback address with a tokens file and the
//! review state in a real `redis-server` (skipped without one, unless
//! `MCP_PREAMBLE_REQUIRE_REDIS=1`). Every wait is bounded.
#![cfg(feature = "cli")]

use crate::common;

use common::cli::run;

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::gateway::{node, non_loopback, scratch, wait_until};
use common::raw_http::{Answer, exchange};
use common::redis::Redis;
use serde_json::{Value, json};

/// A gateway process on a free loopback port, killed on drop.
struct Replica {
    child: Child,
    authority: String,
    log: Arc<Mutex<Vec<String>>>,
    /// Sent as `Authorization: Bearer …` with every MCP request.
    token: Option<String>,
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
        let log = Arc::new(Mutex::new(Vec::new()));
        let url = common::gateway::serving_on(child.stderr.take().unwrap(), Some(log.clone()));
        // Bound to every address: reached through loopback.
        let authority = common::gateway::authority(&url).replace("0.0.0.0", "127.0.0.1");
        Replica {
            child,
            authority,
            log,
            token: None,
        }
    }

    /// The same replica, its MCP requests sent with `token`.
    fn with_token(mut self, token: &str) -> Replica {
        self.token = Some(token.to_string());
        self
    }

    /// The log lines so far.
    fn log_lines(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    fn logged(&self, what: &str) -> bool {
        self.log.lock().unwrap().iter().any(|l| l.contains(what))
    }

    fn get(&self, path: &str) -> Answer {
        exchange(&self.authority, &format!("GET {path} HTTP/1.1"), "", "")
    }

    /// `GET path` with this replica's token, when it has one.
    fn get_authorized(&self, path: &str) -> Answer {
        let token = (self.token.as_ref())
            .map_or(String::new(), |t| format!("\r\nAuthorization: Bearer {t}"));
        exchange(&self.authority, &format!("GET {path} HTTP/1.1"), &token, "")
    }

    /// A JSON-RPC POST to `/mcp`, in session `session` when given.
    fn post(&self, session: Option<&str>, message: &Value) -> Answer {
        let mut headers = String::from("\r\nMCP-Protocol-Version: 2025-11-25");
        if let Some(id) = session {
            headers.push_str(&format!("\r\nMcp-Session-Id: {id}"));
        }
        if let Some(token) = &self.token {
            headers.push_str(&format!("\r\nAuthorization: Bearer {token}"));
        }
        exchange(
            &self.authority,
            "POST /mcp HTTP/1.1",
            &headers,
            &message.to_string(),
        )
    }

    /// A `DELETE` of `session`: its status.
    fn delete(&self, session: &str) -> u16 {
        let mut headers =
            format!("\r\nMCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: {session}");
        if let Some(token) = &self.token {
            headers.push_str(&format!("\r\nAuthorization: Bearer {token}"));
        }
        exchange(&self.authority, "DELETE /mcp HTTP/1.1", &headers, "").status
    }

    /// An `initialize` (no session begins until `notifications/initialized`).
    fn initialize_answer(&self) -> Answer {
        self.post(
            None,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "replica-test", "version": "1"}}}),
        )
    }

    /// The `instructions` a new session's `initialize` gets.
    fn instructions(&self) -> String {
        let answer = self.initialize_answer();
        assert_eq!(answer.status, 200, "{answer:?}");
        (answer.expect_result()["instructions"].as_str())
            .unwrap_or_default()
            .to_string()
    }

    /// A new session: `initialize`, then `notifications/initialized`; its id.
    fn initialize(&self) -> String {
        let answer = self.initialize_answer();
        assert_eq!(answer.status, 200, "{answer:?}");
        let id = answer
            .header("mcp-session-id")
            .expect("a session id")
            .to_string();
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
        let result = answer.expect_result();
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
        answer.expect_result()["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}

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
    assert_eq!(call.expect_result()["content"][0]["text"], "job done");
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

    // A DELETE on A ends the session there for good: A does not rebuild
    // it from the id. Without shared state B does not know of it.
    assert_eq!(a.delete(&id), 204);
    let answer = a.request(&id, 11, "tools/list", json!({}));
    assert_eq!(answer.status, 404, "{answer:?}");
    assert_eq!(answer.body, "not found: the session was ended");
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

/// `mcp-preamble args…`, run to its end.
/// Asserts `out` exited 0; its stdout.
fn succeeded(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

const TOKEN: &str = "team-token-0123456789abcdef";

/// Issue 36's team deployment end to end: two replicas on a non-loopback
/// address with a tokens file, one session key and the review state in a
/// real Redis. Without a token: 401 and the metadata challenge; a session
/// begun on A goes on on B (list, call, progress); a held change approved
/// with `pin --state --approve` reaches both replicas' `initialize` within
/// 2 s; Redis stopped, both keep serving and report not ready; Redis back,
/// both are ready and a second approval reaches both within 2 s.
#[test]
fn a_team_of_two_replicas_with_tokens_and_review_state_in_redis() {
    let Some(mut redis) = Redis::start("team") else {
        return;
    };
    let url = redis.url();
    let dir = scratch("serve-replicas", "team");
    let text = dir.join("billing.txt");
    std::fs::write(&text, "Call first before second. Reviewed text.").unwrap();
    // ttlMs 200: each replica asks server/discover again and sees new text.
    let config = config(
        &dir,
        json!({
            "billing": node("changing.mjs", json!({
                "INSTRUCTIONS_FILE": text.display().to_string(), "TTL_MS": "200"})),
            "progress": node("progress.mjs", json!({})),
        }),
    );
    let config = config.to_str().unwrap();
    let policy = dir.join("mcp-preamble.toml");
    std::fs::write(&policy, "version = 1\n[defaults]\non_change = \"hold\"\n").unwrap();
    let out = run(&["pin", "--config", config, "--state", &url]);
    assert!(succeeded(&out).contains("billing: pinned (new)"));

    let tokens = dir.join("tokens.txt");
    std::fs::write(&tokens, format!("{TOKEN}\n")).unwrap();
    let key = key_file(&dir);
    let listen = non_loopback();
    let replica = |name: &str| {
        let state_dir = dir.join(name);
        let args = [
            "serve",
            "--config",
            config,
            "--policy",
            policy.to_str().unwrap(),
            "--listen",
            &listen,
            "--auth-tokens",
            tokens.to_str().unwrap(),
            "--behind-proxy",
            "--session-key-file",
            key.to_str().unwrap(),
            "--state",
            &url,
            "--state-dir",
            state_dir.to_str().unwrap(),
        ];
        Replica::spawn(&args, &dir).with_token(TOKEN)
    };
    let (a, b) = (replica("a"), replica("b"));
    let both = [&a, &b];
    for r in both {
        wait_until("ready", Duration::from_secs(30), || {
            r.get("/readyz").status == 200
        });
    }

    // No token: refused with the challenge that names the metadata.
    for r in both {
        let refused = exchange(
            &r.authority,
            "POST /mcp HTTP/1.1",
            "\r\nMCP-Protocol-Version: 2025-11-25",
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "no-token", "version": "1"}}})
            .to_string(),
        );
        assert_eq!(refused.status, 401, "{refused:?}");
        let challenge = refused.header("www-authenticate").unwrap_or_default();
        assert_eq!(
            challenge,
            format!(
                "Bearer resource_metadata=\"https://{}/.well-known/oauth-protected-resource/mcp\"",
                r.authority
            )
        );
    }

    // A session begun on A goes on on B: a list, a call, progress.
    let id = a.initialize();
    let names = b.tool_names(&id);
    for tool in ["billing__first", "progress__steps"] {
        assert!(names.contains(&tool.to_string()), "{names:?}");
    }
    assert_eq!(b.call_text(&id, "billing__first"), "first");
    let call = b.request(
        &id,
        7,
        "tools/call",
        json!({"name": "progress__steps", "arguments": {"n": 2, "gap_ms": 10},
               "_meta": {"progressToken": "team"}}),
    );
    assert_eq!(call.status, 200, "{call:?}");
    let progress: Vec<Value> = (call.messages().into_iter())
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 2, "{call:?}");
    assert!(
        progress
            .iter()
            .all(|p| p["params"]["progressToken"] == "team")
    );
    assert_eq!(call.expect_result()["content"][0]["text"], "job done");

    // The text changes: each replica holds it and serves the reviewed one.
    let held = |r: &Replica| {
        (r.log_lines().iter())
            .filter(|l| l.contains("awaits review (instructions changed"))
            .count()
    };
    std::fs::write(&text, "Call first before second. Changed text.").unwrap();
    for r in both {
        wait_until("the change held", Duration::from_secs(10), || held(r) >= 1);
        assert!(r.instructions().contains("Reviewed text."));
    }
    let approve = [
        "pin",
        "--config",
        config,
        "--state",
        &url,
        "--approve",
        "billing",
    ];
    assert!(succeeded(&run(&approve)).contains("billing: pinned again"));
    let approved = Instant::now();
    wait_until(
        "the approval on both within 2 s",
        Duration::from_secs(2),
        || {
            both.iter()
                .all(|r| r.instructions().contains("Changed text."))
        },
    );
    eprintln!("approval served on both after {:?}", approved.elapsed());

    // Redis stopped: both serve what they hold and stay ready for a load
    // balancer; `/readyz?strict` and the metric tell Redis is away.
    redis.down();
    for r in both {
        wait_until("strictly not ready", Duration::from_secs(10), || {
            let ready = r.get("/readyz?strict");
            ready.status == 503
                && ready.body == "not ready: state (the shared review state does not answer)\n"
        });
        let ready = r.get("/readyz");
        assert_eq!((ready.status, ready.body.as_str()), (200, "ready\n"));
        let metrics = r.get_authorized("/metrics").body;
        assert!(
            metrics.contains("\nmcp_preamble_ready_check{check=\"state\"} 0\n"),
            "{metrics}"
        );
        let health = r.get("/healthz");
        assert_eq!((health.status, health.body.as_str()), (200, "ok\n"));
        assert!(r.instructions().contains("Changed text."));
        let session = r.initialize();
        assert!(
            r.tool_names(&session)
                .contains(&"billing__first".to_string())
        );
        assert!(r.tool_names(&id).contains(&"billing__first".to_string()));
    }

    // Redis back (empty): ready again; another held change, approved,
    // reaches both within 2 s.
    redis.up();
    for r in both {
        wait_until("ready again", Duration::from_secs(10), || {
            r.get("/readyz?strict").status == 200
        });
    }
    let before = both.map(held);
    std::fs::write(&text, "Call first before second. Third text.").unwrap();
    for (r, before) in both.into_iter().zip(before) {
        wait_until("the second change held", Duration::from_secs(10), || {
            held(r) > before
        });
        assert!(r.instructions().contains("Changed text."));
    }
    assert!(succeeded(&run(&approve)).contains("billing: pinned"));
    wait_until(
        "the second approval on both within 2 s",
        Duration::from_secs(2),
        || {
            both.iter()
                .all(|r| r.instructions().contains("Third text."))
        },
    );

    // A session a DELETE ends on B is refused by A within 2 s too.
    let ended = a.initialize();
    assert!(b.tool_names(&ended).contains(&"billing__first".to_string()));
    assert_eq!(b.delete(&ended), 204);
    let deleted = Instant::now();
    let refused = |r: &Replica| {
        let answer = r.request(&ended, 12, "tools/list", json!({}));
        answer.status == 404 && answer.body == "not found: the session was ended"
    };
    assert!(refused(&b));
    wait_until("the DELETE on A within 2 s", Duration::from_secs(2), || {
        refused(&a)
    });
    eprintln!("the DELETE refused on A after {:?}", deleted.elapsed());
    // Other sessions go on.
    assert!(a.tool_names(&id).contains(&"billing__first".to_string()));
    drop((a, b));
    let _ = std::fs::remove_dir_all(&dir);
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
    assert_eq!(answer.expect_result()["content"][0]["text"], "waited 1500");
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

/// The README's two replicas, run as written but for the Redis (this
/// test's), the ports (free ones) and the address (this machine's own,
/// as `non_loopback` picks it).
#[test]
fn the_readmes_two_replicas_run_as_written() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let block = readme
        .split("```sh")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .find(|b| b.contains("--session-key-file session.key"))
        .expect("the README's replica commands")
        .replace("\\\n", " ");
    let Some(redis) = Redis::start("readme") else {
        return;
    };
    let dir = scratch("serve-replicas", "readme");
    config(&dir, json!({"billing": node("invoice.mjs", json!({}))}));
    let url = redis.url();
    let listen = non_loopback();
    let mut replicas: Vec<(String, Replica)> = Vec::new();
    let mut fetched = Vec::new();
    let auth = "-H \"Authorization: Bearer $(head -n 1 tokens.txt)\" ";
    let token = || {
        let tokens = std::fs::read_to_string(dir.join("tokens.txt")).unwrap();
        tokens.lines().next().unwrap().to_string()
    };
    for line in block.lines().map(|l| l.split(" # ").next().unwrap().trim()) {
        if line.starts_with("head -c 32") || line.starts_with("python3 -c") {
            let made = Command::new("sh")
                .args(["-c", line])
                .current_dir(&dir)
                .status();
            assert!(made.unwrap().success(), "{line}");
        } else if let Some(args) = line.strip_prefix("mcp-preamble ") {
            let mut args: Vec<&str> = (args.split_whitespace())
                .map(|a| match a {
                    "redis://127.0.0.1:6379/0" => url.as_str(),
                    a => a,
                })
                .collect();
            if args[0] == "pin" {
                let out = Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
                    .args(&args)
                    .current_dir(&dir)
                    .output()
                    .unwrap();
                succeeded(&out);
                continue;
            }
            let at = args.iter().position(|a| *a == "--listen").unwrap() + 1;
            assert!(args[at].starts_with("0.0.0.0:"), "{line}");
            let port = args[at].rsplit(':').next().unwrap().to_string();
            // This machine's address and a free port rather than the README's.
            args[at] = listen.as_str();
            replicas.push((port, Replica::spawn(&args, &dir).with_token(&token())));
        } else if let Some(rest) = line.strip_prefix("curl -s ") {
            let (with_token, target) = match rest.strip_prefix(auth) {
                Some(target) => (true, target),
                None => (false, rest),
            };
            let target = target.strip_prefix("http://127.0.0.1:").expect(line);
            let (port, path) = target.split_once('/').unwrap();
            let (_, replica) = replicas.iter().find(|(p, _)| p == port).unwrap();
            let path = format!("/{path}");
            let get = || {
                let header = match (with_token, &replica.token) {
                    (true, Some(token)) => format!("\r\nAuthorization: Bearer {token}"),
                    _ => String::new(),
                };
                exchange(
                    &replica.authority,
                    &format!("GET {path} HTTP/1.1"),
                    &header,
                    "",
                )
            };
            wait_until(&path, Duration::from_secs(30), || get().status == 200);
            if with_token {
                assert_eq!(replica.get(&path).status, 401, "{path} needs the token");
            }
            fetched.push(get());
        } else {
            assert!(line.is_empty(), "a line the test does not know: {line}");
        }
    }
    assert_eq!(std::fs::read(dir.join("session.key")).unwrap().len(), 32);
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
    // Redis stopped: strictly not ready, ready for the load balancer, still serving.
    drop(redis);
    wait_until("strictly not ready", Duration::from_secs(10), || {
        a.get("/readyz?strict").status == 503
    });
    assert_eq!(a.get("/readyz").status, 200);
    assert!(
        b.tool_names(&id)
            .contains(&"billing__list_periods".to_string())
    );
}
