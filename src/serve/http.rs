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

use hyper::body::Incoming;
use hyper::{Request, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use super::answer::{Answer, plain};
use super::gateway::Gateway;
use super::sessions::BoundedSessions;
use crate::error::{Error, ErrorKind, Result};

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

type Mcp = StreamableHttpService<Gateway, BoundedSessions>;

// serve-auth hook: who may reach the gateway besides the loopback rules
// (`super::auth`); nothing without the feature.
#[cfg(feature = "serve-auth")]
type Guard = Option<Arc<super::auth::Access>>;
#[cfg(not(feature = "serve-auth"))]
type Guard = Option<Arc<Infallible>>;

impl Gateway {
    /// [`Gateway::serve_http_with`] the default [`HttpLimits`].
    pub async fn serve_http(&self, listener: TcpListener) -> Result<()> {
        self.serve_http_with(listener, HttpLimits::default()).await
    }

    /// Serves MCP over Streamable HTTP on `listener` (made with
    /// [`bind_loopback`]), every path of it, in both eras (2025 sessions
    /// with `Mcp-Session-Id`, stateless 2026-07-28 requests), within
    /// `limits`, until the task is dropped. Only `localhost`, `127.0.0.1`
    /// and `::1` are accepted as the `Host` header, which must be one
    /// (against DNS rebinding: 400 for two), and a request with an
    /// `Origin` that is not one of them is refused (403). An error
    /// accepting a connection is logged and the loop goes on (after a
    /// pause when out of descriptors).
    pub async fn serve_http_with(&self, listener: TcpListener, limits: HttpLimits) -> Result<()> {
        self.serve_guarded(listener, limits, None).await
    }

    /// [`Gateway::serve_http_with`] on a listener made with
    /// [`bind`](super::auth::bind), every request through `access`'s gate
    /// (its bearer tokens, its `Host` and `Origin` rules, the
    /// protected-resource metadata) and over its TLS when it has some. On a
    /// loopback address the loopback rules above hold as well.
    #[cfg(feature = "serve-auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "serve-auth")))]
    pub async fn serve_http_access(
        &self,
        listener: TcpListener,
        limits: HttpLimits,
        access: super::auth::Access,
    ) -> Result<()> {
        self.serve_guarded(listener, limits, Some(Arc::new(access)))
            .await
    }

    async fn serve_guarded(
        &self,
        listener: TcpListener,
        limits: HttpLimits,
        guard: Guard,
    ) -> Result<()> {
        let gateway = self.clone();
        let loopback = listener.local_addr().is_ok_and(|a| a.ip().is_loopback());
        #[allow(unused_mut)]
        let mut config = config();
        // serve-auth hook: the hosts rmcp accepts.
        #[cfg(feature = "serve-auth")]
        if let Some(access) = &guard {
            config = config.with_allowed_hosts(access.rmcp_hosts(loopback));
        }
        let mcp: Mcp = StreamableHttpService::new(
            move || Ok(gateway.session()),
            BoundedSessions::new(limits.max_sessions, limits.session_idle).into(),
            config,
        );
        let slots = Arc::new(Semaphore::new(
            limits.max_connections.clamp(1, Semaphore::MAX_PERMITS),
        ));
        loop {
            let Ok(slot) = slots.clone().acquire_owned().await else {
                return Ok(());
            };
            let (stream, peer) = match listener.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!(error = %e, "accepting an http connection failed");
                    tokio::time::sleep(accept_pause(&e)).await;
                    continue;
                }
            };
            let mcp = mcp.clone();
            let guard = guard.clone();
            tokio::spawn(async move {
                // An answer is small writes (head, then event-stream chunks): without
                // this, Nagle's algorithm holds the last one for the client's delayed ACK.
                let _ = stream.set_nodelay(true);
                // serve-auth hook: TLS, its handshake within the head's time.
                #[cfg(feature = "serve-auth")]
                if let Some(tls) = guard.as_ref().and_then(|a| a.tls()) {
                    let shake =
                        tokio::time::timeout(limits.header_read_timeout, tls.accept(stream));
                    match shake.await {
                        Ok(Ok(stream)) => {
                            connection(stream, peer, mcp, limits, guard, loopback).await
                        }
                        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "tls handshake failed"),
                        Err(_) => tracing::debug!(%peer, "tls handshake timed out"),
                    }
                    drop(slot);
                    return;
                }
                connection(stream, peer, mcp, limits, guard, loopback).await;
                drop(slot);
            });
        }
    }
}

/// rmcp's defaults, but a stateless (2026-07-28) call whose first message
/// is its answer is answered as one JSON body: an event stream (priming
/// event, framing, a stream task) cost every call a second response
/// path. A call that sends progress first still gets an event stream.
fn config() -> StreamableHttpServerConfig {
    let mut config = StreamableHttpServerConfig::default();
    config.json_response = true;
    config
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

/// Serves one connection until it ends, its head is late, or it is idle.
async fn connection<S>(
    stream: S,
    peer: SocketAddr,
    mcp: Mcp,
    limits: HttpLimits,
    guard: Guard,
    loopback: bool,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let activity = Activity::new();
    let io = TokioIo::new(Watched {
        inner: stream,
        activity: activity.clone(),
    });
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let mcp = mcp.clone();
        let guard = guard.clone();
        async move {
            // serve-auth hook: an `Access`'s gate (after the loopback checks on
            // loopback, instead of them elsewhere).
            #[cfg(feature = "serve-auth")]
            if let Some(access) = &guard {
                if let Some(refused) = loopback.then(|| refusal(&req)).flatten() {
                    return Ok(refused);
                }
                return Ok::<Answer, Infallible>(match access.gate(req, loopback).await {
                    Ok(req) => mcp.handle(req).await,
                    Err(refused) => refused,
                });
            }
            let _ = (&guard, loopback);
            Ok::<Answer, Infallible>(match refusal(&req) {
                Some(refused) => refused,
                None => mcp.handle(req).await,
            })
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    let served = builder.serve_connection(io, service);
    tokio::select! {
        served = served => {
            if let Err(e) = served {
                tracing::debug!(%peer, error = %e, "http connection ended");
            }
        }
        () = activity.idle_for(limits.idle_timeout) => {
            tracing::debug!(%peer, "closed an idle http connection");
        }
    }
}

/// The answer to a request refused before MCP sees it: two `Host`
/// headers (which one rmcp checked would be a guess), or an `Origin`
/// that is not this machine (a web page's request, DNS rebinding).
fn refusal(req: &Request<Incoming>) -> Option<Answer> {
    let headers = req.headers();
    if headers.get_all(hyper::header::HOST).iter().count() > 1 {
        return Some(plain(
            StatusCode::BAD_REQUEST,
            "bad request: more than one host header",
        ));
    }
    let mut origins = headers.get_all(hyper::header::ORIGIN).iter();
    let local = origins.all(|o| o.to_str().is_ok_and(loopback_origin));
    if !local {
        tracing::warn!("refused an http request from a non-local origin");
        return Some(plain(
            StatusCode::FORBIDDEN,
            "forbidden: the origin is not local",
        ));
    }
    None
}

/// `http(s)://localhost`, `127.0.0.1` or `[::1]`, with any port and
/// nothing after it (an `Origin` is scheme, host and port only).
fn loopback_origin(origin: &str) -> bool {
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let host = match rest.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some(("::1", port)) => return port_only(port),
            _ => return false,
        },
        None => rest,
    };
    let (name, port) = match host.split_once(':') {
        Some((name, port)) => (name, Some(port)),
        None => (host, None),
    };
    let named = name.eq_ignore_ascii_case("localhost") || name == "127.0.0.1";
    named && port.is_none_or(|p| port_only(&format!(":{p}")))
}

/// Empty, or `:` and a port number.
fn port_only(rest: &str) -> bool {
    rest.is_empty()
        || rest
            .strip_prefix(':')
            .is_some_and(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()))
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

#[cfg(test)]
mod tests {
    use super::loopback_origin;

    #[test]
    fn only_this_machine_is_a_local_origin() {
        for ok in [
            "http://localhost",
            "http://localhost:8080",
            "https://LOCALHOST:1",
            "http://127.0.0.1:3000",
            "http://[::1]:9",
            "http://[::1]",
        ] {
            assert!(loopback_origin(ok), "{ok}");
        }
        for refused in [
            "null",
            "http://evil.example",
            "http://localhost.evil.example",
            "http://127.0.0.1.nip.io",
            "http://localhost:80/path",
            "http://localhost:",
            "file://localhost",
            "http://[::2]:80",
            "http://[::1]x",
            "http://user@localhost",
        ] {
            assert!(!loopback_origin(refused), "{refused}");
        }
    }
}
