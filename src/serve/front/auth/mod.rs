//! Who may reach the gateway over HTTP (feature `serve-auth`): bearer
//! tokens from a file or OAuth 2.1 access tokens (the MCP authorization
//! spec's resource-server role), the protected-resource metadata of
//! RFC 9728, the `Host` and `Origin` rules past loopback, and TLS.
//!
//! An [`Access`] is given to [`Gateway::serve_http_access`] with a listener
//! from [`bind`]; every request then passes [`Access`]'s gate before MCP
//! sees it. Tokens are never logged, and the `Authorization` header is
//! taken off the request before it goes on (the gateway never passes a
//! host's token to an upstream).
//!
//! [`Gateway::serve_http_access`]: crate::serve::gateway::Gateway::serve_http_access

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, HeaderValue, WWW_AUTHENTICATE};
use hyper::{Method, Request, StatusCode};
use tokio::net::TcpListener;

use crate::error::{Error, ErrorKind, Result};
use crate::serve::front::reply::{Answer, json, plain};
use crate::serve::front::sessions::Owner;
use sha2::Digest as _;

/// Where the protected-resource metadata is served (RFC 9728), without
/// authentication; `/.well-known/oauth-protected-resource/mcp` too.
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// Who may reach the gateway and how: tokens, OAuth, TLS, the `Host`
/// names served. Built with its methods, then given to [`bind`] and
/// [`Gateway::serve_http_access`](crate::serve::gateway::Gateway::serve_http_access).
///
/// A non-loopback address needs an authentication method (a tokens file
/// or OAuth) and TLS (or `behind_proxy`, for a TLS-terminating ingress);
/// a loopback one needs neither.
#[derive(Default)]
pub struct Access {
    tokens: Option<TokenFile>,
    oauth: Option<OAuth>,
    allowed_hosts: Vec<String>,
    tls: Option<tokio_rustls::TlsAcceptor>,
    behind_proxy: bool,
}

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the tokens.
        f.debug_struct("Access")
            .field("tokens_file", &self.tokens.as_ref().map(|t| &t.path))
            .field("oauth_issuer", &self.oauth.as_ref().map(|o| &o.issuer))
            .field("allowed_hosts", &self.allowed_hosts)
            .field("tls", &self.tls.is_some())
            .field("behind_proxy", &self.behind_proxy)
            .finish()
    }
}

impl Access {
    /// No authentication, no TLS: a loopback address only.
    pub fn new() -> Access {
        Access::default()
    }

    /// Bearer tokens from `path`: one per line (blank lines and lines
    /// starting with `#` are skipped), at least 16 characters each. The
    /// file is read now (an unreadable or empty one is an error) and again
    /// when its modification time or length changes; a change that leaves
    /// it unreadable or without a token keeps the last tokens (logged).
    pub fn tokens_file(mut self, path: impl Into<PathBuf>) -> Result<Access> {
        self.tokens = Some(TokenFile::open(path.into())?);
        Ok(self)
    }

    /// OAuth 2.1 access tokens (JWTs) checked against `oauth`.
    pub fn oauth(mut self, oauth: OAuth) -> Access {
        self.oauth = Some(oauth);
        self
    }

    /// TLS with the certificate chain `cert` and its private key `key`
    /// (PEM files).
    pub fn tls_files(mut self, cert: &Path, key: &Path) -> Result<Access> {
        self.tls = Some(crate::serve::front::tls::acceptor(cert, key)?);
        Ok(self)
    }

    /// Plain HTTP on a non-loopback address, for a TLS-terminating proxy
    /// in front: the URLs the gateway gives (the metadata's) say `https`.
    pub fn behind_proxy(mut self, yes: bool) -> Access {
        self.behind_proxy = yes;
        self
    }

    /// A `Host` the gateway answers to (`NAME` any port, or `NAME:PORT`);
    /// repeatable. On a non-loopback address, when some are given, any
    /// other `Host` is refused (403), and a request with an `Origin` is
    /// served only when the origin's host is one of them (and its port,
    /// when given). On loopback they are served besides the loopback names.
    pub fn allowed_host(mut self, name: impl Into<String>) -> Access {
        self.allowed_hosts.push(name.into().to_ascii_lowercase());
        self
    }

    /// Whether a request needs a bearer token.
    pub fn authenticates(&self) -> bool {
        self.tokens.is_some() || self.oauth.is_some()
    }

    /// Fetches the OAuth issuer's keys now when they come from the issuer,
    /// so that a wrong issuer shows at start; a failure is logged and the
    /// keys are fetched again on the first token.
    pub async fn prefetch(&self) {
        if let Some(oauth) = &self.oauth
            && oauth.jwks_file.is_none()
            && let Err(e) = oauth.refresh().await
        {
            tracing::warn!("the oauth issuer's keys could not be fetched yet: {e}");
        }
    }

    pub(in crate::serve) fn tls(&self) -> Option<&tokio_rustls::TlsAcceptor> {
        self.tls.as_ref()
    }

    /// The extra `Host` names served (`NAME` any port, or `NAME:PORT`).
    pub(in crate::serve) fn allowed_hosts(&self) -> &[String] {
        &self.allowed_hosts
    }

    /// The token half of the gate (`crate::serve::front::gate` checked
    /// `host`, the request's one `Host`, and its `Origin`): the metadata
    /// document, the bearer token. The request to serve (without its
    /// `Authorization` header), or the answer that refuses it.
    pub(in crate::serve) async fn admit(
        &self,
        mut req: Request<Incoming>,
        host: &str,
    ) -> std::result::Result<Request<Incoming>, Answer> {
        if !self.authenticates() {
            return Ok(req);
        }
        let base = format!("{}://{host}", self.scheme());
        let path = req.uri().path().to_string();
        if let Some(rest) = path.strip_prefix(METADATA_PATH)
            && (rest.is_empty() || rest.starts_with('/'))
        {
            return Err(self.metadata(&req, &base, rest));
        }
        // Quoted in a header: a path of plain characters only, else the endpoint's.
        let plain_path = path
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~/".contains(&b));
        let resource = if plain_path { path.as_str() } else { "/mcp" };
        let metadata_url = format!("{base}{METADATA_PATH}{resource}");
        let scopes = self.scopes();
        let Some(token) = bearer(&req) else {
            let challenge = unauthorized(&metadata_url, scopes, false);
            return Err(refusal(challenge, "no token"));
        };
        let owner = match self.admits(&token).await {
            Ok(owner) => owner,
            Err(why) => {
                tracing::info!(reason = why, "refused a request's bearer token");
                return Err(refusal(unauthorized(&metadata_url, scopes, true), why));
            }
        };
        req.headers_mut().remove(AUTHORIZATION);
        req.extensions_mut().insert(owner);
        tracing::debug!("admitted a request's bearer token");
        Ok(req)
    }

    /// The OAuth scopes to name, in order (none without OAuth).
    fn scopes(&self) -> &[String] {
        self.oauth.as_ref().map_or(&[], |o| o.scopes.as_slice())
    }

    fn scheme(&self) -> &'static str {
        if self.tls.is_some() || self.behind_proxy {
            "https"
        } else {
            "http"
        }
    }

    /// The protected-resource metadata (RFC 9728) for the resource at
    /// `path` (`/mcp` for the bare well-known path).
    fn metadata(&self, req: &Request<Incoming>, base: &str, path: &str) -> Answer {
        if req.method() != Method::GET {
            return plain(StatusCode::METHOD_NOT_ALLOWED, "method not allowed");
        }
        let path = if path.is_empty() { "/mcp" } else { path };
        let mut doc = serde_json::json!({
            "resource": format!("{base}{path}"),
            "bearer_methods_supported": ["header"],
        });
        if let Some(oauth) = &self.oauth {
            doc["authorization_servers"] = serde_json::json!([oauth.issuer]);
            if !oauth.scopes.is_empty() {
                doc["scopes_supported"] = serde_json::json!(oauth.scopes);
            }
        }
        json(doc.to_string())
    }

    /// Who `token` is ([`Owner`]: one of the file's, by its digest; a
    /// valid access token, by its subject); else why not (never the token).
    async fn admits(&self, token: &str) -> std::result::Result<Owner, &'static str> {
        if let Some(file) = &self.tokens
            && file.holds(token)
        {
            let digest = sha2::Sha256::digest(token.as_bytes());
            let short: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
            return Ok(Owner(format!("token:{short}")));
        }
        match &self.oauth {
            Some(oauth) => oauth.check(token).await,
            None => Err("not a token of the tokens file"),
        }
    }
}

/// A listener on `addr` for `access`: any loopback address; another only
/// when `access` authenticates and has TLS or is behind a proxy. Else an
/// error naming what is missing.
pub async fn bind(addr: SocketAddr, access: &Access) -> Result<TcpListener> {
    if !addr.ip().is_loopback() {
        let auth = access.authenticates();
        let tls = access.tls.is_some() || access.behind_proxy;
        let missing = match (auth, tls) {
            (true, true) => None,
            (false, true) => Some("authentication (--auth-tokens or --oauth-issuer)"),
            (true, false) => Some("tls (--tls-cert and --tls-key) or --behind-proxy"),
            (false, false) => Some(
                "authentication (--auth-tokens or --oauth-issuer) and tls (--tls-cert and --tls-key) or --behind-proxy",
            ),
        };
        if let Some(missing) = missing {
            return Err(Error::new(
                ErrorKind::InvalidConfig,
                format!("cannot listen on {addr}, not a loopback address, without {missing}"),
            ));
        }
    }
    TcpListener::bind(addr)
        .await
        .map_err(|e| Error::new(ErrorKind::Connect, format!("cannot listen on {addr}: {e}")))
}

/// `401` with the challenge of RFC 6750 and RFC 9728: where the metadata
/// is, the `scopes` to ask for (when there are any), and `invalid_token`
/// when a token was given and refused.
fn unauthorized(metadata_url: &str, scopes: &[String], refused: bool) -> Answer {
    let mut answer = plain(StatusCode::UNAUTHORIZED, "unauthorized");
    let mut challenge = match refused {
        true => format!("Bearer error=\"invalid_token\", resource_metadata=\"{metadata_url}\""),
        false => format!("Bearer resource_metadata=\"{metadata_url}\""),
    };
    if !scopes.is_empty() {
        challenge.push_str(&format!(", scope=\"{}\"", scopes.join(" ")));
    }
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        answer.headers_mut().insert(WWW_AUTHENTICATE, value);
    }
    answer
}

/// `answer`, carrying why the token was refused (counted in `/metrics`).
fn refusal(mut answer: Answer, why: &'static str) -> Answer {
    answer
        .extensions_mut()
        .insert(crate::serve::front::traffic::Refusal(why));
    answer
}

/// The token of the one `Authorization: Bearer TOKEN` header.
fn bearer(req: &Request<Incoming>) -> Option<String> {
    let mut values = req.headers().get_all(AUTHORIZATION).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return None;
    };
    let value = value.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then(|| token.to_string())
}

mod oauth;
#[cfg(test)]
mod tests;
mod tokens;

pub use oauth::OAuth;
use tokens::TokenFile;
