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
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

/// A gateway with no upstream on a free loopback port, killed on drop.
struct Gateway {
    child: Child,
    authority: String,
    dir: PathBuf,
    /// Its log's lines so far.
    log: Arc<Mutex<Vec<String>>>,
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
        let log = Arc::new(Mutex::new(Vec::new()));
        let url = common::gateway::serving_on(child.stderr.take().unwrap(), Some(log.clone()));
        let authority = common::gateway::authority(&url);
        Gateway {
            child,
            authority,
            dir,
            log,
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
             Access-Control-Request-Headers: content-type, Mcp-Protocol-Version, x-not-mcp, \
             Mcp-Method, Mcp-Name, Mcp-Param-Region, Mcp-Param-",
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
    // Only the headers MCP clients send (SEP-2243's among them).
    assert_eq!(
        header(&answer, "access-control-allow-headers"),
        Some("content-type, mcp-protocol-version, mcp-method, mcp-name, mcp-param-region")
    );
    // The call itself: readable by that page, with its session id.
    let answer = gateway.initialize(&format!("\r\nOrigin: {page}"));
    assert!(answered(&answer), "{answer}");
    assert_eq!(header(&answer, "access-control-allow-origin"), Some(page));
    assert_eq!(
        header(&answer, "access-control-expose-headers"),
        Some("Mcp-Session-Id, WWW-Authenticate, Retry-After"),
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
    node_http("http.mjs", args)
}

/// `node tests/servers/SCRIPT 0 ARGS…`, killed on drop, and the URL it
/// says it listens on.
fn node_http(script: &str, args: &[&str]) -> HttpServer {
    common::ensure_npm();
    let mut child = Command::new("node")
        .args([script, "0"])
        .args(args)
        .current_dir(common::servers_dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    let url = line.trim().strip_prefix("listening ").expect(&line);
    let url = url.strip_prefix("on ").unwrap_or(url).to_string();
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
    let subscribed = node_http("endless-stream.mjs", &[]);
    let servers = json!({"billing": {"url": invoices.1}, "flood": {"url": endless.1},
        "stream": {"url": subscribed.1}});
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
    // The same gateway: the other upstream's subscription stream floods.
    a_subscription_stream_is_cut_at_the_cap(&gateway, &subscribed);
}

/// Issue 54: an HTTP upstream whose session's GET stream (where its
/// notifications and its requests to the client come) sends an event that
/// never ends once its tool `flood` is called. The gateway cuts that
/// stream at the cap, logs it naming the upstream, and does not open it
/// again; the other upstream's calls are answered while the flood runs,
/// and the flooding upstream's own calls after it.
fn a_subscription_stream_is_cut_at_the_cap(gateway: &Gateway, subscribed: &HttpServer) {
    let streams = || server_json(subscribed, "/streams");
    assert_eq!(
        streams()["opened"],
        1,
        "the GET stream is opened at connect"
    );
    let call = |id, name: &str| {
        outcome(&stateless_call(
            gateway,
            id,
            name,
            json!({}),
            json!({}),
            PLAIN,
        ))
    };
    assert_eq!(
        call(1, "stream__flood")["content"][0]["text"],
        "flooding 1 streams"
    );
    let mut answered = 0;
    while streams()["closed"] != 1 {
        assert!(call(10 + answered, "billing__list_periods")["content"].is_array());
        answered += 1;
        assert!(answered < 2000, "the stream was never cut: {}", streams());
    }
    let cap = mcp_preamble::connect::MAX_SUBSCRIPTION_EVENT;
    let cut = format!("exceeded the maximum size of {cap} bytes");
    common::gateway::wait_until("the cut logged", Duration::from_secs(10), || {
        let log = gateway.log.lock().unwrap();
        let said = |l: &&String| l.contains("subscription stream failed") && l.contains(&cut);
        log.iter()
            .filter(said)
            .any(|l| l.contains("upstream=stream"))
    });
    assert_eq!(call(3, "stream__ok")["content"][0]["text"], "ok");
    assert!(call(4, "billing__list_periods")["content"].is_array());
    let seen = streams();
    eprintln!("{answered} calls answered during the flood; the stream: {seen}");
    assert_eq!(
        (&seen["opened"], &seen["closed"]),
        (&json!(1), &json!(1)),
        "{seen}"
    );
    assert!(seen["sent"].as_u64().unwrap() >= cap as u64, "{seen}");
}

/// The JSON a test server answers at `path` (its own counters).
fn server_json(server: &HttpServer, path: &str) -> serde_json::Value {
    let at = common::gateway::authority(&server.1);
    let mut s = TcpStream::connect(&at).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {at}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let (_, body) = answer.split_once("\r\n\r\n").unwrap();
    serde_json::from_str(body).unwrap()
}

/// Issue 54: a 2026-07-28 upstream whose every `subscriptions/listen`
/// stream is acknowledged and then sends an event that never ends. The
/// gateway cuts each at the cap, logs it naming the upstream, and listens
/// again only after the pause (1 s after a listen that lasted under 10 s,
/// doubling: no stream read back to back); the other upstream's calls and
/// the flooding one's own are answered meanwhile.
#[test]
fn a_listen_whose_event_never_ends_is_cut_and_opened_again_only_after_the_pause() {
    let invoices = http_server(&[]);
    let listening = node_http("endless-stream.mjs", &["listen"]);
    let servers = json!({"billing": {"url": invoices.1}, "listen": {"url": listening.1}});
    let gateway = Gateway::serving("listen", servers, &["--ready-within", "30"], None);
    let call = |id, name: &str| {
        let answer = stateless_call(&gateway, id, name, json!({}), json!({}), PLAIN);
        assert!(outcome(&answer)["content"].is_array(), "{answer}");
    };
    let listens = || server_json(&listening, "/listens")["listens"].clone();
    let mut id = 0;
    // The first listen (at connect) cut, the second opened after the pause and cut.
    common::gateway::wait_until("two listens cut", Duration::from_secs(10), || {
        id += 1;
        call(id, "billing__list_periods");
        call(id, "listen__ok");
        listens()
            .as_array()
            .unwrap()
            .get(1)
            .is_some_and(|l| !l[1].is_null())
    });
    let seen = listens();
    let seen: Vec<(u64, u64)> = (seen.as_array().unwrap().iter())
        .map(|l| (l[0].as_u64().unwrap(), l[1].as_u64().unwrap_or(u64::MAX)))
        .collect();
    eprintln!("listens (opened, closed) in ms: {seen:?}; {id} rounds of calls answered meanwhile");
    let mut pause = 1000;
    for pair in seen.windows(2) {
        let ((_, closed), (opened, _)) = (pair[0], pair[1]);
        // The server sees the hang-up a moment after the gateway saw the cut.
        assert!(
            opened + 100 >= closed.saturating_add(pause),
            "a listen {}ms after the last was cut (pause {pause}ms): {seen:?}",
            opened as i64 - closed as i64
        );
        pause *= 2;
    }
    let cap = mcp_preamble::connect::MAX_SUBSCRIPTION_EVENT;
    let cut = format!("exceeded the maximum size of {cap} bytes");
    common::gateway::wait_until("the cut logged", Duration::from_secs(10), || {
        let log = gateway.log.lock().unwrap();
        let said = |l: &&String| l.contains("subscription stream failed") && l.contains(&cut);
        log.iter()
            .filter(said)
            .any(|l| l.contains("upstream=listen"))
    });
}

/// A 2026-07-28 `tools/call` body of `name` with `arguments`.
fn modern_call(id: u64, name: &str, arguments: serde_json::Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": name, "arguments": arguments, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}}}})
    .to_string()
}

/// The headers of SEP-2243 (2026-07-28) on every inbound path: `Mcp-Method`,
/// `Mcp-Name` and the `Mcp-Param-*` a tool's `x-mcp-header` declares must be
/// there and agree with the body (400, JSON-RPC -32020), a singleton is sent
/// once, an MCP header is capped (431); a 2025 session may omit them, not
/// contradict them. A tool with an invalid annotation is not listed over
/// HTTP. Upstream, a renamed call carries the upstream's own name in its
/// body and `Mcp-Name`, over the direct post and rmcp's client alike, and
/// both pass on a `Mcp-Param-*` header the tool does not declare (once,
/// beside the declared one rmcp writes).
#[test]
fn the_mcp_headers_agree_with_the_body_or_the_request_is_refused() {
    let remote = http_server(&["route"]);
    let servers = json!({
        "odd": common::gateway::node("gateway-hostile.mjs", json!({"MODE": "header"})),
        "remote": {"url": remote.1},
    });
    let gateway = Gateway::serving("mcp-headers", servers, &["--ready-within", "30"], None);
    let post = |headers: &str, body: &str| {
        let head = format!("POST /mcp HTTP/1.1\r\nHost: {}{headers}", gateway.authority);
        gateway.exchange(&head, body)
    };
    let route = modern_call(3, "odd__route", json!({"region": "eu-west"}));
    let v = "\r\nMCP-Protocol-Version: 2026-07-28";
    let all = format!("{v}\r\nMcp-Method: tools/call\r\nMcp-Name: odd__route");
    let long = "x".repeat(9000);
    // (why, headers, status, the JSON-RPC id of a -32020 refusal)
    let cases = [
        (
            "agrees",
            format!("{all}\r\nMcp-Param-Region: eu-west"),
            200,
            None,
        ),
        (
            "base64",
            format!(
                "{v}\r\nMcp-Method: tools/call\r\nMcp-Name: =?base64?b2RkX19yb3V0ZQ==?=\r\nMcp-Param-Region: =?base64?ZXUtd2VzdA==?="
            ),
            200,
            None,
        ),
        (
            "an unknown param header",
            format!("{all}\r\nMcp-Param-Region: eu-west\r\nMcp-Param-Tenant: acme"),
            200,
            None,
        ),
        (
            "a contradicting param",
            format!("{all}\r\nMcp-Param-Region: us-east"),
            400,
            Some(json!(3)),
        ),
        ("no param header", all.clone(), 400, Some(json!(3))),
        (
            "another name",
            format!(
                "{v}\r\nMcp-Method: tools/call\r\nMcp-Name: odd__bad\r\nMcp-Param-Region: eu-west"
            ),
            400,
            Some(json!(3)),
        ),
        (
            "another method",
            format!(
                "{v}\r\nMcp-Method: tools/list\r\nMcp-Name: odd__route\r\nMcp-Param-Region: eu-west"
            ),
            400,
            Some(json!(3)),
        ),
        (
            "no method",
            format!("{v}\r\nMcp-Name: odd__route\r\nMcp-Param-Region: eu-west"),
            400,
            Some(json!(3)),
        ),
        (
            "no name",
            format!("{v}\r\nMcp-Method: tools/call\r\nMcp-Param-Region: eu-west"),
            400,
            Some(json!(3)),
        ),
        (
            "the method twice",
            format!("{all}\r\nMcp-Method: tools/call\r\nMcp-Param-Region: eu-west"),
            400,
            Some(json!(null)),
        ),
        (
            "a param twice",
            format!("{all}\r\nMcp-Param-Region: eu-west\r\nMcp-Param-Region: eu-west"),
            400,
            Some(json!(null)),
        ),
        (
            "a name too long",
            format!("{all}\r\nMcp-Param-Region: eu-west\r\nMcp-Name: {long}"),
            431,
            None,
        ),
    ];
    for (why, headers, status, id) in cases {
        let answer = post(&headers, &route);
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status}")),
            "{why}: {answer}"
        );
        if status == 200 {
            assert!(answer.contains("routed to eu-west"), "{why}: {answer}");
        }
        if let Some(id) = id {
            let error: serde_json::Value =
                serde_json::from_str(read_by_client(&answer).2.trim()).expect(&answer);
            assert_eq!(
                (&error["id"], &error["error"]["code"]),
                (&id, &json!(-32020)),
                "{why}: {error}"
            );
        }
    }
    // A 2025 session: the headers may be left out, not contradicted.
    let session = session_id(&gateway.initialize("")).expect("a session");
    let in_session = format!("\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    assert!(post(&in_session, &initialized).starts_with("HTTP/1.1 2"));
    let call = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
        "name": "odd__route", "arguments": {"region": "eu-west"}}})
    .to_string();
    let served = post(&in_session, &call);
    assert!(served.contains("routed to eu-west"), "{served}");
    let lie = post(&format!("{in_session}\r\nMcp-Param-Region: us-east"), &call);
    assert!(
        lie.starts_with("HTTP/1.1 400") && lie.contains("-32020"),
        "{lie}"
    );
    // Over HTTP the tool with an invalid annotation is not listed.
    let list = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}}}})
    .to_string();
    let listed = post(&format!("{v}\r\nMcp-Method: tools/list"), &list);
    assert!(listed.contains("\"odd__route\""), "{listed}");
    assert!(!listed.contains("\"odd__bad\""), "{listed}");
    // Renamed on the way up: the upstream's own name, in the body and in Mcp-Name.
    let calls = [
        // A header no tool declares: passed on by the direct post.
        (
            "remote__get_invoice",
            json!({"id": "INV-9"}),
            "\r\nMcp-Param-Tenant: acme",
            "invoice INV-9",
        ),
        // Through rmcp's client (an argument in a header): passed on too.
        (
            "remote__route",
            json!({"region": "eu-west"}),
            "\r\nMcp-Param-Region: eu-west\r\nMcp-Param-Trace: t-1",
            "routed to eu-west",
        ),
    ];
    for (id, (name, arguments, extra, text)) in (6..).zip(calls) {
        let headers = format!("{v}\r\nMcp-Method: tools/call\r\nMcp-Name: {name}{extra}");
        let answer = post(&headers, &modern_call(id, name, arguments));
        assert!(answer.contains(text), "{name}: {answer}");
    }
    let seen: serde_json::Value = get_json(&remote.1.replace("/mcp", "/seen"));
    let upstream_calls: Vec<&serde_json::Value> = (seen.as_array().unwrap().iter())
        .filter(|s| s["method"] == "tools/call")
        .collect();
    assert_eq!(upstream_calls.len(), 2, "{seen}");
    for (call, own) in upstream_calls.iter().zip(["get_invoice", "route"]) {
        assert_eq!(call["name"], own, "{seen}");
        assert_eq!(call["headers"]["mcp-name"], own, "{seen}");
        assert_eq!(call["headers"]["mcp-method"], "tools/call", "{seen}");
    }
    assert_eq!(
        upstream_calls[0]["headers"]["mcp-param-tenant"], "acme",
        "{seen}"
    );
    let routed = &upstream_calls[1]["headers"];
    assert_eq!(routed["mcp-param-region"], "eu-west", "{seen}");
    assert_eq!(routed["mcp-param-trace"], "t-1", "{seen}");
    assert_eq!(routed.get("mcp-param-tenant"), None, "{seen}");
    assert_eq!(
        direct_calls(&gateway, "remote"),
        1,
        "get_invoice not posted directly"
    );
}

/// The JSON of a plain `GET url` (a loopback `http://` URL).
fn get_json(url: &str) -> serde_json::Value {
    let authority = url.trim_start_matches("http://").split('/').next().unwrap();
    let path = &url[url.find(authority).unwrap() + authority.len()..];
    let mut s = TcpStream::connect(authority).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let (_, _, body) = read_by_client(&answer);
    serde_json::from_str(body.trim()).expect(&answer)
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

/// Tasks over HTTP: sealed ids read back (`tasks/get`) and listened to
/// (`subscriptions/listen` with `taskIds`: each upstream's status pushed
/// under the sealed id); a foreign id, or a host without the extension,
/// refused.
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
    // Listening to both tasks: each upstream pushes its task's status
    // (`notifications/tasks`), which arrives under the id the host holds.
    let stream = listen(&gateway, json!(ids), true, &["a t1 done", "b t1 done"]);
    let mut pushed: Vec<(String, String)> = (stream.lines())
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l.strip_prefix("data: ")?).ok())
        .filter(|m| m["method"] == "notifications/tasks")
        .map(|m| {
            let p = &m["params"];
            assert_eq!(
                p["_meta"]["io.modelcontextprotocol/subscriptionId"], 7,
                "{m}"
            );
            let text = p["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default();
            (p["taskId"].as_str().unwrap().to_string(), text.to_string())
        })
        .collect();
    pushed.sort();
    let want = [(&ids[0], "a t1 done"), (&ids[1], "b t1 done")];
    assert_eq!(
        pushed,
        want.map(|(i, t)| (i.clone(), t.to_string())),
        "{stream}"
    );
    // An id the gateway did not hand out, or a host without the extension: refused.
    for (task_ids, declared, code) in [(json!(["t1"]), true, -32602), (json!(ids), false, -32003)] {
        let stream = listen(&gateway, task_ids, declared, &["\"error\""]);
        assert!(stream.contains(&format!("\"code\":{code}")), "{stream}");
    }
}

/// A stateless `subscriptions/listen` (id 7) naming `task_ids`, the Tasks
/// extension `declared` or not: its event stream, read until it holds
/// every one of `until` (or 20 s without a byte).
fn listen(
    gateway: &Gateway,
    task_ids: serde_json::Value,
    declared: bool,
    until: &[&str],
) -> String {
    let caps = match declared {
        true => json!({"extensions": {TASKS: {}}}),
        false => json!({}),
    };
    let params = json!({"notifications": {"taskIds": task_ids}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}}});
    let body =
        json!({"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen", "params": params});
    let body = body.to_string();
    let mut s = gateway.connect();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: subscriptions/listen\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        gateway.authority,
        body.len()
    )
    .unwrap();
    let (mut text, mut buffer) = (String::new(), [0u8; 4096]);
    while !until.iter().all(|u| text.contains(u)) {
        match s.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => text.push_str(&String::from_utf8_lossy(&buffer[..n])),
        }
    }
    text
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
