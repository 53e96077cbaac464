//! `mcp-preamble serve`: a forwarded `tools/call` next to a direct one,
//! against two upstreams (the Rust one of `serve/upstream.rs`, rmcp's
//! server side, and the Node invoice test server), over stdio and over
//! Streamable HTTP (`serve --listen`), at 1 and 32 concurrent clients: p50
//! and p99 of the round trip and the throughput, direct and through the
//! gateway, and their ratios (gateway / direct); then the cold fan-out (the
//! gateway's start to all tools of 10 upstreams listed) and the
//! instructions served from the hub's memo next to assembling them per
//! `initialize`. Writes the Rust upstream's ratios to
//! `target/bench-serve.json` (`{"stdio"|"http": {"1"|"32": {"p50_ratio",
//! "p99_ratio", "rps_ratio"}}, "cold_fanout_10_ms"}`, and the same ratios of
//! `wrap` and of a byte relay over stdio under `"wrap"` and `"relay"`:
//! `{"wrap": {"stdio": {"1": …}}}`, and of an HTTP relay that forwards
//! requests unread, printed as `hop`, under `"relay": {"http": …}`). Needs node and
//! `npm ci` in tests/servers:
//!
//! ```text
//! cargo bench --bench serve --features cli
//! ```
//!
//! With `flood` it runs only what an upstream's endless event costs another
//! upstream's calls (`serve/flood.rs`): their p50 idle and beside the
//! flood, and the ratio against the goal of 2x:
//!
//! ```text
//! cargo bench --bench serve --features cli -- flood
//! ```
//!
//! With `replicas [SECONDS]` it runs only the load of two replicas
//! (`serve/replicas.rs`): two gateways with one session key, each in front
//! of its own Rust upstream over stdio, 32 clients sending every call to
//! the next replica in turn for SECONDS (default 60); it prints the calls,
//! the errors, p50, p99 and requests/s:
//!
//! ```text
//! cargo bench --bench serve --features cli -- replicas 60
//! ```

#[path = "serve/flood.rs"]
mod flood;
#[path = "serve/load.rs"]
mod load;
#[path = "serve/relay.rs"]
mod relay_http;
#[path = "serve/replicas.rs"]
mod replicas;
#[path = "serve/upstream.rs"]
mod upstream;

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mcp_preamble::files::{ServerEntry, ServerTransport};
use mcp_preamble::serve::{Gateway, ServeAs, prepare};
use mcp_preamble::{Assembler, ServerSnapshot};
use serde_json::{Value, json};

use load::{Run, cold, measure};

/// Calls per client: one client, and each of 32.
const CALLS_ONE: usize = 1000;
const CALLS_MANY: usize = 100;
const CLIENTS: [usize; 2] = [1, 32];
const GATEWAY: &str = env!("CARGO_BIN_EXE_mcp-preamble");

fn servers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers")
}

fn stdio_entry(alias: &str, command: &str, args: Vec<String>) -> ServerEntry {
    ServerEntry {
        alias: alias.into(),
        transport: ServerTransport::Stdio {
            command: command.into(),
            args,
            env: Default::default(),
            cwd: Some(servers()),
        },
    }
}

/// An upstream as a command line: over stdio, and over HTTP on a port.
struct Kind {
    name: &'static str,
    command: String,
    stdio: Vec<String>,
    http: Box<dyn Fn(u16) -> Vec<String>>,
}

fn kinds() -> Vec<Kind> {
    let me = std::env::current_exe()
        .expect("the bench's path")
        .display()
        .to_string();
    let invoice = servers().join("invoice.mjs").display().to_string();
    let http = servers().join("http.mjs").display().to_string();
    vec![
        Kind {
            name: "rust",
            command: me,
            stdio: vec![upstream::STDIO.into()],
            http: Box::new(|port| vec![upstream::HTTP.into(), port.to_string()]),
        },
        Kind {
            name: "node",
            command: "node".into(),
            stdio: vec![invoice],
            http: Box::new(move |port| vec![http.clone(), port.to_string()]),
        },
    ]
}

/// A child process killed when dropped.
struct Spawned(Child);

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(command: &str, args: &[String]) -> Spawned {
    let child = Command::new(command)
        .args(args)
        .current_dir(servers())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{command}: {e}"));
    Spawned(child)
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    l.local_addr().expect("an address").port()
}

/// Waits until something listens on `port` (30 s at most).
fn listening(port: u16) {
    let until = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < until, "nothing listens on {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A gateway config of `servers` (alias, entry JSON), written to `dir`.
fn config(dir: &Path, name: &str, servers: Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, json!({ "mcpServers": servers }).to_string()).unwrap();
    path.display().to_string()
}

/// The ratios of one transport and concurrency.
struct Ratios {
    direct: Run,
    gateway: Run,
}

impl Ratios {
    fn json(&self) -> Value {
        let r = |g: Duration, d: Duration| g.as_secs_f64() / d.as_secs_f64();
        json!({
            "p50_ratio": r(self.gateway.quantile(0.5), self.direct.quantile(0.5)),
            "p99_ratio": r(self.gateway.quantile(0.99), self.direct.quantile(0.99)),
            "rps_ratio": self.gateway.rps() / self.direct.rps(),
        })
    }

    fn print(&self, upstream: &str, transport: &str, clients: usize) {
        let j = self.json();
        println!(
            "{upstream:<5} {transport:<5} {clients:>2} clients: direct p50 {:>9.1?} p99 {:>9.1?} {:>7.0} rps | through p50 {:>9.1?} p99 {:>9.1?} {:>7.0} rps | p50 {:.2}x p99 {:.2}x rps {:.2}x",
            self.direct.quantile(0.5),
            self.direct.quantile(0.99),
            self.direct.rps(),
            self.gateway.quantile(0.5),
            self.gateway.quantile(0.99),
            self.gateway.rps(),
            j["p50_ratio"].as_f64().unwrap_or(0.0),
            j["p99_ratio"].as_f64().unwrap_or(0.0),
            j["rps_ratio"].as_f64().unwrap_or(0.0),
        );
    }
}

fn calls(clients: usize) -> usize {
    if clients == 1 { CALLS_ONE } else { CALLS_MANY }
}

/// Over stdio: `clients` concurrent calls on one connection, to the
/// upstream and to a gateway in front of it; then, against the same
/// direct runs, `wrap` (one upstream, its tool names unchanged) and a
/// relay that only copies bytes both ways ([`RELAY`]): what one more
/// process in the path costs on this machine, whatever it does.
async fn over_stdio(kind: &Kind, dir: &Path) -> Vec<(usize, Ratios, Ratios, Ratios)> {
    let direct = stdio_entry("billing", &kind.command, kind.stdio.clone());
    let upstream = json!({"billing": {"command": kind.command, "args": kind.stdio}});
    let cfg = config(dir, &format!("{}-stdio.json", kind.name), upstream);
    let gateway = stdio_entry(
        "gateway",
        GATEWAY,
        vec!["serve".into(), "--config".into(), cfg],
    );
    let in_front = |head: Vec<String>| {
        let mut args = head;
        args.push(kind.command.clone());
        args.extend(kind.stdio.iter().cloned());
        args
    };
    let wrap = stdio_entry(
        "billing",
        GATEWAY,
        in_front(vec!["wrap".into(), "--".into()]),
    );
    let me = std::env::current_exe().expect("the bench's path");
    let relay = stdio_entry(
        "billing",
        &me.display().to_string(),
        in_front(vec![RELAY.into()]),
    );
    let mut out = Vec::new();
    for clients in CLIENTS {
        let n = calls(clients);
        let direct = measure(&direct, "list_periods", clients, n, true).await;
        let gateway = measure(&gateway, "billing__list_periods", clients, n, true).await;
        let wrapped = measure(&wrap, "list_periods", clients, n, true).await;
        let relayed = measure(&relay, "list_periods", clients, n, true).await;
        let again = |other: Run| Ratios {
            direct: direct.clone(),
            gateway: other,
        };
        out.push((
            clients,
            again(wrapped),
            again(relayed),
            Ratios { direct, gateway },
        ));
    }
    out
}

/// The bench's own binary as a relay: `bench relay COMMAND ARGS…` runs
/// COMMAND and copies bytes between its pipes and this process's, one
/// blocking thread each way, parsing nothing.
const RELAY: &str = "relay";

fn relay(command: &[String]) {
    use std::io::{Read, Write};
    let mut child = Command::new(&command[0])
        .args(&command[1..])
        .current_dir(servers())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the relayed command starts");
    let mut to = child.stdin.take().expect("a pipe");
    let mut from = child.stdout.take().expect("a pipe");
    std::thread::spawn(move || {
        let mut input = std::io::stdin().lock();
        let mut buf = vec![0u8; 1 << 16];
        while let Ok(n @ 1..) = input.read(&mut buf) {
            if to.write_all(&buf[..n]).is_err() {
                break;
            }
        }
    });
    let mut output = std::io::stdout().lock();
    let mut buf = vec![0u8; 1 << 16];
    while let Ok(n @ 1..) = from.read(&mut buf) {
        if output
            .write_all(&buf[..n])
            .and_then(|()| output.flush())
            .is_err()
        {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The bench's own binary as an HTTP relay: `bench http-relay LISTEN
/// UPSTREAM` ([`relay_http`]).
const HTTP_RELAY: &str = "--http-relay";

/// Over Streamable HTTP: one connection per client, to the upstream's
/// endpoint, to `serve --listen` in front of it, and to a relay in front
/// of it that only forwards requests and answers ([`HTTP_RELAY`]).
async fn over_http(kind: &Kind, dir: &Path) -> Vec<(usize, Ratios, Ratios)> {
    let port = free_port();
    let _upstream = spawn(&kind.command, &(kind.http)(port));
    listening(port);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let cfg = config(
        dir,
        &format!("{}-http.json", kind.name),
        json!({"billing": {"url": url}}),
    );
    let listen = free_port();
    let args = [
        "serve",
        "--listen",
        &format!("127.0.0.1:{listen}"),
        "--config",
        &cfg,
    ];
    let _gateway = spawn(GATEWAY, &args.map(String::from));
    listening(listen);
    let hop = free_port();
    let me = std::env::current_exe().expect("the bench's path");
    let relay_args = [HTTP_RELAY.to_string(), hop.to_string(), port.to_string()];
    let _relay = spawn(&me.display().to_string(), &relay_args);
    listening(hop);
    let direct = ServerEntry::http("billing", url);
    let gateway = ServerEntry::http("gateway", format!("http://127.0.0.1:{listen}/mcp"));
    let relay = ServerEntry::http("billing", format!("http://127.0.0.1:{hop}/mcp"));
    let mut out = Vec::new();
    for clients in CLIENTS {
        let n = calls(clients);
        let direct = measure(&direct, "list_periods", clients, n, false).await;
        let gateway = measure(&gateway, "billing__list_periods", clients, n, false).await;
        let relayed = measure(&relay, "list_periods", clients, n, false).await;
        let relayed = Ratios {
            direct: direct.clone(),
            gateway: relayed,
        };
        out.push((clients, Ratios { direct, gateway }, relayed));
    }
    out
}

/// The median of three cold starts of a gateway in front of 10 Rust
/// upstreams, to all 20 tools listed.
async fn fan_out(kind: &Kind, dir: &Path) -> f64 {
    let servers: serde_json::Map<String, Value> = (0..10)
        .map(|i| {
            (
                format!("s{i}"),
                json!({"command": kind.command, "args": kind.stdio}),
            )
        })
        .collect();
    let cfg = config(dir, "fan-out.json", Value::Object(servers));
    let gateway = stdio_entry(
        "gateway",
        GATEWAY,
        vec!["serve".into(), "--config".into(), cfg],
    );
    let mut runs = Vec::new();
    for _ in 0..3 {
        runs.push(cold(&gateway, 20).await);
    }
    runs.sort_by(f64::total_cmp);
    runs[1]
}

/// Clients of the replica load run.
const REPLICA_CLIENTS: usize = 32;

/// Two replicas with one key, each in front of its own Rust upstream;
/// 32 clients across both for `seconds`.
async fn two_replicas(seconds: u64) {
    let dir = std::env::temp_dir().join(format!(
        "mcp-preamble-bench-replicas-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let key = dir.join("session.key");
    let hex: String = (0..32u8).map(|b| format!("{:02x}", b ^ 0x5a)).collect();
    std::fs::write(&key, hex).unwrap();
    let rust = &kinds()[0];
    let upstream = json!({"billing": {"command": rust.command, "args": rust.stdio}});
    let cfg = config(&dir, "replicas.json", upstream);
    let mut replicas = Vec::new();
    let mut urls = Vec::new();
    for name in ["a", "b"] {
        let port = free_port();
        let state = dir.join(name).display().to_string();
        let args = [
            "serve",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--config",
            &cfg,
            "--state-dir",
            &state,
            "--session-key-file",
            &key.display().to_string(),
        ];
        replicas.push(spawn(GATEWAY, &args.map(String::from)));
        listening(port);
        urls.push(format!("http://127.0.0.1:{port}/mcp"));
    }
    let tool = "billing__list_periods";
    let seen = replicas::load(&urls, tool, REPLICA_CLIENTS, seconds).await;
    println!(
        "replicas: 2 gateways (one session key), {REPLICA_CLIENTS} clients, each call to the next replica, {seconds} s: {} calls, {} errors, p50 {:.2?} p99 {:.2?}, {:.0} requests/s",
        seen.run.latencies.len(),
        seen.errors,
        seen.run.quantile(0.5),
        seen.run.quantile(0.99),
        seen.run.rps()
    );
    drop(replicas);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `-- http`: only the Rust upstream over Streamable HTTP, printed (no
/// report written): the run to compare when working on the HTTP path.
async fn http_only() {
    let dir = std::env::temp_dir().join(format!("mcp-preamble-bench-http-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (clients, ratios, relayed) in over_http(&kinds()[0], &dir).await {
        ratios.print("rust", "http", clients);
        relayed.print("rust", "hop", clients);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `-- flood`: another upstream's calls idle and beside an endless event
/// (`serve/flood.rs`), printed.
async fn flooded() {
    let dir = std::env::temp_dir().join(format!("mcp-preamble-bench-flood-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    flood::gateway(&dir).await;
    flood::wrap().await;
    let _ = std::fs::remove_dir_all(&dir);
}

fn report_path() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    target.join("bench-serve.json")
}

fn forwarding(runtime: &tokio::runtime::Runtime) {
    let dir = std::env::temp_dir().join(format!("mcp-preamble-bench-serve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut report = json!({});
    for kind in kinds() {
        let (stdio, http) = runtime
            .block_on(async { (over_stdio(&kind, &dir).await, over_http(&kind, &dir).await) });
        let stdio_serve = stdio.iter().map(|(c, _, _, r)| (*c, r));
        let http_serve = http.iter().map(|(c, r, _)| (*c, r));
        for (transport, runs) in [
            ("stdio", stdio_serve.collect::<Vec<_>>()),
            ("http", http_serve.collect()),
        ] {
            for (clients, ratios) in runs {
                ratios.print(kind.name, transport, clients);
                if kind.name == "rust" {
                    report[transport][clients.to_string()] = ratios.json();
                }
            }
        }
        for (clients, _, relayed) in &http {
            relayed.print(kind.name, "hop", *clients);
            if kind.name == "rust" {
                report["relay"]["http"][clients.to_string()] = relayed.json();
            }
        }
        for (clients, wrapped, relayed, _) in &stdio {
            wrapped.print(kind.name, "wrap", *clients);
            relayed.print(kind.name, "relay", *clients);
            if kind.name == "rust" {
                report["wrap"]["stdio"][clients.to_string()] = wrapped.json();
                report["relay"]["stdio"][clients.to_string()] = relayed.json();
            }
        }
    }
    let rust = &kinds()[0];
    let cold_ms = runtime.block_on(fan_out(rust, &dir));
    println!(
        "cold fan-out, 10 rust upstreams over stdio, start to all tools listed: {cold_ms:.1} ms"
    );
    report["cold_fanout_10_ms"] = json!(cold_ms);
    let _ = std::fs::remove_dir_all(&dir);
    let path = report_path();
    let _ = std::fs::create_dir_all(path.parent().unwrap());
    std::fs::write(&path, serde_json::to_string_pretty(&report).unwrap() + "\n").unwrap();
    println!("wrote {}", path.display());
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some(upstream::STDIO) => return upstream::stdio(),
        Some(RELAY) => return relay(&args[2..]),
        Some(HTTP_RELAY) => {
            let port = |i: usize| args.get(i).and_then(|p| p.parse().ok()).expect("a port");
            return relay_http::http(port(2), port(3));
        }
        Some(upstream::HTTP) => {
            let port = args.get(2).and_then(|p| p.parse().ok()).expect("a port");
            return upstream::http(port);
        }
        _ => {}
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    if let Some(at) = args.iter().position(|a| a == "replicas") {
        let seconds = args.get(at + 1).and_then(|s| s.parse().ok()).unwrap_or(60);
        return runtime.block_on(two_replicas(seconds));
    }
    if args.iter().any(|a| a == "http") {
        return runtime.block_on(http_only());
    }
    if args.iter().any(|a| a == "flood") {
        return runtime.block_on(flooded());
    }
    forwarding(&runtime);

    // Instructions per `initialize`: read from the memo vs assembled anew.
    let corpus: Vec<ServerSnapshot> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus"))
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .filter_map(|p| {
                let alias = p.file_stem()?.to_string_lossy().into_owned();
                Some(
                    mcp_preamble::files::load_server_file(&p)
                        .ok()?
                        .with_alias(alias),
                )
            })
            .collect();
    let assembler = prepare(Assembler::new(), ServeAs::ClaudeCode).unwrap();
    let served = runtime.block_on(async {
        let gateway = Gateway::new(Assembler::new(), ServeAs::ClaudeCode).unwrap();
        (gateway.hub())
            .upsert_all(corpus.iter().map(|s| (s.alias.clone().unwrap(), s.clone())))
            .unwrap();
        let n = 10_000u32;
        let start = Instant::now();
        for _ in 0..n {
            black_box(gateway.instructions());
        }
        start.elapsed() / n
    });
    let n = 20u32;
    let start = Instant::now();
    for _ in 0..n {
        black_box(assembler.assemble(&corpus).unwrap());
    }
    let assembled = start.elapsed() / n;
    println!(
        "instructions for one initialize ({} servers, claude-code): from the memo {served:?}, assembled {assembled:?}, {:.0}x",
        corpus.len(),
        assembled.as_secs_f64() / served.as_secs_f64()
    );
}
