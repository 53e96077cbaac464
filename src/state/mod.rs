//! Review state shared by several gateways in Redis or Valkey (feature
//! `state-redis`): the pins a lock file holds, the changes gateways saw
//! and await review, and the approvals made.
//!
//! A [`SharedState`] is opened from `redis://HOST:PORT/DB` (or
//! `valkey://…`; a user and password may come before the host). It keeps,
//! under keys that start with `mcp-preamble:`:
//!
//! | key | type | holds |
//! |---|---|---|
//! | `mcp-preamble:format` | string | the lock format version of the entries ([`LOCK_VERSION`]) |
//! | `mcp-preamble:pins` | hash | one field per server key: its pin, as the JSON of its block under `servers` in a lock file ([`LockEntry`]) |
//! | `mcp-preamble:revision` | integer | one more at each write |
//! | `mcp-preamble:pending` | hash | one field per alias a gateway holds for review: `{"pin": …, "seen": UNIX_SECONDS}` (`pin` as in `preview --json`) |
//! | `mcp-preamble:approvals` | list | the last 1,000 pins written, newest first: `{"key", "action": "pinned" or "removed", "sha256", "at": UNIX_SECONDS, "by"}` (`by` the approver the pin records, [`LockEntry::approved`]) |
//! | `mcp-preamble:changes` | channel | the revision, published by each write |
//! | `mcp-preamble:ended` | sorted set | the sessions a `DELETE` ended before their ids expire: each a gateway's local session id, scored by the id's expiry (UNIX seconds); at most 65,536 (as many as a gateway keeps): none dropped before it expires, a new one past them refused |
//! | `mcp-preamble:ends` | channel | `EXPIRY SESSION`, published as each is added |
//!
//! Each server's pin is a field of its own, and a write sets only the
//! fields that changed, in one `MULTI`/`EXEC`: two `pin` runs for
//! different servers never lose each other's pin. Reading assembles the
//! fields into a lock file's text and reads it as one
//! ([`Lock::from_str`]), so a hand-edited field is checked as a hand-edited
//! file is (hashes, version).
//!
//! [`SharedState::follow`] keeps a gateway's lock current: it subscribes
//! to the channel, reloads on each message (and every few seconds, which
//! also notices a silent connection), and when Redis cannot be reached
//! keeps the last lock it loaded, logs it once, reports not ready
//! ([`Readiness`]) and tries again until Redis answers (then logs that
//! too, subscribes and reloads).
//!
//! Each reply from Redis is capped at [`MAX_REPLY`] (64 MiB, a lock file's
//! bound): the state reads through connections of its own that follow
//! RESP's framing and refuse a reply past the cap before it is buffered
//! (`reply.rs`), over `rediss://` too. A refused reply is logged, the
//! connection closed, and the command fails with an
//! [`ErrorKind::InvalidMessage`] error naming the state; a follower keeps
//! serving the last reviewed state, as it does for pins that do not load,
//! and stays ready (a value too big is not Redis away), until the reply
//! fits.

mod follow;
mod reply;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;

use crate::error::{Error, ErrorKind, Result};
use crate::pin::{LOCK_VERSION, Lock, LockEntry, Pin};

pub use follow::{EndedFollower, Follower, Readiness};
pub use reply::MAX_REPLY;

/// Told of each ended session: its local id and its id's expiry.
pub type EndedSink = Box<dyn Fn(&str, u64) + Send + Sync>;

const FORMAT: &str = "mcp-preamble:format";
const PINS: &str = "mcp-preamble:pins";
const REVISION: &str = "mcp-preamble:revision";
const PENDING: &str = "mcp-preamble:pending";
const APPROVALS: &str = "mcp-preamble:approvals";
/// The channel each write publishes its revision on.
pub const CHANNEL: &str = "mcp-preamble:changes";
/// One more revision, published on the channel: `KEYS[1]` the revision,
/// `KEYS[2]` the channel.
const NEXT_REVISION: &str =
    "local r = redis.call('INCR', KEYS[1]) redis.call('PUBLISH', KEYS[2], r) return r";
const ENDED: &str = "mcp-preamble:ended";
/// The channel each ended session is published on.
const ENDS: &str = "mcp-preamble:ends";
/// Adds an ended session: `KEYS[1]` the set, `KEYS[2]` the channel,
/// `ARGV` the session, its expiry, now and the most kept. Those already
/// expired go first; none is dropped before it expires: past the most
/// kept a new one is refused (0), and the gateway logs it.
const END_SESSION: &str = "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[3]) \
    if redis.call('ZSCORE', KEYS[1], ARGV[1]) == false \
        and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end \
    redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1]) \
    redis.call('PUBLISH', KEYS[2], ARGV[2] .. ' ' .. ARGV[1]) \
    return 1";
/// The most ended sessions the set keeps.
const ENDED_KEPT: usize = 65_536;
/// How many approvals the list keeps.
const APPROVALS_KEPT: isize = 1000;
/// How long connecting and each command may take before Redis counts as
/// unreachable.
const TIMEOUT: Duration = Duration::from_secs(3);

/// Review state in a Redis or Valkey database: see the [module](self) docs.
///
/// ```
/// use mcp_preamble::state::SharedState;
/// let state = SharedState::open("redis://reviewer:s3cret@10.0.0.5:6379/2")?;
/// // What logs and errors show: never the password.
/// assert_eq!(state.shown(), "redis://reviewer:***@10.0.0.5:6379/2");
/// let err = SharedState::open("http://10.0.0.5").unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "invalid configuration: --state http://10.0.0.5: expected redis://HOST:PORT/DB or valkey://HOST:PORT/DB (rediss:// or valkeys:// over tls)"
/// );
/// # Ok::<(), mcp_preamble::Error>(())
/// ```
pub struct SharedState {
    client: redis::Client,
    shown: String,
    conn: tokio::sync::Mutex<Option<redis::aio::MultiplexedConnection>>,
    /// Set when a reply on the commands' connection passed the cap.
    over: Arc<AtomicBool>,
}

impl std::fmt::Debug for SharedState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedState")
            .field("url", &self.shown)
            .finish_non_exhaustive()
    }
}

impl SharedState {
    /// The state at `url`: `redis://HOST[:PORT][/DB]` or `valkey://…`,
    /// with `USER:PASSWORD@` before the host when Redis asks for them;
    /// `rediss://` or `valkeys://` over TLS (rustls), the server's
    /// certificate checked against the system's roots, or those in the file
    /// `SSL_CERT_FILE` names. Does not connect: the first command does.
    pub fn open(url: &str) -> Result<SharedState> {
        let shown = shown_url(url);
        let bad =
            |why: &str| Error::new(ErrorKind::InvalidConfig, format!("--state {shown}: {why}"));
        let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
        match scheme.as_deref() {
            Some("redis" | "valkey" | "rediss" | "valkeys") => {}
            _ => {
                return Err(bad(
                    "expected redis://HOST:PORT/DB or valkey://HOST:PORT/DB (rediss:// or valkeys:// over tls)",
                ));
            }
        }
        if url.contains('#') {
            // redis-rs reads `#insecure` as "verify no certificate".
            return Err(bad("a fragment (#…) is not taken"));
        }
        let client = redis::Client::open(url).map_err(|e| bad(&e.to_string()))?;
        Ok(SharedState {
            client,
            shown,
            conn: tokio::sync::Mutex::new(None),
            over: Arc::default(),
        })
    }

    /// The URL as logs and errors show it: the password replaced by `***`.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// An [`ErrorKind::Connect`] error naming the state.
    fn unreachable(&self, e: impl std::fmt::Display) -> Error {
        Error::new(ErrorKind::Connect, format!("{}: {e}", self.shown))
    }

    /// The kept connection (and `true`), or a new one kept from now on.
    async fn connection(&self) -> Result<(redis::aio::MultiplexedConnection, bool)> {
        let mut slot = self.conn.lock().await;
        if let Some(conn) = slot.as_ref() {
            return Ok((conn.clone(), true));
        }
        let conn = tokio::time::timeout(TIMEOUT, self.multiplexed())
            .await
            .map_err(|_| self.unreachable("no answer"))?
            .map_err(|e| self.unreachable(e))?;
        *slot = Some(conn.clone());
        Ok((conn, false))
    }

    /// A new connection for commands, its replies capped.
    async fn multiplexed(&self) -> redis::RedisResult<redis::aio::MultiplexedConnection> {
        let info = self.client.get_connection_info();
        let stream = reply::connect(info, &self.shown, self.over.clone()).await?;
        let config = redis::AsyncConnectionConfig::new().set_response_timeout(Some(TIMEOUT));
        let (conn, driver) = redis::aio::MultiplexedConnection::new_with_config(
            info.redis_settings(),
            stream,
            config,
        )
        .await?;
        // Ends when the last clone of `conn` is dropped.
        tokio::spawn(driver);
        Ok(conn)
    }

    /// A new pub/sub connection, its replies capped.
    async fn pubsub(&self) -> redis::RedisResult<redis::aio::PubSub> {
        let info = self.client.get_connection_info();
        // Its own flag: a refusal ends the subscription, which is logged.
        let stream = reply::connect(info, &self.shown, Arc::default()).await?;
        redis::aio::PubSub::new(info.redis_settings(), stream).await
    }

    /// Runs `commands`. A failure drops the kept connection, so the next
    /// command connects afresh; a kept connection found closed (Redis
    /// restarted since) is replaced at once and the commands run again.
    async fn query<T: redis::FromRedisValue>(&self, commands: &redis::Pipeline) -> Result<T> {
        let mut again = true;
        loop {
            let (mut conn, kept) = self.connection().await?;
            match commands.query_async(&mut conn).await {
                Ok(t) => return Ok(t),
                Err(e) => {
                    *self.conn.lock().await = None;
                    if self.over.swap(false, Ordering::Relaxed) {
                        return Err(Error::new(
                            ErrorKind::InvalidMessage,
                            format!(
                                "{}: a reply over the {} MiB cap was refused",
                                self.shown,
                                MAX_REPLY >> 20
                            ),
                        ));
                    }
                    if !(kept && again && (e.is_connection_dropped() || e.is_io_error())) {
                        return Err(self.unreachable(e));
                    }
                    again = false;
                }
            }
        }
    }

    /// The pins, read as a lock file is: an entry whose hashes do not match
    /// its text, or a format version this crate does not read, is an
    /// [`ErrorKind::InvalidConfig`] error naming the state; Redis not
    /// answering is [`ErrorKind::Connect`]. No pins yet is an empty lock.
    pub async fn load(&self) -> Result<Lock> {
        Ok(self.load_written().await?.unwrap_or_default())
    }

    /// [`SharedState::load`], `None` when nothing was ever written (no
    /// format key): a new database, or one that lost its data.
    pub(crate) async fn load_written(&self) -> Result<Option<Lock>> {
        let (format, pins): (Option<String>, BTreeMap<String, String>) =
            self.query(redis::pipe().get(FORMAT).hgetall(PINS)).await?;
        let Some(format) = format else {
            return Ok(None);
        };
        // The lock file's shape, so that its reader checks every entry;
        // each field parsed on its own, so that none can add to another.
        let mut servers = serde_json::Map::new();
        for (key, entry) in pins {
            let entry: serde_json::Value = serde_json::from_str(&entry).map_err(|e| {
                Error::new(
                    ErrorKind::InvalidConfig,
                    format!(
                        "{}: not a valid lock file: servers.{key:?}: {e}",
                        self.shown
                    ),
                )
            })?;
            servers.insert(key, entry);
        }
        let text = json!({"version": json_value(&format), "servers": servers}).to_string();
        Lock::from_str(&text, &self.shown).map(Some)
    }

    /// Writes what `new` changes of `old` (the lock as [`SharedState::load`]
    /// gave it): the pins that differ are set, those `new` lacks removed,
    /// each recorded as an approval and taken off the pending list, and the
    /// new revision published, in one transaction. Pins of other servers,
    /// written by others since `old` was read, are kept. Returns the
    /// revision, or `None` when nothing changed (nothing is written).
    pub async fn write(&self, old: &Lock, new: &Lock) -> Result<Option<u64>> {
        let at = unix_now();
        let mut tx = redis::pipe();
        tx.atomic();
        let mut changes = 0;
        for key in new.keys() {
            let entry = new.get(key);
            if entry == old.get(key) {
                continue;
            }
            let Some(entry) = entry else { continue };
            let text = serde_json::to_string(entry).map_err(|e| self.unreachable(e))?;
            tx.hset(PINS, key, text).ignore();
            tx.hdel(PENDING, key).ignore();
            tx.lpush(APPROVALS, approval(key, "pinned", Some(entry), at))
                .ignore();
            changes += 1;
        }
        for key in old.keys().filter(|k| new.get(k).is_none()) {
            tx.hdel(PINS, key).ignore();
            tx.hdel(PENDING, key).ignore();
            tx.lpush(APPROVALS, approval(key, "removed", None, at))
                .ignore();
            changes += 1;
        }
        if changes == 0 {
            return Ok(None);
        }
        tx.ltrim(APPROVALS, 0, APPROVALS_KEPT - 1).ignore();
        tx.set(FORMAT, LOCK_VERSION).ignore();
        // The new revision, published in the same transaction.
        tx.cmd("EVAL")
            .arg(NEXT_REVISION)
            .arg(2)
            .arg(REVISION)
            .arg(CHANNEL);
        let (revision,): (u64,) = self.query(&tx).await?;
        Ok(Some(revision))
    }

    /// Records that a gateway holds `alias` for review as `pin` says.
    pub async fn set_pending(&self, alias: &str, pin: &Pin) -> Result<()> {
        let value = json!({"pin": pin, "seen": unix_now()}).to_string();
        self.query(redis::pipe().hset(PENDING, alias, value).ignore())
            .await
    }

    /// Takes `alias` off the pending list.
    pub async fn clear_pending(&self, alias: &str) -> Result<()> {
        self.query(redis::pipe().hdel(PENDING, alias).ignore())
            .await
    }

    /// The pending list: each alias a gateway holds for review, with what
    /// it recorded (`{"pin": …, "seen": …}`).
    pub async fn pending(&self) -> Result<BTreeMap<String, serde_json::Value>> {
        let (raw,): (BTreeMap<String, String>,) =
            self.query(redis::pipe().hgetall(PENDING)).await?;
        Ok(raw
            .into_iter()
            .map(|(k, v)| {
                let v = serde_json::from_str(&v).unwrap_or(serde_json::Value::String(v));
                (k, v)
            })
            .collect())
    }

    /// The approvals, newest first (the last 1,000 pins written or removed):
    /// `{"key", "action", "sha256", "at"}` each.
    pub async fn approvals(&self) -> Result<Vec<serde_json::Value>> {
        let (raw,): (Vec<String>,) = self
            .query(redis::pipe().lrange(APPROVALS, 0, APPROVALS_KEPT - 1))
            .await?;
        Ok(raw
            .into_iter()
            .map(|v| serde_json::from_str(&v).unwrap_or(serde_json::Value::String(v)))
            .collect())
    }

    /// Records that a `DELETE` ended session `sid` (a gateway's local
    /// session id), whose id expires at `exp` (UNIX seconds), and publishes
    /// it to the other gateways ([`SharedState::follow_ended`]).
    /// Past 65,536 sessions not yet expired the set is full: none is
    /// dropped early, this one is refused (an [`ErrorKind::Io`] error; the
    /// gateway logs it, and each replica refuses `DELETE`s past the same
    /// count of its own).
    pub async fn end_session(&self, sid: &str, exp: u64) -> Result<()> {
        let (added,): (i64,) = self.query(&end_session_script(sid, exp)).await?;
        if added == 0 {
            return Err(Error::new(
                ErrorKind::Io,
                "the shared record of ended sessions is full until some expire",
            ));
        }
        Ok(())
    }

    /// The sessions ended and not yet expired: (local session id, expiry).
    pub async fn ended_sessions(&self) -> Result<Vec<(String, u64)>> {
        let (ended,): (Vec<(String, u64)>,) = self
            .query(
                redis::pipe()
                    .cmd("ZRANGEBYSCORE")
                    .arg(ENDED)
                    .arg(unix_now())
                    .arg("+inf")
                    .arg("WITHSCORES")
                    .arg("LIMIT")
                    .arg(0)
                    .arg(ENDED_KEPT),
            )
            .await?;
        Ok(ended)
    }

    /// The revision of the last write (0 before any).
    pub async fn revision(&self) -> Result<u64> {
        let (r,): (Option<u64>,) = self.query(redis::pipe().get(REVISION)).await?;
        Ok(r.unwrap_or(0))
    }
}

/// One approval record of the list.
fn approval(key: &str, action: &str, entry: Option<&LockEntry>, at: u64) -> String {
    json!({
        "key": key,
        "action": action,
        "sha256": entry.map(LockEntry::digest),
        "at": at,
        "by": entry.and_then(|e| e.approved.as_ref()).map(|a| a.by.as_str()),
    })
    .to_string()
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A stored format version as a JSON value: a number when it is one, so
/// that the lock reader's version check names it as it is.
fn json_value(s: &str) -> serde_json::Value {
    match s.trim().parse::<u64>() {
        Ok(n) => n.into(),
        Err(_) => s.into(),
    }
}

/// `url` with the password of its user part replaced by `***`.
fn shown_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return crate::sanitize::line(url);
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let shown = match authority.rsplit_once('@') {
        Some((user, host)) => match user.split_once(':') {
            Some((name, _)) => format!("{scheme}://{name}:***@{host}{tail}"),
            None => format!("{scheme}://***@{host}{tail}"),
        },
        None => url.to_string(),
    };
    crate::sanitize::line(&shown)
}

/// The script that records one ended session (see [`END_SESSION`]).
fn end_session_script(sid: &str, exp: u64) -> redis::Pipeline {
    let mut tx = redis::pipe();
    tx.cmd("EVAL")
        .arg(END_SESSION)
        .arg(2)
        .arg(ENDED)
        .arg(ENDS)
        .arg(sid)
        .arg(exp)
        .arg(unix_now())
        .arg(ENDED_KEPT);
    tx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_never_shown() {
        assert_eq!(
            shown_url("redis://127.0.0.1:6379/0"),
            "redis://127.0.0.1:6379/0"
        );
        assert_eq!(shown_url("redis://:pw@h:1/0"), "redis://:***@h:1/0");
        assert_eq!(shown_url("redis://pw@h"), "redis://***@h");
        assert_eq!(shown_url("valkey://u:p@ss@h/3"), "valkey://u:***@h/3");
    }

    #[test]
    fn a_url_of_another_scheme_is_refused() {
        let err = |u: &str| SharedState::open(u).unwrap_err().to_string();
        assert_eq!(
            err("localhost:6379"),
            "invalid configuration: --state localhost:6379: expected redis://HOST:PORT/DB or valkey://HOST:PORT/DB (rediss:// or valkeys:// over tls)"
        );
        assert_eq!(
            err("rediss://h:1/0#insecure"),
            "invalid configuration: --state rediss://h:1/0#insecure: a fragment (#…) is not taken"
        );
        for url in [
            "valkey://127.0.0.1:6379/1",
            "rediss://h:1/0",
            "valkeys://u:p@h:1/0",
        ] {
            assert!(SharedState::open(url).is_ok(), "{url}");
        }
    }
}
