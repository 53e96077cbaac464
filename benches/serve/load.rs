//! Calls at a given concurrency, and what they took.

use std::time::{Duration, Instant};

use mcp_preamble::connect::{ConnectOptions, Connection, connect};
use mcp_preamble::files::ServerEntry;
use mcp_preamble::rmcp::model::CallToolRequestParams;

/// One measurement: every call's round trip and the wall time of all.
#[derive(Clone)]
pub struct Run {
    pub latencies: Vec<Duration>,
    pub wall: Duration,
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
}

fn options() -> ConnectOptions {
    ConnectOptions::new().timeout(Duration::from_secs(60))
}

/// `clients` hosts calling `tool` `calls` times each (after a warm-up):
/// over stdio, `clients` concurrent calls on one connection (a stdio server
/// has one host); over HTTP, one session per client.
pub async fn measure(
    entry: &ServerEntry,
    tool: &str,
    clients: usize,
    calls: usize,
    shared: bool,
) -> Run {
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
    let start = Instant::now();
    let tasks: Vec<_> = peers
        .into_iter()
        .map(|peer| {
            let tool = tool.to_string();
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
    let mut latencies = Vec::with_capacity(clients * calls);
    for task in tasks {
        latencies.extend(task.await.expect("a client task"));
    }
    let wall = start.elapsed();
    for c in conns {
        c.close().await;
    }
    Run { latencies, wall }
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
