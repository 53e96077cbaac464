//! What the HTTP front counts and tells of each request: answers by
//! status, refused tokens by reason, requests over a caller's rate limit
//! (`429` with `Retry-After`), and one access line per request (caller,
//! method, tool, upstream, status, duration), written when its answer's
//! body is sent.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hyper::header::{HeaderValue, RETRY_AFTER};
use hyper::{Method, Request, StatusCode};

use crate::serve::front::reply::{Answer, plain, until_sent};
use crate::serve::front::sessions::Owner;
use crate::serve::gateway::Gateway;
use crate::serve::gateway::call::Called;
use crate::serve::gateway::metrics::{head, label};
use crate::support::lock;

/// Why the gate refused a request's token, carried by its `401`.
#[derive(Debug, Clone, Copy)]
pub(in crate::serve) struct Refusal(pub(in crate::serve) &'static str);

/// Callers a rate limit keeps track of at most; past it, those whose
/// allowance is whole again are forgotten first.
const MAX_CALLERS: usize = 65_536;

/// The front's counts and the callers' allowances.
#[derive(Debug, Default)]
pub(in crate::serve) struct Traffic {
    counts: Mutex<Counts>,
    /// Requests a caller may make per second (and at once), if limited.
    per_second: Option<f64>,
    allowances: Mutex<HashMap<String, Allowance>>,
}

#[derive(Debug, Default)]
struct Counts {
    by_status: BTreeMap<(&'static str, u16), u64>,
    refused: BTreeMap<&'static str, u64>,
    limited: u64,
}

/// A token bucket: what a caller may still send, as of `at`.
#[derive(Debug, Clone, Copy)]
struct Allowance {
    left: f64,
    at: Instant,
}

impl Traffic {
    /// Counts only, or counts and a limit of `per_second` requests per
    /// caller (a burst of as many).
    pub(in crate::serve) fn new(per_second: Option<f64>) -> Traffic {
        Traffic {
            per_second: per_second.filter(|n| *n > 0.0),
            ..Traffic::default()
        }
    }

    /// `None` when `caller` may send one more request now; else the `429`
    /// that says when it may (`Retry-After`, whole seconds, at least 1).
    pub(in crate::serve) fn over_limit(&self, caller: &str) -> Option<Answer> {
        let rate = self.per_second?;
        let now = Instant::now();
        let whole = rate.max(1.0);
        let wait = {
            let mut all = lock(&self.allowances);
            if all.len() >= MAX_CALLERS && !all.contains_key(caller) {
                all.retain(|_, a| a.left + rate * now.duration_since(a.at).as_secs_f64() < whole);
            }
            let a = all.entry(caller.to_string()).or_insert(Allowance {
                left: whole,
                at: now,
            });
            a.left = (a.left + rate * now.duration_since(a.at).as_secs_f64()).min(whole);
            a.at = now;
            if a.left >= 1.0 {
                a.left -= 1.0;
                return None;
            }
            (1.0 - a.left) / rate
        };
        lock(&self.counts).limited += 1;
        tracing::info!(caller, "refused a request over the rate limit");
        let mut answer = plain(
            StatusCode::TOO_MANY_REQUESTS,
            "too many requests: over this caller's rate limit",
        );
        let secs = wait.ceil().max(1.0) as u64;
        if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
            answer.headers_mut().insert(RETRY_AFTER, v);
        }
        Some(answer)
    }

    /// Counts `answer` (and the token refusal it carries).
    fn count(&self, method: &Method, answer: &Answer) {
        let mut counts = lock(&self.counts);
        let key = (method_label(method), answer.status().as_u16());
        *counts.by_status.entry(key).or_default() += 1;
        if let Some(Refusal(why)) = answer.extensions().get::<Refusal>() {
            *counts.refused.entry(why).or_default() += 1;
        }
    }

    /// Appends the front's series in the text format.
    pub(in crate::serve) fn render(&self, out: &mut String) {
        let counts = lock(&self.counts);
        let name = "mcp_preamble_http_requests_total";
        head(
            out,
            name,
            "counter",
            "HTTP requests answered, by method and status.",
        );
        for ((method, status), n) in &counts.by_status {
            let _ = writeln!(out, "{name}{{method=\"{method}\",status=\"{status}\"}} {n}");
        }
        let name = "mcp_preamble_auth_failures_total";
        head(
            out,
            name,
            "counter",
            "Requests refused for their bearer token, by reason.",
        );
        for (why, n) in &counts.refused {
            let _ = writeln!(out, "{name}{{reason=\"{}\"}} {n}", label(why));
        }
        let name = "mcp_preamble_rate_limited_total";
        head(
            out,
            name,
            "counter",
            "Requests refused over their caller's rate limit (429).",
        );
        let _ = writeln!(out, "{name} {}", counts.limited);
    }
}

/// A method as a label: the few HTTP has, anything else `other`.
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        Method::HEAD => "HEAD",
        _ => "other",
    }
}

/// Who sent `req`: its token's owner (`token:…`, `sub:…`), else its peer.
pub(in crate::serve) fn caller<B>(req: &Request<B>, peer: std::net::SocketAddr) -> String {
    match Owner::of(req) {
        Some(Owner(owner)) => owner,
        None => format!("ip:{}", peer.ip()),
    }
}

/// Whether `path` is an operations endpoint (probes and scrapes: never
/// rate limited, their access lines at `debug`).
pub(in crate::serve) fn operations(path: &str) -> bool {
    matches!(path, "/healthz" | "/readyz" | "/metrics")
}

/// What the access line of one request says, gathered before its answer.
pub(in crate::serve) struct Visit {
    caller: String,
    method: Method,
    path: String,
    mcp_method: Option<String>,
    tool: Option<String>,
    called: Called,
    started: Instant,
}

impl Visit {
    /// The visit of `req` from `peer`; `req` gets the slot a call's
    /// handler names its tool in.
    pub(in crate::serve) fn of<B>(req: &mut Request<B>, peer: std::net::SocketAddr) -> Visit {
        let header = |name: &str| {
            let value = req.headers().get(name)?.to_str().ok()?;
            Some(value.chars().take(200).collect::<String>())
        };
        let visit = Visit {
            mcp_method: header("mcp-method"),
            tool: header("mcp-name").filter(|n| !n.starts_with("=?base64?")),
            caller: caller(req, peer),
            method: req.method().clone(),
            path: req.uri().path().chars().take(200).collect(),
            called: Called::default(),
            started: Instant::now(),
        };
        req.extensions_mut().insert(visit.called.clone());
        visit
    }

    /// The caller as the gate admitted `req`: its token's owner.
    pub(in crate::serve) fn admitted<B>(&mut self, req: &Request<B>) {
        if let Some(Owner(owner)) = Owner::of(req) {
            self.caller = owner;
        }
    }

    /// Who the caller is.
    pub(in crate::serve) fn caller(&self) -> &str {
        &self.caller
    }

    /// Whether the request is for an operations endpoint.
    pub(in crate::serve) fn operations(&self) -> bool {
        operations(&self.path)
    }

    /// `answer`, counted, its access line written once its body is sent.
    pub(in crate::serve) fn answered(
        self,
        answer: Answer,
        traffic: &Traffic,
        gateway: &Gateway,
    ) -> Answer {
        traffic.count(&self.method, &answer);
        let status = answer.status().as_u16();
        let gateway = gateway.clone();
        until_sent(
            answer,
            Logged {
                line: Some((self, status, gateway)),
            },
        )
    }
}

/// Writes its request's access line when the answer is sent (or dropped:
/// the client gone).
struct Logged {
    line: Option<(Visit, u16, Gateway)>,
}

impl Drop for Logged {
    fn drop(&mut self) {
        let Some((v, status, gateway)) = self.line.take() else {
            return;
        };
        let tool = v.tool.or_else(|| v.called.tool());
        let upstream = tool.as_deref().and_then(|t| gateway.upstream_of(t));
        let mcp_method = match (&v.mcp_method, &tool) {
            (Some(m), _) => m.as_str(),
            (None, Some(_)) => "tools/call",
            (None, None) => "",
        };
        let took: Duration = v.started.elapsed();
        let ms = (took.as_secs_f64() * 10_000.0).round() / 10.0;
        let (tool, upstream) = (
            tool.as_deref().unwrap_or(""),
            upstream.as_deref().unwrap_or(""),
        );
        // Probes and scrapes come every few seconds: not at the default level.
        if operations(&v.path) {
            tracing::debug!(target: "mcp_preamble::access", caller = %v.caller, http_method = %v.method, path = %v.path, status, duration_ms = ms, "request");
            return;
        }
        tracing::info!(
            target: "mcp_preamble::access",
            caller = %v.caller,
            http_method = %v.method,
            path = %v.path,
            method = mcp_method,
            tool,
            upstream,
            status,
            duration_ms = ms,
            "request"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_over_its_rate_gets_429_with_retry_after() {
        let traffic = Traffic::new(Some(2.0));
        assert!(traffic.over_limit("token:a").is_none());
        assert!(traffic.over_limit("token:a").is_none());
        let refused = traffic
            .over_limit("token:a")
            .expect("a third request at once");
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(refused.headers()[RETRY_AFTER], "1");
        // Another caller has an allowance of its own.
        assert!(traffic.over_limit("token:b").is_none());
        let mut out = String::new();
        traffic.render(&mut out);
        assert!(out.contains("mcp_preamble_rate_limited_total 1\n"), "{out}");
        assert!(Traffic::new(None).over_limit("token:a").is_none());
    }
}
