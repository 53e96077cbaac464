//! The gateway over Streamable HTTP (feature `serve-http`), on a loopback
//! address only: the gateway has no authentication, so nothing but this
//! machine may reach it.

use std::net::SocketAddr;

use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;

use super::gateway::Gateway;
use crate::error::{Error, ErrorKind, Result};

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

impl Gateway {
    /// Serves MCP over Streamable HTTP on `listener` (made with
    /// [`bind_loopback`]), every path of it, in both eras (2025 sessions
    /// with `Mcp-Session-Id`, stateless 2026-07-28 requests), until the
    /// listener fails. Only `localhost`, `127.0.0.1` and `::1` are accepted
    /// as the `Host` header (against DNS rebinding).
    pub async fn serve_http(&self, listener: TcpListener) -> Result<()> {
        let gateway = self.clone();
        let service = StreamableHttpService::new(
            move || Ok(gateway.clone()),
            LocalSessionManager::default().into(),
            StreamableHttpServerConfig::default(),
        );
        loop {
            let (stream, peer) = listener.accept().await.map_err(|e| {
                Error::new(ErrorKind::Connect, format!("serving on http failed: {e}"))
            })?;
            let service = TowerToHyperService::new(service.clone());
            tokio::spawn(async move {
                let served = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
                if let Err(e) = served {
                    tracing::debug!(%peer, error = %e, "http connection ended");
                }
            });
        }
    }
}
