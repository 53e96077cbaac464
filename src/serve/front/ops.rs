//! Operating the HTTP gateway: the front every request goes through, the
//! operations endpoints on the listen address (`/healthz`, `/readyz`,
//! `/metrics`), the count of requests in flight, and the drain on shutdown.

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use http_body_util::combinators::BoxBody;
use hyper::body::{Body, Incoming};
use hyper::header::HeaderValue;
use hyper::{Method, Request, StatusCode};
use tokio::sync::Notify;

use crate::serve::front::cut::{Cut, Cuttable, Teed};
use crate::serve::front::replica::{SESSION_HEADER, Sealer};
use crate::serve::front::reply::{Answer, body, plain, until_sent};
use crate::serve::front::sessions::{BoundedSessions, Owner};
use crate::serve::gateway::Gateway;
use crate::serve::gateway::metrics::head;

/// rmcp's Streamable HTTP service of the gateway.
pub(in crate::serve) type Mcp = rmcp::transport::StreamableHttpService<Gateway, BoundedSessions>;

/// A readiness check: `Err` says why the gateway should not be sent
/// traffic now (one line, no secrets: `/readyz` shows it).
pub type ReadinessCheck = Arc<dyn Fn() -> Result<(), String> + Send + Sync>;

/// The drain time unless told: in-flight requests get this long at shutdown.
pub const DEFAULT_DRAIN: Duration = Duration::from_secs(10);

/// Every request the listener accepted goes through here: the operations
/// endpoints, then MCP (with sealed ids when configured).
pub(in crate::serve) struct Front {
    pub(in crate::serve) mcp: Mcp,
    pub(in crate::serve) gateway: Gateway,
    pub(in crate::serve) sessions: Arc<BoundedSessions>,
    pub(in crate::serve) sealer: Option<Sealer>,
    pub(in crate::serve) checks: Vec<(String, ReadinessCheck)>,
    /// The requests in flight, and the cut that ends them at shutdown.
    pub(in crate::serve) in_flight: InFlight,
    /// Calls the fast lane answered (`crate::serve::front::lane`).
    pub(in crate::serve) lane: AtomicU64,
    /// Answers by status, refused tokens, the callers' rate limit.
    pub(in crate::serve) traffic: crate::serve::front::traffic::Traffic,
    /// This replica's name, on every MCP answer.
    pub(in crate::serve) replica: Option<ReplicaId>,
}

/// A replica's name as its answers carry it: the `Mcp-Replica` header and
/// the `mcp_replica` cookie a load balancer can route on.
#[derive(Debug, Clone)]
pub(in crate::serve) struct ReplicaId {
    header: HeaderValue,
    cookie: HeaderValue,
}

impl ReplicaId {
    pub(in crate::serve) fn new(name: &str) -> Option<ReplicaId> {
        let cookie = format!("mcp_replica={name}; Path=/; HttpOnly; SameSite=Lax");
        match (HeaderValue::from_str(name), HeaderValue::from_str(&cookie)) {
            (Ok(header), Ok(cookie)) if !name.contains([';', ',', ' ', '"']) => {
                Some(ReplicaId { header, cookie })
            }
            _ => {
                tracing::warn!(
                    "the replica's name is not a header value; its answers do not carry it"
                );
                None
            }
        }
    }

    fn mark(&self, answer: &mut Answer) {
        let headers = answer.headers_mut();
        headers.insert("mcp-replica", self.header.clone());
        headers.append(hyper::header::SET_COOKIE, self.cookie.clone());
    }
}

impl Front {
    pub(in crate::serve) async fn serve(&self, req: Request<Incoming>) -> Answer {
        if let Some(answer) = self.operations(&req) {
            return answer;
        }
        let mut answer = self.mcp_answer(req).await;
        if let Some(replica) = &self.replica {
            replica.mark(&mut answer);
        }
        answer
    }

    /// The answer to an MCP request (a resumption, a POST in flight until
    /// sent, or another method).
    async fn mcp_answer(&self, req: Request<Incoming>) -> Answer {
        if resumes(&req) {
            return self.resume(req).await;
        }
        let post = req.method() == Method::POST;
        let (parts, incoming) = req.into_parts();
        let (teed, seen) = Teed::new(incoming);
        let req = Request::from_parts(parts, teed);
        if !post {
            return self.answer(req).await;
        }
        // A POST's answer (a call's stream among them) is in flight until
        // its body is sent; an open GET stream is not waited for.
        let guard = self.in_flight.enter();
        let answer = tokio::select! {
            answer = self.answer(req) => answer,
            // The drain time is over before the answer began.
            () = self.in_flight.cut.wait() => return match seen.error(self.in_flight.cut.drain) {
                Some(error) => body(StatusCode::OK, error, "application/json"),
                None => plain(StatusCode::SERVICE_UNAVAILABLE, "service unavailable: the gateway is shutting down"),
            },
        };
        let answer = match is_event_stream(&answer) {
            true => answer.map(|b| BoxBody::new(Cuttable::new(b, &self.in_flight.cut, seen))),
            false => answer,
        };
        self.tracked(answer, guard)
    }

    /// The answer to an MCP request: a POST's headers checked against its
    /// body (`crate::serve::front::headers`), then the fast lane or rmcp.
    async fn answer(&self, req: Request<Teed>) -> Answer {
        let delete = req.method() == Method::DELETE;
        let mut answer = match *req.method() == Method::POST {
            true => self.post(req).await,
            false => self.rmcp(req).await,
        };
        // A session ended is "No Content" (rmcp says 202, at which the SDKs
        // warn on every close): nothing is left to accept.
        if delete && answer.status() == StatusCode::ACCEPTED {
            *answer.status_mut() = StatusCode::NO_CONTENT;
            answer.headers_mut().remove(hyper::header::CONTENT_TYPE);
            *answer.body_mut() = http_body_util::BodyExt::boxed(http_body_util::BodyExt::map_err(
                http_body_util::Empty::<Bytes>::new(),
                |never| match never {},
            ));
        }
        answer
    }

    /// A POST: its body read once (within rmcp's limit, refused as rmcp
    /// refuses one), its headers checked against it, then the fast lane
    /// or rmcp, from those bytes.
    async fn post(&self, req: Request<Teed>) -> Answer {
        let config = &self.mcp.config;
        let (parts, incoming) = req.into_parts();
        let bytes = match read(incoming, config.max_request_body_bytes).await {
            Ok(bytes) => bytes,
            Err(refused) => return refused,
        };
        let mut req = Request::from_parts(parts, Full::new(bytes.clone()));
        if let Some(refused) = crate::serve::front::headers::agree(&req, &bytes, &self.gateway) {
            return refused;
        }
        // The task ids of a subscription, which rmcp's filter would drop.
        if req
            .headers()
            .get("mcp-method")
            .is_some_and(|m| m == "subscriptions/listen")
            && let Some(ids) = crate::serve::surfaces::task_status::task_ids(&bytes)
        {
            (req.extensions_mut()).insert(crate::serve::surfaces::task_status::ListenTasks(ids));
        }
        match crate::serve::front::lane::offer(req, &bytes, &self.gateway, config).await {
            Ok(answer) => {
                self.lane.fetch_add(1, Ordering::Relaxed);
                answer
            }
            Err(req) => self.rmcp(req).await,
        }
    }

    /// A host resuming a stream (`GET` with `Last-Event-ID`): rmcp's
    /// answer, unless this process cannot replay that stream (the call it
    /// carried ran on a replica that is gone, or ended): then `405` at
    /// once, which ends the SDKs' resumption (rmcp's empty stream made
    /// them ask again every few seconds, forever).
    async fn resume(&self, req: Request<Incoming>) -> Answer {
        let (answer, replayed) = crate::serve::front::sessions::resuming(self.rmcp(req)).await;
        if replayed {
            return answer;
        }
        tracing::info!("refused to resume a stream this process cannot replay (405)");
        let mut refused = plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "method not allowed: this process cannot resume that stream (the call it carried \
             ended, or ran on a replica that is gone); send the request again",
        );
        refused.headers_mut().insert(
            hyper::header::ALLOW,
            hyper::header::HeaderValue::from_static("GET, POST, DELETE"),
        );
        refused
    }

    /// At shutdown: the requests in flight get the drain time to finish;
    /// those still running then end with their error ([`Cut`]), given a
    /// moment to be sent.
    pub(in crate::serve) async fn finish(&self) {
        if self.in_flight.drain(self.in_flight.cut.drain).await > 0 {
            self.in_flight.cut.now();
            let _ = tokio::time::timeout(Duration::from_secs(1), self.in_flight.settled()).await;
        }
    }

    /// `answer`, in flight until its body is sent.
    fn tracked(&self, answer: Answer, guard: Leave) -> Answer {
        until_sent(answer, guard)
    }

    /// rmcp's answer to `req` (with sealed session ids when configured).
    async fn rmcp<B>(&self, req: Request<B>) -> Answer
    where
        B: Body + Send + 'static,
        B::Error: std::fmt::Display,
    {
        match &self.sealer {
            // The owner travels sealed in the id there.
            Some(sealer) => {
                crate::serve::front::replica::exchange(sealer, req, |r| self.mcp.handle(r)).await
            }
            None => self.owned(req).await,
        }
    }

    /// rmcp's answer to `req` in a session its token may use; a session
    /// another token opened is unknown to it (404). A new session belongs
    /// to the token that opened it.
    async fn owned<B>(&self, req: Request<B>) -> Answer
    where
        B: Body + Send + 'static,
        B::Error: std::fmt::Display,
    {
        let owner = Owner::of(&req);
        let presented = req
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok());
        if let Some(id) = presented
            && !self.sessions.serves(id, owner.as_ref())
        {
            tracing::info!("refused a session opened with another token");
            return plain(StatusCode::NOT_FOUND, "not found: unknown session");
        }
        let answer = self.mcp.handle(req).await;
        let issued = answer
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok());
        if let (Some(id), Some(owner)) = (issued, owner) {
            self.sessions.own(id, owner);
        }
        answer
    }

    /// The answer of an operations endpoint (`GET` or `HEAD`), if `req` is for one.
    pub(in crate::serve) fn operations(&self, req: &Request<Incoming>) -> Option<Answer> {
        if !matches!(*req.method(), Method::GET | Method::HEAD) {
            return None;
        }
        match req.uri().path() {
            "/healthz" => Some(body(StatusCode::OK, "ok\n".into(), PLAIN)),
            "/readyz" => Some(match self.unready(strict(req.uri().query())) {
                None => body(StatusCode::OK, "ready\n".into(), PLAIN),
                Some(why) => body(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!("not ready: {why}\n"),
                    PLAIN,
                ),
            }),
            "/metrics" => Some(body(StatusCode::OK, self.metrics(), PROMETHEUS)),
            _ => None,
        }
    }

    /// Why the gateway is not ready, or `None` when it is: every upstream
    /// settled, and with `strict` every check of
    /// [`HttpOptions::ready_when`](crate::serve::HttpOptions::ready_when)
    /// passing too (a replica serves the last reviewed text while its
    /// shared state is away: a load balancer's probe should not take it
    /// out for that).
    fn unready(&self, strict: bool) -> Option<String> {
        let starting = self.gateway.unready_upstreams();
        let mut why = Vec::new();
        if !starting.is_empty() {
            why.push(format!("upstreams ({} starting)", starting.len()));
        }
        for (name, check) in self.checks.iter().filter(|_| strict) {
            if let Err(e) = check() {
                why.push(format!("{name} ({})", one_line(&e)));
            }
        }
        (!why.is_empty()).then(|| why.join("; "))
    }

    /// `/metrics`: the gateway's ([`Gateway::metrics_text`]) and this
    /// listener's.
    fn metrics(&self) -> String {
        let mut out = self.gateway.metrics_text();
        let gauges = [
            (
                "mcp_preamble_http_sessions",
                "Live MCP sessions (2025 era) held by this process.",
                self.sessions.live(),
            ),
            (
                "mcp_preamble_http_requests_in_flight",
                "POST requests whose answer is not sent yet.",
                self.in_flight.now(),
            ),
        ];
        for (name, help, value) in gauges {
            head(&mut out, name, "gauge", help);
            let _ = writeln!(out, "{name} {value}");
        }
        if !self.checks.is_empty() {
            let name = "mcp_preamble_ready_check";
            let help = "1 while the readiness check passes (`/readyz?strict`), else 0.";
            head(&mut out, name, "gauge", help);
            for (check, passes) in &self.checks {
                let up = u8::from(passes().is_ok());
                let _ = writeln!(out, "{name}{{check=\"{}\"}} {up}", label(check));
            }
        }
        let name = "mcp_preamble_http_fast_lane_calls_total";
        let help = "Stateless tools/call requests answered without rmcp's per-request server.";
        head(&mut out, name, "counter", help);
        let _ = writeln!(out, "{name} {}", self.lane.load(Ordering::Relaxed));
        self.traffic.render(&mut out);
        out
    }
}

/// Whether `req` resumes a stream (`GET` with `Last-Event-ID`).
fn resumes(req: &Request<Incoming>) -> bool {
    req.method() == Method::GET && req.headers().contains_key("last-event-id")
}

/// Whether `answer` is an event stream.
fn is_event_stream(answer: &Answer) -> bool {
    (answer.headers().get(hyper::header::CONTENT_TYPE))
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.trim_start().starts_with("text/event-stream"))
}

const PLAIN: &str = "text/plain; charset=utf-8";
const PROMETHEUS: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Whether a `/readyz` query asks for every check (`?strict`).
fn strict(query: Option<&str>) -> bool {
    query.is_some_and(|q| {
        q.split('&')
            .any(|p| p == "strict" || p.starts_with("strict="))
    })
}

/// A check's name as a Prometheus label value.
fn label(name: &str) -> String {
    name.chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The first line of `s`, at most 200 characters.
fn one_line(s: &str) -> String {
    s.lines().next().unwrap_or("").chars().take(200).collect()
}

/// Requests in flight, a wake-up when the last one ends, and the cut
/// that ends those still running when the drain time is over.
#[derive(Clone)]
pub(in crate::serve) struct InFlight {
    count: Arc<(AtomicUsize, Notify)>,
    pub(in crate::serve) cut: Cut,
}

impl InFlight {
    pub(in crate::serve) fn new(drain: Duration) -> InFlight {
        InFlight {
            count: Arc::default(),
            cut: Cut::new(drain),
        }
    }

    fn enter(&self) -> Leave {
        self.count.0.fetch_add(1, Ordering::SeqCst);
        Leave(self.count.clone())
    }

    pub(in crate::serve) fn now(&self) -> usize {
        self.count.0.load(Ordering::SeqCst)
    }

    /// Returns once none is in flight.
    async fn settled(&self) {
        loop {
            let notified = self.count.1.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.now() == 0 {
                return;
            }
            notified.await;
        }
    }

    /// Waits at most `within` for the requests in flight; logs what
    /// finished and what was cut. Returns how many were cut.
    pub(in crate::serve) async fn drain(&self, within: Duration) -> usize {
        let at_start = self.now();
        tracing::info!(
            in_flight = at_start,
            drain_seconds = within.as_secs_f64(),
            "shutting down: no new connections; waiting for the requests in flight"
        );
        let _ = tokio::time::timeout(within, self.settled()).await;
        let cut = self.now();
        if cut == 0 {
            tracing::info!(
                finished = at_start,
                "drained: every request in flight finished"
            );
        } else {
            tracing::warn!(
                finished = at_start.saturating_sub(cut),
                cut,
                "the drain time is over: cut the requests still in flight (each answered with an error)"
            );
        }
        cut
    }
}

/// One request in flight; it ends on drop.
struct Leave(Arc<(AtomicUsize, Notify)>);

impl Drop for Leave {
    fn drop(&mut self) {
        if self.0.0.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.1.notify_waiters();
        }
    }
}

/// A body read whole, at most `max` bytes; past it, or unreadable, the
/// answer rmcp gives (413, or 500 with the reason).
async fn read(mut body: Teed, max: usize) -> Result<Bytes, Answer> {
    use http_body_util::BodyExt as _;
    let mut collected = bytes::BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| {
            let why = format!("Failed to read request body: {e}");
            body_of(StatusCode::INTERNAL_SERVER_ERROR, why)
        })?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if data.len() > max.saturating_sub(collected.len()) {
            let why = format!("Payload Too Large: request body exceeds {max} bytes");
            return Err(body_of(StatusCode::PAYLOAD_TOO_LARGE, why));
        }
        collected.extend_from_slice(&data);
    }
    Ok(collected.freeze())
}

/// An answer of `status` with `text` and no content type, as rmcp's.
fn body_of(status: StatusCode, text: String) -> Answer {
    use http_body_util::BodyExt as _;
    let mut answer = hyper::Response::new(
        Full::new(Bytes::from(text))
            .map_err(|never| match never {})
            .boxed(),
    );
    *answer.status_mut() = status;
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_drain_waits_for_the_last_request_and_cuts_after_its_time() {
        let in_flight = InFlight::new(Duration::from_secs(10));
        let first = in_flight.enter();
        let second = in_flight.enter();
        assert_eq!(in_flight.now(), 2);
        let ending = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            drop(first);
            drop(second);
        });
        assert_eq!(in_flight.drain(Duration::from_secs(30)).await, 0);
        ending.await.unwrap();
        let _held = in_flight.enter();
        assert_eq!(in_flight.drain(Duration::from_millis(20)).await, 1);
    }
}
