//! A team gateway an operator can run (issue 52): `/metrics` scraped
//! without a token from a replica's own address under `--allowed-host`
//! (`--metrics-listen`), read by a Prometheus text parser; the access log
//! as JSON; per-caller rate limits; and the deployment example of
//! `examples/deploy/` (haproxy with TLS and the README's probe, two
//! replicas, Redis stopped for 30 s under load: no call fails; the systemd
//! unit checked by `systemd-analyze verify`). Without haproxy the last is
//! skipped, unless `MCP_PREAMBLE_REQUIRE_HAPROXY=1` (CI).
#![cfg(feature = "cli")]

use crate::common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::gateway::{node, own_address, scratch, wait_until};
use common::raw_http::{Answer, exchange_on};
use common::redis::Redis;
use serde_json::{Value, json};

const TOKEN_A: &str = "team-token-alpha-0123456789";
const TOKEN_B: &str = "team-token-bravo-0123456789";

/// A process killed on drop, its stderr lines kept.
struct Running {
    child: Child,
    log: Arc<Mutex<Vec<String>>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Running {
    fn spawn(program: &str, args: &[&str], cwd: &Path) -> Running {
        let mut child = Command::new(program)
            .args(args)
            .current_dir(cwd)
            .env("MCP_PREAMBLE_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{program}: {e}"));
        let log = Arc::new(Mutex::new(Vec::new()));
        let keep = log.clone();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                keep.lock().unwrap().push(line);
            }
        });
        Running { child, log }
    }

    fn gateway(args: &[&str], cwd: &Path) -> Running {
        Running::spawn(env!("CARGO_BIN_EXE_mcp-preamble"), args, cwd)
    }

    /// The first logged `WHAT http://ADDR/…` address, once logged.
    fn logged_address(&self, what: &str) -> String {
        let mut found = None;
        wait_until(what, Duration::from_secs(60), || {
            found = (self.log.lock().unwrap().iter()).find_map(|l| {
                let at = l.find(what)? + what.len();
                let rest = l[at..].strip_prefix("http://")?;
                Some(rest.split('/').next()?.to_string())
            });
            found.is_some()
        });
        found.unwrap()
    }

    fn lines(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

fn http(addr: &str, host: &str, line: &str, headers: &str, body: &str) -> Answer {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    exchange_on(s, host, line, headers, body)
}

/// MCP headers: the protocol version, the session, the token.
fn mcp_headers(session: Option<&str>, token: Option<&str>) -> String {
    let mut headers = String::from("\r\nMCP-Protocol-Version: 2025-11-25");
    if let Some(id) = session {
        headers.push_str(&format!("\r\nMcp-Session-Id: {id}"));
    }
    if let Some(token) = token {
        headers.push_str(&format!("\r\nAuthorization: Bearer {token}"));
    }
    headers
}

fn initialize_body() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "team-test", "version": "1"}}})
    .to_string()
}

fn call_body(id: u64, tool: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": {}}})
    .to_string()
}

/// A session of `send`'s gateway: `initialize`, then `initialized`.
fn open_session(send: &dyn Fn(Option<&str>, &str) -> Answer) -> String {
    let answer = send(None, &initialize_body());
    assert_eq!(answer.status, 200, "{answer:?}");
    let id = answer
        .header("mcp-session-id")
        .expect("a session id")
        .to_string();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    assert_eq!(send(Some(&id), &note).status, 202);
    id
}

/// Each sample of a scrape by name and labels, read by `prometheus-parse`
/// (histograms as their `_count`).
fn parse_metrics(text: &str) -> BTreeMap<(String, BTreeMap<String, String>), f64> {
    let lines = text.lines().map(|l| Ok(l.to_string()));
    let scrape = prometheus_parse::Scrape::parse(lines).expect("the Prometheus text format");
    let mut samples = BTreeMap::new();
    for s in scrape.samples {
        let labels: BTreeMap<String, String> = (s.labels.iter())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let (name, value) = match s.value {
            prometheus_parse::Value::Counter(v)
            | prometheus_parse::Value::Gauge(v)
            | prometheus_parse::Value::Untyped(v) => (s.metric, v),
            prometheus_parse::Value::Histogram(buckets) => (
                format!("{}_count", s.metric),
                buckets.last().map_or(0.0, |b| b.count),
            ),
            prometheus_parse::Value::Summary(_) => continue,
        };
        samples.insert((name, labels), value);
    }
    samples
}

fn sample(
    samples: &BTreeMap<(String, BTreeMap<String, String>), f64>,
    name: &str,
    labels: &[(&str, &str)],
) -> Option<f64> {
    (samples.iter())
        .find(|((n, l), _)| {
            n == name
                && labels
                    .iter()
                    .all(|(k, v)| l.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|(_, v)| *v)
}

/// `/metrics` on its own port, from the replica's own address, under
/// `--allowed-host` and without a token, parsed as Prometheus text: HTTP
/// answers by status, token refusals by reason, calls by upstream and
/// outcome as `mcp_client_operation_duration_seconds`, process and build
/// info. The main port still refuses that `Host`. One JSON access line
/// per call names the caller, method, tool, upstream, status and
/// duration; a caller over `--rate-limit` gets 429 with `Retry-After`,
/// another caller does not.
#[test]
fn metrics_are_scraped_without_a_token_and_each_call_is_logged() {
    let dir = scratch("serve-team", "metrics");
    let config = dir.join("mcp.json");
    let servers = json!({"billing": node("invoice.mjs", json!({}))});
    std::fs::write(&config, json!({"mcpServers": servers}).to_string()).unwrap();
    std::fs::write(dir.join("tokens.txt"), format!("{TOKEN_A}\n{TOKEN_B}\n")).unwrap();
    let ip = own_address().map_or("127.0.0.1".to_string(), |ip| ip.to_string());
    let (listen, metrics) = (format!("{ip}:0"), format!("{ip}:0"));
    let g = Running::gateway(
        &[
            "serve",
            "--config",
            "mcp.json",
            "--listen",
            &listen,
            "--behind-proxy",
            "--auth-tokens",
            "tokens.txt",
            "--allowed-host",
            "mcp.example.com",
            "--metrics-listen",
            &metrics,
            "--rate-limit",
            "10/s",
            "--log-format",
            "json",
            "--state-dir",
            "state",
            "--ready-within",
            "30",
        ],
        &dir,
    );
    let main = g.logged_address("serving on ");
    let scrape_at = g.logged_address("metrics on ");
    let main = main.replace("0.0.0.0", "127.0.0.1");
    let send = |session: Option<&str>, body: &str| {
        let headers = mcp_headers(session, Some(TOKEN_A));
        http(
            &main,
            "mcp.example.com",
            "POST /mcp HTTP/1.1",
            &headers,
            body,
        )
    };
    let id = open_session(&send);
    for n in 0..2 {
        let answer = send(Some(&id), &call_body(10 + n, "billing__list_periods"));
        assert_eq!(answer.status, 200, "{answer:?}");
        assert!(answer.result().is_some(), "{answer:?}");
    }
    let no_token = http(
        &main,
        "mcp.example.com",
        "POST /mcp HTTP/1.1",
        &mcp_headers(None, None),
        &initialize_body(),
    );
    assert_eq!(no_token.status, 401);
    let wrong = mcp_headers(None, Some("wrong-token-0123456789abcdef"));
    assert_eq!(
        http(&main, "mcp.example.com", "POST /mcp HTTP/1.1", &wrong, "{}").status,
        401
    );

    // Caller B, 40 requests from four threads at once: past 10 a second
    // (a burst of 10), some get 429.
    let b = mcp_headers(None, Some(TOKEN_B));
    let limited = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..10 {
                    let answer = http(&main, "mcp.example.com", "GET /mcp HTTP/1.1", &b, "");
                    if answer.status == 429 {
                        let wait: u64 = answer.header("retry-after").unwrap().parse().unwrap();
                        assert!((1..=2).contains(&wait), "{answer:?}");
                        limited.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    let limited = u32::try_from(limited.into_inner()).unwrap();
    assert!(limited > 0, "40 requests in a moment, 10 a second allowed");
    // A's allowance is its own.
    assert_eq!(
        send(Some(&id), &call_body(20, "billing__list_periods")).status,
        200
    );

    // The main port answers only the allowed host; the scrape port the
    // replica's own address, without a token.
    let own = http(&main, &main, "GET /metrics HTTP/1.1", "", "");
    assert_eq!(own.status, 403, "{own:?}");
    let scraped = http(&scrape_at, &scrape_at, "GET /metrics HTTP/1.1", "", "");
    assert_eq!(scraped.status, 200, "{scraped:?}");
    assert!(
        scraped
            .header("content-type")
            .unwrap()
            .contains("version=0.0.4")
    );
    let named = http(&scrape_at, "evil.example", "GET /metrics HTTP/1.1", "", "");
    assert_eq!(named.status, 403, "a DNS-rebinding name is not served");
    assert_eq!(
        http(&scrape_at, &scrape_at, "POST /mcp HTTP/1.1", "", "{}").status,
        405
    );
    assert_eq!(
        http(&scrape_at, &scrape_at, "GET /readyz HTTP/1.1", "", "").status,
        200
    );

    let s = parse_metrics(&scraped.body);
    let calls = [
        ("mcp_method_name", "tools/call"),
        ("upstream", "billing"),
        ("gen_ai_tool_name", "list_periods"),
        ("outcome", "ok"),
    ];
    assert_eq!(
        sample(&s, "mcp_client_operation_duration_seconds_count", &calls),
        Some(3.0)
    );
    let ok = [("method", "POST"), ("status", "200")];
    assert!(sample(&s, "mcp_preamble_http_requests_total", &ok).unwrap() >= 4.0);
    let refused = |reason| {
        sample(
            &s,
            "mcp_preamble_auth_failures_total",
            &[("reason", reason)],
        )
    };
    assert_eq!(refused("no token"), Some(1.0));
    assert_eq!(refused("not a token of the tokens file"), Some(1.0));
    let too_many = [("status", "429")];
    assert_eq!(
        sample(&s, "mcp_preamble_http_requests_total", &too_many),
        Some(f64::from(limited))
    );
    assert_eq!(
        sample(&s, "mcp_preamble_rate_limited_total", &[]),
        Some(f64::from(limited))
    );
    let version = [("version", env!("CARGO_PKG_VERSION"))];
    assert_eq!(sample(&s, "mcp_preamble_build_info", &version), Some(1.0));
    assert!(sample(&s, "process_start_time_seconds", &[]).unwrap() > 1.7e9);
    assert!(sample(&s, "process_resident_memory_bytes", &[]).unwrap() > 1e6);
    assert!(sample(&s, "process_open_fds", &[]).unwrap() >= 3.0);

    // One JSON access line per call.
    let mut accessed = Vec::new();
    wait_until("the access lines", Duration::from_secs(10), || {
        accessed = (g.lines().iter())
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|l| l["target"] == "mcp_preamble::access" && l["tool"] != "")
            .collect();
        accessed.len() == 3
    });
    let line = &accessed[0];
    assert_eq!(line["level"], "INFO", "{line}");
    assert!(
        line["caller"].as_str().unwrap().starts_with("token:"),
        "{line}"
    );
    assert_eq!(
        (
            &line["method"],
            &line["tool"],
            &line["upstream"],
            &line["status"]
        ),
        (
            &json!("tools/call"),
            &json!("billing__list_periods"),
            &json!("billing"),
            &json!(200)
        ),
        "{line}"
    );
    assert!(line["duration_ms"].as_f64().unwrap() > 0.0, "{line}");
    assert!(
        line["timestamp"].as_str().unwrap().starts_with("20"),
        "{line}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A free loopback port.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Whether haproxy runs here; without it the test is skipped unless CI
/// requires it.
fn haproxy_found() -> bool {
    let found = Command::new("haproxy")
        .arg("-v")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("MCP_PREAMBLE_REQUIRE_HAPROXY").as_deref() != Ok("1"),
            "haproxy is required (MCP_PREAMBLE_REQUIRE_HAPROXY=1): apt-get install haproxy"
        );
        eprintln!("skipped: no haproxy (apt-get install haproxy)");
    }
    found
}

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// TLS to `addr` trusting the test CA (`tests/data/auth`), as `localhost`.
fn https(addr: &str, host: &str, line: &str, headers: &str, body: &str) -> Answer {
    use rustls::pki_types::pem::PemObject;
    static CONFIG: std::sync::OnceLock<Arc<rustls::ClientConfig>> = std::sync::OnceLock::new();
    let config = CONFIG.get_or_init(|| {
        let mut roots = rustls::RootCertStore::empty();
        let ca = repo("tests/data/auth/ca.pem");
        roots
            .add(rustls::pki_types::CertificateDer::from_pem_file(ca).unwrap())
            .unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        Arc::new(config)
    });
    let name = "localhost".try_into().unwrap();
    let connection = rustls::ClientConnection::new(config.clone(), name).unwrap();
    // Refused (haproxy not listening yet) is status 0: a failed call.
    let Ok(tcp) = TcpStream::connect(addr) else {
        let (headers, body) = (Vec::new(), "connection refused".to_string());
        return Answer {
            status: 0,
            headers,
            body,
        };
    };
    tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    exchange_on(
        rustls::StreamOwned::new(connection, tcp),
        host,
        line,
        headers,
        body,
    )
}

/// The README's team commands: the replicas' block (its `curl` lines are
/// `replicas.rs`'s), then the load balancer's; `\` continuations joined,
/// comments cut.
fn readme_team_block() -> Vec<String> {
    let readme = std::fs::read_to_string(repo("README.md")).unwrap();
    let blocks: Vec<&str> = (readme.split("```sh").skip(1))
        .filter_map(|b| b.split("```").next())
        .collect();
    let find = |what: &str| {
        let block = blocks.iter().find(|b| b.contains(what));
        block
            .unwrap_or_else(|| panic!("the README's block with {what}"))
            .replace("\\\n", " ")
    };
    let both =
        find("--session-key-file session.key") + &find("haproxy -f examples/deploy/haproxy.cfg");
    (both.lines())
        .map(|l| l.split(" # ").next().unwrap().trim().to_string())
        .filter(|l| !l.is_empty() && !l.starts_with("curl "))
        .collect()
}

/// The README's team deployment as written (its replica commands, then
/// `examples/deploy/haproxy.cfg`), but for free ports, this test's Redis
/// and the test CA's certificate: calls through haproxy over TLS from two
/// clients while Redis is stopped for 30 s: not one fails, both replicas
/// serve, and each is strictly not ready meanwhile (the outage was real).
/// The systemd unit passes `systemd-analyze verify` with this build's binary.
#[test]
fn the_readmes_load_balancer_example_rides_out_a_redis_outage() {
    if !haproxy_found() {
        return;
    }
    let Some(mut redis) = Redis::start("team-haproxy") else {
        return;
    };
    let dir = scratch("serve-team", "haproxy");
    let servers = json!({"billing": node("invoice.mjs", json!({}))});
    std::fs::write(
        dir.join("mcp.json"),
        json!({"mcpServers": servers}).to_string(),
    )
    .unwrap();
    let url = redis.url();
    let ports: BTreeMap<&str, String> = [
        ("8931", free_port()),
        ("8932", free_port()),
        ("8443", free_port()),
    ]
    .into_iter()
    .map(|(p, free)| (p, free.to_string()))
    .collect();
    let mut replicas = Vec::new();
    let mut haproxy = None;
    for line in readme_team_block() {
        let words: Vec<String> = (line.split_whitespace())
            .map(|w| {
                let w = w.replace("redis://127.0.0.1:6379/0", &url);
                match w.split_once(':') {
                    Some((host, port)) if ports.contains_key(port) => {
                        format!("{host}:{}", ports[port])
                    }
                    _ => w,
                }
            })
            .collect();
        let args: Vec<&str> = words.iter().skip(1).map(String::as_str).collect();
        match words[0].as_str() {
            "head" | "python3" => {
                let made = Command::new("sh")
                    .args(["-c", &line])
                    .current_dir(&dir)
                    .status();
                assert!(made.unwrap().success(), "{line}");
            }
            "mcp-preamble" if args[0] == "pin" => {
                let out = Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
                    .args(&args)
                    .current_dir(&dir)
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            "mcp-preamble" => {
                let g = Running::gateway(&args, &dir);
                g.logged_address("serving on ");
                replicas.push(g);
            }
            "haproxy" => {
                let cfg = std::fs::read_to_string(repo(args[1])).unwrap();
                let pem = dir.join("server.pem");
                let chain = std::fs::read_to_string(repo("tests/data/auth/server.pem")).unwrap()
                    + &std::fs::read_to_string(repo("tests/data/auth/server-key.pem")).unwrap();
                std::fs::write(&pem, chain).unwrap();
                let cfg = cfg
                    .replace("/etc/mcp-preamble/server.pem", pem.to_str().unwrap())
                    .replace("bind :8443", &format!("bind 127.0.0.1:{}", ports["8443"]))
                    .replace("127.0.0.1:8931", &format!("127.0.0.1:{}", ports["8931"]))
                    .replace("127.0.0.1:8932", &format!("127.0.0.1:{}", ports["8932"]));
                let path = dir.join("haproxy.cfg");
                std::fs::write(&path, cfg).unwrap();
                let check = Command::new("haproxy")
                    .args(["-c", "-f", path.to_str().unwrap()])
                    .output()
                    .unwrap();
                assert!(
                    check.status.success(),
                    "{}",
                    String::from_utf8_lossy(&check.stderr)
                );
                haproxy = Some(Running::spawn(
                    "haproxy",
                    &["-db", "-f", path.to_str().unwrap()],
                    &dir,
                ));
            }
            _ => panic!("a line the test does not know: {line}"),
        }
    }
    let _haproxy = haproxy.expect("the README starts haproxy");
    assert_eq!(replicas.len(), 2);
    let token = std::fs::read_to_string(dir.join("tokens.txt")).unwrap();
    let token = token.lines().next().unwrap().to_string();
    let front = format!("127.0.0.1:{}", ports["8443"]);
    let send = |session: Option<&str>, body: &str| {
        let headers = mcp_headers(session, Some(&token));
        https(
            &front,
            "mcp.example.com",
            "POST /mcp HTTP/1.1",
            &headers,
            body,
        )
    };
    // haproxy marks both replicas up (checks every 2 s, one to rise).
    wait_until("calls through haproxy", Duration::from_secs(30), || {
        send(None, &initialize_body()).status == 200
    });

    let (stop, calls, failed) = (
        AtomicBool::new(false),
        AtomicUsize::new(0),
        Mutex::new(Vec::new()),
    );
    let outage = std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                let id = open_session(&send);
                let mut n = 100;
                while !stop.load(Ordering::Relaxed) {
                    n += 1;
                    let answer = send(Some(&id), &call_body(n, "billing__list_periods"));
                    calls.fetch_add(1, Ordering::Relaxed);
                    let good = answer.status == 200
                        && answer.result().is_some_and(|r| r["isError"] != true);
                    if !good {
                        failed
                            .lock()
                            .unwrap()
                            .push(format!("{} {}", answer.status, answer.body));
                    }
                    std::thread::sleep(Duration::from_millis(150));
                }
            });
        }
        std::thread::sleep(Duration::from_secs(2));
        redis.down();
        let down = Instant::now();
        // Each replica strictly not ready while Redis is away (its scrape
        // of `/readyz?strict` through the main port, addressed as allowed).
        let strict = |r: &Running| {
            let at = r
                .logged_address("serving on ")
                .replace("0.0.0.0", "127.0.0.1");
            http(
                &at,
                "mcp.example.com",
                "GET /readyz?strict HTTP/1.1",
                "",
                "",
            )
            .status
        };
        wait_until("strictly not ready", Duration::from_secs(15), || {
            replicas.iter().all(|r| strict(r) == 503)
        });
        std::thread::sleep(Duration::from_secs(30).saturating_sub(down.elapsed()));
        redis.up();
        std::thread::sleep(Duration::from_secs(2));
        stop.store(true, Ordering::Relaxed);
        down.elapsed()
    });
    let failed = failed.into_inner().unwrap();
    let calls = calls.into_inner();
    eprintln!(
        "{calls} calls through haproxy, Redis away for {outage:?}, {} failed",
        failed.len()
    );
    assert!(failed.is_empty(), "{failed:?}");
    assert!(calls > 100, "{calls} calls");
    // Both replicas served calls.
    for r in &replicas {
        let served = (r.lines().iter())
            .any(|l| l.contains("billing__list_periods") && l.contains("mcp_preamble::access"));
        assert!(served, "each replica served calls");
    }
    verify_unit(&dir);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `examples/deploy/mcp-preamble@.service` as `systemd-analyze verify`
/// reads it, with this build's binary in place of `/usr/local/bin`'s.
fn verify_unit(dir: &Path) {
    let found = Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("systemd-analyze not found: the unit is not verified");
        return;
    }
    let unit = std::fs::read_to_string(repo("examples/deploy/mcp-preamble@.service")).unwrap();
    let unit = unit.replace(
        "/usr/local/bin/mcp-preamble",
        env!("CARGO_BIN_EXE_mcp-preamble"),
    );
    let units = dir.join("units");
    std::fs::create_dir_all(&units).unwrap();
    std::fs::write(units.join("mcp-preamble@.service"), unit).unwrap();
    let out = Command::new("systemd-analyze")
        .args(["verify", "./mcp-preamble@8931.service"])
        .current_dir(&units)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !said.contains("mcp-preamble@"),
        "{said}"
    );
}
