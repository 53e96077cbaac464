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
//! [`Gateway::serve_http_access`]: super::Gateway::serve_http_access

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, HOST, HeaderValue, ORIGIN, WWW_AUTHENTICATE};
use hyper::{Method, Request, StatusCode};
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tokio::net::TcpListener;

use super::reply::{Answer, json, plain};
use crate::error::{Error, ErrorKind, Result};

/// Where the protected-resource metadata is served (RFC 9728), without
/// authentication; `/.well-known/oauth-protected-resource/mcp` too.
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// Seconds of clock skew allowed on `exp` and `nbf`.
const LEEWAY_SECONDS: u64 = 30;
/// A token shorter than this is refused when the tokens file is read.
const MIN_TOKEN_LEN: usize = 16;
/// The issuer's keys are fetched again for an unknown `kid` at most this often.
const REFETCH_EVERY: Duration = Duration::from_secs(10);
/// An issuer's document (metadata or keys) larger than this is refused.
const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;
/// An issuer that has not answered in this long has failed.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// Who may reach the gateway and how: tokens, OAuth, TLS, the `Host`
/// names served. Built with its methods, then given to [`bind`] and
/// [`Gateway::serve_http_access`](super::Gateway::serve_http_access).
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
        self.tls = Some(super::tls::acceptor(cert, key)?);
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

    pub(super) fn tls(&self) -> Option<&tokio_rustls::TlsAcceptor> {
        self.tls.as_ref()
    }

    /// The `Host` names rmcp checks: the loopback names on loopback (plus
    /// the allowed hosts); else the allowed hosts, or any when none.
    pub(super) fn rmcp_hosts(&self, loopback: bool) -> Vec<String> {
        let mut hosts: Vec<String> = if loopback {
            ["localhost", "127.0.0.1", "::1"].map(String::from).into()
        } else {
            Vec::new()
        };
        hosts.extend(self.allowed_hosts.iter().cloned());
        hosts
    }

    /// The gate every request passes: the `Host` and `Origin` rules, the
    /// metadata document, the bearer token. The request to serve (without
    /// its `Authorization` header), or the answer that refuses it.
    pub(super) async fn gate(
        &self,
        mut req: Request<Incoming>,
        loopback: bool,
    ) -> std::result::Result<Request<Incoming>, Answer> {
        // On loopback the caller has checked the loopback rules.
        if !loopback && let Some(refused) = self.foreign_refusal(&req) {
            return Err(refused);
        }
        if !self.authenticates() {
            return Ok(req);
        }
        // The URLs of the metadata and the challenge are made of it.
        let Some(host) = host_of(&req) else {
            return Err(plain(
                StatusCode::BAD_REQUEST,
                "bad request: no host header, or not a host",
            ));
        };
        let allowed = self.rmcp_hosts(loopback);
        if !allowed.is_empty() && !host_allowed(&host, &allowed) {
            tracing::warn!("refused an http request for a host not served");
            return Err(plain(
                StatusCode::FORBIDDEN,
                "forbidden: the host is not served",
            ));
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
        let Some(token) = bearer(&req) else {
            return Err(unauthorized(&metadata_url, false));
        };
        if let Err(why) = self.admits(&token).await {
            tracing::info!(reason = why, "refused a request's bearer token");
            return Err(unauthorized(&metadata_url, true));
        }
        req.headers_mut().remove(AUTHORIZATION);
        tracing::debug!("admitted a request's bearer token");
        Ok(req)
    }

    fn scheme(&self) -> &'static str {
        if self.tls.is_some() || self.behind_proxy {
            "https"
        } else {
            "http"
        }
    }

    /// Off loopback: one `Host` header, and an `Origin` (a browser's
    /// request) only from an allowed host.
    fn foreign_refusal(&self, req: &Request<Incoming>) -> Option<Answer> {
        let headers = req.headers();
        if headers.get_all(HOST).iter().count() > 1 {
            return Some(plain(
                StatusCode::BAD_REQUEST,
                "bad request: more than one host header",
            ));
        }
        let mut origins = headers.get_all(ORIGIN).iter();
        if !origins.all(|o| {
            o.to_str()
                .is_ok_and(|o| origin_allowed(o, &self.allowed_hosts))
        }) {
            tracing::warn!("refused an http request from an origin not served");
            return Some(plain(
                StatusCode::FORBIDDEN,
                "forbidden: the origin is not served",
            ));
        }
        None
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
        }
        json(doc.to_string())
    }

    /// Whether `token` is one of the file's or a valid access token; else
    /// why not (never the token).
    async fn admits(&self, token: &str) -> std::result::Result<(), &'static str> {
        if let Some(file) = &self.tokens
            && file.holds(token)
        {
            return Ok(());
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
/// is, and `invalid_token` when a token was given and refused.
fn unauthorized(metadata_url: &str, refused: bool) -> Answer {
    let mut answer = plain(StatusCode::UNAUTHORIZED, "unauthorized");
    let challenge = if refused {
        format!("Bearer error=\"invalid_token\", resource_metadata=\"{metadata_url}\"")
    } else {
        format!("Bearer resource_metadata=\"{metadata_url}\"")
    };
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        answer.headers_mut().insert(WWW_AUTHENTICATE, value);
    }
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

/// The request's `Host` (HTTP/1.1 always has one), lowercase.
fn host_of(req: &Request<Incoming>) -> Option<String> {
    let host = req.headers().get(HOST)?.to_str().ok()?;
    // Only an authority: no path, user info or spaces to reflect into URLs.
    let clean = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".-:[]_".contains(&b));
    clean.then(|| host.to_ascii_lowercase())
}

/// `(name, port)` of an authority, IPv6 brackets taken off.
fn split_authority(authority: &str) -> (&str, Option<&str>) {
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
fn host_allowed(host: &str, allowed: &[String]) -> bool {
    let (name, port) = split_authority(host);
    allowed.iter().any(|entry| {
        let (allowed_name, allowed_port) = split_authority(entry);
        allowed_name.eq_ignore_ascii_case(name) && allowed_port.is_none_or(|p| Some(p) == port)
    })
}

/// Whether a request's `Origin` is `http(s)://` an allowed host (scheme,
/// host and port only).
fn origin_allowed(origin: &str, allowed: &[String]) -> bool {
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

/// A tokens file: the SHA-256 digest of each token, compared in constant
/// time with the presented token's (so neither a token's bytes nor its
/// length leak through timing), reloaded when the file changes.
struct TokenFile {
    path: PathBuf,
    state: Mutex<TokenState>,
}

struct TokenState {
    stamp: Option<(SystemTime, u64)>,
    digests: Arc<Vec<[u8; 32]>>,
}

impl TokenFile {
    fn open(path: PathBuf) -> Result<TokenFile> {
        let stamp = stamp(&path);
        let digests = read_tokens(&path)?;
        if digests.is_empty() {
            return Err(Error::new(
                ErrorKind::InvalidConfig,
                format!("the tokens file {} holds no token", path.display()),
            ));
        }
        Ok(TokenFile {
            path,
            state: Mutex::new(TokenState {
                stamp,
                digests: Arc::new(digests),
            }),
        })
    }

    /// Whether `token` is one of the file's (as it is now, or its last
    /// good state).
    fn holds(&self, token: &str) -> bool {
        let presented: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let digests = self.current();
        let mut found = subtle::Choice::from(0);
        for digest in digests.iter() {
            found |= digest.ct_eq(&presented);
        }
        found.into()
    }

    fn current(&self) -> Arc<Vec<[u8; 32]>> {
        let now = stamp(&self.path);
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if now != state.stamp {
            state.stamp = now;
            match read_tokens(&self.path) {
                Ok(digests) if !digests.is_empty() => {
                    tracing::info!(
                        tokens = digests.len(),
                        "reloaded the tokens file {}",
                        self.path.display()
                    );
                    state.digests = Arc::new(digests);
                }
                Ok(_) => tracing::warn!(
                    "the tokens file {} holds no token now; the last tokens stay in force",
                    self.path.display()
                ),
                Err(e) => {
                    tracing::warn!("{e}; the last tokens stay in force");
                }
            }
        }
        state.digests.clone()
    }
}

/// The file's modification time and length (`None` when unreadable).
fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

/// The digests of the tokens of `path`; errors name the line, never a token.
fn read_tokens(path: &Path) -> Result<Vec<[u8; 32]>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::new(
            ErrorKind::Io,
            format!("cannot read the tokens file {}: {e}", path.display()),
        )
    })?;
    let mut digests = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let token = line.trim();
        if token.is_empty() || token.starts_with('#') {
            continue;
        }
        let invalid = |what: &str| {
            Error::new(
                ErrorKind::InvalidConfig,
                format!("the tokens file {} line {}: {what}", path.display(), n + 1),
            )
        };
        // RFC 6750's token characters: what an Authorization header can carry.
        let b64token = token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/=".contains(&b));
        if !b64token {
            return Err(invalid(
                "a token is letters, digits and -._~+/= only (no spaces)",
            ));
        }
        if token.len() < MIN_TOKEN_LEN {
            return Err(invalid("a token shorter than 16 characters is refused"));
        }
        digests.push(Sha256::digest(token.as_bytes()).into());
    }
    Ok(digests)
}

/// OAuth 2.1 access tokens as the MCP authorization spec's resource server
/// checks them: JWTs signed by the issuer (RS256/384/512, PS256/384/512,
/// ES256/384, EdDSA; never `none` or an HMAC), with `iss` the issuer,
/// `aud` (a string or an array) holding the audience, and `exp` (and
/// `nbf` when present) in force, within 30 s of clock skew.
///
/// Keys come from a JWKS file, or from the issuer: its `jwks_uri` from
/// its authorization-server metadata (RFC 8414) or its OpenID
/// configuration, fetched over HTTPS with the system's roots (plain HTTP
/// only for a loopback issuer), kept, and fetched again when a token names
/// a key not in them (at most every 10 s).
pub struct OAuth {
    issuer: String,
    audience: String,
    jwks_file: Option<PathBuf>,
    keys: RwLock<Arc<JwkSet>>,
    /// The issuer's `jwks_uri`, once discovered.
    jwks_uri: Mutex<Option<reqwest::Url>>,
    /// When a token with an unknown key last made the gateway fetch.
    last_refetch: Mutex<Option<Instant>>,
    /// One fetch at a time.
    fetching: tokio::sync::Mutex<()>,
}

impl OAuth {
    /// Tokens of `issuer` (an `https` URL, or `http` on a loopback host)
    /// for `audience` (usually this gateway's resource URL,
    /// `https://NAME/mcp`).
    pub fn new(issuer: &str, audience: &str) -> Result<OAuth> {
        issuer_url(issuer)?;
        if audience.is_empty() {
            return Err(Error::new(
                ErrorKind::InvalidConfig,
                "the oauth audience is empty",
            ));
        }
        Ok(OAuth {
            issuer: issuer.to_string(),
            audience: audience.to_string(),
            jwks_file: None,
            keys: RwLock::new(Arc::new(JwkSet { keys: Vec::new() })),
            jwks_uri: Mutex::new(None),
            last_refetch: Mutex::new(None),
            fetching: tokio::sync::Mutex::new(()),
        })
    }

    /// The keys from the JWKS file `path` (`{"keys": [...]}`) instead of
    /// the issuer's, read now.
    pub fn jwks_file(mut self, path: impl Into<PathBuf>) -> Result<OAuth> {
        let path = path.into();
        let text = std::fs::read_to_string(&path).map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!("cannot read the jwks file {}: {e}", path.display()),
            )
        })?;
        let set = parse_jwks(text.as_bytes()).map_err(|e| {
            Error::new(ErrorKind::InvalidConfig, format!("{}: {e}", path.display()))
        })?;
        self.keys = RwLock::new(Arc::new(set));
        self.jwks_file = Some(path);
        Ok(self)
    }

    /// Checks `token`; why it is refused, never the token.
    async fn check(&self, token: &str) -> std::result::Result<(), &'static str> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| "not a signed jwt")?;
        if !matches!(
            header.alg,
            Algorithm::RS256
                | Algorithm::RS384
                | Algorithm::RS512
                | Algorithm::PS256
                | Algorithm::PS384
                | Algorithm::PS512
                | Algorithm::ES256
                | Algorithm::ES384
                | Algorithm::EdDSA
        ) {
            return Err("an algorithm the gateway does not accept");
        }
        let kid = header.kid.as_deref();
        let jwk = match self.find(kid, header.alg) {
            Some(jwk) => jwk,
            None if self.jwks_file.is_none() => {
                self.refresh_for_unknown_key().await;
                self.find(kid, header.alg)
                    .ok_or("signed with an unknown key")?
            }
            None => return Err("signed with an unknown key"),
        };
        let key = DecodingKey::from_jwk(&jwk).map_err(|_| "the issuer's key is not usable")?;
        if key.family() != header.alg.family() {
            return Err("the key does not fit the algorithm");
        }
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.leeway = LEEWAY_SECONDS;
        validation.validate_nbf = true;
        jsonwebtoken::decode::<serde_json::Value>(token, &key, &validation).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind as Jwt;
            match e.kind() {
                Jwt::InvalidSignature => "a bad signature",
                Jwt::ExpiredSignature => "expired",
                Jwt::ImmatureSignature => "not valid yet (nbf)",
                Jwt::InvalidAudience => "another audience",
                Jwt::InvalidIssuer => "another issuer",
                Jwt::MissingRequiredClaim(_) => "a required claim is missing (exp, iss, aud)",
                _ => "not a valid access token",
            }
        })?;
        Ok(())
    }

    /// The key for `kid` (or the one key that fits `alg` when the token
    /// names none), if its `alg`, when stated, is the token's.
    fn find(&self, kid: Option<&str>, alg: Algorithm) -> Option<Jwk> {
        let keys = self.keys.read().unwrap_or_else(|e| e.into_inner()).clone();
        let fits = |jwk: &&Jwk| {
            let family_ok = matches!(
                (&jwk.algorithm, alg.family()),
                (
                    AlgorithmParameters::RSA(_),
                    jsonwebtoken::AlgorithmFamily::Rsa
                ) | (
                    AlgorithmParameters::EllipticCurve(_),
                    jsonwebtoken::AlgorithmFamily::Ec
                ) | (
                    AlgorithmParameters::OctetKeyPair(_),
                    jsonwebtoken::AlgorithmFamily::Ed
                )
            );
            let alg_ok = jwk
                .common
                .key_algorithm
                .is_none_or(|a| a == jsonwebtoken::jwk::KeyAlgorithm::from(alg));
            let signs = (jwk.common.public_key_use.as_ref())
                .is_none_or(|u| *u == jsonwebtoken::jwk::PublicKeyUse::Signature);
            family_ok && alg_ok && signs
        };
        match kid {
            Some(kid) => keys.find(kid).filter(|k| fits(k)).cloned(),
            None => {
                let mut fitting = keys.keys.iter().filter(fits);
                match (fitting.next(), fitting.next()) {
                    (Some(one), None) => Some(one.clone()),
                    _ => None,
                }
            }
        }
    }

    async fn refresh_for_unknown_key(&self) {
        let _one = self.fetching.lock().await;
        {
            let mut last = self.last_refetch.lock().unwrap_or_else(|e| e.into_inner());
            if last.is_some_and(|at| at.elapsed() < REFETCH_EVERY) {
                return;
            }
            *last = Some(Instant::now());
        }
        if let Err(e) = self.fetch().await {
            tracing::warn!("the oauth issuer's keys could not be fetched: {e}");
        }
    }

    async fn refresh(&self) -> Result<()> {
        let _one = self.fetching.lock().await;
        self.fetch().await
    }

    /// Discovers the `jwks_uri` (once) and fetches the keys.
    async fn fetch(&self) -> Result<()> {
        let known = self
            .jwks_uri
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let uri = match known {
            Some(uri) => uri,
            None => {
                let uri = self.discover().await?;
                *self.jwks_uri.lock().unwrap_or_else(|e| e.into_inner()) = Some(uri.clone());
                uri
            }
        };
        let body = get(&uri).await?;
        let set = parse_jwks(&body).map_err(|e| {
            Error::new(
                ErrorKind::InvalidMessage,
                format!("the issuer's keys at {uri}: {e}"),
            )
        })?;
        tracing::info!(keys = set.keys.len(), "fetched the oauth issuer's keys");
        *self.keys.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(set);
        Ok(())
    }

    /// The `jwks_uri` of the issuer's metadata: RFC 8414's path, then
    /// OpenID Connect's; the metadata must name this issuer.
    async fn discover(&self) -> Result<reqwest::Url> {
        let issuer = issuer_url(&self.issuer)?;
        let path = issuer.path().trim_end_matches('/');
        let mut tried = Vec::new();
        for candidate in [
            format!("/.well-known/oauth-authorization-server{path}"),
            format!("{path}/.well-known/openid-configuration"),
        ] {
            let mut url = issuer.clone();
            url.set_path(&candidate);
            url.set_query(None);
            let doc = match get(&url).await {
                Ok(body) => body,
                Err(e) => {
                    tried.push(e.to_string());
                    continue;
                }
            };
            let doc: serde_json::Value = serde_json::from_slice(&doc)
                .map_err(|e| Error::new(ErrorKind::InvalidJson, format!("{url}: {e}")))?;
            let named = doc["issuer"].as_str().map(|i| i.trim_end_matches('/'));
            if named != Some(self.issuer.trim_end_matches('/')) {
                return Err(Error::new(
                    ErrorKind::InvalidMessage,
                    format!("{url} names another issuer"),
                ));
            }
            let Some(jwks) = doc["jwks_uri"].as_str() else {
                return Err(Error::new(
                    ErrorKind::InvalidMessage,
                    format!("{url} has no jwks_uri"),
                ));
            };
            return issuer_url(jwks);
        }
        Err(Error::new(
            ErrorKind::Connect,
            format!(
                "no metadata for the issuer {}: {}",
                self.issuer,
                tried.join("; ")
            ),
        ))
    }
}

/// A JWKS document, with no secret (`oct`) key in it.
fn parse_jwks(body: &[u8]) -> std::result::Result<JwkSet, String> {
    let set: JwkSet = serde_json::from_slice(body).map_err(|e| format!("not a jwks: {e}"))?;
    if set
        .keys
        .iter()
        .any(|k| matches!(k.algorithm, AlgorithmParameters::OctetKey(_)))
    {
        return Err("a jwks of public keys holds a secret (oct) key".to_string());
    }
    Ok(set)
}

/// An issuer or key URL: `https`, or `http` on a loopback host.
fn issuer_url(url: &str) -> Result<reqwest::Url> {
    let parsed = reqwest::Url::parse(url).map_err(|e| {
        Error::new(
            ErrorKind::InvalidConfig,
            format!("not an issuer url: {url}: {e}"),
        )
    })?;
    let host = parsed
        .host_str()
        .unwrap_or_default()
        .trim_matches(['[', ']']);
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    match parsed.scheme() {
        "https" if parsed.host().is_some() => Ok(parsed),
        "http" if loopback => Ok(parsed),
        _ => Err(Error::new(
            ErrorKind::InvalidConfig,
            format!("the oauth issuer's urls are https (http only on loopback), not {url}"),
        )),
    }
}

/// GET `url`: its body, when `200` and at most 1 MiB.
async fn get(url: &reqwest::Url) -> Result<Bytes> {
    let failed = |what: String| Error::new(ErrorKind::Connect, format!("{url}: {what}"));
    let host = url.host_str().ok_or_else(|| failed("no host".into()))?;
    let port = url
        .port_or_known_default()
        .ok_or_else(|| failed("no port".into()))?;
    let fetch = async {
        let tcp = tokio::net::TcpStream::connect((host.trim_matches(['[', ']']), port))
            .await
            .map_err(|e| failed(e.to_string()))?;
        if url.scheme() == "https" {
            let name =
                rustls_pki_types::ServerName::try_from(host.trim_matches(['[', ']']).to_string())
                    .map_err(|e| failed(e.to_string()))?;
            let tls = tokio_rustls::TlsConnector::from(super::tls::client()?)
                .connect(name, tcp)
                .await
                .map_err(|e| failed(e.to_string()))?;
            exchange(tls, url).await.map_err(failed)
        } else {
            exchange(tcp, url).await.map_err(failed)
        }
    };
    tokio::time::timeout(FETCH_TIMEOUT, fetch)
        .await
        .map_err(|_| failed("no answer within 10 s".into()))?
}

/// One HTTP/1.1 GET over `io`.
async fn exchange<IO>(io: IO, url: &reqwest::Url) -> std::result::Result<Bytes, String>
where
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(io))
            .await
            .map_err(|e| e.to_string())?;
    let driving = tokio::spawn(connection);
    let authority = match url.port() {
        Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
        None => url.host_str().unwrap_or_default().to_string(),
    };
    let target = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    };
    let req = Request::get(target)
        .header(HOST, authority)
        .header(hyper::header::ACCEPT, "application/json")
        .body(http_body_util::Empty::<Bytes>::new())
        .map_err(|e| e.to_string())?;
    let answer = sender.send_request(req).await.map_err(|e| e.to_string())?;
    let status = answer.status();
    let body = http_body_util::Limited::new(answer.into_body(), MAX_DOCUMENT_BYTES)
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    driving.abort();
    if status != StatusCode::OK {
        return Err(format!("answered {status}"));
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::{OAuth, host_allowed, origin_allowed, parse_jwks, read_tokens, split_authority};
    use jsonwebtoken::Algorithm;

    fn temp(name: &str, text: &str) -> std::path::PathBuf {
        let path =
            std::env::temp_dir().join(format!("mcp-preamble-auth-{}-{name}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn a_tokens_file_skips_comments_and_blank_lines_and_names_a_bad_line_only() {
        let path = temp(
            "tokens",
            "# ops\n\n  0123456789abcdef0123  \n#x\nABCDEFGHIJKLMNOP+/=~\n",
        );
        assert_eq!(read_tokens(&path).unwrap().len(), 2);
        std::fs::write(&path, "0123456789abcdef0123\nsecret-with space-0123\n").unwrap();
        let e = read_tokens(&path).unwrap_err().to_string();
        assert!(
            e.ends_with("line 2: a token is letters, digits and -._~+/= only (no spaces)"),
            "{e}"
        );
        assert!(!e.contains("secret"), "{e}");
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_jwks_with_a_secret_key_is_refused_and_an_encryption_key_never_verifies() {
        let secret = r#"{"keys": [{"kty": "oct", "kid": "s", "k": "c2VjcmV0"}]}"#;
        assert_eq!(
            parse_jwks(secret.as_bytes()).unwrap_err(),
            "a jwks of public keys holds a secret (oct) key"
        );
        let jwks = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/auth/jwks.json"),
        )
        .unwrap();
        let signing = temp("jwks-sig", &jwks);
        let oauth = OAuth::new("https://issuer.test", "aud")
            .unwrap()
            .jwks_file(&signing)
            .unwrap();
        assert!(oauth.find(Some("test-rsa"), Algorithm::RS256).is_some());
        // Not for another family, nor another algorithm than the key states.
        assert!(oauth.find(Some("test-rsa"), Algorithm::ES256).is_none());
        assert!(oauth.find(Some("test-rsa"), Algorithm::PS256).is_none());
        // No kid: the one key of the family.
        assert!(oauth.find(None, Algorithm::ES256).is_some());
        let encrypting = temp("jwks-enc", &jwks.replace("\"sig\"", "\"enc\""));
        let oauth = OAuth::new("https://issuer.test", "aud")
            .unwrap()
            .jwks_file(&encrypting)
            .unwrap();
        assert!(oauth.find(Some("test-rsa"), Algorithm::RS256).is_none());
        let _ = std::fs::remove_file(&signing);
        let _ = std::fs::remove_file(&encrypting);
    }

    #[test]
    fn an_issuer_is_https_or_loopback_http() {
        for ok in [
            "https://auth.example.com",
            "http://127.0.0.1:9000",
            "http://localhost/x",
            "http://[::1]:1",
        ] {
            assert!(OAuth::new(ok, "aud").is_ok(), "{ok}");
        }
        for refused in [
            "http://auth.example.com",
            "ftp://x",
            "not a url",
            "http://127.0.0.1.nip.io",
        ] {
            let e = OAuth::new(refused, "aud").err().unwrap().to_string();
            assert!(
                e.contains("not an issuer url") || e.contains("https (http only on loopback)"),
                "{e}"
            );
        }
        assert!(OAuth::new("https://a.test", "").is_err());
    }

    #[test]
    fn hosts_match_by_name_and_by_port_when_given() {
        let allowed = vec!["mcp.example.com".to_string(), "10.0.0.5:8443".to_string()];
        for ok in ["mcp.example.com", "MCP.example.com:443", "10.0.0.5:8443"] {
            assert!(host_allowed(ok, &allowed), "{ok}");
        }
        for refused in [
            "evil.example",
            "10.0.0.5",
            "10.0.0.5:80",
            "mcp.example.com.evil",
        ] {
            assert!(!host_allowed(refused, &allowed), "{refused}");
        }
        assert_eq!(split_authority("[::1]:80"), ("::1", Some("80")));
        assert_eq!(split_authority("::1"), ("::1", None));
    }

    #[test]
    fn an_origin_is_served_only_from_an_allowed_host() {
        let allowed = vec!["mcp.example.com".to_string()];
        assert!(origin_allowed("https://mcp.example.com", &allowed));
        assert!(origin_allowed("https://mcp.example.com:8443", &allowed));
        for refused in [
            "null",
            "https://evil.example",
            "https://mcp.example.com/x",
            "https://user@mcp.example.com",
            "file://mcp.example.com",
        ] {
            assert!(!origin_allowed(refused, &allowed), "{refused}");
        }
        assert!(!origin_allowed("https://mcp.example.com", &[]));
    }
}
