//! `--metrics-listen ADDR`: a second listener for a scraper and probes,
//! serving `/metrics`, `/healthz` and `/readyz` only, without a token.
//! A scraper addresses a replica by its own address, so a `Host` that is
//! an IP address is served (a DNS-rebinding page names a domain), as are
//! `localhost` and the allowed hosts.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use hyper::body::Incoming;
use hyper::header::HOST;
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;

use crate::error::{Error, ErrorKind, Result};
use crate::serve::front::gate::{Gate, split_authority};
use crate::serve::front::ops::Front;
use crate::serve::front::reply::{Answer, plain};

/// The listener's task; it stops when this is dropped.
pub(in crate::serve) struct Scrape(tokio::task::JoinHandle<()>);

impl Drop for Scrape {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// [`spawn`] when there is an address.
pub(in crate::serve) async fn start(
    addr: Option<SocketAddr>,
    front: &Arc<Front>,
    gate: &Gate,
) -> Result<Option<Scrape>> {
    match addr {
        Some(addr) => spawn(addr, front.clone(), gate).await.map(Some),
        None => Ok(None),
    }
}

/// Listens on `addr` and serves `front`'s operations endpoints there.
async fn spawn(addr: SocketAddr, front: Arc<Front>, gate: &Gate) -> Result<Scrape> {
    let listener = TcpListener::bind(addr).await.map_err(|e| {
        Error::new(
            ErrorKind::Connect,
            format!("cannot listen on {addr} for metrics: {e}"),
        )
    })?;
    let on = listener.local_addr().unwrap_or(addr);
    tracing::info!("metrics on http://{on}/metrics");
    let gate = gate.clone();
    Ok(Scrape(tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            };
            let (front, gate) = (front.clone(), gate.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let answer = answer(&req, &front, &gate);
                    async move { Ok::<Answer, Infallible>(answer) }
                });
                let mut builder = hyper::server::conn::http1::Builder::new();
                builder
                    .timer(TokioTimer::new())
                    .header_read_timeout(std::time::Duration::from_secs(10));
                let _ = builder
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    })))
}

/// The answer to one scrape or probe.
fn answer(req: &Request<Incoming>, front: &Front, gate: &Gate) -> Answer {
    let mut hosts = req.headers().get_all(HOST).iter();
    let host = match (hosts.next().and_then(|h| h.to_str().ok()), hosts.next()) {
        (Some(host), None) => host,
        _ => return plain(StatusCode::BAD_REQUEST, "bad request: one host header"),
    };
    if !scraper_host(host) && !gate.serves(host) {
        return plain(StatusCode::FORBIDDEN, "forbidden: the host is not served");
    }
    if !matches!(*req.method(), Method::GET | Method::HEAD) {
        return plain(StatusCode::METHOD_NOT_ALLOWED, "method not allowed");
    }
    front.operations(req).unwrap_or_else(|| {
        plain(
            StatusCode::NOT_FOUND,
            "not found: only /metrics, /healthz and /readyz here",
        )
    })
}

/// An IP address or `localhost`, with any port.
fn scraper_host(host: &str) -> bool {
    let (name, port) = split_authority(host);
    let port_ok =
        port.is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()));
    port_ok && (name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scraper_names_an_address_not_a_domain() {
        for ok in [
            "10.1.2.3:9100",
            "127.0.0.1",
            "[::1]:9",
            "[fe80::1]",
            "localhost:9100",
        ] {
            assert!(scraper_host(ok), "{ok}");
        }
        for refused in [
            "evil.example",
            "10.1.2.3.nip.io:80",
            "127.0.0.1:x",
            "[::1]:",
            "",
        ] {
            assert!(!scraper_host(refused), "{refused}");
        }
    }
}
