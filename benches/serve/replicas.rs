//! The load run of two replicas (`serve --listen --session-key-file`, one
//! key): clients each begin a 2025-era session on one replica and send
//! every call to the next replica in turn, as a load balancer without
//! affinity would, for a given time; every call's round trip is timed and
//! every failure counted (an HTTP status other than 200, a JSON-RPC error,
//! an answer without a result).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::load::Run;

/// What a load run saw.
pub struct Load {
    pub run: Run,
    pub errors: usize,
}

const PROTOCOL: &str = "2025-11-25";

/// `clients` clients calling `tool` across `urls` for `seconds`.
pub async fn load(urls: &[String], tool: &str, clients: usize, seconds: u64) -> Load {
    let http = reqwest::Client::new();
    let mut sessions = Vec::with_capacity(clients);
    for i in 0..clients {
        let url = &urls[i % urls.len()];
        sessions.push(initialize(&http, url).await);
    }
    let end = Instant::now() + Duration::from_secs(seconds);
    let start = Instant::now();
    let tasks: Vec<_> = sessions
        .into_iter()
        .enumerate()
        .map(|(i, session)| {
            let (http, urls, tool) = (http.clone(), urls.to_vec(), tool.to_string());
            tokio::spawn(async move {
                let mut took = Vec::new();
                let mut errors = 0;
                let mut n = i;
                while Instant::now() < end {
                    // The next replica each call: any serves any session.
                    n += 1;
                    let url = &urls[n % urls.len()];
                    let t = Instant::now();
                    let ok = call(&http, url, &session, &tool, n).await;
                    took.push(t.elapsed());
                    errors += usize::from(!ok);
                }
                (took, errors)
            })
        })
        .collect();
    let mut latencies = Vec::new();
    let mut errors = 0;
    for task in tasks {
        let (took, failed) = task.await.expect("a client task");
        latencies.extend(took);
        errors += failed;
    }
    let wall = start.elapsed();
    Load {
        run: Run {
            latencies,
            wall,
            cpu: None,
        },
        errors,
    }
}

/// A new session on `url`: its id, after `initialize` and `initialized`.
async fn initialize(http: &reqwest::Client, url: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL, "capabilities": {},
        "clientInfo": {"name": "replica-load", "version": "1"}}});
    let answer = post(http, url, None, &init).await.expect("initialize");
    let id = answer
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .expect("a session id")
        .to_string();
    let _ = answer.bytes().await;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let _ = post(http, url, Some(&id), &note)
        .await
        .expect("initialized");
    id
}

/// One `tools/call`; whether it was answered with a result.
async fn call(http: &reqwest::Client, url: &str, session: &str, tool: &str, id: usize) -> bool {
    let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": {}}});
    let Ok(answer) = post(http, url, Some(session), &message).await else {
        return false;
    };
    if answer.status() != reqwest::StatusCode::OK {
        return false;
    }
    let Ok(body) = answer.text().await else {
        return false;
    };
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .any(|m| m.get("result").is_some_and(|r| r["isError"] != true))
}

async fn post(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    message: &Value,
) -> reqwest::Result<reqwest::Response> {
    let mut request = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", PROTOCOL)
        .body(message.to_string());
    if let Some(id) = session {
        request = request.header("mcp-session-id", id);
    }
    request.send().await
}
