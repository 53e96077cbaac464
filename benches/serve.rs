//! `mcp-preamble serve`: a forwarded `tools/call` next to a direct one and
//! next to the floor of one more process in the path, against two
//! upstreams (the Rust one of `serve/upstream.rs`, rmcp's server side, and
//! the Node invoice test server), over stdio and over Streamable HTTP
//! (`serve --listen`), at 1 and 32 concurrent clients. Each path is
//! connected once, then the paths take turns in 5 rounds (`load.rs`), so
//! a change of the machine's load meets them alike. The floors: over
//! stdio a relay that copies bytes (`relay`, and `wrap`), over HTTP a
//! relay that forwards requests unread (`hop`). Each row prints the p50 of
//! every path with what it adds to the direct call (µs), and the ratios to
//! direct; over stdio a second line gives the CPU time each path's own
//! process spent per call (the gateway's apart from its upstream's, read
//! from Linux's per-thread `schedstat`); then issue 50's goals for the Rust upstream, each with its
//! ratio and pass or FAIL (stdio 1 client: p50 at most 1.5x direct and at
//! most 40 µs over the relay; HTTP 1 client: p50 at most 1.2x the hop;
//! HTTP 32 clients: at least 0.8x the direct calls/s); then the cold
//! fan-out (the gateway's start to all tools of 10 upstreams listed) and
//! the instructions served from the hub's memo next to assembling them per
//! `initialize`. The machine's load average is printed before and after.
//!
//! It writes the Rust upstream's figures to `target/bench-serve.json`
//! (read by nothing public; a record to compare runs):
//! `{"stdio"|"http": {"1"|"32": {"p50_ratio", "p99_ratio", "rps_ratio"
//! (gateway / direct), "p50_us": {"direct", "serve", "relay"}, "added_us":
//! {"serve", "relay"} (p50 minus direct p50), "rps": {"direct", "serve",
//! "relay"}, "cpu_us_per_call": {"direct", "serve", "relay"} (the CPU time
//! of the path's own process per call over stdio, null over HTTP)}},
//! "relay": {"stdio"|"http": {"1"|"32": {"p50_ratio",
//! "p99_ratio", "rps_ratio"}}} (the relay / direct; over HTTP the hop),
//! "wrap": {"stdio": …} (the same of `wrap`), "goals": [{"goal", "value",
//! "limit", "at_most", "pass"}], "cold_fanout_10_ms", "load_average":
//! {"before", "after"} ([1, 5, 15] minutes)}`. Needs node and `npm ci` in
//! tests/servers; one run took 42 s on this 2-core VM (load average 3.6):
//!
//! ```text
//! cargo bench --bench serve --features cli
//! ```
//!
//! `MCP_PREAMBLE_BENCH_GATEWAY=PATH` measures another `mcp-preamble`
//! binary as the gateway and `wrap` (a copy of an earlier build: before
//! and after a change in one sitting).
//!
//! With `stdio` or `http` it runs only the Rust upstream over that
//! transport and prints its rows and goals (no report written).
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

use load::{Clients, Run, cold, interleaved};

/// Calls per client: one client, and each of 32.
const CALLS_ONE: usize = 1000;
const CALLS_MANY: usize = 100;
const CLIENTS: [usize; 2] = [1, 32];
/// The `mcp-preamble` measured: this build's, unless
/// `MCP_PREAMBLE_BENCH_GATEWAY` names another binary (a copy of an
/// earlier build, to compare two in one sitting).
fn gateway_bin() -> String {
    std::env::var("MCP_PREAMBLE_BENCH_GATEWAY")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_mcp-preamble").to_string())
}

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

/// One upstream, transport and concurrency: the calls made directly,
/// through the gateway, through the relay (the floor of one more process
/// or hop) and, over stdio, through `wrap`, in interleaved rounds.
struct Row {
    upstream: &'static str,
    transport: &'static str,
    clients: usize,
    direct: Run,
    serve: Run,
    relay: Run,
    wrap: Option<Run>,
}

/// Microseconds of a duration.
fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

impl Row {
    fn p50(&self, run: &Run) -> f64 {
        us(run.quantile(0.5))
    }

    /// What a path adds to a direct call's p50, in microseconds.
    fn added(&self, run: &Run) -> f64 {
        self.p50(run) - self.p50(&self.direct)
    }

    /// `run`'s ratios to the direct run.
    fn ratios(&self, run: &Run) -> Value {
        let r = |g: Duration, d: Duration| g.as_secs_f64() / d.as_secs_f64();
        json!({
            "p50_ratio": r(run.quantile(0.5), self.direct.quantile(0.5)),
            "p99_ratio": r(run.quantile(0.99), self.direct.quantile(0.99)),
            "rps_ratio": run.rps() / self.direct.rps(),
        })
    }

    /// The gateway's ratios, with every path's p50 and what each adds.
    fn json(&self) -> Value {
        let mut j = self.ratios(&self.serve);
        j["p50_us"] = json!({
            "direct": self.p50(&self.direct),
            "serve": self.p50(&self.serve),
            "relay": self.p50(&self.relay),
        });
        j["added_us"] = json!({
            "serve": self.added(&self.serve),
            "relay": self.added(&self.relay),
        });
        j["rps"] = json!({
            "direct": self.direct.rps(),
            "serve": self.serve.rps(),
            "relay": self.relay.rps(),
        });
        j["cpu_us_per_call"] = json!({
            "direct": self.direct.cpu_per_call(),
            "serve": self.serve.cpu_per_call(),
            "relay": self.relay.cpu_per_call(),
        });
        j
    }

    fn print(&self) {
        let relay = relay_name(self);
        let mut line = format!(
            "{:<5} {:<5} {:>2} clients | p50 direct {:>7.1} µs | serve {:>7.1} µs {:>+7.1} | {relay} {:>7.1} µs {:>+7.1}",
            self.upstream,
            self.transport,
            self.clients,
            self.p50(&self.direct),
            self.p50(&self.serve),
            self.added(&self.serve),
            self.p50(&self.relay),
            self.added(&self.relay),
        );
        if let Some(wrap) = &self.wrap {
            line += &format!(
                " | wrap {:>7.1} µs {:>+7.1}",
                self.p50(wrap),
                self.added(wrap)
            );
        }
        let ratio = |run: &Run, q: f64| {
            run.quantile(q).as_secs_f64() / self.direct.quantile(q).as_secs_f64()
        };
        line += &format!(
            " | serve/direct p50 {:.2}x p99 {:.2}x rps {:.2}x | {relay}/direct p50 {:.2}x rps {:.2}x | direct {:.0} rps",
            ratio(&self.serve, 0.5),
            ratio(&self.serve, 0.99),
            self.serve.rps() / self.direct.rps(),
            ratio(&self.relay, 0.5),
            self.relay.rps() / self.direct.rps(),
            self.direct.rps(),
        );
        println!("{line}");
        // What each path's own process spent per call: the gateway's work
        // apart from its upstream's (stdio; the direct path's is the upstream's).
        let cpu = |run: &Run| run.cpu_per_call().map(|c| format!("{c:.1} µs"));
        if let (Some(direct), Some(serve)) = (cpu(&self.direct), cpu(&self.serve)) {
            let mut line = format!("      own CPU per call | direct {direct} | serve {serve}");
            if let Some(relay) = cpu(&self.relay) {
                line += &format!(" | {relay_name} {relay}", relay_name = relay_name(self));
            }
            if let Some(wrap) = self.wrap.as_ref().and_then(cpu) {
                line += &format!(" | wrap {wrap}");
            }
            println!("{line}");
        }
    }
}

fn relay_name(row: &Row) -> &'static str {
    if row.transport == "http" {
        "hop"
    } else {
        "relay"
    }
}

/// Issue 50's goals for the gateway's speed, each against its floor.
struct Goal {
    name: &'static str,
    value: f64,
    unit: &'static str,
    /// At most this (`true`) or at least.
    at_most: bool,
    limit: f64,
}

impl Goal {
    fn pass(&self) -> bool {
        match self.at_most {
            true => self.value <= self.limit,
            false => self.value >= self.limit,
        }
    }

    fn json(&self) -> Value {
        json!({"goal": self.name, "value": self.value, "limit": self.limit,
            "at_most": self.at_most, "pass": self.pass()})
    }

    fn print(&self) {
        let (sign, verdict) = (
            if self.at_most { "<=" } else { ">=" },
            if self.pass() { "pass" } else { "FAIL" },
        );
        let u = self.unit;
        println!(
            "  {:<42} {:>7.2}{u} (goal {sign} {:.2}{u}) {verdict}",
            self.name, self.value, self.limit
        );
    }
}

/// The goals, from the rows of one upstream (none without its rows).
fn goals(rows: &[Row]) -> Vec<Goal> {
    let row = |transport: &str, clients: usize| {
        rows.iter()
            .find(|r| r.transport == transport && r.clients == clients)
    };
    let mut goals = Vec::new();
    if let Some(r) = row("stdio", 1) {
        goals.push(Goal {
            name: "stdio 1 client: p50 serve / direct",
            value: r.p50(&r.serve) / r.p50(&r.direct),
            unit: "x",
            at_most: true,
            limit: 1.5,
        });
        goals.push(Goal {
            name: "stdio 1 client: p50 serve - relay",
            value: r.p50(&r.serve) - r.p50(&r.relay),
            unit: " µs",
            at_most: true,
            limit: 40.0,
        });
    }
    if let Some(r) = row("http", 1) {
        goals.push(Goal {
            name: "http 1 client: p50 serve / hop",
            value: r.p50(&r.serve) / r.p50(&r.relay),
            unit: "x",
            at_most: true,
            limit: 1.2,
        });
    }
    if let Some(r) = row("http", 32) {
        goals.push(Goal {
            name: "http 32 clients: calls/s serve / direct",
            value: r.serve.rps() / r.direct.rps(),
            unit: "x",
            at_most: false,
            limit: 0.8,
        });
    }
    goals
}

fn calls(clients: usize) -> usize {
    if clients == 1 { CALLS_ONE } else { CALLS_MANY }
}

/// Over stdio: `clients` concurrent calls on one connection, to the
/// upstream, to a gateway in front of it, to `wrap` (one upstream, its
/// tool names unchanged) and to a relay that only copies bytes both ways
/// ([`RELAY`]): what one more process in the path costs on this machine,
/// whatever it does.
async fn over_stdio(kind: &Kind, dir: &Path) -> Vec<Row> {
    let direct = stdio_entry("billing", &kind.command, kind.stdio.clone());
    let upstream = json!({"billing": {"command": kind.command, "args": kind.stdio}});
    let cfg = config(dir, &format!("{}-stdio.json", kind.name), upstream);
    let gateway = stdio_entry(
        "gateway",
        &gateway_bin(),
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
        &gateway_bin(),
        in_front(vec!["wrap".into(), "--".into()]),
    );
    let me = std::env::current_exe().expect("the bench's path");
    let relay = stdio_entry(
        "billing",
        &me.display().to_string(),
        in_front(vec![RELAY.into()]),
    );
    let mut rows = Vec::new();
    for clients in CLIENTS {
        let paths = [
            Clients::open(&direct, "list_periods", clients, true).await,
            Clients::open(&gateway, "billing__list_periods", clients, true).await,
            Clients::open(&relay, "list_periods", clients, true).await,
            Clients::open(&wrap, "list_periods", clients, true).await,
        ];
        let runs = interleaved(&paths.iter().collect::<Vec<_>>(), calls(clients)).await;
        for path in paths {
            path.close().await;
        }
        let [direct, serve, relay, wrap] = <[Run; 4]>::try_from(runs).ok().expect("four runs");
        rows.push(Row {
            upstream: kind.name,
            transport: "stdio",
            clients,
            direct,
            serve,
            relay,
            wrap: Some(wrap),
        });
    }
    rows
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
async fn over_http(kind: &Kind, dir: &Path) -> Vec<Row> {
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
    let _gateway = spawn(&gateway_bin(), &args.map(String::from));
    listening(listen);
    let hop = free_port();
    let me = std::env::current_exe().expect("the bench's path");
    let relay_args = [HTTP_RELAY.to_string(), hop.to_string(), port.to_string()];
    let _relay = spawn(&me.display().to_string(), &relay_args);
    listening(hop);
    let direct = ServerEntry::http("billing", url);
    let gateway = ServerEntry::http("gateway", format!("http://127.0.0.1:{listen}/mcp"));
    let relay = ServerEntry::http("billing", format!("http://127.0.0.1:{hop}/mcp"));
    let mut rows = Vec::new();
    for clients in CLIENTS {
        let paths = [
            Clients::open(&direct, "list_periods", clients, false).await,
            Clients::open(&gateway, "billing__list_periods", clients, false).await,
            Clients::open(&relay, "list_periods", clients, false).await,
        ];
        let runs = interleaved(&paths.iter().collect::<Vec<_>>(), calls(clients)).await;
        for path in paths {
            path.close().await;
        }
        let [direct, serve, relay] = <[Run; 3]>::try_from(runs).ok().expect("three runs");
        rows.push(Row {
            upstream: kind.name,
            transport: "http",
            clients,
            direct,
            serve,
            relay,
            wrap: None,
        });
    }
    rows
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
        &gateway_bin(),
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
        replicas.push(spawn(&gateway_bin(), &args.map(String::from)));
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

/// `-- http` or `-- stdio`: only the Rust upstream over that transport,
/// printed with its goals (no report written): the run to compare when
/// working on one path.
async fn one_transport(transport: &str) {
    let dir = std::env::temp_dir().join(format!(
        "mcp-preamble-bench-{transport}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let rust = &kinds()[0];
    let rows = match transport {
        "http" => over_http(rust, &dir).await,
        _ => over_stdio(rust, &dir).await,
    };
    for row in &rows {
        row.print();
    }
    for goal in goals(&rows) {
        goal.print();
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

/// The load averages (1, 5 and 15 minutes) of this machine, when known.
fn load_average() -> Option<[f64; 3]> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut loads = text.split_whitespace().map(|l| l.parse().ok());
    Some([loads.next()??, loads.next()??, loads.next()??])
}

fn forwarding(runtime: &tokio::runtime::Runtime) {
    let dir = std::env::temp_dir().join(format!("mcp-preamble-bench-serve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut report = json!({});
    let before = load_average();
    println!("load average before: {before:?}");
    let mut rows = Vec::new();
    for kind in kinds() {
        let (stdio, http) = runtime
            .block_on(async { (over_stdio(&kind, &dir).await, over_http(&kind, &dir).await) });
        for row in stdio.iter().chain(&http) {
            row.print();
        }
        rows.extend(stdio.into_iter().chain(http));
    }
    for row in rows.iter().filter(|r| r.upstream == "rust") {
        let clients = row.clients.to_string();
        report[row.transport][&clients] = row.json();
        report["relay"][row.transport][&clients] = row.ratios(&row.relay);
        if let Some(wrap) = &row.wrap {
            report["wrap"][row.transport][&clients] = row.ratios(wrap);
        }
    }
    let rust: Vec<Row> = rows.into_iter().filter(|r| r.upstream == "rust").collect();
    println!("goals (rust upstream; ratios of p50s, calls/s at 32 clients):");
    let goals = goals(&rust);
    for goal in &goals {
        goal.print();
    }
    report["goals"] = goals.iter().map(Goal::json).collect();
    let rust = &kinds()[0];
    let cold_ms = runtime.block_on(fan_out(rust, &dir));
    println!(
        "cold fan-out, 10 rust upstreams over stdio, start to all tools listed: {cold_ms:.1} ms"
    );
    report["cold_fanout_10_ms"] = json!(cold_ms);
    let after = load_average();
    println!("load average after: {after:?}");
    report["load_average"] = json!({"before": before, "after": after});
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
    if let Some(transport) = args.iter().find(|a| *a == "http" || *a == "stdio") {
        return runtime.block_on(one_transport(transport));
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
