//! Calls at a given concurrency, and what they took.

use std::time::{Duration, Instant};

use mcp_preamble::connect::{ConnectOptions, Connection, connect};
use mcp_preamble::files::ServerEntry;
use mcp_preamble::rmcp::model::CallToolRequestParams;
use mcp_preamble::rmcp::service::{Peer, RoleClient};

/// One measurement: every call's round trip and the wall time of all.
#[derive(Clone, Default)]
pub struct Run {
    pub latencies: Vec<Duration>,
    pub wall: Duration,
    /// The CPU time of the process the clients talk to (its every thread),
    /// when it is one this bench started: what the path itself spent.
    pub cpu: Option<Duration>,
}

impl Run {
    /// The `q` quantile (0..=1) of the round trips.
    pub fn quantile(&self, q: f64) -> Duration {
        let mut sorted = self.latencies.clone();
        sorted.sort();
        let at = ((sorted.len() as f64 - 1.0) * q).round() as usize;
        sorted.get(at).copied().unwrap_or_default()
    }

    /// Calls per second over the whole run.
    pub fn rps(&self) -> f64 {
        self.latencies.len() as f64 / self.wall.as_secs_f64()
    }

    /// The CPU time the path's process spent per call, in microseconds.
    pub fn cpu_per_call(&self) -> Option<f64> {
        let calls = self.latencies.len().max(1) as f64;
        self.cpu.map(|cpu| cpu.as_secs_f64() * 1e6 / calls)
    }

    /// `other`'s calls and wall time added to these.
    fn add(&mut self, other: Run) {
        let first = self.latencies.is_empty();
        self.latencies.extend(other.latencies);
        self.wall += other.wall;
        self.cpu = match (first, self.cpu, other.cpu) {
            (true, _, cpu) => cpu,
            (false, Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
    }
}

/// The CPU time every thread of process `pid` has had so far (Linux's
/// per-thread `schedstat`, in nanoseconds); `None` elsewhere.
fn cpu_of(pid: u32) -> Option<Duration> {
    let mut nanos = 0u64;
    for thread in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let stat = std::fs::read_to_string(thread.ok()?.path().join("schedstat")).ok()?;
        nanos += stat.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(Duration::from_nanos(nanos))
}

fn options() -> ConnectOptions {
    ConnectOptions::new().timeout(Duration::from_secs(60))
}

/// `clients` hosts of one path, connected and warmed up, calling one tool:
/// over stdio, `clients` concurrent callers on one connection (a stdio
/// server has one host); over HTTP, one session per client.
pub struct Clients {
    conns: Vec<Connection>,
    peers: Vec<Peer<RoleClient>>,
    tool: String,
}

impl Clients {
    pub async fn open(entry: &ServerEntry, tool: &str, clients: usize, shared: bool) -> Clients {
        let connections = if shared { 1 } else { clients };
        let mut conns: Vec<Connection> = Vec::new();
        for _ in 0..connections {
            conns.push(connect(entry, &options()).await.expect("connects"));
        }
        let peers: Vec<_> = (0..clients)
            .map(|i| conns[i % connections].client.peer().clone())
            .collect();
        for peer in &peers {
            for _ in 0..5 {
                peer.call_tool(CallToolRequestParams::new(tool.to_string()))
                    .await
                    .expect("a warm-up call");
            }
        }
        Clients {
            conns,
            peers,
            tool: tool.to_string(),
        }
    }

    /// Each client calls `calls` times, all at once.
    async fn run(&self, calls: usize) -> Run {
        // The process of a path over stdio (over HTTP, none is known here).
        let pid = (self.conns.len() == 1)
            .then(|| self.conns[0].process_id)
            .flatten();
        let cpu_before = pid.and_then(cpu_of);
        let start = Instant::now();
        let tasks: Vec<_> = (self.peers.iter().cloned())
            .map(|peer| {
                let tool = self.tool.clone();
                tokio::spawn(async move {
                    let mut took = Vec::with_capacity(calls);
                    for _ in 0..calls {
                        let t = Instant::now();
                        let r = peer
                            .call_tool(CallToolRequestParams::new(tool.clone()))
                            .await;
                        took.push(t.elapsed());
                        std::hint::black_box(r.expect("a call"));
                    }
                    took
                })
            })
            .collect();
        let mut latencies = Vec::with_capacity(self.peers.len() * calls);
        for task in tasks {
            latencies.extend(task.await.expect("a client task"));
        }
        let wall = start.elapsed();
        let cpu = match (pid.and_then(cpu_of), cpu_before) {
            (Some(after), Some(before)) => after.checked_sub(before),
            _ => None,
        };
        Run {
            latencies,
            wall,
            cpu,
        }
    }

    pub async fn close(self) {
        for c in self.conns {
            c.close().await;
        }
    }
}

/// Rounds in which every path takes its turn: a change in the machine's
/// load meets all paths alike, not the one measured at that moment.
const ROUNDS: usize = 5;

/// `calls` calls of each client of each path, in [`ROUNDS`] rounds, the
/// paths in turn within each round: one run per path, in `paths`' order.
pub async fn interleaved(paths: &[&Clients], calls: usize) -> Vec<Run> {
    let mut runs = vec![Run::default(); paths.len()];
    for round in 0..ROUNDS {
        let share = calls / ROUNDS + usize::from(round < calls % ROUNDS);
        for (path, run) in paths.iter().zip(&mut runs) {
            run.add(path.run(share).await);
        }
    }
    runs
}

/// Start of the gateway to its `tools/list` holding `expected` tools:
/// a host's connect (the gateway starts every upstream before it answers
/// the handshake), in milliseconds.
pub async fn cold(entry: &ServerEntry, expected: usize) -> f64 {
    let start = Instant::now();
    let c = connect(entry, &options())
        .await
        .expect("the gateway starts");
    let listed = c.snapshot.tools.len();
    let ms = start.elapsed().as_secs_f64() * 1e3;
    assert!(
        listed >= expected,
        "{listed} tools listed, {expected} expected"
    );
    c.close().await;
    ms
}
