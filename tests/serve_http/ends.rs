//! No call without an end (issue 52, item 2): a call the drain cuts
//! (longer than `--drain-seconds`) ends with a JSON-RPC error on its
//! stream before the stream closes, and when the replica that ran a call
//! is gone, the official SDK clients' resumption of its stream (`GET` with
//! `Last-Event-ID`) on the other replica is refused at once (405), so the
//! call ends within its deadline instead of being answered with empty
//! streams every 3 s. The clients (tests/clients/cut.py, ts-cut.mjs) reach
//! the replicas through a small TCP load balancer of this test's, which
//! sends new connections where it is told.
#![cfg(feature = "cli")]

use crate::common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::gateway::{lines_of, node, scratch, wait_until};
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
    fn start(config: &Path, state: &Path, flags: &[&str]) -> Replica {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
            .args(["serve", "--config", config.to_str().unwrap()])
            .args(["--listen", "127.0.0.1:0", "--ready-within", "30"])
            .args(["--state-dir", state.to_str().unwrap()])
            .args(flags)
            .env("MCP_PREAMBLE_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let url = common::gateway::serving_on(child.stderr.take().unwrap(), Some(log.clone()));
        let authority = common::gateway::authority(&url);
        Replica {
            child,
            authority,
            log,
        }
    }

    fn count(&self, what: &str) -> usize {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.contains(what))
            .count()
    }

    /// The requests in flight, as `/metrics` says.
    fn in_flight(&self) -> usize {
        let Ok(mut stream) = TcpStream::connect(&self.authority) else {
            return 0;
        };
        let head = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
        let _ = stream.write_all(head.as_bytes());
        let mut text = String::new();
        let _ = stream.read_to_string(&mut text);
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix("mcp_preamble_http_requests_in_flight "));
        line.and_then(|n| n.trim().parse().ok()).unwrap_or(0)
    }

    fn signal(&self, signal: &str) {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args([signal, &pid]).status().unwrap();
        assert!(sent.success());
    }
}

/// A load balancer of one rule: every new connection goes to `to`.
struct Balancer {
    url: String,
    to: Arc<Mutex<String>>,
}

impl Balancer {
    fn new(to: &str) -> Balancer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let to = Arc::new(Mutex::new(to.to_string()));
        let target = to.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().map_while(Result::ok) {
                let backend = target.lock().unwrap().clone();
                if let Ok(server) = TcpStream::connect(backend) {
                    pipe(client, server);
                }
            }
        });
        Balancer { url, to }
    }

    fn send_to(&self, authority: &str) {
        *self.to.lock().unwrap() = authority.to_string();
    }
}

/// Bytes copied both ways; when either side ends, both are closed.
fn pipe(client: TcpStream, server: TcpStream) {
    for (from, to) in [
        (client.try_clone().unwrap(), server.try_clone().unwrap()),
        (server, client),
    ] {
        std::thread::spawn(move || {
            let (mut from, mut to) = (from, to);
            let _ = std::io::copy(&mut from, &mut to);
            let _ = from.shutdown(std::net::Shutdown::Both);
            let _ = to.shutdown(std::net::Shutdown::Both);
        });
    }
}

/// One SDK client's call of `slow__wait` (`ms`, within `deadline` s).
struct Call {
    child: Child,
    lines: Receiver<String>,
}

impl Call {
    fn start(client: &str, url: &str, ms: u64, deadline: u64) -> Call {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients");
        let (program, script) = match client {
            "py" => ("python3", "cut.py"),
            _ => ("node", "ts-cut.mjs"),
        };
        let mut child = Command::new(program)
            .arg(dir.join(script))
            .args([url, "slow__wait", &ms.to_string(), &deadline.to_string()])
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let lines = lines_of(child.stdout.take().unwrap());
        let first = lines.recv_timeout(Duration::from_secs(30));
        assert_eq!(first.as_deref(), Ok("calling"), "{client}");
        Call { child, lines }
    }

    /// The call's outcome, within `within`.
    fn outcome(mut self, within: Duration) -> Value {
        let line = self.lines.recv_timeout(within);
        let _ = self.child.kill();
        let _ = self.child.wait();
        serde_json::from_str(&line.expect("the call's outcome")).unwrap()
    }
}

fn ready(which: &str) -> bool {
    crate::clients::clients_ready(which)
}

/// Two replicas of a config with the slow server, sharing a session key;
/// A drains for 5 s.
fn two_replicas(dir: &Path) -> (Replica, Replica) {
    let config = dir.join("mcp.json");
    let servers = json!({"mcpServers": {"slow": node("slow-tool.mjs", json!({}))}});
    std::fs::write(&config, servers.to_string()).unwrap();
    let key = dir.join("session.key");
    std::fs::write(&key, format!("{}\n", "5a".repeat(32))).unwrap();
    let key = key.to_str().unwrap();
    let flags = |drain: &'static str| ["--session-key-file", key, "--drain-seconds", drain];
    let a = Replica::start(&config, &state(dir, "a"), &flags("5"));
    let b = Replica::start(&config, &state(dir, "b"), &flags("10"));
    (a, b)
}

fn state(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}

#[test]
fn a_call_the_drain_cuts_ends_with_an_error_on_its_stream() {
    if !ready("py") || !ready("ts") {
        return;
    }
    let dir = scratch("serve-ends", "drain");
    let (a, _b) = two_replicas(&dir);
    let lb = Balancer::new(&a.authority);
    // Two calls of 12 s, one from each SDK, on A; then SIGTERM with --drain-seconds 5.
    let py = Call::start("py", &lb.url, 12_000, 30);
    let ts = Call::start("ts", &lb.url, 12_000, 30);
    wait_until("both calls in flight", Duration::from_secs(10), || {
        a.in_flight() == 2
    });
    a.signal("-TERM");
    let sent = Instant::now();
    for (client, call) in [("py", py), ("ts", ts)] {
        let outcome = call.outcome(Duration::from_secs(10));
        let at = sent.elapsed();
        let error = outcome["error"].as_str().unwrap_or_default();
        assert!(
            error.contains("the gateway shut down before the call ended"),
            "{client}: {outcome}"
        );
        assert!(
            at < Duration::from_secs(6),
            "{client}: the error came {at:?} after SIGTERM"
        );
        eprintln!("{client}: the error came {at:?} after SIGTERM (--drain-seconds 5)");
    }
    wait_until("the cut logged", Duration::from_secs(5), || {
        a.count("the drain time is over: cut the requests still in flight") == 1
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_resumption_the_other_replica_cannot_replay_is_refused_at_once() {
    if !ready("py") || !ready("ts") {
        return;
    }
    let dir = scratch("serve-ends", "lost");
    let (mut a, b) = two_replicas(&dir);
    let lb = Balancer::new(&a.authority);
    // The TypeScript SDK ends a call whose stream is gone only at the
    // call's own deadline; the Python SDK when its resumptions fail.
    let (py_deadline, ts_deadline) = (40, 15);
    let py = Call::start("py", &lb.url, 60_000, py_deadline);
    let ts = Call::start("ts", &lb.url, 60_000, ts_deadline);
    wait_until("both calls in flight", Duration::from_secs(10), || {
        a.in_flight() == 2
    });
    // A is lost mid-call; the balancer sends what comes next to B.
    lb.send_to(&b.authority);
    a.signal("-KILL");
    let lost = Instant::now();
    let _ = a.child.wait();
    let py = py.outcome(Duration::from_secs(py_deadline + 5));
    let py_after = lost.elapsed();
    let ts = ts.outcome(Duration::from_secs(ts_deadline + 5));
    eprintln!("after the replica was lost: python {py} ({py_after:?}), typescript {ts}");
    // The Python SDK gives up on a refused resumption after its retries
    // (2 of them, 3 s apart: the gateway's `retry`), before its deadline.
    let py_error = py["error"].as_str().unwrap_or_default();
    assert!(
        py_error.contains("reconnection attempts were exhausted"),
        "{py}"
    );
    assert!(py["seconds"].as_f64().unwrap() < py_deadline as f64, "{py}");
    // The TypeScript SDK stops resuming at the first 405; its call ends
    // at its deadline.
    assert!(ts["error"].as_str().is_some(), "{ts}");
    assert!(
        ts["seconds"].as_f64().unwrap() <= ts_deadline as f64 + 1.0,
        "{ts}"
    );
    // One refusal for the TypeScript client, two for the Python one: no
    // empty stream every 3 s.
    let refused = b.count("refused to resume a stream this process cannot replay");
    assert_eq!(refused, 3, "{:?}", b.log.lock().unwrap());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `node tests/servers/cut-stream.mjs` (`REPLAY` 1 or 0; a 2025-era
/// server, or a 2026-07-28 one), killed on drop, and its URL.
struct CutStream(Child, String);

impl Drop for CutStream {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl CutStream {
    fn start(replay: bool) -> CutStream {
        CutStream::of_era(replay, "2025")
    }

    fn of_era(replay: bool, era: &str) -> CutStream {
        common::ensure_npm();
        let mut child = Command::new("node")
            .arg(common::servers_dir().join("cut-stream.mjs"))
            .env("REPLAY", if replay { "1" } else { "0" })
            .env("ERA", era)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let lines = lines_of(child.stdout.take().unwrap());
        let line = lines.recv_timeout(Duration::from_secs(10)).unwrap();
        let url = line.strip_prefix("listening on ").expect(&line).to_string();
        CutStream(child, url)
    }

    fn resumed(&self) -> u64 {
        let authority = common::gateway::authority(&self.1);
        let mut stream = TcpStream::connect(authority).unwrap();
        let head = "GET /resumed HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
        stream.write_all(head.as_bytes()).unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        let body = text.split("\r\n\r\n").nth(1).unwrap_or_default();
        body.trim().parse().unwrap()
    }
}

/// A host on a process's stdio, raw JSON-RPC lines.
struct Host {
    child: Child,
    stdin: std::process::ChildStdin,
    lines: Receiver<String>,
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Host {
    fn start(args: &[&str]) -> Host {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = lines_of(child.stdout.take().unwrap());
        let mut host = Host {
            child,
            stdin,
            lines,
        };
        let init = host.ask(
            1,
            "initialize",
            json!({"protocolVersion": "2025-11-25",
            "capabilities": {}, "clientInfo": {"name": "host", "version": "1"}}),
        );
        assert!(init.get("result").is_some(), "{init}");
        host.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        host
    }

    fn send(&mut self, message: Value) {
        writeln!(self.stdin, "{message}").unwrap();
    }

    /// The answer to request `id` of `method`, within 20 s.
    fn ask(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let end = Instant::now() + Duration::from_secs(20);
        loop {
            let left = end.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).expect("an answer");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
        }
    }
}

/// Issue 50, item 6: an upstream whose event stream closes mid-call.
/// Through `serve` (rmcp's client: it resumes with `Last-Event-ID`) and
/// `wrap --url` (its own resumption): a server that replays the answer
/// gets the call answered; one that cannot replay ends the call with an
/// error, in `serve` at its deadline (`--call-timeout 3`), in `wrap`
/// after two resumptions. A 2026-07-28 upstream's call, posted directly
/// (no rmcp), ends with an error as its stream ends, not at the deadline.
#[test]
fn an_upstream_stream_closed_mid_call_is_resumed_or_the_call_ends() {
    let replays = CutStream::start(true);
    let cannot = CutStream::start(false);
    let modern = CutStream::of_era(false, "2026");
    let dir = scratch("serve-ends", "upstream");
    let config = dir.join("mcp.json");
    let servers = json!({"mcpServers": {"replays": {"url": replays.1}, "cannot": {"url": cannot.1},
        "modern": {"url": modern.1}}});
    std::fs::write(&config, servers.to_string()).unwrap();
    let mut serve = Host::start(&[
        "serve",
        "--config",
        config.to_str().unwrap(),
        "--state-dir",
        dir.join("state").to_str().unwrap(),
        "--ready-within",
        "20",
        "--call-timeout",
        "3",
    ]);
    let call = |name: &str| json!({"name": name, "arguments": {}});
    let answer = serve.ask(2, "tools/call", call("replays__cut"));
    assert_eq!(
        answer["result"]["content"][0]["text"], "resumed call-1",
        "{answer}"
    );
    assert_eq!(replays.resumed(), 1);
    let started = Instant::now();
    let answer = serve.ask(3, "tools/call", call("cannot__cut"));
    let took = started.elapsed();
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("did not answer \"cut\" within 3 s"),
        "{answer}"
    );
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert!(cannot.resumed() >= 1);
    // The other calls of the upstream go on.
    let answer = serve.ask(4, "tools/call", call("cannot__ok"));
    assert_eq!(answer["result"]["content"][0]["text"], "ok", "{answer}");
    // The direct post: the stream's end is the call's, an error before the deadline.
    let started = Instant::now();
    let answer = serve.ask(5, "tools/call", call("modern__cut"));
    let took = started.elapsed();
    assert_eq!(
        answer["error"]["message"],
        "upstream \"modern\" closed its event stream before answering the call to \"cut\"",
        "{answer}"
    );
    assert!(took < Duration::from_secs(3), "{took:?}");
    assert_eq!(modern.resumed(), 0, "posted directly: nothing to resume");
    let answer = serve.ask(6, "tools/call", call("modern__ok"));
    assert_eq!(answer["result"]["content"][0]["text"], "ok", "{answer}");
    drop(serve);

    // wrap --url: resumed once and answered; or failed after two resumptions.
    let mut wrap = Host::start(&["wrap", "--url", &replays.1]);
    let answer = wrap.ask(2, "tools/call", call("cut"));
    assert_eq!(
        answer["result"]["content"][0]["text"], "resumed call-2",
        "{answer}"
    );
    assert_eq!(replays.resumed(), 2);
    drop(wrap);
    let mut wrap = Host::start(&["wrap", "--url", &cannot.1]);
    let before = cannot.resumed();
    let answer = wrap.ask(2, "tools/call", call("cut"));
    assert_eq!(
        answer["error"]["message"],
        "the upstream closed its event stream before answering (resumed 2 times)",
        "{answer}"
    );
    assert_eq!(cannot.resumed() - before, 2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `POST /mcp` of `message` to `authority` (in `session`): the status,
/// the headers (lowercase names) and the body.
fn post(
    authority: &str,
    session: Option<&str>,
    message: &Value,
) -> (u16, Vec<(String, String)>, String) {
    let mut stream = TcpStream::connect(authority).unwrap();
    let body = message.to_string();
    let session = session.map_or(String::new(), |s| format!("Mcp-Session-Id: {s}\r\n"));
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: 2025-11-25\r\n{session}Content-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    (status, headers, body.to_string())
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Vec<&'a str> {
    headers
        .iter()
        .filter(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
        .collect()
}

/// Issue 52, item 6: upstreams with state of their own behind replicas.
/// Either each replica names itself (`--replica-id`: the `Mcp-Replica`
/// header and the `mcp_replica` cookie a load balancer keeps a host on
/// one replica by), or the replicas share one upstream over HTTP: a
/// session's calls through A and then B reach the same state.
#[test]
fn stateful_upstreams_behind_two_replicas() {
    let shared = CutStream::start(true);
    let dir = scratch("serve-ends", "affinity");
    let config = dir.join("mcp.json");
    let servers = json!({"mcpServers": {"notes": {"url": shared.1}}});
    std::fs::write(&config, servers.to_string()).unwrap();
    let key = dir.join("session.key");
    std::fs::write(&key, format!("{}\n", "6b".repeat(32))).unwrap();
    let key = key.to_str().unwrap();
    let a = Replica::start(
        &config,
        &state(&dir, "a"),
        &["--session-key-file", key, "--replica-id", "a"],
    );
    let b = Replica::start(
        &config,
        &state(&dir, "b"),
        &["--session-key-file", key, "--replica-id", "b"],
    );

    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "host", "version": "1"}}});
    let (status, headers, _) = post(&a.authority, None, &init);
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "mcp-replica"), ["a"]);
    assert_eq!(
        header(&headers, "set-cookie"),
        ["mcp_replica=a; Path=/; HttpOnly; SameSite=Lax"]
    );
    let session = header(&headers, "mcp-session-id")[0].to_string();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(&a.authority, Some(&session), &initialized).0, 202);
    let tally = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "notes__tally", "arguments": {}}});
    let (status, headers, body) = post(&a.authority, Some(&session), &tally);
    assert_eq!(status, 200, "{body}");
    assert_eq!(header(&headers, "mcp-replica"), ["a"]);
    assert!(body.contains(r#""text":"1""#), "{body}");
    // The same session on B: B names itself, and the one upstream counts on.
    let (status, headers, body) = post(&b.authority, Some(&session), &tally);
    assert_eq!(status, 200, "{body}");
    assert_eq!(header(&headers, "mcp-replica"), ["b"]);
    assert!(body.contains(r#""text":"2""#), "{body}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The JSON-RPC message of an answer's body: a JSON body, or the last
/// `data:` line of an event stream.
fn message_of(body: &str) -> Value {
    let data = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .rfind(|d| !d.trim().is_empty());
    serde_json::from_str(data.unwrap_or(body).trim()).unwrap_or(Value::Null)
}

/// A 2025 session on `authority`: its id.
fn open_session(authority: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "host", "version": "1"}}});
    let (status, headers, body) = post(authority, None, &init);
    assert_eq!(status, 200, "{body}");
    let session = header(&headers, "mcp-session-id")[0].to_string();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(authority, Some(&session), &initialized).0, 202);
    session
}

fn names(authority: &str, session: &str) -> Vec<String> {
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
    let (status, _, body) = post(authority, Some(session), &list);
    assert_eq!(status, 200, "{body}");
    let tools = message_of(&body)["result"]["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    tools
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

fn text(authority: &str, session: &str, tool: &str) -> String {
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": tool, "arguments": {}}});
    let (status, _, body) = post(authority, Some(session), &call);
    assert_eq!(status, 200, "{body}");
    let message = message_of(&body);
    message["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Issue 52, item 5: SIGHUP re-reads the server config. An upstream
/// added is served without a restart while the others (their process, the
/// host's session) go on; an edit that does not read is refused and
/// logged, the running config kept; with `--watch-config` an upstream
/// removed from the file leaves without a signal.
#[test]
fn sighup_reloads_the_server_config() {
    let dir = scratch("serve-ends", "reload");
    let config = dir.join("mcp.json");
    let slow = json!({"slow": node("slow-tool.mjs", json!({}))});
    let write = |servers: &Value| {
        std::fs::write(&config, json!({"mcpServers": servers}).to_string()).unwrap()
    };
    write(&slow);
    let g = Replica::start(&config, &state(&dir, "g"), &[]);
    let session = open_session(&g.authority);
    assert!(names(&g.authority, &session).contains(&"slow__pid".to_string()));
    let pid = text(&g.authority, &session, "slow__pid");
    assert!(pid.parse::<u32>().is_ok(), "{pid}");

    // Added: billing's tools come to the same session; slow is the same process.
    let both = json!({"slow": slow["slow"], "billing": node("invoice.mjs", json!({}))});
    write(&both);
    g.signal("-HUP");
    wait_until("billing served", Duration::from_secs(30), || {
        names(&g.authority, &session).contains(&"billing__list_periods".to_string())
    });
    assert_eq!(g.count("reloaded the config"), 1);
    assert_eq!(text(&g.authority, &session, "slow__pid"), pid);

    // Not JSON: refused, logged, and everything served as before.
    std::fs::write(&config, "{\"mcpServers\": ").unwrap();
    g.signal("-HUP");
    wait_until("the refusal logged", Duration::from_secs(10), || {
        g.count("config reload refused") == 1
    });
    let served = names(&g.authority, &session);
    assert!(
        served.contains(&"billing__list_periods".to_string()),
        "{served:?}"
    );
    assert_eq!(text(&g.authority, &session, "slow__pid"), pid);

    // Removed: slow's tools leave; billing goes on.
    write(&json!({"billing": both["billing"]}));
    g.signal("-HUP");
    wait_until("slow gone", Duration::from_secs(10), || {
        !names(&g.authority, &session).contains(&"slow__pid".to_string())
    });
    assert!(names(&g.authority, &session).contains(&"billing__list_periods".to_string()));
    drop(g);

    // With --watch-config, no signal: the file's change is enough.
    let w = Replica::start(&config, &state(&dir, "w"), &["--watch-config"]);
    let session = open_session(&w.authority);
    write(&both);
    wait_until("slow served", Duration::from_secs(30), || {
        names(&w.authority, &session).contains(&"slow__pid".to_string())
    });
    let _ = std::fs::remove_dir_all(&dir);
}
