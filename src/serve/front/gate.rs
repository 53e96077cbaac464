//! The one gate: every inbound HTTP request meets it first, before the
//! operations endpoints, a browser's preflight, the fast call and rmcp.
//!
//! It checks, in this order: one `Host` header (400), a `Host` the
//! gateway serves (403; on loopback `localhost`, `127.0.0.1`, `::1` and
//! the allowed hosts, elsewhere the allowed hosts, or any when none), an
//! `Origin` of this machine on loopback or of an allowed host elsewhere
//! (403), the MCP headers' head rules (`crate::serve::front::headers`:
//! a singleton sent twice 400, too many or too long 431), then, with an
//! [`Access`](crate::serve::front::auth::Access) that authenticates, the
//! bearer token (401; the probes and a preflight need none). The body's
//! agreement with the headers is checked where every POST's body is first
//! read (`crate::serve::front::ops`), by the same module. rmcp's own Host allow-list is off: a second list that
//! could disagree with this one is how the fast call once skipped it.

#[cfg(feature = "serve-auth")]
use hyper::Method;
use hyper::body::Incoming;
use hyper::header::{HOST, ORIGIN};
use hyper::{Request, StatusCode};

use crate::serve::front::reply::{Answer, plain};

/// The `Host` names a loopback gateway answers to (any port).
const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// What a request needs to pass: the names it may be addressed to, where
/// its `Origin` may be, and the token check when there is one.
#[derive(Clone)]
pub(in crate::serve) struct Gate {
    loopback: bool,
    /// `NAME` (any port) or `NAME:PORT`, lowercase; empty: any host.
    hosts: Vec<String>,
    /// Origins of these hosts are let through off loopback.
    allowed: Vec<String>,
    #[cfg(feature = "serve-auth")]
    access: Option<std::sync::Arc<crate::serve::front::auth::Access>>,
}

/// A refusal's status and its one line.
type Why = (StatusCode, &'static str);

/// Why the gate refused a request.
pub(in crate::serve) enum Refused {
    /// Its `Host` or `Origin`: nothing for a page to read.
    Foreign(Answer),
    /// Its token (or the metadata it asked for): a page of an origin the
    /// gate lets through may read it, to start OAuth.
    #[cfg_attr(not(feature = "serve-auth"), allow(dead_code))]
    Token(Answer),
    /// Its MCP headers: a page may read why.
    Headers(Answer),
}

impl Gate {
    /// The gate of a listener (`loopback`: its address is one) with
    /// `allowed` extra host names.
    pub(in crate::serve) fn new(loopback: bool, allowed: &[String]) -> Gate {
        let mut hosts: Vec<String> = match loopback {
            true => LOOPBACK.map(String::from).into(),
            false => Vec::new(),
        };
        hosts.extend(allowed.iter().map(|h| h.to_ascii_lowercase()));
        Gate {
            loopback,
            hosts,
            allowed: allowed.to_vec(),
            #[cfg(feature = "serve-auth")]
            access: None,
        }
    }

    /// The same gate, checking `access`'s tokens too.
    #[cfg(feature = "serve-auth")]
    pub(in crate::serve) fn with_access(
        mut self,
        access: std::sync::Arc<crate::serve::front::auth::Access>,
    ) -> Gate {
        self.access = Some(access);
        self
    }

    /// Whether `host` (a `Host` value) is one this gate serves by name.
    pub(in crate::serve) fn serves(&self, host: &str) -> bool {
        host_allowed(host, &self.hosts)
    }

    /// The request to serve (without its `Authorization` header), or the
    /// answer that refuses it.
    pub(in crate::serve) async fn admit(
        &self,
        req: Request<Incoming>,
    ) -> Result<Request<Incoming>, Refused> {
        let foreign = |(status, why)| Refused::Foreign(plain(status, why));
        let host = self.addressed(&req).map_err(foreign)?;
        self.origin(&req).map_err(foreign)?;
        if let Some(refused) = crate::serve::front::headers::head(req.headers()) {
            return Err(Refused::Headers(refused));
        }
        #[cfg(feature = "serve-auth")]
        if let Some(access) = &self.access
            && !tokenless(&req)
        {
            return access.admit(req, &host).await.map_err(Refused::Token);
        }
        let _ = host;
        Ok(req)
    }

    /// The one `Host` of `req`, when the gateway serves it.
    fn addressed(&self, req: &Request<Incoming>) -> Result<String, Why> {
        let mut hosts = req.headers().get_all(HOST).iter();
        let (first, second) = (hosts.next(), hosts.next());
        if second.is_some() {
            return Err((
                StatusCode::BAD_REQUEST,
                "bad request: more than one host header",
            ));
        }
        let Some(host) = first.and_then(|h| h.to_str().ok()).and_then(clean_host) else {
            return Err((
                StatusCode::BAD_REQUEST,
                "bad request: no host header, or not a host",
            ));
        };
        if !self.hosts.is_empty() && !host_allowed(&host, &self.hosts) {
            tracing::warn!("refused an http request for a host not served");
            return Err((StatusCode::FORBIDDEN, "forbidden: the host is not served"));
        }
        Ok(host)
    }

    /// Every `Origin` of `req` (a browser's request) is this machine on
    /// loopback, an allowed host elsewhere.
    fn origin(&self, req: &Request<Incoming>) -> Result<(), Why> {
        let mut origins = req.headers().get_all(ORIGIN).iter();
        let ok = |o: &str| match self.loopback {
            true => loopback_origin(o),
            false => origin_allowed(o, &self.allowed),
        };
        if origins.all(|o| o.to_str().is_ok_and(ok)) {
            return Ok(());
        }
        let why = match self.loopback {
            true => "forbidden: the origin is not local",
            false => "forbidden: the origin is not served",
        };
        tracing::warn!("refused an http request: {why}");
        Err((StatusCode::FORBIDDEN, why))
    }
}

/// A load balancer's probe (`GET` or `HEAD` of `/healthz` or `/readyz`)
/// or a browser's preflight: let through without a token.
#[cfg(feature = "serve-auth")]
fn tokenless(req: &Request<Incoming>) -> bool {
    let probe = matches!(*req.method(), Method::GET | Method::HEAD)
        && matches!(req.uri().path(), "/healthz" | "/readyz");
    let preflight = *req.method() == Method::OPTIONS
        && req.headers().contains_key(ORIGIN)
        && (req.headers()).contains_key(hyper::header::ACCESS_CONTROL_REQUEST_METHOD);
    probe || preflight
}

/// A `Host` value that is an authority only (no path, user info or
/// spaces to reflect into URLs), lowercase.
fn clean_host(host: &str) -> Option<String> {
    let clean = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".-:[]_".contains(&b));
    clean.then(|| host.to_ascii_lowercase())
}

/// `(name, port)` of an authority, IPv6 brackets taken off.
pub(in crate::serve) fn split_authority(authority: &str) -> (&str, Option<&str>) {
    if let Some(v6) = authority.strip_prefix('[') {
        return match v6.split_once(']') {
            Some((name, rest)) => (name, rest.strip_prefix(':')),
            None => (authority, None),
        };
    }
    match authority.rsplit_once(':') {
        // A bare IPv6 address (an allowed-host entry written without brackets).
        Some((name, _)) if name.contains(':') => (authority, None),
        Some((name, port)) => (name, Some(port)),
        None => (authority, None),
    }
}

/// Whether `host` (a `Host` header) is one of `allowed` (`NAME` any port,
/// `NAME:PORT` that port).
pub(in crate::serve) fn host_allowed(host: &str, allowed: &[String]) -> bool {
    let (name, port) = split_authority(host);
    allowed.iter().any(|entry| {
        let (allowed_name, allowed_port) = split_authority(entry);
        allowed_name.eq_ignore_ascii_case(name) && allowed_port.is_none_or(|p| Some(p) == port)
    })
}

/// Whether a request's `Origin` is `http(s)://` an allowed host (scheme,
/// host and port only).
pub(in crate::serve) fn origin_allowed(origin: &str, allowed: &[String]) -> bool {
    let Some(authority) = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"))
    else {
        return false;
    };
    let plain_authority = authority
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b));
    plain_authority && !authority.is_empty() && host_allowed(authority, allowed)
}

/// `http(s)://localhost`, `127.0.0.1` or `[::1]`, with any port and
/// nothing after it (an `Origin` is scheme, host and port only).
pub(in crate::serve) fn loopback_origin(origin: &str) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_host_is_served_by_name_and_port_or_by_name_alone() {
        let loopback = Gate::new(true, &["mcp.example:8443".into()]).hosts;
        for ok in [
            "localhost:7000",
            "127.0.0.1",
            "[::1]:80",
            "mcp.example:8443",
        ] {
            assert!(host_allowed(ok, &loopback), "{ok}");
        }
        for refused in [
            "evil.example",
            "mcp.example:80",
            "localhost.evil.example",
            "127.0.0.2",
        ] {
            assert!(!host_allowed(refused, &loopback), "{refused}");
        }
        assert_eq!(clean_host("evil.example/x"), None);
        assert_eq!(clean_host("Local:1").as_deref(), Some("local:1"));
    }
}
