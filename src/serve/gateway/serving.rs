//! The gateway put behind a front: [`Gateway::serve_stdio`] and, with
//! feature `serve-http`, `Gateway::serve_http*`. The top floor of the
//! gateway's folder: it starts `front/`, which calls the gateway back.

use crate::error::{Error, ErrorKind, Result};
#[cfg(feature = "serve-http")]
use crate::serve::front::http::{HttpLimits, HttpOptions};
use crate::serve::front::stdio::StdioHost;
use crate::serve::gateway::Gateway;
#[cfg(feature = "serve-http")]
use tokio::net::TcpListener;

impl Gateway {
    /// Serves MCP on this process's stdin and stdout until the host
    /// closes them. Nothing else may write to stdout meanwhile.
    pub async fn serve_stdio(&self) -> Result<()> {
        let io = crate::serve::front::stdio::host_io();
        self.serve_stdio_on(io).await
    }

    /// [`Gateway::serve_stdio`] to a host whose first line was read
    /// ([`StdioHost::hello`], the upstreams started after it, told what the
    /// host declared: [`StdioHost::told`]); that line is served first.
    pub async fn serve_stdio_host(&self, host: StdioHost) -> Result<()> {
        self.serve_stdio_on(host.into_io()).await
    }

    async fn serve_stdio_on(&self, io: crate::serve::front::stdio::HostIo) -> Result<()> {
        let (transport, lane) = crate::serve::front::stdio::host_transport(self.clone(), io);
        let running = rmcp::ServiceExt::serve(self.clone(), transport)
            .await
            .map_err(|e| Error::new(ErrorKind::Connect, format!("serving on stdio failed: {e}")))?;
        // The handshake is done: a host's calls may take the lane.
        lane.open(running.peer().clone());
        running
            .waiting()
            .await
            .map_err(|e| Error::new(ErrorKind::Connect, format!("serving on stdio failed: {e}")))?;
        Ok(())
    }

    /// [`Gateway::serve_http_with`] the default [`HttpLimits`].
    #[cfg(feature = "serve-http")]
    pub async fn serve_http(&self, listener: TcpListener) -> Result<()> {
        self.serve_http_with(listener, HttpLimits::default()).await
    }

    /// Serves MCP over Streamable HTTP on `listener` (made with
    /// [`bind_loopback`](crate::serve::bind_loopback)), every path of it, in both eras (2025 sessions
    /// with `Mcp-Session-Id`, stateless 2026-07-28 requests), within
    /// `limits`, until the task is dropped. Only `localhost`, `127.0.0.1`
    /// and `::1` are accepted as the `Host` header, which must be one
    /// (against DNS rebinding: 400 for two), and a request with an
    /// `Origin` that is not one of them is refused (403). An error
    /// accepting a connection is logged and the loop goes on (after a
    /// pause when out of descriptors).
    #[cfg(feature = "serve-http")]
    pub async fn serve_http_with(&self, listener: TcpListener, limits: HttpLimits) -> Result<()> {
        self.serve_http_until(listener, HttpOptions::new(limits), std::future::pending())
            .await
    }

    /// [`Gateway::serve_http_with`] on a listener made with
    /// [`bind`](crate::serve::front::auth::bind), every request through `access`'s gate
    /// (its bearer tokens, its `Host` and `Origin` rules, the
    /// protected-resource metadata) and over its TLS when it has some. On a
    /// loopback address the loopback rules above hold as well.
    #[cfg(feature = "serve-auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "serve-auth")))]
    pub async fn serve_http_access(
        &self,
        listener: TcpListener,
        limits: HttpLimits,
        access: crate::serve::front::auth::Access,
    ) -> Result<()> {
        let options = HttpOptions::new(limits).access(access);
        self.serve_http_until(listener, options, std::future::pending())
            .await
    }

    /// [`Gateway::serve_http_with`] `options` (sealed session ids,
    /// readiness checks, with feature `serve-auth` an access gate;
    /// `/healthz`, `/readyz` and `/metrics` are served on every listener,
    /// the first two without a token) until `shutdown` completes; then it
    /// accepts no more connections, waits at most the drain time for the
    /// requests in flight (each POST until its answer is sent), logs what
    /// finished and what was cut, closes the sessions and returns.
    #[cfg(feature = "serve-http")]
    pub async fn serve_http_until(
        &self,
        listener: TcpListener,
        options: HttpOptions,
        shutdown: impl Future<Output = ()>,
    ) -> Result<()> {
        crate::serve::front::http::serve_until(self, listener, options, shutdown).await
    }
}
