//! Replicas: with a session key ([`SessionKey`], `serve --session-key-file`)
//! a 2025-era session's state travels in its `Mcp-Session-Id`, sealed, so
//! any gateway process that reads the same key serves any request of any
//! session (several replicas behind a load balancer, no session store).
//!
//! The id the host sees is `mp1.` and the base64url of a random 24-byte
//! nonce and the XChaCha20-Poly1305 ciphertext of the session's state: the
//! local session's id, an expiry, and the host's `initialize` params
//! (protocol version, capabilities, `clientInfo`). A replica that gets a
//! request of a session it does not hold opens the id and rebuilds the
//! session: rmcp's restore path ([`SessionStore`], `restore_session`)
//! replays the host's `initialize` to a new local session under the same
//! local id, then serves the request. The key authenticates the id: a
//! changed byte, another key or a past expiry is an unknown session (404,
//! the host starts a new one); a value that is not such an id at all is a
//! bad request (400).
//!
//! The seal and the open happen around rmcp's handling of one request
//! ([`exchange`]): the state it hands its store after a handshake is sealed
//! into the answer's header, and the state opened from a request's header
//! is what its store loads. Both go through a task-local slot, since rmcp
//! calls the store on the request's own task.

mod ended;

use std::cell::RefCell;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use chacha20poly1305::aead::{Aead, Generate, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use hyper::header::HeaderValue;
use hyper::{Request, StatusCode};
use rmcp::model::InitializeRequestParams;
use rmcp::transport::streamable_http_server::session::{
    SessionState, SessionStore, SessionStoreError,
};
use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind, Result};
use crate::serve::front::reply::{Answer, plain};
use crate::serve::front::sessions::Owner;
pub(in crate::serve) use ended::Ended;

/// The header a 2025-era session's id travels in.
pub(in crate::serve) const SESSION_HEADER: &str = "mcp-session-id";

/// What every sealed id starts with (the format's version).
const PREFIX: &str = "mp1.";

/// XChaCha20's nonce and Poly1305's tag, in bytes.
const NONCE: usize = 24;
const TAG: usize = 16;

/// The longest id opened (a sealed `initialize` is trimmed well below).
const MAX_ID: usize = 8 * 1024;

/// The longest `initialize` params sealed whole; longer ones are trimmed
/// to what a replica needs ([`trimmed`]).
const MAX_INIT: usize = 3 * 1024;

/// The longest key file read.
const MAX_KEY_FILE: u64 = 64 * 1024;

/// The key that seals and opens session ids: 32 bytes every replica reads
/// from the same file. Never printed.
#[derive(Clone)]
pub struct SessionKey {
    /// The first seals; every one opens (a rotation lists the new key
    /// first and the old one after it until old ids expired).
    ciphers: Vec<XChaCha20Poly1305>,
}

impl std::fmt::Debug for SessionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SessionKey({} keys)", self.ciphers.len())
    }
}

impl SessionKey {
    /// A key of these 32 bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> SessionKey {
        SessionKey {
            ciphers: vec![cipher(&bytes)],
        }
    }

    /// The key in `path`: exactly 32 bytes (`head -c 32 /dev/urandom`), or
    /// text with one key a line, each 64 hex digits (`openssl rand -hex
    /// 32`) or the base64 of 32 bytes (`openssl rand -base64 32`); blank
    /// lines and lines starting with `#` are skipped. The first key seals
    /// new ids, every one opens them (for a rotation).
    pub fn from_file(path: &Path) -> Result<SessionKey> {
        let shown = path.display();
        let io = |e: std::io::Error| {
            Error::new(
                ErrorKind::Io,
                format!("cannot read the session key file {shown}: {e}"),
            )
        };
        let file = std::fs::File::open(path).map_err(io)?;
        #[cfg(unix)]
        if let Ok(meta) = file.metadata() {
            use std::os::unix::fs::PermissionsExt;
            if meta.permissions().mode() & 0o077 != 0 {
                tracing::warn!(
                    file = %shown,
                    "the session key file is readable by other users than its owner (chmod 600 it)"
                );
            }
        }
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::Read::take(file, MAX_KEY_FILE), &mut bytes)
            .map_err(io)?;
        SessionKey::parse(&bytes).map_err(|why| {
            Error::new(
                ErrorKind::InvalidConfig,
                format!("the session key file {shown} {why}"),
            )
        })
    }

    /// The keys of a key file's bytes; why not, as the end of a sentence.
    fn parse(bytes: &[u8]) -> std::result::Result<SessionKey, String> {
        if bytes.len() == 32 {
            let raw: [u8; 32] = bytes.try_into().map_err(|_| "is not 32 bytes")?;
            return Ok(SessionKey::from_bytes(raw));
        }
        let text = std::str::from_utf8(bytes)
            .map_err(|_| "is neither 32 bytes nor text with one key a line".to_string())?;
        let mut ciphers = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let key = decode_key(line).ok_or_else(|| {
                format!(
                    "has a line ({}) that is not 32 bytes in hex or base64",
                    n + 1
                )
            })?;
            ciphers.push(cipher(&key));
        }
        if ciphers.is_empty() {
            return Err("has no key (32 bytes, or one key a line in hex or base64)".into());
        }
        Ok(SessionKey { ciphers })
    }
}

fn cipher(key: &[u8; 32]) -> XChaCha20Poly1305 {
    XChaCha20Poly1305::new(key.into())
}

/// 32 bytes from 64 hex digits or base64 (standard or URL-safe, padded
/// or not).
fn decode_key(line: &str) -> Option<[u8; 32]> {
    if line.len() == 64 && line.bytes().all(|b| b.is_ascii_hexdigit()) {
        let mut key = [0u8; 32];
        for (i, pair) in line.as_bytes().chunks(2).enumerate() {
            let pair = std::str::from_utf8(pair).ok()?;
            key[i] = u8::from_str_radix(pair, 16).ok()?;
        }
        return Some(key);
    }
    [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD]
        .iter()
        .find_map(|engine| engine.decode(line).ok())
        .and_then(|bytes| bytes.try_into().ok())
}

/// What a sealed id holds.
#[derive(Serialize, Deserialize)]
struct Sealed {
    /// The local session's id (the same on every replica).
    sid: String,
    /// Seconds since the Unix epoch after which the id is refused.
    exp: u64,
    /// The host's `initialize` params, replayed by a replica that rebuilds
    /// the session.
    init: InitializeRequestParams,
    /// The token that opened the session ([`Owner`]): another is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    owner: Option<String>,
}

/// Why a presented id is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::serve) enum Refused {
    /// Not an id this gateway makes (400).
    Malformed,
    /// Does not open with the key: changed, forged, or another key's (404).
    Unknown,
    /// Opened, but past its expiry (404).
    Expired,
    /// Opened, but its session was ended by a `DELETE` (404).
    Ended,
    /// Opened, but another token opened the session (404, as unknown).
    NotYours,
    /// A `DELETE` while the record of ended sessions is full (503).
    EndedFull,
}

/// Seals and opens session ids with a key, each valid for `ttl`.
#[derive(Clone)]
pub(in crate::serve) struct Sealer {
    key: SessionKey,
    ttl: Duration,
    pub(in crate::serve) ended: Arc<Ended>,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sealer")
            .field("key", &self.key)
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl Sealer {
    pub(in crate::serve) fn new(key: SessionKey, ttl: Duration) -> Sealer {
        Sealer {
            key,
            ttl,
            ended: Arc::default(),
        }
    }

    /// The id the host is given for local session `sid`.
    fn seal(
        &self,
        sid: &str,
        init: &InitializeRequestParams,
        owner: Option<&Owner>,
    ) -> Option<String> {
        let exp = unix_now().saturating_add(self.ttl.as_secs().max(1));
        let init = trimmed(init);
        let plain = serde_json::to_vec(&Sealed {
            sid: sid.to_string(),
            exp,
            init,
            owner: owner.map(|o| o.0.clone()),
        })
        .ok()?;
        let nonce = XNonce::generate();
        let payload = Payload {
            msg: &plain,
            aad: PREFIX.as_bytes(),
        };
        let sealed = self.key.ciphers.first()?.encrypt(&nonce, payload).ok()?;
        let mut bytes = nonce.to_vec();
        bytes.extend_from_slice(&sealed);
        Some(format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(bytes)))
    }

    /// The local id and `initialize` params sealed in `id`.
    #[cfg(test)]
    fn open(&self, id: &str) -> std::result::Result<(String, InitializeRequestParams), Refused> {
        self.opened(id, None).map(|s| (s.sid, s.init))
    }

    /// What `id` holds, if it opens, has not expired, its session was not
    /// ended, and `owner` opened it (when a token did).
    fn opened(&self, id: &str, owner: Option<&Owner>) -> std::result::Result<Sealed, Refused> {
        if id.len() > MAX_ID {
            return Err(Refused::Malformed);
        }
        let body = id.strip_prefix(PREFIX).ok_or(Refused::Malformed)?;
        let bytes = URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|_| Refused::Malformed)?;
        if bytes.len() < NONCE + TAG {
            return Err(Refused::Malformed);
        }
        let (nonce, sealed) = bytes.split_at(NONCE);
        let nonce = XNonce::try_from(nonce).map_err(|_| Refused::Malformed)?;
        let plain = self
            .key
            .ciphers
            .iter()
            .find_map(|cipher| {
                let payload = Payload {
                    msg: sealed,
                    aad: PREFIX.as_bytes(),
                };
                cipher.decrypt(&nonce, payload).ok()
            })
            .ok_or(Refused::Unknown)?;
        // Authenticated: only this gateway's own seal gets here.
        let sealed: Sealed = serde_json::from_slice(&plain).map_err(|_| Refused::Unknown)?;
        if unix_now() > sealed.exp {
            return Err(Refused::Expired);
        }
        if self.ended.contains(&sealed.sid) {
            return Err(Refused::Ended);
        }
        // Opened with another token: unknown to this one.
        if sealed.owner.is_some() && sealed.owner.as_deref() != owner.map(|o| o.0.as_str()) {
            return Err(Refused::NotYours);
        }
        Ok(sealed)
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `init` within [`MAX_INIT`] bytes of JSON: what a replica needs to answer
/// as the first one did (protocol version, capabilities, client name and
/// version) is kept; the rest (`_meta`, experimental capabilities, icons,
/// descriptions) goes first when it is too long.
fn trimmed(init: &InitializeRequestParams) -> InitializeRequestParams {
    let fits = |i: &InitializeRequestParams| {
        serde_json::to_vec(i).is_ok_and(|json| json.len() <= MAX_INIT)
    };
    if fits(init) {
        return init.clone();
    }
    let mut less = init.clone();
    less.meta = None;
    less.capabilities.experimental = None;
    less.capabilities.extensions = None;
    let info = &init.client_info;
    let mut client = rmcp::model::Implementation::new(
        info.name.chars().take(128).collect::<String>(),
        info.version.chars().take(64).collect::<String>(),
    );
    client.title = None;
    less.client_info = client;
    if fits(&less) {
        return less;
    }
    less.capabilities = Default::default();
    less
}

/// What one request hands between rmcp's store and [`exchange`].
#[derive(Default)]
struct Slot {
    /// Opened from the request's id: (local id, params), for `load`.
    presented: Option<(String, InitializeRequestParams)>,
    /// Handed to `store` after a handshake, sealed into the answer.
    issued: Option<(String, InitializeRequestParams)>,
}

tokio::task_local! {
    static SLOT: RefCell<Slot>;
}

/// rmcp's session store for sealed ids: nothing is stored, the state is in
/// the id ([`exchange`] moves it).
#[derive(Debug, Default)]
pub(in crate::serve) struct InTheId;

#[async_trait::async_trait]
impl SessionStore for InTheId {
    async fn load(
        &self,
        session_id: &str,
    ) -> std::result::Result<Option<SessionState>, SessionStoreError> {
        let loaded = SLOT.try_with(|slot| {
            let slot = slot.borrow();
            let (sid, init) = slot.presented.as_ref()?;
            (sid == session_id).then(|| SessionState::new(init.clone()))
        });
        Ok(loaded.ok().flatten())
    }

    async fn store(
        &self,
        session_id: &str,
        state: &SessionState,
    ) -> std::result::Result<(), SessionStoreError> {
        let init = state.initialize_params.clone();
        let _ = SLOT.try_with(|slot| {
            slot.borrow_mut().issued = Some((session_id.to_string(), init));
        });
        Ok(())
    }

    async fn delete(&self, _session_id: &str) -> std::result::Result<(), SessionStoreError> {
        // Recorded by `exchange`, which knows the id's expiry.
        Ok(())
    }
}

/// `handle` (rmcp) serving `req` with sealed session ids: the id the
/// request carries is opened to the local one (refused as [`Refused`]
/// says), and a new session's local id in the answer is sealed.
pub(in crate::serve) async fn exchange<B, F, Fut>(
    sealer: &Sealer,
    mut req: Request<B>,
    handle: F,
) -> Answer
where
    F: FnOnce(Request<B>) -> Fut,
    Fut: Future<Output = Answer>,
{
    let mut slot = Slot::default();
    let owner = Owner::of(&req);
    let mut ids = req.headers().get_all(SESSION_HEADER).iter();
    let (first, second) = (ids.next(), ids.next());
    if second.is_some() {
        return plain(
            StatusCode::BAD_REQUEST,
            "bad request: more than one mcp-session-id header",
        );
    }
    // The session a `DELETE` asks to end: (local id, expiry).
    let mut ending = None;
    if let Some(id) = first {
        let opened = id
            .to_str()
            .map_err(|_| Refused::Malformed)
            .and_then(|id| sealer.opened(id, owner.as_ref()));
        match opened {
            Ok(Sealed { sid, exp, init, .. }) => {
                let Ok(local) = HeaderValue::from_str(&sid) else {
                    return refused(Refused::Unknown);
                };
                req.headers_mut().insert(SESSION_HEADER, local);
                if req.method() == hyper::Method::DELETE {
                    // Recorded before the session ends, or not ended at all.
                    if !sealer.ended.reserve(&sid, exp) {
                        return refused(Refused::EndedFull);
                    }
                    ending = Some((sid.clone(), exp));
                }
                slot.presented = Some((sid, init));
            }
            Err(why) => return refused(why),
        }
    }
    let (mut answer, slot) = SLOT
        .scope(RefCell::new(slot), async move {
            let answer = handle(req).await;
            (
                answer,
                SLOT.with(|slot| std::mem::take(&mut *slot.borrow_mut())),
            )
        })
        .await;
    if let Some((sid, exp)) = ending {
        match answer.status().is_success() {
            true => sealer.ended.end(&sid, exp),
            false => sealer.ended.unreserve(&sid),
        }
    }
    let local = answer
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    if let Some(local) = local {
        let sealed = match &slot.issued {
            Some((sid, init)) if *sid == local => sealer.seal(sid, init, owner.as_ref()),
            _ => None,
        };
        let Some(value) = sealed.and_then(|s| HeaderValue::from_str(&s).ok()) else {
            tracing::error!("a new session's id could not be sealed");
            return plain(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal error: the session id could not be sealed",
            );
        };
        answer.headers_mut().insert(SESSION_HEADER, value);
    }
    answer
}

fn refused(why: Refused) -> Answer {
    match why {
        Refused::Malformed => {
            tracing::debug!("refused a malformed session id");
            plain(StatusCode::BAD_REQUEST, "bad request: malformed session id")
        }
        Refused::Unknown => {
            tracing::debug!("refused a session id that does not open with the session key");
            plain(StatusCode::NOT_FOUND, "not found: unknown session")
        }
        Refused::Expired => {
            tracing::debug!("refused an expired session id");
            plain(StatusCode::NOT_FOUND, "not found: the session expired")
        }
        Refused::Ended => {
            tracing::debug!("refused the id of a session a DELETE ended");
            plain(StatusCode::NOT_FOUND, "not found: the session was ended")
        }
        Refused::NotYours => {
            tracing::info!("refused a session opened with another token");
            plain(StatusCode::NOT_FOUND, "not found: unknown session")
        }
        Refused::EndedFull => {
            tracing::warn!(
                "refused a DELETE: the record of ended sessions is full until some ids expire"
            );
            plain(
                StatusCode::SERVICE_UNAVAILABLE,
                "service unavailable: too many sessions ended recently; the session stays open",
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn init() -> InitializeRequestParams {
        serde_json::from_value(serde_json::json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"roots": {"listChanged": true}},
            "clientInfo": {"name": "host", "version": "1.2"}
        }))
        .unwrap()
    }

    fn sealer(byte: u8, ttl: u64) -> Sealer {
        Sealer::new(SessionKey::from_bytes([byte; 32]), Duration::from_secs(ttl))
    }

    #[test]
    fn an_id_opens_with_its_key_only() {
        let id = sealer(7, 60).seal("local-1", &init(), None).unwrap();
        assert!(id.starts_with(PREFIX));
        assert!(id.bytes().all(|b| b.is_ascii_graphic()));
        let (sid, opened) = sealer(7, 60).open(&id).unwrap();
        assert_eq!(sid, "local-1");
        assert_eq!(opened.client_info.name, "host");
        assert_eq!(opened.protocol_version.as_str(), "2025-11-25");
        assert!(opened.capabilities.roots.is_some());
        assert_eq!(sealer(8, 60).open(&id), Err(Refused::Unknown));
        // Two seals of the same state differ (a random nonce each).
        assert_ne!(id, sealer(7, 60).seal("local-1", &init(), None).unwrap());
    }

    #[test]
    fn every_changed_byte_is_an_unknown_session() {
        let sealer = sealer(1, 60);
        let id = sealer.seal("s", &init(), None).unwrap();
        let body = URL_SAFE_NO_PAD.decode(&id[PREFIX.len()..]).unwrap();
        for i in 0..body.len() {
            let mut changed = body.clone();
            changed[i] ^= 0x01;
            let forged = format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(&changed));
            assert_eq!(sealer.open(&forged), Err(Refused::Unknown), "byte {i}");
        }
    }

    #[test]
    fn what_is_not_an_id_is_malformed() {
        let sealer = sealer(1, 60);
        for bad in [
            "",
            "0b9f6c1e-4d7a-4f36-9a55-0c4b7e1f2a3d",
            "mp1.",
            "mp1.!!!",
            "mp1.AAAA",
            &format!("mp1.{}", "A".repeat(MAX_ID)),
        ] {
            assert_eq!(sealer.open(bad), Err(Refused::Malformed), "{bad:.20}");
        }
    }

    #[test]
    fn a_past_expiry_is_refused() {
        let sealer = sealer(1, 60);
        let plain = serde_json::to_vec(&Sealed {
            sid: "s".into(),
            exp: unix_now() - 1,
            init: init(),
            owner: None,
        })
        .unwrap();
        let nonce = XNonce::generate();
        let payload = Payload {
            msg: &plain,
            aad: PREFIX.as_bytes(),
        };
        let mut bytes = nonce.to_vec();
        bytes.extend(sealer.key.ciphers[0].encrypt(&nonce, payload).unwrap());
        let id = format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(bytes));
        assert_eq!(sealer.open(&id), Err(Refused::Expired));
    }

    #[test]
    fn a_session_a_delete_ended_is_refused_until_its_id_expires() {
        let sealer = sealer(3, 60);
        let id = sealer.seal("s-1", &init(), None).unwrap();
        let other = sealer.seal("s-2", &init(), None).unwrap();
        let told = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = told.clone();
        sealer.ended.tell(Arc::new(move |sid: &str, exp| {
            sink.lock().unwrap().push((sid.to_string(), exp));
        }));
        let exp = sealer.opened(&id, None).unwrap().exp;
        assert!(sealer.ended.reserve("s-1", exp));
        sealer.ended.end("s-1", exp);
        assert_eq!(sealer.open(&id), Err(Refused::Ended));
        assert!(sealer.open(&other).is_ok());
        assert_eq!(*told.lock().unwrap(), vec![("s-1".to_string(), exp)]);
        // Told by another replica: refused, and not told on again.
        sealer.ended.insert("s-2", exp);
        assert_eq!(sealer.open(&other), Err(Refused::Ended));
        assert_eq!(told.lock().unwrap().len(), 1);
        // Expired ones and overlong ids are not kept.
        sealer.ended.insert("old", unix_now() - 1);
        sealer.ended.insert(&"x".repeat(ended::MAX_SID + 1), exp);
        assert_eq!(sealer.ended.len(), 2);
    }

    #[test]
    fn a_huge_initialize_is_trimmed_to_what_a_replica_needs() {
        let mut big = init();
        big.client_info.name = "n".repeat(50_000);
        big.capabilities.experimental = Some(
            [(
                "x".to_string(),
                serde_json::Map::from_iter([("y".to_string(), "z".repeat(9_000).into())]),
            )]
            .into_iter()
            .collect(),
        );
        let id = sealer(2, 60).seal("s", &big, None).unwrap();
        assert!(id.len() < MAX_ID, "{}", id.len());
        let (_, opened) = sealer(2, 60).open(&id).unwrap();
        assert_eq!(opened.client_info.name.len(), 128);
        assert!(opened.capabilities.roots.is_some());
        assert!(opened.capabilities.experimental.is_none());
    }

    #[test]
    fn key_files_take_raw_hex_and_base64_keys() {
        let raw = [9u8; 32];
        assert!(SessionKey::parse(&raw).is_ok());
        let hex: String = raw.iter().map(|b| format!("{b:02x}")).collect();
        let b64 = STANDARD.encode(raw);
        let two = format!("# new key first\n{hex}\n\n{b64}\n");
        assert_eq!(SessionKey::parse(two.as_bytes()).unwrap().ciphers.len(), 2);
        assert_eq!(
            SessionKey::parse(b"short").unwrap_err(),
            "has a line (1) that is not 32 bytes in hex or base64"
        );
        assert_eq!(
            SessionKey::parse(b"# nothing\n").unwrap_err(),
            "has no key (32 bytes, or one key a line in hex or base64)"
        );
        // The old key still opens what it sealed; the new one seals.
        let old = Sealer::new(SessionKey::from_bytes([1; 32]), Duration::from_secs(60));
        let id = old.seal("s", &init(), None).unwrap();
        let both = format!(
            "{}\n{}\n",
            STANDARD.encode([2u8; 32]),
            STANDARD.encode([1u8; 32])
        );
        let rotated = Sealer::new(
            SessionKey::parse(both.as_bytes()).unwrap(),
            Duration::from_secs(60),
        );
        assert!(rotated.open(&id).is_ok());
        let new = rotated.seal("s", &init(), None).unwrap();
        assert_eq!(old.open(&new), Err(Refused::Unknown));
    }
}
