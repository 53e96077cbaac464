//! `serve --listen`: the listener and its access gate, bound and checked
//! before any server starts, the HTTP options of the flags, and the
//! signal that stops it.

use mcp_preamble::serve::{Access, Gateway, HttpOptions, OAuth, SessionKey};

use crate::args::ServeArgs;
use crate::error::CliError;

/// Where the gateway serves: `stdio`, or its `http(s)://…/mcp` address.
pub fn listening_on(listener: Option<&tokio::net::TcpListener>, tls: bool) -> String {
    let scheme = if tls { "https" } else { "http" };
    match listener {
        Some(l) => match l.local_addr() {
            Ok(addr) => format!("{scheme}://{addr}/mcp"),
            Err(_) => scheme.to_string(),
        },
        None => "stdio".to_string(),
    }
}

/// `--listen`: the listener, bound and checked before any server starts,
/// the access gate and options of its flags, and the signal that stops it
/// (watched from the bind on; a stdio gateway ends with its host).
pub struct Listening {
    pub listener: tokio::net::TcpListener,
    access: Option<Access>,
    options: HttpOptions,
    stop: std::pin::Pin<Box<dyn Future<Output = ()>>>,
}

/// Serves Streamable HTTP as `listening` says until SIGTERM or Ctrl-C.
pub async fn serve_http(
    gateway: &Gateway,
    listening: Listening,
    shared: Option<std::sync::Arc<mcp_preamble::state::SharedState>>,
) -> Result<(), mcp_preamble::Error> {
    let Listening {
        listener,
        access,
        mut options,
        stop,
    } = listening;
    if let Some(access) = access {
        access.prefetch().await;
        options = options.access(access);
    }
    if let Some(state) = shared {
        options = options.share_ended_sessions(state);
    }
    gateway.serve_http_until(listener, options, stop).await
}

/// The `--listen` flags as the gateway's HTTP options: limits, drain,
/// sealed session ids, and `/readyz` waiting for the shared review state.
fn http_options(a: &ServeArgs, session_key: Option<SessionKey>) -> HttpOptions {
    let mut options = HttpOptions::new(http_limits(a))
        .drain(a.drain_seconds)
        .ready_when("state", || {
            crate::review::ready()
                .then_some(())
                .ok_or_else(|| "the shared review state does not answer".to_string())
        });
    if let Some(key) = session_key {
        options = options.session_key(key, a.session_ttl);
    }
    if let Some(addr) = a.metrics_listen {
        options = options.metrics_listen(addr);
    }
    if let Some(n) = a.rate_limit {
        options = options.rate_limit(n);
    }
    if let Some(name) = &a.replica_id {
        options = options.replica_id(name);
    }
    options
}

/// The `--listen` listener: on loopback without authentication or TLS
/// flags, as it always was; else with an [`Access`] of those flags (and a
/// non-loopback address refused without authentication and TLS or
/// `--behind-proxy`, naming what is missing).
pub async fn listen(addr: std::net::SocketAddr, a: &ServeArgs) -> Result<Listening, CliError> {
    let (listener, access) = bind(addr, a).await?;
    let session_key = match a.session_key_file.as_deref() {
        Some(file) => Some(SessionKey::from_file(file)?),
        None => None,
    };
    Ok(Listening {
        listener,
        access,
        options: http_options(a, session_key),
        stop: Box::pin(crate::stop::stop_signal()),
    })
}

/// The listener of [`listen`] and its access gate.
async fn bind(
    addr: std::net::SocketAddr,
    a: &ServeArgs,
) -> Result<(tokio::net::TcpListener, Option<Access>), CliError> {
    let flagged = a.auth_tokens.is_some()
        || a.oauth_issuer.is_some()
        || a.tls_cert.is_some()
        || a.behind_proxy
        || !a.allowed_hosts.is_empty();
    if addr.ip().is_loopback() && !flagged {
        return Ok((mcp_preamble::serve::bind_loopback(addr).await?, None));
    }
    let mut access = Access::new().behind_proxy(a.behind_proxy);
    if let Some(path) = &a.auth_tokens {
        access = access.tokens_file(path)?;
    }
    if let (Some(issuer), Some(audience)) = (&a.oauth_issuer, &a.oauth_audience) {
        let mut oauth = OAuth::new(issuer, audience)?;
        if let Some(jwks) = &a.oauth_jwks {
            oauth = oauth.jwks_file(jwks)?;
        }
        oauth = oauth.scopes(a.oauth_scopes.iter().cloned())?;
        access = access.oauth(oauth);
    }
    if let (Some(cert), Some(key)) = (&a.tls_cert, &a.tls_key) {
        access = access.tls_files(cert, key)?;
    }
    for host in &a.allowed_hosts {
        access = access.allowed_host(host);
    }
    let listener = mcp_preamble::serve::bind(addr, &access).await?;
    Ok((listener, Some(access)))
}

/// The `--listen` flags as the gateway's limits.
fn http_limits(a: &ServeArgs) -> mcp_preamble::serve::HttpLimits {
    mcp_preamble::serve::HttpLimits {
        header_read_timeout: a.header_timeout,
        idle_timeout: a.idle_timeout,
        max_connections: usize::try_from(a.max_connections).unwrap_or(usize::MAX),
        max_sessions: usize::try_from(a.max_sessions).unwrap_or(usize::MAX),
        session_idle: a.session_idle,
    }
}
