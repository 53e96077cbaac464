//! `mcp-preamble serve --listen` against hostile local HTTP clients: idle
//! sockets, half-sent heads and a process out of descriptors do not take
//! the gateway down; an `initialize` flood keeps the live sessions under
//! the cap; a non-local `Origin` and a second `Host` header are refused.
//! Loopback only; every wait is bounded.
#![cfg(feature = "cli")]

mod common;

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
        let dir = std::env::temp_dir().join(format!(
            "mcp-preamble-serve-http-{}-{name}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("mcp.json");
        std::fs::write(&config, json!({"mcpServers": {}}).to_string()).unwrap();
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
        // Refused: the gateway is gone, and the answer is empty.
        let Ok(mut s) = TcpStream::connect(&self.authority) else {
            return String::new();
        };
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let sent = write!(
            s,
            "{head}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
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
