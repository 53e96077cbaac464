//! `mcp-preamble serve --listen` past loopback (issue 36, item 1): bearer
//! tokens from a file (reloaded, never logged), OAuth access tokens
//! checked against a JWKS (a file, or the issuer's, discovered), the
//! protected-resource metadata, TLS, the `Host`/`Origin` rules off
//! loopback, and the refusal of a non-loopback address without them.
//!
//! Non-loopback: the gateway binds this machine's own non-loopback address
//! when it has one (the address a UDP socket "connected" to a TEST-NET
//! address would send from; no packet is sent) and is reached there;
//! else it binds `0.0.0.0` and is reached through 127.0.0.1. The choice is
//! printed. Keys and certificates: `tests/data/auth/make.sh`.
#![cfg(feature = "cli")]

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::gateway::{non_loopback, scratch, wait_until};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

const ISSUER: &str = "https://issuer.test";
const AUDIENCE: &str = "https://mcp.test/mcp";
const TOKEN_A: &str = "alpha-token-0123456789abcdef";
const TOKEN_B: &str = "bravo-token-0123456789abcdef-longer";
const WRONG: &str = "wrong-token-0123456789abcdef";

fn data(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/auth")
        .join(name)
        .display()
        .to_string()
}

/// A running `serve --listen`, killed on drop.
struct Served {
    child: Child,
    /// Where to connect (`IP:PORT`).
    addr: String,
    log: PathBuf,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    /// `serve --config (no servers) --listen LISTEN FLAGS…` logging to
    /// `dir/gateway.log` at `level`; waits until it serves.
    fn start(dir: &Path, listen: &str, flags: &[&str], level: &str) -> Served {
        let config = dir.join("mcp.json");
        std::fs::write(&config, json!({"mcpServers": {}}).to_string()).unwrap();
        let log = dir.join("gateway.log");
        let _ = std::fs::remove_file(&log);
        let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-preamble"));
        command
            .args(["serve", "--config", config.to_str().unwrap()])
            .args(["--listen", listen, "--log", log.to_str().unwrap()])
            .args(["--state-dir", dir.join("state").to_str().unwrap()])
            .args(flags);
        Served::spawn(command, log, level)
    }

    fn spawn(mut command: Command, log: PathBuf, level: &str) -> Served {
        let child = command
            .env("MCP_PREAMBLE_LOG", level)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut served = Served {
            child,
            addr: String::new(),
            log,
        };
        let mut on = None;
        wait_until("the gateway serving", Duration::from_secs(30), || {
            assert!(
                served.child.try_wait().unwrap().is_none(),
                "the gateway stopped: {}",
                served.log_text()
            );
            on = served.log_text().lines().find_map(|l| {
                let at = l.find("serving on http")?;
                let url = l[at..].split_whitespace().nth(2)?.to_string();
                Some(url)
            });
            on.is_some()
        });
        let url = on.unwrap();
        let authority = url.split("://").nth(1).unwrap().split('/').next().unwrap();
        served.addr = authority.replace("0.0.0.0", "127.0.0.1");
        served
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// A request over plain HTTP with `Host` this gateway.
    fn plain(&self, head: &str, headers: &[(&str, &str)], body: &str) -> Answer {
        let stream = TcpStream::connect(&self.addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        exchange(stream, head, &self.with_host(headers), body)
    }

    fn with_host<'a>(&'a self, headers: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
        let mut all = Vec::new();
        if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
            all.push(("Host", self.addr.as_str()));
        }
        all.extend_from_slice(headers);
        all
    }

    /// An `initialize` with `headers`, over plain HTTP.
    fn initialize(&self, headers: &[(&str, &str)]) -> Answer {
        self.plain("POST /mcp HTTP/1.1", headers, &initialize_body())
    }

    /// An `initialize` with `Authorization: Bearer TOKEN`.
    fn initialize_with(&self, token: &str) -> Answer {
        let auth = format!("Bearer {token}");
        self.initialize(&[("Authorization", &auth)])
    }
}

/// `dir/tokens.txt` holding `text`, for `--auth-tokens`.
fn tokens_file(dir: &Path, text: &str) -> PathBuf {
    let tokens = dir.join("tokens.txt");
    std::fs::write(&tokens, text).unwrap();
    tokens
}

fn initialize_body() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}})
    .to_string()
}

/// An HTTP answer: status, headers, body (as read; chunks not joined).
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        (self.headers.iter())
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// A 200 `initialize` answer.
    fn initialized(&self) -> bool {
        self.status == 200 && self.body.contains("\"serverInfo\"")
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {self:?}"))
    }
}

/// Sends one request (`Connection: close`) over `stream`, reads the whole answer.
fn exchange(
    mut stream: impl Read + Write,
    head: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let mut request = format!("{head}\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!(
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    ));
    stream.write_all(request.as_bytes()).unwrap();
    stream.flush().unwrap();
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    // Until the gateway closes (a TLS peer may close without close_notify).
    while let Ok(n) = stream.read(&mut buf) {
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&buf[..n]);
    }
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let mut lines = head.lines();
    let status = (lines.next().unwrap_or_default().split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    Answer {
        status,
        headers,
        body: body.to_string(),
    }
}

/// Writes `text` to `path` in one step (a new file renamed over it).
fn replace(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

fn metadata_challenge(base: &str) -> String {
    format!("Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\"")
}

fn refused_challenge(base: &str) -> String {
    format!(
        "Bearer error=\"invalid_token\", resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
    )
}

#[test]
fn a_tokens_file_guards_every_request_is_reloaded_and_is_never_logged() {
    let dir = scratch("serve-auth", "tokens");
    let tokens = tokens_file(&dir, &format!("# the team's tokens\n\n{TOKEN_A}\n"));
    let listen = non_loopback();
    let g = Served::start(
        &dir,
        &listen,
        &["--auth-tokens", tokens.to_str().unwrap(), "--behind-proxy"],
        "trace",
    );
    // Behind a TLS-terminating proxy the URLs the gateway gives are https.
    let base = format!("https://{}", g.addr);

    let none = g.initialize(&[]);
    assert_eq!(none.status, 401, "{none:?}");
    assert_eq!(
        none.header("www-authenticate"),
        Some(metadata_challenge(&base).as_str())
    );
    let wrong = g.initialize_with(WRONG);
    assert_eq!(wrong.status, 401, "{wrong:?}");
    assert_eq!(
        wrong.header("www-authenticate"),
        Some(refused_challenge(&base).as_str())
    );
    // Another scheme than Bearer is no token.
    let basic = g.initialize(&[("Authorization", "Basic YTpi")]);
    assert_eq!(basic.status, 401);
    assert!(g.initialize_with(TOKEN_A).initialized());
    // Every path and method is guarded, GET included; the challenge names
    // the path's metadata, or the endpoint's when the path is not plain.
    assert_eq!(g.plain("GET /mcp HTTP/1.1", &[], "").status, 401);
    let other = g.plain("DELETE /other HTTP/1.1", &[], "");
    assert_eq!(other.status, 401);
    assert_eq!(
        other.header("www-authenticate"),
        Some(
            format!(
                "Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/other\""
            )
            .as_str()
        )
    );
    let odd = g.plain("GET /a%22b HTTP/1.1", &[], "");
    assert_eq!(
        odd.header("www-authenticate"),
        Some(metadata_challenge(&base).as_str())
    );

    // The metadata, without a token.
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let doc = g.plain(&format!("GET {path} HTTP/1.1"), &[], "");
        assert_eq!(doc.status, 200, "{doc:?}");
        assert_eq!(doc.header("content-type"), Some("application/json"));
        assert_eq!(
            doc.json(),
            json!({"resource": format!("{base}/mcp"), "bearer_methods_supported": ["header"]})
        );
    }

    // A new file: the new token is served, the old one refused.
    replace(&tokens, &format!("{TOKEN_B}\n"));
    assert!(g.initialize_with(TOKEN_B).initialized());
    assert_eq!(g.initialize_with(TOKEN_A).status, 401);
    // Emptied, then gone: the last tokens stay in force, nobody else gets in.
    replace(&tokens, "# nobody\n");
    assert!(g.initialize_with(TOKEN_B).initialized());
    assert_eq!(g.initialize(&[]).status, 401);
    std::fs::remove_file(&tokens).unwrap();
    assert!(g.initialize_with(TOKEN_B).initialized());
    assert_eq!(g.initialize_with(TOKEN_A).status, 401);
    // A bad line (a token with a space) keeps the last tokens too.
    replace(&tokens, &format!("{TOKEN_A} and more\n"));
    assert!(g.initialize_with(TOKEN_B).initialized());
    assert_eq!(g.initialize_with(TOKEN_A).status, 401);

    let log = g.log_text();
    for said in [
        "holds no token now; the last tokens stay in force",
        "cannot read the tokens file",
        "a token is letters, digits and -._~+/= only",
        "refused a request's bearer token",
        "reloaded the tokens file",
        // A debug event: the log is as verbose as asked.
        "DEBUG mcp_preamble::serve::front::auth: admitted a request's bearer token",
    ] {
        assert!(log.contains(said), "{said:?} not in the log:\n{log}");
    }
    // Logged at the most verbose level asked for: never a token.
    for token in [TOKEN_A, TOKEN_B, WRONG, "YTpi"] {
        assert!(!log.contains(token), "{token} in the log");
    }
    for half in [&TOKEN_A[..12], &TOKEN_B[..12], &WRONG[..12]] {
        assert!(!log.contains(half), "{half} in the log");
    }
}

#[test]
fn a_tokens_file_without_a_token_or_with_a_short_one_is_refused_at_start() {
    let dir = scratch("serve-auth", "bad-tokens");
    let config = dir.join("mcp.json");
    std::fs::write(&config, json!({"mcpServers": {}}).to_string()).unwrap();
    let tokens = dir.join("tokens.txt");
    for (text, error) in [
        ("# none yet\n\n", "holds no token"),
        (
            "short\n",
            "line 1: a token shorter than 16 characters is refused",
        ),
    ] {
        std::fs::write(&tokens, text).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
            .args(["serve", "--config", config.to_str().unwrap()])
            .args(["--listen", "127.0.0.1:0", "--auth-tokens"])
            .arg(&tokens)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(error), "{err}");
        assert!(!err.contains("short\n") || error.contains("short"), "{err}");
    }
}

/// A token of the issuer's RSA key (`test-rsa`) with `claims`.
fn rs256(claims: &Value) -> String {
    jwt(Algorithm::RS256, "test-rsa", "rsa.pem", claims)
}

/// A signed access token.
fn jwt(alg: Algorithm, kid: &str, key_file: &str, claims: &Value) -> String {
    let mut header = Header::new(alg);
    header.kid = Some(kid.to_string());
    let pem = std::fs::read(data(key_file)).unwrap();
    let key = match alg {
        Algorithm::ES256 => EncodingKey::from_ec_pem(&pem).unwrap(),
        _ => EncodingKey::from_rsa_pem(&pem).unwrap(),
    };
    jsonwebtoken::encode(&header, claims, &key).unwrap()
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn claims(aud: Value) -> Value {
    json!({"iss": ISSUER, "aud": aud, "sub": "dev@example.test",
           "exp": now() + 600, "iat": now()})
}

/// base64url without padding.
fn b64url(bytes: &[u8]) -> String {
    const ABC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(ABC[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

#[test]
fn oauth_access_tokens_are_checked_against_a_jwks_file() {
    let dir = scratch("serve-auth", "oauth");
    let g = Served::start(
        &dir,
        "127.0.0.1:0",
        &[
            "--oauth-issuer",
            ISSUER,
            "--oauth-audience",
            AUDIENCE,
            "--oauth-jwks",
            &data("jwks.json"),
            "--oauth-scopes",
            "mcp:tools,mcp:read",
        ],
        "debug",
    );
    let base = format!("http://{}", g.addr);
    // The scopes to ask for: in every challenge and the metadata.
    let scoped = |challenge: String| format!("{challenge}, scope=\"mcp:tools mcp:read\"");
    let rsa = rs256(&claims(json!(AUDIENCE)));
    assert!(g.initialize_with(&rsa).initialized(), "RS256");
    let es256 = jwt(
        Algorithm::ES256,
        "test-ec",
        "ec.pem",
        &claims(json!(AUDIENCE)),
    );
    assert!(g.initialize_with(&es256).initialized(), "ES256");
    let listed = rs256(&claims(json!(["https://other.test", AUDIENCE])));
    assert!(g.initialize_with(&listed).initialized(), "aud as an array");

    let none = g.initialize(&[]);
    assert_eq!(none.status, 401);
    assert_eq!(
        none.header("www-authenticate"),
        Some(scoped(metadata_challenge(&base)).as_str())
    );
    let mut expired = claims(json!(AUDIENCE));
    expired["exp"] = json!(now() - 120);
    let mut early = claims(json!(AUDIENCE));
    early["nbf"] = json!(now() + 600);
    let mut stranger = claims(json!(AUDIENCE));
    stranger["iss"] = json!("https://evil.test");
    let mut no_exp = claims(json!(AUDIENCE));
    no_exp.as_object_mut().unwrap().remove("exp");
    let header_none = b64url(br#"{"alg":"none","typ":"JWT","kid":"test-rsa"}"#);
    let body = b64url(claims(json!(AUDIENCE)).to_string().as_bytes());
    let signed = rs256(&claims(json!(AUDIENCE)));
    let (signed_head, rest) = signed.split_once('.').unwrap();
    let signature = rest.split_once('.').unwrap().1;
    // HS256 "signed" with the public key's text as the HMAC secret.
    let hmac = {
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some("test-rsa".into());
        let public = std::fs::read(data("jwks.json")).unwrap();
        jsonwebtoken::encode(
            &header,
            &claims(json!(AUDIENCE)),
            &EncodingKey::from_secret(&public).unwrap(),
        )
        .unwrap()
    };
    for (why, token) in [
        (
            "wrong audience",
            rs256(&claims(json!("https://other.test/mcp"))),
        ),
        ("expired", rs256(&expired)),
        ("not yet valid", rs256(&early)),
        ("another issuer", rs256(&stranger)),
        ("no exp", rs256(&no_exp)),
        (
            "bad signature",
            jwt(
                Algorithm::RS256,
                "test-rsa",
                "other-rsa.pem",
                &claims(json!(AUDIENCE)),
            ),
        ),
        ("alg none", format!("{header_none}.{body}.")),
        (
            "alg none, a signature kept",
            format!("{header_none}.{body}.{signature}"),
        ),
        (
            "claims swapped under a good signature",
            format!("{signed_head}.{body}x.{signature}"),
        ),
        ("hmac with the public key", hmac),
        (
            "an unknown key",
            jwt(
                Algorithm::RS256,
                "no-such-key",
                "rsa.pem",
                &claims(json!(AUDIENCE)),
            ),
        ),
        (
            "the ec key named for rsa",
            jwt(
                Algorithm::ES256,
                "test-rsa",
                "ec.pem",
                &claims(json!(AUDIENCE)),
            ),
        ),
        ("not a jwt", "not.a.jwt-at-all".to_string()),
    ] {
        let answer = g.initialize_with(&token);
        assert_eq!(answer.status, 401, "{why}: {answer:?}");
        assert_eq!(
            answer.header("www-authenticate"),
            Some(scoped(refused_challenge(&base)).as_str()),
            "{why}"
        );
    }
    let doc = g.plain(
        "GET /.well-known/oauth-protected-resource HTTP/1.1",
        &[],
        "",
    );
    assert_eq!(
        doc.json(),
        json!({"resource": format!("{base}/mcp"), "authorization_servers": [ISSUER],
               "bearer_methods_supported": ["header"], "scopes_supported": ["mcp:tools", "mcp:read"]})
    );
    let log = g.log_text();
    assert!(log.contains("reason=\"expired\""), "{log}");
    assert!(log.contains("reason=\"another audience\""), "{log}");
    assert!(!log.contains(&rsa[..40]), "a token in the log");
}

/// A fake issuer on loopback: its metadata and its keys (`keys` as now),
/// counting the key fetches.
struct Issuer {
    url: String,
    keys: Arc<Mutex<Value>>,
    fetches: Arc<AtomicUsize>,
}

impl Issuer {
    fn start() -> Issuer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let keys = Arc::new(Mutex::new(json!({"keys": []})));
        let fetches = Arc::new(AtomicUsize::new(0));
        let (k, f, issuer) = (keys.clone(), fetches.clone(), url.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                let _ = reader.read_line(&mut line);
                // The rest of the head.
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                        break;
                    }
                }
                let path = line.split_whitespace().nth(1).unwrap_or_default();
                let (status, body) = match path {
                    "/.well-known/oauth-authorization-server" => (
                        "200 OK",
                        json!({"issuer": issuer, "jwks_uri": format!("{issuer}/jwks")}).to_string(),
                    ),
                    "/jwks" => {
                        f.fetch_add(1, Ordering::SeqCst);
                        ("200 OK", k.lock().unwrap().to_string())
                    }
                    _ => ("404 Not Found", String::new()),
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Issuer { url, keys, fetches }
    }

    /// Serves these keys of the test JWKS from now on.
    fn serve_keys(&self, kids: &[&str]) {
        let all: Value =
            serde_json::from_str(&std::fs::read_to_string(data("jwks.json")).unwrap()).unwrap();
        let keys: Vec<Value> = (all["keys"].as_array().unwrap().iter())
            .filter(|k| kids.contains(&k["kid"].as_str().unwrap()))
            .cloned()
            .collect();
        *self.keys.lock().unwrap() = json!({"keys": keys});
    }
}

#[test]
fn the_issuers_keys_are_discovered_kept_and_fetched_again_for_a_new_key() {
    let issuer = Issuer::start();
    issuer.serve_keys(&["test-rsa"]);
    let dir = scratch("serve-auth", "discovery");
    let g = Served::start(
        &dir,
        "127.0.0.1:0",
        &["--oauth-issuer", &issuer.url, "--oauth-audience", AUDIENCE],
        "info",
    );
    let claims = json!({"iss": issuer.url, "aud": AUDIENCE, "exp": now() + 600});
    // Fetched once at start; a token of a known key needs no fetch.
    let rsa = rs256(&claims);
    assert!(g.initialize_with(&rsa).initialized());
    assert!(g.initialize_with(&rsa).initialized());
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 1);
    // The issuer rotates in a new key: a token naming it makes the gateway fetch again.
    issuer.serve_keys(&["test-rsa", "test-ec"]);
    let es256 = jwt(Algorithm::ES256, "test-ec", "ec.pem", &claims);
    assert!(g.initialize_with(&es256).initialized());
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 2);
    let doc = g.plain(
        "GET /.well-known/oauth-protected-resource/mcp HTTP/1.1",
        &[],
        "",
    );
    assert_eq!(doc.json()["authorization_servers"], json!([issuer.url]));
}

/// A TLS client trusting the test CA only.
fn tls(addr: &str) -> rustls::StreamOwned<rustls::ClientConnection, TcpStream> {
    tls_trusting(addr, &["ca.pem"])
}

/// A TLS client trusting the test CAs `cas` (of tests/data/auth).
fn tls_trusting(
    addr: &str,
    cas: &[&str],
) -> rustls::StreamOwned<rustls::ClientConnection, TcpStream> {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for ca in cas {
        roots
            .add(rustls::pki_types::CertificateDer::from_pem_file(data(ca)).unwrap())
            .unwrap();
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let name = "localhost".try_into().unwrap();
    let connection = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
    let tcp = TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    rustls::StreamOwned::new(connection, tcp)
}

/// The leaf certificate the gateway at `addr` presents (trusting both test CAs).
fn served_leaf(addr: &str) -> Vec<u8> {
    let mut stream = tls_trusting(addr, &["ca.pem", "ca2.pem"]);
    while stream.conn.is_handshaking() {
        stream.conn.complete_io(&mut stream.sock).unwrap();
    }
    stream.conn.peer_certificates().unwrap()[0].to_vec()
}

fn der(pem: &str) -> Vec<u8> {
    use rustls::pki_types::pem::PemObject;
    rustls::pki_types::CertificateDer::from_pem_file(data(pem))
        .unwrap()
        .to_vec()
}

/// A certificate renewed in place (`--tls-cert` and `--tls-key` rewritten)
/// is served from the next handshake on, without a restart; while only one
/// file of the pair is new, the old pair is still served.
#[test]
fn a_renewed_certificate_is_served_without_a_restart() {
    let dir = scratch("serve-auth", "renewal");
    let tokens = tokens_file(&dir, &format!("{TOKEN_A}\n"));
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::copy(data("server.pem"), &cert).unwrap();
    std::fs::copy(data("server-key.pem"), &key).unwrap();
    let g = Served::start(
        &dir,
        &non_loopback(),
        &[
            "--auth-tokens",
            tokens.to_str().unwrap(),
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ],
        "info",
    );
    assert_eq!(served_leaf(&g.addr), der("server.pem"));
    // The new key before its certificate: not a pair yet, the old one is served.
    std::thread::sleep(Duration::from_millis(50));
    std::fs::copy(data("server2-key.pem"), &key).unwrap();
    assert_eq!(served_leaf(&g.addr), der("server.pem"));
    assert!(
        g.log_text()
            .contains("the certificate read before is still served"),
        "{}",
        g.log_text()
    );
    std::thread::sleep(Duration::from_millis(50));
    std::fs::copy(data("server2.pem"), &cert).unwrap();
    assert_eq!(served_leaf(&g.addr), der("server2.pem"));
    assert!(g.log_text().contains("was read again"), "{}", g.log_text());
    // Served on over a whole exchange, with the token.
    let auth = format!("Bearer {TOKEN_A}");
    let answer = exchange(
        tls_trusting(&g.addr, &["ca2.pem"]),
        "POST /mcp HTTP/1.1",
        &[("Host", "localhost"), ("Authorization", &auth)],
        &initialize_body(),
    );
    assert!(answer.initialized(), "{answer:?}");
}

#[test]
fn https_with_a_token_serves_initialize_and_plain_http_is_not_served() {
    let dir = scratch("serve-auth", "tls");
    let tokens = tokens_file(&dir, &format!("{TOKEN_A}\n"));
    let listen = non_loopback();
    let g = Served::start(
        &dir,
        &listen,
        &[
            "--auth-tokens",
            tokens.to_str().unwrap(),
            "--tls-cert",
            &data("server.pem"),
            "--tls-key",
            &data("server-key.pem"),
        ],
        "info",
    );
    assert!(
        g.log_text().contains("serving on https://"),
        "{}",
        g.log_text()
    );
    let auth = format!("Bearer {TOKEN_A}");
    let host = [("Host", "localhost")];
    let answer = exchange(
        tls(&g.addr),
        "POST /mcp HTTP/1.1",
        &[host[0], ("Authorization", &auth)],
        &initialize_body(),
    );
    assert!(answer.initialized(), "{answer:?}");
    let refused = exchange(
        tls(&g.addr),
        "POST /mcp HTTP/1.1",
        &host,
        &initialize_body(),
    );
    assert_eq!(refused.status, 401);
    assert_eq!(
        refused.header("www-authenticate"),
        Some(metadata_challenge("https://localhost").as_str())
    );
    // Plain HTTP on the TLS port gets no answer.
    let plain = g.initialize_with(TOKEN_A);
    assert_eq!(plain.status, 0, "{plain:?}");
}

#[test]
fn off_loopback_the_allowed_hosts_are_served_and_a_browser_only_from_them() {
    let dir = scratch("serve-auth", "hosts");
    let tokens = tokens_file(&dir, &format!("{TOKEN_A}\n"));
    let listen = non_loopback();
    let auth = format!("Bearer {TOKEN_A}");
    let g = Served::start(
        &dir,
        &listen,
        &[
            "--auth-tokens",
            tokens.to_str().unwrap(),
            "--behind-proxy",
            "--allowed-host",
            "mcp.test",
        ],
        "info",
    );
    let served = g.initialize(&[("Host", "mcp.test"), ("Authorization", &auth)]);
    assert!(served.initialized(), "{served:?}");
    let with_origin = g.initialize(&[
        ("Host", "mcp.test"),
        ("Origin", "https://mcp.test"),
        ("Authorization", &auth),
    ]);
    assert!(with_origin.initialized(), "{with_origin:?}");
    // That page may read the answer, and its preflight needs no token.
    assert_eq!(
        with_origin.header("access-control-allow-origin"),
        Some("https://mcp.test")
    );
    let preflight = g.plain(
        "OPTIONS /mcp HTTP/1.1",
        &[
            ("Host", "mcp.test"),
            ("Origin", "https://mcp.test"),
            ("Access-Control-Request-Method", "POST"),
            (
                "Access-Control-Request-Headers",
                "authorization, content-type",
            ),
        ],
        "",
    );
    assert_eq!(preflight.status, 204, "{preflight:?}");
    assert_eq!(
        preflight.header("access-control-allow-headers"),
        Some("authorization, content-type")
    );
    // Without a token: a challenge the page can read, to start OAuth.
    let challenged = g.initialize(&[("Host", "mcp.test"), ("Origin", "https://mcp.test")]);
    assert_eq!(challenged.status, 401, "{challenged:?}");
    assert!(
        (challenged.header("access-control-expose-headers"))
            .is_some_and(|h| h.contains("WWW-Authenticate")),
        "{challenged:?}"
    );
    let foreign = g.plain(
        "OPTIONS /mcp HTTP/1.1",
        &[
            ("Host", "mcp.test"),
            ("Origin", "https://evil.test"),
            ("Access-Control-Request-Method", "POST"),
        ],
        "",
    );
    assert_eq!(foreign.status, 403, "{foreign:?}");
    let other_host = g.initialize(&[("Host", "evil.test"), ("Authorization", &auth)]);
    assert_eq!(other_host.status, 403, "{other_host:?}");
    let other_origin = g.initialize(&[
        ("Host", "mcp.test"),
        ("Origin", "https://evil.test"),
        ("Authorization", &auth),
    ]);
    assert_eq!(other_origin.status, 403, "{other_origin:?}");
    let two_hosts = g.initialize(&[
        ("Host", "mcp.test"),
        ("Host", "mcp.test"),
        ("Authorization", &auth),
    ]);
    assert_eq!(two_hosts.status, 400, "{two_hosts:?}");
    // The challenge names the host asked for.
    let challenge = g.initialize(&[("Host", "mcp.test")]);
    assert_eq!(
        challenge.header("www-authenticate"),
        Some(metadata_challenge("https://mcp.test").as_str())
    );
    drop(g);

    // Without --allowed-host: any host (the token guards), no browser.
    let g = Served::start(
        &dir,
        &listen,
        &["--auth-tokens", tokens.to_str().unwrap(), "--behind-proxy"],
        "info",
    );
    assert!(
        g.initialize(&[("Host", "any.test"), ("Authorization", &auth)])
            .initialized()
    );
    let browser = g.initialize(&[("Origin", "http://localhost"), ("Authorization", &auth)]);
    assert_eq!(browser.status, 403, "{browser:?}");
}

#[test]
fn a_non_loopback_address_needs_authentication_and_tls() {
    let dir = scratch("serve-auth", "refused");
    let tokens = tokens_file(&dir, &format!("{TOKEN_A}\n"));
    let tokens = tokens.to_str().unwrap();
    let addr = non_loopback().replace(":0", ":9");
    let auth = "authentication (--auth-tokens or --oauth-issuer)";
    let tls = "tls (--tls-cert and --tls-key) or --behind-proxy";
    for (flags, missing) in [
        (vec![], format!("{auth} and {tls}")),
        (vec!["--behind-proxy"], auth.to_string()),
        (vec!["--auth-tokens", tokens], tls.to_string()),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
            .args(["serve", "--config", "no-such-mcp.json", "--listen", &addr])
            .args(&flags)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            err.trim_end(),
            format!(
                "mcp-preamble: invalid configuration: cannot listen on {addr}, not a loopback address, without {missing}"
            ),
            "{flags:?}"
        );
    }
}

/// The README's team-deployment commands, run as written but for the
/// files (this test's), the port (0) and the issuer (a fake one on loopback).
#[test]
fn the_readme_team_deployment_commands_serve_as_documented() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let section = &readme[readme.find("### A team gateway").unwrap()..];
    let section = &section[..section.find("\n## ").unwrap()];
    let block = section.split("```sh\n").nth(1).unwrap();
    let block = &block[..block.find("```").unwrap()];
    let commands: Vec<String> = block
        .replace("\\\n", " ")
        .lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
        .map(String::from)
        .collect();
    assert_eq!(commands.len(), 3, "{commands:?}");
    let dir = scratch("serve-auth", "readme");
    let ran = Command::new("sh")
        .args(["-c", &commands[0]])
        .current_dir(&dir)
        .status()
        .unwrap();
    assert!(ran.success(), "{}", commands[0]);
    let tokens = std::fs::read_to_string(dir.join("tokens.txt")).unwrap();
    let token = tokens.trim().to_string();
    assert!(token.len() >= 40, "{token}");
    let config = dir.join("mcp.json");
    std::fs::write(&config, json!({"mcpServers": {}}).to_string()).unwrap();
    let issuer = Issuer::start();
    issuer.serve_keys(&["test-rsa"]);
    let start = |command: &str| {
        let words: Vec<String> = command
            .split_whitespace()
            .map(|w| match w {
                "mcp.json" => config.display().to_string(),
                "tokens.txt" => dir.join("tokens.txt").display().to_string(),
                "server.pem" | "server-key.pem" => data(w),
                "https://auth.example.com" => issuer.url.clone(),
                listen if listen.starts_with("0.0.0.0:") => "0.0.0.0:0".to_string(),
                w => w.to_string(),
            })
            .collect();
        assert_eq!(words[..2], ["mcp-preamble", "serve"], "{command}");
        let log = dir.join("gateway.log");
        let _ = std::fs::remove_file(&log);
        let mut run = Command::new(env!("CARGO_BIN_EXE_mcp-preamble"));
        run.args(&words[1..])
            .args(["--log", log.to_str().unwrap()])
            .args(["--state-dir", dir.join("state").to_str().unwrap()]);
        Served::spawn(run, log, "info")
    };
    let host = ("Host", "mcp.example.com");

    let g = start(&commands[1]);
    let auth = format!("Bearer {token}");
    let over_tls = |headers: &[(&str, &str)]| {
        exchange(
            tls(&g.addr),
            "POST /mcp HTTP/1.1",
            headers,
            &initialize_body(),
        )
    };
    assert!(over_tls(&[host, ("Authorization", &auth)]).initialized());
    let refused = over_tls(&[host]);
    assert_eq!(
        refused.header("www-authenticate"),
        Some(metadata_challenge("https://mcp.example.com").as_str())
    );
    drop(g);

    let g = start(&commands[2]);
    let claims =
        json!({"iss": issuer.url, "aud": "https://mcp.example.com/mcp", "exp": now() + 600});
    let access = format!("Bearer {}", rs256(&claims));
    assert!(
        g.initialize(&[host, ("Authorization", &access)])
            .initialized()
    );
    let refused = g.initialize(&[host, ("Authorization", &auth)]);
    assert_eq!(
        refused.header("www-authenticate"),
        Some(refused_challenge("https://mcp.example.com").as_str())
    );
    let doc = g.plain(
        "GET /.well-known/oauth-protected-resource HTTP/1.1",
        &[host],
        "",
    );
    assert_eq!(
        doc.json(),
        json!({"resource": "https://mcp.example.com/mcp", "authorization_servers": [issuer.url],
               "bearer_methods_supported": ["header"]})
    );
}

/// The official Python SDK client (`tests/clients/py_auth.py`) over HTTPS
/// with a bearer token: it lists the gateway's tools; without a token it
/// gets none. Skipped when the SDK is not installed, unless
/// `MCP_PREAMBLE_REQUIRE_CLIENTS` is set (CI).
#[test]
fn the_python_sdk_client_reaches_the_gateway_with_a_token_over_https() {
    let clients = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients");
    let installed = Command::new("python3")
        .args(["-c", "import mcp.client.client, httpx2"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !installed {
        assert!(
            std::env::var_os("MCP_PREAMBLE_REQUIRE_CLIENTS").is_none(),
            "the Python SDK is not installed (pip install -r tests/clients/requirements.txt)"
        );
        eprintln!("skipped: the Python SDK is not installed");
        return;
    }
    let dir = scratch("serve-auth", "python");
    let tokens = tokens_file(&dir, &format!("{TOKEN_A}\n"));
    let g = Served::start(
        &dir,
        "127.0.0.1:0",
        &[
            "--auth-tokens",
            tokens.to_str().unwrap(),
            "--tls-cert",
            &data("server.pem"),
            "--tls-key",
            &data("server-key.pem"),
        ],
        "info",
    );
    let port = g.addr.rsplit(':').next().unwrap();
    let url = format!("https://localhost:{port}/mcp");
    let run = |token: Option<&str>| -> Value {
        let out = Command::new("python3")
            .arg(clients.join("py_auth.py"))
            .args([url.as_str(), data("ca.pem").as_str()])
            .args(token)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        serde_json::from_str(stdout.trim())
            .unwrap_or_else(|e| panic!("{e}: {stdout} {}", String::from_utf8_lossy(&out.stderr)))
    };
    let served = run(Some(TOKEN_A));
    assert_eq!(served["server"], "mcp-preamble", "{served}");
    assert_eq!(served["tools"], json!([]), "{served}");
    // Without a token the SDK gets nothing (it reports the 401 as an error response).
    let refused = run(None);
    let error = refused["error"]
        .as_str()
        .unwrap_or_else(|| panic!("{refused}"));
    assert!(error.contains("error response"), "{error}");
    assert!(refused.get("tools").is_none(), "{refused}");
    assert!(!g.log_text().contains(TOKEN_A));
}

impl Served {
    /// `message` in `session`, with `token`, over plain HTTP.
    fn in_session(&self, token: &str, session: &str, message: &Value) -> Answer {
        let auth = format!("Bearer {token}");
        let headers = [
            ("Authorization", auth.as_str()),
            ("Mcp-Session-Id", session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        self.plain("POST /mcp HTTP/1.1", &headers, &message.to_string())
    }

    /// A session opened with `token` (initialize, then initialized): its id.
    fn session_of(&self, token: &str) -> String {
        let answer = self.initialize_with(token);
        assert!(answer.initialized(), "{answer:?}");
        let id = answer.header("mcp-session-id").expect("a session id");
        let id = id.to_string();
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(self.in_session(token, &id, &note).status, 202);
        id
    }
}

/// A session belongs to the token that opened it (issue 54): another valid
/// token, of the tokens file or another subject's access token, is told it
/// does not exist (404), with and without sealed ids (replicas).
#[test]
fn a_session_is_served_to_the_token_that_opened_it_only() {
    let dir = scratch("serve-auth", "owner");
    let tokens = tokens_file(&dir, &format!("{TOKEN_A}\n{TOKEN_B}\n"));
    let key = dir.join("session.key");
    std::fs::write(&key, "ab".repeat(32)).unwrap();
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let tokens = tokens.to_str().unwrap();
    for sealed in [false, true] {
        let mut flags = vec!["--auth-tokens", tokens];
        if sealed {
            flags.extend(["--session-key-file", key.to_str().unwrap()]);
        }
        let g = Served::start(&dir, "127.0.0.1:0", &flags, "info");
        let session = g.session_of(TOKEN_A);
        assert_eq!(g.in_session(TOKEN_A, &session, &list).status, 200);
        let other = g.in_session(TOKEN_B, &session, &list);
        assert_eq!(other.status, 404, "sealed {sealed}: {other:?}");
        assert_eq!(other.body, "not found: unknown session");
        assert!(
            g.log_text()
                .contains("refused a session opened with another token")
        );
        assert_eq!(g.in_session(TOKEN_A, &session, &list).status, 200);
    }
    // Access tokens: bound to the subject, not to the token (a renewed
    // token of the same subject goes on).
    let g = Served::start(
        &dir,
        "127.0.0.1:0",
        &[
            "--oauth-issuer",
            ISSUER,
            "--oauth-audience",
            AUDIENCE,
            "--oauth-jwks",
            &data("jwks.json"),
        ],
        "info",
    );
    let dev = rs256(&claims(json!(AUDIENCE)));
    let session = g.session_of(&dev);
    let mut renewed = claims(json!(AUDIENCE));
    renewed["iat"] = json!(now() - 1);
    assert_eq!(g.in_session(&rs256(&renewed), &session, &list).status, 200);
    let mut ops = claims(json!(AUDIENCE));
    ops["sub"] = json!("ops@example.test");
    assert_eq!(g.in_session(&rs256(&ops), &session, &list).status, 404);
    // RFC 7519's `iss` is one string: an array holding the issuer is refused.
    let mut listed = claims(json!(AUDIENCE));
    listed["iss"] = json!([ISSUER]);
    assert_eq!(g.initialize_with(&rs256(&listed)).status, 401);
}
