//! The gateway over Streamable HTTP (feature `serve-http`), on a loopback
//! address: without authentication nothing but this machine may reach it
//! (with feature `serve-auth`, `serve::auth` opens other addresses to
//! bearer tokens over TLS). Any local user can, so every client is bounded
//! ([`HttpLimits`]): one may not hold the listener, the descriptors or the
//! memory.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use crate::error::{Error, ErrorKind, Result};
use crate::serve::front::gate::{Gate, Refused};
use crate::serve::front::ops::{DEFAULT_DRAIN, Front, InFlight, Mcp, ReadinessCheck};
use crate::serve::front::replica::{InTheId, Sealer, SessionKey};
use crate::serve::front::reply::Answer;
use crate::serve::front::sessions::BoundedSessions;
use crate::serve::front::traffic::Visit;
use crate::serve::gateway::Gateway;

/// What one Streamable HTTP client may hold of the gateway
/// ([`Gateway::serve_http_with`]); the defaults suit a few local hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    /// A connection that has not sent a whole request head this long
    /// after it opened (or after its last answer) is closed. Default 10 s.
    pub header_read_timeout: Duration,
    /// A connection with no byte read or written this long is closed
    /// (open event streams get a keep-alive every 15 s). Default 120 s.
    pub idle_timeout: Duration,
    /// Connections served at once; more wait in the listen queue until
    /// one closes. Default 256.
    pub max_connections: usize,
    /// Live MCP sessions (2025 era, `Mcp-Session-Id`); a new one beyond
    /// closes the least recently used. Default 128.
    pub max_sessions: usize,
    /// A session without a request this long is closed. Default 300 s.
    pub session_idle: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        Self {
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(120),
            max_connections: 256,
            max_sessions: 128,
            session_idle: Duration::from_secs(300),
        }
    }
}

/// How [`Gateway::serve_http_until`] serves: its [`HttpLimits`], sealed
/// session ids for replicas ([`HttpOptions::session_key`]), the checks
/// `/readyz` runs, and how long in-flight requests may take at shutdown.
#[derive(Clone)]
pub struct HttpOptions {
    pub(in crate::serve) limits: HttpLimits,
    pub(in crate::serve) sealer: Option<Sealer>,
    pub(in crate::serve) checks: Vec<(String, ReadinessCheck)>,
    pub(in crate::serve) drain: Duration,
    pub(in crate::serve) guard: Guard,
    /// Requests per second each caller may send (`429` past it).
    pub(in crate::serve) rate_limit: Option<f64>,
    /// A second address serving only `/metrics` and the probes.
    pub(in crate::serve) metrics_on: Option<SocketAddr>,
    pub(in crate::serve) replica: Option<crate::serve::front::ops::ReplicaId>,
    /// Where sessions a `DELETE` ends are shared with the other replicas.
    #[cfg(feature = "state-redis")]
    pub(in crate::serve) shared: Option<Arc<crate::state::SharedState>>,
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let checks: Vec<&str> = self.checks.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("HttpOptions")
            .field("limits", &self.limits)
            .field("sealed_sessions", &self.sealer.is_some())
            .field("checks", &checks)
            .field("drain", &self.drain)
            .field("access", &self.guard.is_some())
            .field("replica", &self.replica)
            .finish()
    }
}

impl HttpOptions {
    /// `limits`, sessions kept in this process, only the built-in
    /// readiness check (the upstreams), [`DEFAULT_DRAIN`].
    pub fn new(limits: HttpLimits) -> HttpOptions {
        HttpOptions {
            limits,
            sealer: None,
            checks: Vec::new(),
            drain: DEFAULT_DRAIN,
            guard: None,
            rate_limit: None,
            metrics_on: None,
            replica: None,
            #[cfg(feature = "state-redis")]
            shared: None,
        }
    }

    /// At most `per_second` requests a second (and as many at once) from
    /// each caller (its token's owner, else its address); more get `429
    /// Too Many Requests` with `Retry-After`. Probes and `/metrics` are not
    /// limited.
    pub fn rate_limit(mut self, per_second: f64) -> HttpOptions {
        self.rate_limit = Some(per_second);
        self
    }

    /// `/metrics`, `/healthz` and `/readyz` on `addr` too, for a scraper:
    /// no token, and any `Host` that is an IP address, `localhost` or an
    /// allowed host (no DNS rebinding). Nothing else is served there.
    pub fn metrics_listen(mut self, addr: SocketAddr) -> HttpOptions {
        self.metrics_on = Some(addr);
        self
    }

    /// Every request through `access`'s gate (bearer tokens, `Host` and
    /// `Origin` rules, the protected-resource metadata; `/healthz` and
    /// `/readyz` stay open) and over its TLS when it has some.
    #[cfg(feature = "serve-auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "serve-auth")))]
    pub fn access(mut self, access: crate::serve::front::auth::Access) -> HttpOptions {
        self.guard = Some(Arc::new(access));
        self
    }

    /// Session ids sealed with `key`, each refused `ttl` after its
    /// session began: every process serving with the same key serves any
    /// request of any session (see [`SessionKey`]).
    pub fn session_key(mut self, key: SessionKey, ttl: Duration) -> HttpOptions {
        self.sealer = Some(Sealer::new(key, ttl));
        self
    }

    /// With [`HttpOptions::session_key`]: a session a `DELETE` ends on
    /// this replica is recorded in `state` and refused by every replica
    /// that follows it (within moments: pub/sub), not only by this one,
    /// until its id expires. Without it a `DELETE` ends the session on
    /// this replica only.
    #[cfg(feature = "state-redis")]
    #[cfg_attr(docsrs, doc(cfg(feature = "state-redis")))]
    pub fn share_ended_sessions(mut self, state: Arc<crate::state::SharedState>) -> HttpOptions {
        self.shared = Some(state);
        self
    }

    /// One more check `/readyz?strict` runs (after the built-in
    /// `upstreams`, which plain `/readyz` runs alone): not ready while
    /// `check` returns `Err`. `/metrics` shows each as
    /// `mcp_preamble_ready_check{check="NAME"}`, 1 or 0.
    pub fn ready_when(
        mut self,
        name: &str,
        check: impl Fn() -> Result<(), String> + Send + Sync + 'static,
    ) -> HttpOptions {
        self.checks.push((name.to_string(), Arc::new(check)));
        self
    }

    /// This replica's name, in every MCP answer's `Mcp-Replica` header and
    /// `mcp_replica` cookie, for a load balancer that keeps each host on
    /// one replica (`serve --replica-id`). A name that is not a header
    /// value is left out (logged).
    pub fn replica_id(mut self, name: &str) -> HttpOptions {
        self.replica = crate::serve::front::ops::ReplicaId::new(name);
        self
    }

    /// At shutdown, requests in flight get at most `within` to finish;
    /// the rest end with an error for their request.
    pub fn drain(mut self, within: Duration) -> HttpOptions {
        self.drain = within;
        self
    }
}

/// A listener on `addr`, which must be a loopback address (`127.0.0.1`,
/// `::1`; port 0 picks a free port): anything else is refused, since the
/// gateway lets whoever reaches it call every upstream tool.
pub async fn bind_loopback(addr: SocketAddr) -> Result<TcpListener> {
    if !addr.ip().is_loopback() {
        return Err(Error::new(
            ErrorKind::InvalidConfig,
            format!(
                "the gateway listens on loopback addresses only (127.0.0.1 or [::1]), not {addr}: it has no authentication"
            ),
        ));
    }
    TcpListener::bind(addr)
        .await
        .map_err(|e| Error::new(ErrorKind::Connect, format!("cannot listen on {addr}: {e}")))
}

// serve-auth hook: who may reach the gateway besides the loopback rules
// (`crate::serve::front::auth`); nothing without the feature.
#[cfg(feature = "serve-auth")]
type Guard = Option<Arc<crate::serve::front::auth::Access>>;
#[cfg(not(feature = "serve-auth"))]
type Guard = Option<Arc<Infallible>>;

/// The front every connection of `serve_until` answers through.
fn front_of(
    mcp: Mcp,
    gateway: &Gateway,
    sessions: Arc<BoundedSessions>,
    options: &HttpOptions,
) -> Arc<Front> {
    Arc::new(Front {
        mcp,
        gateway: gateway.clone(),
        sessions,
        sealer: options.sealer.clone(),
        checks: options.checks.clone(),
        in_flight: InFlight::new(options.drain),
        lane: AtomicU64::new(0),
        traffic: crate::serve::front::traffic::Traffic::new(options.rate_limit),
        replica: options.replica.clone(),
    })
}

/// Serves `gateway` over Streamable HTTP on `listener` with `options`
/// until `shutdown` ([`Gateway::serve_http_until`]).
pub(in crate::serve) async fn serve_until(
    gateway: &Gateway,
    listener: TcpListener,
    options: HttpOptions,
    shutdown: impl Future<Output = ()>,
) -> Result<()> {
    let limits = options.limits;
    let front_gateway = gateway.clone();
    let loopback = listener.local_addr().is_ok_and(|a| a.ip().is_loopback());
    let sessions = Arc::new(BoundedSessions::new(
        limits.max_sessions,
        limits.session_idle,
    ));
    let gate = Arc::new(gate_of(&options.guard, loopback));
    let mut config = config();
    if options.sealer.is_some() {
        config.session_store = Some(Arc::new(InTheId));
    }
    let sessions_end = config.cancellation_token.clone();
    let _shared = share_ended(&options);
    let mcp: Mcp = StreamableHttpService::new(
        move || Ok(front_gateway.session()),
        sessions.clone(),
        config,
    );
    let front = front_of(mcp, gateway, sessions, &options);
    let _scrape = crate::serve::front::scrape::start(options.metrics_on, &front, &gate).await?;
    let max = limits.max_connections.clamp(1, Semaphore::MAX_PERMITS);
    let slots = Arc::new(Semaphore::new(max));
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => slot,
            () = &mut shutdown => break,
        };
        let Ok(slot) = slot else {
            return Ok(());
        };
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::warn!(error = %e, "accepting an http connection failed");
                tokio::time::sleep(accept_pause(&e)).await;
                continue;
            }
        };
        let served = Served {
            front: front.clone(),
            guard: options.guard.clone(),
            gate: gate.clone(),
        };
        tokio::spawn(open(stream, peer, served, limits, stopped.clone(), slot));
    }
    drop(listener);
    // Open connections answer what they are serving, then close.
    let _ = stop.send(true);
    front.finish().await;
    // What is left are event streams and idle sessions.
    sessions_end.cancel();
    let all = u32::try_from(max).unwrap_or(u32::MAX);
    let closed = tokio::time::timeout(Duration::from_secs(1), slots.acquire_many(all)).await;
    if closed.is_err() {
        tracing::debug!("some http connections were still open at exit");
    }
    Ok(())
}

/// Sessions ended here told to the shared state, and those ended
/// elsewhere refused here, while the result is kept.
#[cfg(feature = "state-redis")]
fn share_ended(options: &HttpOptions) -> Option<crate::state::EndedFollower> {
    if let (Some(sealer), Some(state)) = (&options.sealer, &options.shared) {
        let to = state.clone();
        sealer.ended.tell(Arc::new(move |sid: &str, exp| {
            let (to, sid) = (to.clone(), sid.to_string());
            tokio::spawn(async move {
                if let Err(e) = to.end_session(&sid, exp).await {
                    tracing::warn!(error = %e, "an ended session could not be shared; other replicas serve it until its id expires");
                }
            });
        }));
        let ended = sealer.ended.clone();
        let sink = Box::new(move |sid: &str, exp| ended.insert(sid, exp));
        return Some(state.clone().follow_ended(sink));
    }
    None
}

#[cfg(not(feature = "state-redis"))]
fn share_ended(_: &HttpOptions) -> Option<()> {
    None
}

/// Serves one accepted connection (over TLS when the gate has some,
/// its handshake within the head's time), then frees its `slot`.
async fn open(
    stream: TcpStream,
    peer: SocketAddr,
    served: Served,
    limits: HttpLimits,
    stopped: tokio::sync::watch::Receiver<bool>,
    slot: tokio::sync::OwnedSemaphorePermit,
) {
    // An answer is small writes (head, then event-stream chunks): without
    // this, Nagle's algorithm holds the last one for the client's delayed ACK.
    let _ = stream.set_nodelay(true);
    // serve-auth hook: TLS.
    #[cfg(feature = "serve-auth")]
    if let Some(tls) = served.guard.as_ref().and_then(|a| a.tls()) {
        let shake = tokio::time::timeout(limits.header_read_timeout, tls.accept(stream));
        match shake.await {
            Ok(Ok(stream)) => connection(stream, peer, served, limits, stopped).await,
            Ok(Err(e)) => tracing::debug!(%peer, error = %e, "tls handshake failed"),
            Err(_) => tracing::debug!(%peer, "tls handshake timed out"),
        }
        drop(slot);
        return;
    }
    connection(stream, peer, served, limits, stopped).await;
    drop(slot);
}

/// rmcp's defaults, but a stateless (2026-07-28) call whose first message
/// is its answer is answered as one JSON body: an event stream (priming
/// event, framing, a stream task) cost every call a second response
/// path. A call that sends progress first still gets an event stream.
/// rmcp's Host allow-list is off: the gate checked every request first.
fn config() -> StreamableHttpServerConfig {
    let mut config = StreamableHttpServerConfig::default().disable_allowed_hosts();
    config.json_response = true;
    config
}

/// The gate of a listener: without an `Access`, the loopback rules
/// wherever it listens (as rmcp's defaults had them); with one, its hosts
/// and tokens.
fn gate_of(guard: &Guard, loopback: bool) -> Gate {
    #[cfg(feature = "serve-auth")]
    if let Some(access) = guard {
        return Gate::new(loopback, access.allowed_hosts()).with_access(access.clone());
    }
    let _ = (guard, loopback);
    Gate::new(true, &[])
}

/// How long to wait after a failed `accept`: out of descriptors or memory
/// the next one fails too until a connection closes.
fn accept_pause(e: &std::io::Error) -> Duration {
    // ENOMEM 12, ENFILE 23, EMFILE 24 (Linux and the BSDs); ENOBUFS 105
    // on Linux, 55 on the BSDs.
    match e.raw_os_error() {
        Some(12 | 23 | 24 | 55 | 105) => Duration::from_millis(100),
        _ => Duration::from_millis(5),
    }
}

/// What a connection serves: the front, behind the access gate when
/// there is one (`loopback`: the listener's address is).
#[derive(Clone)]
struct Served {
    front: Arc<Front>,
    /// Its TLS, when it has some.
    #[cfg_attr(not(feature = "serve-auth"), allow(dead_code))]
    guard: Guard,
    gate: Arc<Gate>,
}

/// Serves one connection until it ends, its head is late, or it is idle;
/// once `stopped` it finishes the request it is serving, then closes.
async fn connection<S>(
    stream: S,
    peer: SocketAddr,
    served: Served,
    limits: HttpLimits,
    mut stopped: tokio::sync::watch::Receiver<bool>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let activity = Activity::new();
    let io = TokioIo::new(Watched {
        inner: stream,
        activity: activity.clone(),
    });
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let served = served.clone();
        async move { Ok::<Answer, Infallible>(answer(req, served, peer).await) }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_header_size(crate::serve::front::headers::MAX_HEAD_BYTES);
    let mut served = std::pin::pin!(builder.serve_connection(io, service));
    let mut stopping = false;
    loop {
        tokio::select! {
            ended = served.as_mut() => {
                if let Err(e) = ended {
                    tracing::debug!(%peer, error = %e, "http connection ended");
                }
                return;
            }
            () = activity.idle_for(limits.idle_timeout) => {
                tracing::debug!(%peer, "closed an idle http connection");
                return;
            }
            _ = stopped.wait_for(|s| *s), if !stopping => {
                stopping = true;
                served.as_mut().graceful_shutdown();
            }
        }
    }
}

/// The answer to one request: the gate first (`crate::serve::front::gate`),
/// then a browser's preflight, then the front; an answer to an origin the
/// gate let through is readable by it.
async fn answer(mut req: Request<Incoming>, served: Served, peer: SocketAddr) -> Answer {
    let origin = req.headers().get(hyper::header::ORIGIN).cloned();
    let front = &served.front;
    let mut visit = Visit::of(&mut req, peer);
    let mut answer = match served.gate.admit(req).await {
        Ok(req) => {
            visit.admitted(&req);
            if let Some(answer) = crate::serve::front::cors::preflight(&req) {
                return visit.answered(answer, &front.traffic, &front.gateway);
            }
            let limited = (!visit.operations())
                .then(|| front.traffic.over_limit(visit.caller()))
                .flatten();
            match limited {
                Some(refused) => refused,
                None => front.serve(req).await,
            }
        }
        Err(Refused::Foreign(answer)) => {
            return visit.answered(answer, &front.traffic, &front.gateway);
        }
        Err(Refused::Token(answer) | Refused::Headers(answer)) => answer,
    };
    if let Some(origin) = origin {
        crate::serve::front::cors::allow(&mut answer, origin);
    }
    visit.answered(answer, &front.traffic, &front.gateway)
}

/// When a connection last moved a byte, shared by its stream and its
/// idle watch (milliseconds since the connection opened).
#[derive(Clone)]
struct Activity {
    opened: Instant,
    last: Arc<AtomicU64>,
}

impl Activity {
    fn new() -> Self {
        Self {
            opened: Instant::now(),
            last: Arc::new(AtomicU64::new(0)),
        }
    }

    fn mark(&self) {
        let now = u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last.store(now, Ordering::Relaxed);
    }

    /// Returns once nothing has moved for `idle`.
    async fn idle_for(&self, idle: Duration) {
        loop {
            let last = Duration::from_millis(self.last.load(Ordering::Relaxed));
            let quiet = self.opened.elapsed().saturating_sub(last);
            if quiet >= idle {
                return;
            }
            tokio::time::sleep(idle - quiet).await;
        }
    }
}

/// A stream that marks its [`Activity`] on every byte read or written.
struct Watched<S> {
    inner: S,
    activity: Activity,
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let read = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.mark();
        }
        read
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(written, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.mark();
        }
        written
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(written, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.mark();
        }
        written
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
