//! `LiveSection`'s core: the crate's sans-I/O `Roster` (states, grace
//! deadlines, revisions). session.js holds only the SDK wiring and the
//! timer; every decision is made here, as in the Python package.

use std::time::Duration;

use mcp_preamble::hub::{Roster, StateChange, StateReason};
use napi::bindgen_prelude::ClassInstance;
use napi_derive::napi;

use crate::errors::raise;
use crate::server::NativeServer;

/// A server as the roster holds it: compared by its snapshot.
#[derive(Clone)]
struct Held(NativeServer);

impl PartialEq for Held {
    fn eq(&self, other: &Held) -> bool {
        self.0.snapshot == other.0.snapshot
    }
}

/// A time in milliseconds (`performance.now()`); a negative or NaN one is 0.
fn at(ms: f64) -> Duration {
    Duration::try_from_secs_f64(ms.max(0.0) / 1000.0).unwrap_or(Duration::MAX)
}

fn owner(id: Option<f64>) -> Option<u64> {
    id.map(|o| o as u64)
}

/// One state change (`LiveSection`'s `'state'` event).
#[napi(object)]
pub struct NativeStateChange {
    pub alias: String,
    pub state: String,
    pub reason: String,
    pub revision: f64,
}

fn changes(changes: impl IntoIterator<Item = StateChange>) -> Vec<NativeStateChange> {
    let change = |c: StateChange| NativeStateChange {
        state: c.state.to_string(),
        reason: c.reason.to_string(),
        revision: c.revision as f64,
        alias: c.alias,
    };
    changes.into_iter().map(change).collect()
}

/// What `connected` answers: the connection's owner id and the changes.
#[napi(object)]
pub struct NativeConnected {
    pub owner: f64,
    pub changes: Vec<NativeStateChange>,
}

/// The roster of a `LiveSection` (`Roster` of the crate).
#[napi]
pub struct NativeRoster {
    inner: Roster<Held>,
}

#[napi]
impl NativeRoster {
    /// A roster whose servers are kept `grace_ms` after their connection ends on its own.
    #[napi(constructor)]
    pub fn new(grace_ms: f64) -> NativeRoster {
        NativeRoster {
            inner: Roster::new(at(grace_ms)),
        }
    }

    /// A connection brought `server` under `alias`.
    #[napi]
    pub fn connected(
        &mut self,
        alias: String,
        server: ClassInstance<'_, NativeServer>,
    ) -> NativeConnected {
        let (id, change) = self.inner.connected(&alias, Held((*server).clone()));
        NativeConnected {
            owner: id as f64,
            changes: changes(change),
        }
    }

    /// The connection `owner` (any, when absent) ended on its own at `now_ms`.
    #[napi]
    pub fn lost(
        &mut self,
        alias: String,
        owner_id: Option<f64>,
        now_ms: f64,
    ) -> Vec<NativeStateChange> {
        changes(self.inner.lost(&alias, owner(owner_id), at(now_ms)))
    }

    /// Takes `alias` out at once for `reason` (`closed`, `removed`, `connection_lost`).
    #[napi(catch_unwind)]
    pub fn remove(
        &mut self,
        alias: String,
        owner_id: Option<f64>,
        reason: String,
    ) -> napi::Result<Vec<NativeStateChange>> {
        let reason: StateReason = reason.parse().map_err(|e: String| {
            raise(
                "invalid_config",
                format!("invalid configuration: {e}"),
                &e,
                serde_json::json!({}),
            )
        })?;
        Ok(changes(self.inner.remove(&alias, owner(owner_id), reason)))
    }

    /// The servers whose grace period ended by `now_ms`, removed.
    #[napi]
    pub fn expire(&mut self, now_ms: f64) -> Vec<NativeStateChange> {
        changes(self.inner.expire(at(now_ms)))
    }

    /// When to call `expire` next (milliseconds on the caller's clock).
    #[napi]
    pub fn next_deadline(&self) -> Option<f64> {
        self.inner.next_deadline().map(|d| d.as_secs_f64() * 1000.0)
    }

    /// `"connected"`, `"reconnecting"` or `"gone"`.
    #[napi]
    pub fn state(&self, alias: String) -> String {
        self.inner.state(&alias).to_string()
    }

    /// The owner id of the connection that holds `alias`.
    #[napi]
    pub fn owner(&self, alias: String) -> Option<f64> {
        self.inner.owner(&alias).map(|o| o as f64)
    }

    /// `alias` announced a change of its tools; whether it was marked.
    #[napi]
    pub fn mark_changed(&mut self, alias: String) -> bool {
        self.inner.mark_changed(&alias)
    }

    /// The servers marked changed, sorted, unmarked.
    #[napi]
    pub fn take_stale(&mut self) -> Vec<String> {
        self.inner.take_stale()
    }

    /// A re-listing gave `server`; whether it changed the one held.
    #[napi]
    pub fn updated(
        &mut self,
        alias: String,
        owner_id: Option<f64>,
        server: ClassInstance<'_, NativeServer>,
    ) -> bool {
        self.inner
            .updated(&alias, owner(owner_id), Held((*server).clone()))
    }

    /// The servers to assemble, when the section must be assembled.
    #[napi]
    pub fn pending_assembly(&mut self) -> Option<Vec<NativeServer>> {
        self.inner
            .pending_assembly()
            .map(|v| v.into_iter().map(|h| h.0).collect())
    }

    /// A section was assembled with `digest`: the revision.
    #[napi]
    pub fn assembled(&mut self, digest: String) -> f64 {
        self.inner.assembled(&digest) as f64
    }

    #[napi(getter)]
    pub fn revision(&self) -> f64 {
        self.inner.revision() as f64
    }

    /// The aliases held, in the order first added.
    #[napi]
    pub fn aliases(&self) -> Vec<String> {
        self.inner.servers().map(|(a, _)| a.to_string()).collect()
    }

    /// The servers held, in the order of `aliases`.
    #[napi]
    pub fn servers(&self) -> Vec<NativeServer> {
        self.inner.servers().map(|(_, s)| s.0.clone()).collect()
    }
}
