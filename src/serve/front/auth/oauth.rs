//! OAuth 2.1 access tokens: JWTs checked against the issuer's JWKS (a
//! file, or fetched from the issuer's metadata).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::header::HOST;
use hyper::{Request, StatusCode};
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};

use crate::error::{Error, ErrorKind, Result};
use crate::serve::front::sessions::Owner;

/// Seconds of clock skew allowed on `exp` and `nbf`.
const LEEWAY_SECONDS: u64 = 30;
/// The issuer's keys are fetched again for an unknown `kid` at most this often.
const REFETCH_EVERY: Duration = Duration::from_secs(10);
/// An issuer's document (metadata or keys) larger than this is refused.
const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;
/// An issuer that has not answered in this long has failed.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

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
    pub(super) issuer: String,
    audience: String,
    pub(super) jwks_file: Option<PathBuf>,
    /// Named in the challenge and the metadata (`scopes_supported`).
    pub(super) scopes: Vec<String>,
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
            scopes: Vec::new(),
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

    /// The scopes a client should ask the issuer for: named in the `401`'s
    /// challenge (`scope="…"`) and the protected-resource metadata
    /// (`scopes_supported`), in this order. Advertised, not checked: the
    /// issuer decides what a token may hold. A scope that is not an RFC
    /// 6749 scope token (printable ASCII without spaces, `"` or `\`) is an
    /// error.
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Result<OAuth> {
        for scope in scopes {
            let scope = scope.into();
            let token = !scope.is_empty()
                && (scope.bytes()).all(|b| (0x21..=0x7e).contains(&b) && b != b'"' && b != b'\\');
            if !token {
                return Err(Error::new(
                    ErrorKind::InvalidConfig,
                    format!(
                        "the oauth scope {scope:?} is not a scope token (printable ASCII without spaces, quotes or backslashes)"
                    ),
                ));
            }
            if !self.scopes.contains(&scope) {
                self.scopes.push(scope);
            }
        }
        Ok(self)
    }

    /// Checks `token`; why it is refused, never the token.
    pub(super) async fn check(&self, token: &str) -> std::result::Result<Owner, &'static str> {
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
        let claims =
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
        // RFC 7519's `iss` is one string: an array holding the issuer
        // (which jsonwebtoken accepts) is another issuer.
        if claims.claims["iss"].as_str() != Some(self.issuer.as_str()) {
            return Err("another issuer");
        }
        let subject = claims.claims["sub"].as_str().unwrap_or_default();
        Ok(Owner(format!("sub:{subject}")))
    }

    /// The key for `kid` (or the one key that fits `alg` when the token
    /// names none), if its `alg`, when stated, is the token's.
    pub(super) fn find(&self, kid: Option<&str>, alg: Algorithm) -> Option<Jwk> {
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

    pub(super) async fn refresh(&self) -> Result<()> {
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
pub(super) fn parse_jwks(body: &[u8]) -> std::result::Result<JwkSet, String> {
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
            let tls = tokio_rustls::TlsConnector::from(super::super::tls::client()?)
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
