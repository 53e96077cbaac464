//! `LiveSection`'s core: the crate's sans-I/O `Roster` (states, grace
//! deadlines, revisions). session.py holds only the SDK wiring and the
//! timer; every decision is made here, as in the Node package.

use std::time::Duration;

use mcp_preamble::hub::{Roster, StateChange, StateReason};
use pyo3::prelude::*;

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

/// A time in seconds (the event loop's clock); a negative or NaN one is 0.
fn at(secs: f64) -> Duration {
    Duration::try_from_secs_f64(secs.max(0.0)).unwrap_or(Duration::MAX)
}

/// One change: (alias, state, reason, revision).
type Change = (String, String, String, u64);

fn changes(changes: impl IntoIterator<Item = StateChange>) -> Vec<Change> {
    let change = |c: StateChange| {
        (
            c.alias,
            c.state.to_string(),
            c.reason.to_string(),
            c.revision,
        )
    };
    changes.into_iter().map(change).collect()
}

/// The roster of a `LiveSection` (`Roster` of the crate).
#[pyclass(module = "mcp_preamble._native")]
pub struct NativeRoster {
    inner: Roster<Held>,
}

#[pymethods]
impl NativeRoster {
    /// A roster whose servers are kept `grace` seconds after their connection ends on its own.
    #[new]
    fn new(grace: f64) -> NativeRoster {
        NativeRoster {
            inner: Roster::new(at(grace)),
        }
    }

    /// A connection brought `server` under `alias`: its owner id and the changes.
    fn connected(&mut self, alias: &str, server: PyRef<'_, NativeServer>) -> (u64, Vec<Change>) {
        let (owner, change) = self.inner.connected(alias, Held((*server).clone()));
        (owner, changes(change))
    }

    /// The connection `owner` (any, when None) ended on its own at `now`.
    #[pyo3(signature = (alias, owner, now))]
    fn lost(&mut self, alias: &str, owner: Option<u64>, now: f64) -> Vec<Change> {
        changes(self.inner.lost(alias, owner, at(now)))
    }

    /// Takes `alias` out at once for `reason` (`closed`, `removed`, `connection_lost`).
    #[pyo3(signature = (alias, owner, reason))]
    fn remove(&mut self, alias: &str, owner: Option<u64>, reason: &str) -> PyResult<Vec<Change>> {
        let reason: StateReason = reason.parse().map_err(|e: String| {
            raise(
                "invalid_config",
                format!("invalid configuration: {e}"),
                e,
                None,
                None,
                None,
            )
        })?;
        Ok(changes(self.inner.remove(alias, owner, reason)))
    }

    /// The servers whose grace period ended by `now`, removed.
    fn expire(&mut self, now: f64) -> Vec<Change> {
        changes(self.inner.expire(at(now)))
    }

    /// When to call `expire` next (seconds on the caller's clock).
    fn next_deadline(&self) -> Option<f64> {
        self.inner.next_deadline().map(|d| d.as_secs_f64())
    }

    /// `"connected"`, `"reconnecting"` or `"gone"`.
    fn state(&self, alias: &str) -> String {
        self.inner.state(alias).to_string()
    }

    /// The owner id of the connection that holds `alias`.
    fn owner(&self, alias: &str) -> Option<u64> {
        self.inner.owner(alias)
    }

    /// `alias` announced a change of its tools; whether it was marked.
    fn mark_changed(&mut self, alias: &str) -> bool {
        self.inner.mark_changed(alias)
    }

    /// The servers marked changed, sorted, unmarked.
    fn take_stale(&mut self) -> Vec<String> {
        self.inner.take_stale()
    }

    /// A re-listing gave `server`; whether it changed the one held.
    #[pyo3(signature = (alias, owner, server))]
    fn updated(
        &mut self,
        alias: &str,
        owner: Option<u64>,
        server: PyRef<'_, NativeServer>,
    ) -> bool {
        self.inner.updated(alias, owner, Held((*server).clone()))
    }

    /// The servers to assemble, when the section must be assembled.
    fn pending_assembly(&mut self) -> Option<Vec<NativeServer>> {
        self.inner
            .pending_assembly()
            .map(|v| v.into_iter().map(|h| h.0).collect())
    }

    /// A section was assembled with `digest`: the revision.
    fn assembled(&mut self, digest: &str) -> u64 {
        self.inner.assembled(digest)
    }

    #[getter]
    fn revision(&self) -> u64 {
        self.inner.revision()
    }

    /// The servers held by alias, in the order first added.
    fn servers(&self) -> Vec<(String, NativeServer)> {
        self.inner
            .servers()
            .map(|(a, s)| (a.to_string(), s.0.clone()))
            .collect()
    }
}
