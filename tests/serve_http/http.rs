//! `mcp-preamble serve --listen` against hostile local HTTP clients: idle
//! sockets, half-sent heads and a process out of descriptors do not take
//! the gateway down; an `initialize` flood keeps the live sessions under
//! the cap; a non-local `Origin`, a foreign `Host` and a second `Host` header
//! are refused, by the one gate, before the fast call, the probes and rmcp.
//! Loopback only; every wait is bounded.
#![cfg(feature = "cli")]

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

/// A gateway with no upstream on a free loopback port, killed on drop.
struct Gateway {
    child: Child,
    authority: String,
    dir: PathBuf,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Gateway {
    /// Started with `flags`, under `ulimit -n nofile` when given.
    fn start(name: &str, flags: &[&str], nofile: Option<u32>) -> Gateway {
        Gateway::serving(name, json!({}), flags, nofile)
    }

    /// Started in front of `servers` (`mcpServers`).
    fn serving(
        name: &str,
        servers: serde_json::Value,
        flags: &[&str],
        nofile: Option<u32>,
    ) -> Gateway {
        let dir = std::env::temp_dir().join(format!(
            "mcp-preamble-serve-http-{}-{name}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("mcp.json");
        std::fs::write(&config, json!({"mcpServers": servers}).to_string()).unwrap();
        let bin = env!("CARGO_BIN_EXE_mcp-preamble");
        let mut command = match nofile {
            Some(n) => {
                let mut c = Command::new("sh");
                c.args(["-c", &format!("ulimit -n {n} && exec \"$0\" \"$@\""), bin]);
                c
            }
            None => Command::new(bin),
        };
        let mut child = command
            .args(["serve", "--config", config.to_str().unwrap()])
            .args(["--listen", "127.0.0.1:0"])
            .args(flags)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let url = common::gateway::serving_on(child.stderr.take().unwrap(), None);
        let authority = common::gateway::authority(&url);
        Gateway {
            child,
            authority,
            dir,
        }
    }

    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(&self.authority).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s
    }

    /// Sends `head` (request line and headers, without the blank line)
    /// with `body`, and reads the whole answer (`Connection: close`).
    fn exchange(&self, head: &str, body: &str) -> String {
        self.exchange_accepting(head, body, "application/json, text/event-stream")
    }

    /// [`Gateway::exchange`] with `accept` as the `Accept` header.
    fn exchange_accepting(&self, head: &str, body: &str, accept: &str) -> String {
        // Refused: the gateway is gone, and the answer is empty.
        let Ok(mut s) = TcpStream::connect(&self.authority) else {
            return String::new();
        };
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let sent = write!(
            s,
            "{head}\r\nContent-Type: application/json\r\n\
             Accept: {accept}\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        );
        let mut answer = String::new();
        if sent.is_ok() {
            let _ = s.read_to_string(&mut answer);
        }
        answer
    }

    /// An `initialize` with `Host` this gateway and `headers` added.
    fn initialize(&self, headers: &str) -> String {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}})
        .to_string();
        let head = format!("POST /mcp HTTP/1.1\r\nHost: {}{headers}", self.authority);
        self.exchange(&head, &body)
    }

    fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

/// The `Mcp-Session-Id` of an answer.
fn session_id(answer: &str) -> Option<String> {
    answer.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("mcp-session-id")
            .then(|| value.trim().to_string())
    })
}

fn answered(answer: &str) -> bool {
    answer.starts_with("HTTP/1.1 200") && answer.contains("\"serverInfo\"")
}

#[test]
fn idle_sockets_and_slow_heads_leave_the_gateway_answering_a_new_client() {
    // 40 descriptors for a gateway given 90 sockets: the accept loop runs
    // out of descriptors (EMFILE) until the late heads are closed.
    let mut gateway = Gateway::start("exhaust", &["--header-timeout", "1"], Some(40));
    let mut held = Vec::new();
    for i in 0..90 {
        // A refused connection is the gateway gone; the assertions say so.
        let Ok(mut s) = TcpStream::connect(&gateway.authority) else {
            break;
        };
        if i % 3 == 0 {
            // Half a request head, never finished.
            let _ = write!(
                s,
                "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Ty",
                gateway.authority
            );
        }
        held.push(s);
    }
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    let answer = gateway.initialize("");
    let alive = gateway.alive();
    drop(held);
    assert!(alive, "the gateway exited");
    assert!(answered(&answer), "{answer}");
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn a_connection_that_moves_nothing_is_closed_after_the_idle_timeout() {
    let gateway = Gateway::start(
        "idle",
        &["--idle-timeout", "1", "--header-timeout", "60"],
        None,
    );
    let mut s = gateway.connect();
    let started = Instant::now();
    let mut buf = [0u8; 64];
    // Closed by the gateway: end of stream (or a reset), not the read timeout.
    let read = s.read(&mut buf);
    assert!(
        matches!(read, Ok(0))
            || read
                .as_ref()
                .is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset),
        "{read:?} after {:?}",
        started.elapsed()
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(answered(&gateway.initialize("")));
}

#[test]
fn connections_past_the_cap_wait_until_one_closes() {
    let gateway = Gateway::start(
        "cap",
        &[
            "--max-connections",
            "2",
            "--header-timeout",
            "60",
            "--idle-timeout",
            "60",
        ],
        None,
    );
    let held: Vec<TcpStream> = (0..2).map(|_| gateway.connect()).collect();
    std::thread::sleep(Duration::from_millis(300));
    // A third client waits in the listen queue: its head is not even read.
    let mut third = gateway.connect();
    third
        .set_read_timeout(Some(Duration::from_millis(1500)))
        .unwrap();
    write!(
        third,
        "GET /mcp HTTP/1.1\r\nHost: {}\r\n\r\n",
        gateway.authority
    )
    .unwrap();
    let mut buf = [0u8; 12];
    let early = third.read(&mut buf);
    assert!(early.is_err(), "answered past the cap: {early:?}");
    // One closes; the third is served.
    drop(held);
    third
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let read = third.read(&mut buf).unwrap();
    assert!(buf[..read].starts_with(b"HTTP/1.1"), "{:?}", &buf[..read]);
}

#[test]
fn an_initialize_flood_keeps_the_live_sessions_under_the_cap() {
    let gateway = Gateway::start("flood", &["--max-sessions", "4"], None);
    let ids: Vec<String> = (0..20)
        .map(|_| {
            let answer = gateway.initialize("");
            session_id(&answer).unwrap_or_else(|| panic!("no session: {answer}"))
        })
        .collect();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let live: Vec<&String> = ids
        .iter()
        .filter(|id| {
            let head = format!(
                "POST /mcp HTTP/1.1\r\nHost: {}\r\nMcp-Session-Id: {id}",
                gateway.authority
            );
            gateway
                .exchange(&head, &initialized)
                .starts_with("HTTP/1.1 2")
        })
        .collect();
    assert!(live.len() <= 4, "{} live sessions", live.len());
    assert!(
        live.contains(&ids.last().unwrap()),
        "the newest session was closed"
    );
    let fresh = gateway.initialize("");
    assert!(answered(&fresh), "{fresh}");
    assert!(session_id(&fresh).is_some());
}

#[test]
fn a_session_without_requests_is_closed_after_the_session_idle() {
    let gateway = Gateway::start("expiry", &["--session-idle", "1"], None);
    let answer = gateway.initialize("");
    let id = session_id(&answer).unwrap_or_else(|| panic!("no session: {answer}"));
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nMcp-Session-Id: {id}",
        gateway.authority
    );
    std::thread::sleep(Duration::from_millis(3000));
    let late = gateway.exchange(&head, &initialized);
    assert!(late.starts_with("HTTP/1.1 404"), "{late}");
}

#[test]
fn a_request_from_a_non_local_origin_is_refused() {
    let gateway = Gateway::start("origin", &[], None);
    for origin in [
        "http://evil.example",
        "https://localhost.evil.example",
        "null",
    ] {
        let answer = gateway.initialize(&format!("\r\nOrigin: {origin}"));
        assert!(answer.starts_with("HTTP/1.1 403"), "{origin}: {answer}");
        assert!(!answer.contains("serverInfo"), "{answer}");
    }
    let port = gateway.authority.rsplit(':').next().unwrap().to_string();
    for origin in [
        format!("http://localhost:{port}"),
        format!("http://127.0.0.1:{port}"),
        "http://[::1]:3000".to_string(),
    ] {
        let answer = gateway.initialize(&format!("\r\nOrigin: {origin}"));
        assert!(answered(&answer), "{origin}: {answer}");
    }
    assert!(answered(&gateway.initialize("")));
}

/// The value of header `name` in a raw answer.
fn header<'a>(answer: &'a str, name: &str) -> Option<&'a str> {
    let head = answer.split("\r\n\r\n").next()?;
    head.lines().find_map(|line| {
        let (n, value) = line.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

#[test]
fn a_page_of_a_local_origin_gets_its_preflight_and_reads_the_answer() {
    let gateway = Gateway::start("cors", &[], None);
    let page = "http://localhost:5173";
    let preflight = |origin: &str| {
        let head = format!(
            "OPTIONS /mcp HTTP/1.1\r\nHost: {}\r\nOrigin: {origin}\r\n\
             Access-Control-Request-Method: POST\r\n\
             Access-Control-Request-Headers: content-type, Mcp-Protocol-Version, x-not-mcp",
            gateway.authority
        );
        gateway.exchange(&head, "")
    };
    let answer = preflight(page);
    assert!(answer.starts_with("HTTP/1.1 204"), "{answer}");
    assert_eq!(header(&answer, "access-control-allow-origin"), Some(page));
    assert_eq!(
        header(&answer, "access-control-allow-methods"),
        Some("GET, POST, DELETE")
    );
    // Only the headers MCP clients send.
    assert_eq!(
        header(&answer, "access-control-allow-headers"),
        Some("content-type, mcp-protocol-version")
    );
    // The call itself: readable by that page, with its session id.
    let answer = gateway.initialize(&format!("\r\nOrigin: {page}"));
    assert!(answered(&answer), "{answer}");
    assert_eq!(header(&answer, "access-control-allow-origin"), Some(page));
    assert!(
        header(&answer, "access-control-expose-headers")
            .is_some_and(|h| h.contains("Mcp-Session-Id")),
        "{answer}"
    );
    // Another site's page gets neither.
    let answer = preflight("http://evil.example");
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    assert_eq!(header(&answer, "access-control-allow-origin"), None);
    // A request without an origin (not a browser's) is answered as before.
    let answer = gateway.initialize("");
    assert!(answered(&answer), "{answer}");
    assert_eq!(header(&answer, "access-control-allow-origin"), None);
}

#[test]
fn a_request_with_two_host_headers_is_refused() {
    let gateway = Gateway::start("host", &[], None);
    for second in ["attacker.example", "localhost"] {
        let answer = gateway.initialize(&format!("\r\nHost: {second}"));
        assert!(answer.starts_with("HTTP/1.1 400"), "{second}: {answer}");
        assert!(!answer.contains("serverInfo"), "{answer}");
    }
}

#[test]
fn a_stateless_call_answered_by_its_result_alone_is_one_json_body() {
    let gateway = Gateway::start("json", &[], None);
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}}}})
    .to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list",
        gateway.authority
    );
    let answer = gateway.exchange(&head, &body);
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or_default();
    assert!(head.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        head.lines()
            .any(|l| l.eq_ignore_ascii_case("content-type: application/json")),
        "{answer}"
    );
    let message: serde_json::Value = serde_json::from_str(body.trim()).expect(body);
    assert_eq!(message["id"], 7, "{answer}");
    assert!(message["result"]["tools"].is_array(), "{answer}");
}

/// The fast lane's count in `/metrics`.
fn lane_calls(gateway: &Gateway) -> u64 {
    let head = format!("GET /metrics HTTP/1.1\r\nHost: {}", gateway.authority);
    let answer = gateway.exchange(&head, "");
    let line = answer
        .lines()
        .find(|l| l.starts_with("mcp_preamble_http_fast_lane_calls_total "))
        .unwrap_or_else(|| panic!("no fast lane count: {answer}"));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

/// A stateless `tools/call` of `name` with `arguments` to `gateway`, its
/// `_meta` with `extra` added, and `Accept: accept`.
fn stateless_call(
    gateway: &Gateway,
    id: u64,
    name: &str,
    arguments: serde_json::Value,
    extra: serde_json::Value,
    accept: &str,
) -> String {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}});
    meta.as_object_mut()
        .unwrap()
        .extend(extra.as_object().cloned().unwrap_or_default());
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": name, "arguments": arguments, "_meta": meta}})
    .to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: {name}",
        gateway.authority
    );
    gateway.exchange_accepting(&head, &body, accept)
}

/// A body sent in chunks, joined.
fn dechunked(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            return body.to_string();
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// Status line, content type and body of an answer: what a client reads.
fn read_by_client(answer: &str) -> (String, Option<String>, String) {
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or_default();
    let status = head.lines().next().unwrap_or_default().to_string();
    let kind = header(answer, "content-type").map(str::to_string);
    let chunked = header(answer, "transfer-encoding").is_some_and(|t| t.contains("chunked"));
    let body = if chunked {
        dechunked(body)
    } else {
        body.to_string()
    };
    (status, kind, body)
}

/// An `Accept` rmcp reads as the plain one, but with a weight the lane
/// leaves to rmcp: the same call through rmcp.
const PLAIN: &str = "application/json, text/event-stream";
const WEIGHTED: &str = "application/json;q=1, text/event-stream";

#[test]
fn the_fast_lane_answers_a_stateless_call_as_rmcp_does() {
    let servers = json!({
        "billing": common::gateway::node("invoice.mjs", json!({})),
        "jobs": common::gateway::node("progress.mjs", json!({})),
    });
    let gateway = Gateway::serving("lane", servers, &["--ready-within", "30"], None);
    let token = json!({"progressToken": "p-1"});
    let cases = [
        ("billing__list_periods", json!({}), json!({})),
        ("billing__list_periods", json!({}), token.clone()),
        ("billing__get_invoice", json!({"id": "INV-1"}), json!({})),
        ("billing__get_invoice", json!({"id": 7}), json!({})),
        ("no_such_tool", json!({}), json!({})),
        // Progress before the answer: an event stream from both.
        ("jobs__steps", json!({"n": 3, "gap_ms": 5}), token.clone()),
    ];
    let mut results = 0;
    for (id, (name, arguments, extra)) in (1..).zip(cases) {
        let before = lane_calls(&gateway);
        let lane = stateless_call(&gateway, id, name, arguments.clone(), extra.clone(), PLAIN);
        assert_eq!(
            lane_calls(&gateway),
            before + 1,
            "{name}: not the lane: {lane}"
        );
        let rmcp = stateless_call(&gateway, id, name, arguments, extra, WEIGHTED);
        assert_eq!(
            lane_calls(&gateway),
            before + 1,
            "{name}: the lane took {rmcp}"
        );
        assert_eq!(read_by_client(&lane), read_by_client(&rmcp), "{name}");
        results += usize::from(lane.contains("\"result\""));
    }
    assert!(results >= 4, "the upstreams answered too few calls");
    let streamed = stateless_call(&gateway, 9, "jobs__steps", json!({"n": 2}), token, PLAIN);
    let (_, kind, body) = read_by_client(&streamed);
    assert_eq!(kind.as_deref(), Some("text/event-stream"), "{streamed}");
    let events: Vec<&str> = body.split("\n\n").filter(|e| !e.is_empty()).collect();
    assert_eq!(
        events.len(),
        3,
        "two progress events, then the answer: {body}"
    );
    assert!(events[0].contains("\"progressToken\":\"p-1\""), "{body}");
    assert!(events[2].contains("job done"), "{body}");
    // A name header that disagrees with the body is rmcp's to refuse.
    let before = lane_calls(&gateway);
    let body = json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {
        "name": "billing__list_periods", "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: other",
        gateway.authority
    );
    let mismatched = gateway.exchange(&head, &body);
    assert!(mismatched.starts_with("HTTP/1.1 400"), "{mismatched}");
    assert!(mismatched.contains("-32020"), "{mismatched}");
    assert_eq!(lane_calls(&gateway), before, "the lane took it");
}

/// `node tests/servers/http.mjs 0 ARGS…`, killed on drop, and its URL.
struct HttpServer(Child, String);

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn http_server(args: &[&str]) -> HttpServer {
    common::ensure_npm();
    let mut child = Command::new("node")
        .args(["http.mjs", "0"])
        .args(args)
        .current_dir(common::servers_dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    let url = line
        .trim()
        .strip_prefix("listening ")
        .expect(&line)
        .to_string();
    HttpServer(child, url)
}

/// The direct path's count of answered calls for `upstream`, in `/metrics`.
fn direct_calls(gateway: &Gateway, upstream: &str) -> u64 {
    let head = format!("GET /metrics HTTP/1.1\r\nHost: {}", gateway.authority);
    let answer = gateway.exchange(&head, "");
    let series = format!("mcp_preamble_upstream_direct_calls_total{{upstream=\"{upstream}\"}} ");
    let line = answer
        .lines()
        .find(|l| l.starts_with(&series))
        .unwrap_or_else(|| panic!("no direct count of {upstream}: {answer}"));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

/// The result (or error) of a JSON answer or an event stream's last event.
fn outcome(answer: &str) -> serde_json::Value {
    let (_, _, body) = read_by_client(answer);
    let last = body
        .split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .last()
        .unwrap_or_default();
    let json = last.strip_prefix("data: ").unwrap_or(last);
    let message: serde_json::Value = serde_json::from_str(json.trim()).expect(&body);
    message
        .get("result")
        .or_else(|| message.get("error"))
        .cloned()
        .unwrap_or_default()
}

#[test]
fn a_stateless_http_upstream_is_called_directly_and_answers_as_over_rmcp() {
    let invoices = http_server(&[]);
    let jobs = http_server(&["progress"]);
    let servers = json!({
        // The same server twice: over HTTP (posted directly), over stdio (rmcp's client).
        "billing": {"url": invoices.1},
        "stdio": common::gateway::node("invoice.mjs", json!({})),
        "jobs": {"url": jobs.1},
    });
    let gateway = Gateway::serving("direct", servers, &["--ready-within", "30"], None);
    let cases = [
        ("get_invoice", json!({"id": "INV-1"})),
        ("get_invoice", json!({"id": 7})),
        ("list_periods", json!({})),
    ];
    for (id, (tool, arguments)) in (1..).zip(cases) {
        let before = direct_calls(&gateway, "billing");
        let call = |alias: &str| {
            let name = format!("{alias}__{tool}");
            let extra = json!({"progressToken": id});
            stateless_call(&gateway, id, &name, arguments.clone(), extra, PLAIN)
        };
        let (direct, rmcp) = (call("billing"), call("stdio"));
        assert_eq!(outcome(&direct), outcome(&rmcp), "{tool} {arguments}");
        assert_eq!(direct_calls(&gateway, "billing"), before + 1, "{direct}");
    }
    // Progress comes through as it does over rmcp: every step, in order, then the answer.
    let token = json!({"progressToken": "t"});
    let streamed = stateless_call(&gateway, 9, "jobs__steps", json!({"n": 3}), token, PLAIN);
    let (_, kind, body) = read_by_client(&streamed);
    assert_eq!(kind.as_deref(), Some("text/event-stream"), "{streamed}");
    let events: Vec<&str> = body.split("\n\n").filter(|e| !e.is_empty()).collect();
    assert_eq!(events.len(), 4, "{body}");
    for (i, event) in events[..3].iter().enumerate() {
        assert!(
            event.contains(&format!("\"message\":\"job {}/3\"", i + 1)),
            "{body}"
        );
        assert!(event.contains("\"progressToken\":\"t\""), "{body}");
    }
    assert!(events[3].contains("job done"), "{body}");
    assert_eq!(direct_calls(&gateway, "jobs"), 1);
}

#[test]
fn a_host_that_hangs_up_cancels_the_direct_call_upstream() {
    let jobs = http_server(&["progress"]);
    let servers = json!({"jobs": {"url": jobs.1}});
    let gateway = Gateway::serving("direct-cancel", servers, &["--ready-within", "30"], None);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "jobs__steps", "arguments": {"n": 100, "gap_ms": 100}, "_meta": {
        "progressToken": "t",
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let mut s = gateway.connect();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: jobs__steps\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        gateway.authority,
        body.len()
    )
    .unwrap();
    let mut first = [0u8; 512];
    let n = s.read(&mut first).unwrap();
    assert!(
        String::from_utf8_lossy(&first[..n]).contains("200"),
        "no stream"
    );
    drop(s);
    let cancelled = || {
        let answer = stateless_call(&gateway, 2, "jobs__cancelled", json!({}), json!({}), PLAIN);
        outcome(&answer)["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    common::gateway::wait_until("the upstream's cancel", Duration::from_secs(10), || {
        cancelled() == "1"
    });
}

/// A stateless `tools/call` of `name` addressed to `host` (not the gateway's
/// own authority), with `Accept: accept`.
fn call_for_host(gateway: &Gateway, host: &str, name: &str, accept: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": name, "arguments": {}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}}}})
    .to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: {name}"
    );
    gateway.exchange_accepting(&head, &body, accept)
}

#[test]
fn a_foreign_host_is_refused_alike_by_the_fast_call_rmcp_and_the_probes() {
    let servers = json!({"billing": common::gateway::node("invoice.mjs", json!({}))});
    let gateway = Gateway::serving("gate", servers, &["--ready-within", "30"], None);
    // The lane takes this call when it is addressed to the gateway.
    let before = lane_calls(&gateway);
    let own = call_for_host(&gateway, &gateway.authority, "billing__list_periods", PLAIN);
    assert!(own.starts_with("HTTP/1.1 200"), "{own}");
    assert_eq!(lane_calls(&gateway), before + 1, "not the lane: {own}");
    let port = gateway.authority.rsplit(':').next().unwrap();
    for foreign in ["evil.example".to_string(), format!("evil.example:{port}")] {
        let lane = call_for_host(&gateway, &foreign, "billing__list_periods", PLAIN);
        let rmcp = call_for_host(&gateway, &foreign, "billing__list_periods", WEIGHTED);
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}})
        .to_string();
        let init = gateway.exchange(&format!("POST /mcp HTTP/1.1\r\nHost: {foreign}"), &body);
        let probe = gateway.exchange(&format!("GET /healthz HTTP/1.1\r\nHost: {foreign}"), "");
        let refused = read_by_client(&lane);
        assert!(refused.0.starts_with("HTTP/1.1 403"), "{foreign}: {lane}");
        assert_eq!(refused.2, "forbidden: the host is not served", "{lane}");
        for (path, answer) in [("rmcp", &rmcp), ("initialize", &init), ("healthz", &probe)] {
            assert_eq!(
                read_by_client(answer),
                refused,
                "{path} for {foreign}: {answer}"
            );
        }
    }
    assert_eq!(
        lane_calls(&gateway),
        before + 1,
        "a refused call reached the lane"
    );
}

/// The median time of `n` direct calls of `billing__list_periods`.
fn median_call(gateway: &Gateway, n: u64) -> Duration {
    let mut times: Vec<Duration> = (0..n)
        .map(|id| {
            let started = Instant::now();
            let answer = stateless_call(
                gateway,
                100 + id,
                "billing__list_periods",
                json!({}),
                json!({}),
                PLAIN,
            );
            assert!(outcome(&answer)["content"].is_array(), "{answer}");
            started.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

#[test]
fn an_upstream_whose_event_never_ends_costs_another_upstreams_calls_nothing() {
    let invoices = http_server(&[]);
    let endless = http_server(&["endless"]);
    let servers = json!({"billing": {"url": invoices.1}, "flood": {"url": endless.1}});
    let gateway = Gateway::serving("endless", servers, &["--ready-within", "30"], None);
    median_call(&gateway, 5);
    let idle = median_call(&gateway, 31);
    let flooding = std::thread::scope(|s| {
        let flood = s.spawn(|| {
            let name = "flood__list_periods";
            stateless_call(&gateway, 7, name, json!({}), json!({}), PLAIN)
        });
        std::thread::sleep(Duration::from_millis(300));
        let during = median_call(&gateway, 31);
        // The endless event is over the answer's bound (64 MiB) in about 4 s: the call fails then.
        let answer = flood.join().unwrap();
        assert!(outcome(&answer)["message"].is_string(), "{answer}");
        during
    });
    assert_eq!(direct_calls(&gateway, "billing"), 67, "not the direct path");
    assert_eq!(
        direct_calls(&gateway, "flood"),
        1,
        "the flood was not read directly"
    );
    eprintln!("median call: {idle:?} idle, {flooding:?} beside an endless event");
    // Within 2x of the idle gateway (and a millisecond for the timer's grain).
    assert!(
        flooding <= idle * 2 + Duration::from_millis(1),
        "calls took {flooding:?} (median) beside an endless event, {idle:?} idle"
    );
}

/// An `Mcp-Param-*` header (2026-07-28, `x-mcp-header`) that contradicts the
/// body is refused before the upstream sees the call: 400, JSON-RPC -32020
/// (issue 54); one that agrees, and a call without it, are served.
#[test]
fn an_mcp_param_header_that_contradicts_the_body_is_refused() {
    let servers =
        json!({"odd": common::gateway::node("gateway-hostile.mjs", json!({"MODE": "header"}))});
    let gateway = Gateway::serving("param-headers", servers, &["--ready-within", "30"], None);
    let call = |region_header: Option<&str>| {
        let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "odd__route", "arguments": {"region": "eu-west"}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}}}})
        .to_string();
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nMCP-Protocol-Version: 2026-07-28\r\n\
             Mcp-Method: tools/call\r\nMcp-Name: odd__route",
            gateway.authority
        );
        if let Some(value) = region_header {
            head.push_str(&format!("\r\nMcp-Param-Region: {value}"));
        }
        gateway.exchange(&head, &body)
    };
    let lie = call(Some("us-east"));
    assert!(lie.starts_with("HTTP/1.1 400"), "{lie}");
    let (_, body) = lie.split_once("\r\n\r\n").unwrap();
    let error: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(error["id"], 3);
    assert_eq!(error["error"]["code"], -32020, "{error}");
    for agrees in [Some("eu-west"), Some("=?base64?ZXUtd2VzdA==?="), None] {
        let answer = call(agrees);
        assert!(answer.starts_with("HTTP/1.1 200"), "{agrees:?}: {answer}");
        assert!(answer.contains("routed to eu-west"), "{agrees:?}: {answer}");
    }
}

/// A stateless 2026-07-28 POST of `method` with `params` (the host
/// declaring the Tasks extension) and `Mcp-Name: name`.
fn stateless(gateway: &Gateway, method: &str, name: &str, params: serde_json::Value) -> String {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: {method}\r\nMcp-Name: {name}",
        gateway.authority
    );
    gateway.exchange(&head, &body)
}

const TASKS: &str = "io.modelcontextprotocol/tasks";

#[test]
fn a_task_made_over_http_is_read_back_by_its_sealed_id_and_a_foreign_id_is_refused() {
    let upstream = |p: &str| common::gateway::node("tasks.mjs", json!({"PREFIX": p}));
    let servers = json!({"a": upstream("a"), "b": upstream("b")});
    // The session key keys the seal too: every replica reading it hands out and opens the same ids.
    let key = std::env::temp_dir().join(format!("mcp-preamble-tasks-{}.key", std::process::id()));
    std::fs::write(&key, [7u8; 32]).unwrap();
    let flags = [
        "--ready-within",
        "60",
        "--session-key-file",
        key.to_str().unwrap(),
    ];
    let gateway = Gateway::serving("tasks", servers, &flags, None);
    // a's call through the fast lane, b's through rmcp (a weighted Accept): both sealed.
    let extra = json!({"io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}}});
    let lane = lane_calls(&gateway);
    let mut ids = Vec::new();
    for (tool, accept) in [("a__start", PLAIN), ("b__start", WEIGHTED)] {
        let answer = stateless_call(&gateway, 3, tool, json!({}), extra.clone(), accept);
        let result = outcome(&answer);
        assert_eq!(result["resultType"], "task", "{answer}");
        ids.push(result["taskId"].as_str().unwrap().to_string());
    }
    assert_eq!(lane_calls(&gateway), lane + 1);
    assert_eq!(ids[0], format!("a.{}.t1", task_tag(&[7u8; 32], "a", "t1")));
    assert_eq!(ids[1], format!("b.{}.t1", task_tag(&[7u8; 32], "b", "t1")));
    let _ = std::fs::remove_file(&key);
    for (id, done) in ids.iter().zip(["a t1 done", "b t1 done"]) {
        let answer = stateless(&gateway, "tasks/get", id, json!({"taskId": id}));
        let got = outcome(&answer);
        assert_eq!(got["taskId"], json!(id), "{answer}");
        assert_eq!(got["result"]["content"][0]["text"], done, "{answer}");
    }
    let answer = stateless(&gateway, "tasks/get", "t1", json!({"taskId": "t1"}));
    let refused = outcome(&answer);
    assert_eq!(refused["code"], -32602, "{answer}");
    let message = refused["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("unknown task id"), "{answer}");
}

/// The tag a gateway whose `--session-key-file` holds `file` puts on task
/// id `id` of upstream `alias`: HMAC-SHA-256 (RFC 2104) under SHA-256 of
/// `mcp-preamble seal\0` and the file, over the kind (0, a task id), the
/// alias, a zero byte and the id; its first 16 bytes as hex.
fn task_tag(file: &[u8], alias: &str, id: &str) -> String {
    use sha2::{Digest, Sha256};
    let key = Sha256::digest([&b"mcp-preamble seal\0"[..], file].concat());
    let pad = |byte: u8| -> Vec<u8> {
        let mut block = vec![byte; 64];
        for (b, k) in block.iter_mut().zip(key.iter()) {
            *b ^= k;
        }
        block
    };
    let inner = Sha256::digest([pad(0x36), vec![0], alias.into(), vec![0], id.into()].concat());
    let mac = Sha256::digest([pad(0x5c), inner.to_vec()].concat());
    mac[..16].iter().map(|b| format!("{b:02x}")).collect()
}
