//! Servers that disconnect keep their block for a grace period, so a
//! server that drops and comes back does not change the section's bytes.

use std::sync::{Arc, Weak};
use std::time::Duration;

use super::roster::ServerState;
use super::{Hub, Inner, StateReason, Why, unknown};
use crate::error::Result;

/// How long a disconnected server keeps its block by default: 30 seconds,
/// long enough for a restart or a network blip, short enough that the model
/// is not told about tools it cannot call for long.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(30);

impl Hub {
    /// How long a server keeps its block after [`Hub::disconnected`]
    /// (default [`DEFAULT_GRACE`]; zero removes it at once). Applies to
    /// disconnections from now on.
    pub fn grace(self, grace: Duration) -> Hub {
        self.guard().grace = grace;
        self
    }

    /// Where the server of `alias` stands.
    pub fn state(&self, alias: &str) -> ServerState {
        self.guard().state_of(alias)
    }

    #[cfg(feature = "rmcp")]
    /// The grace period in effect.
    pub(crate) fn grace_period(&self) -> Duration {
        self.guard().grace
    }

    /// The server of `alias` lost its connection: its block stays for the
    /// grace period. An [`Hub::upsert`] within it with the same snapshot
    /// leaves the section, its revision and digest as they were; one with
    /// a new snapshot takes effect like any upsert. When the period ends
    /// first, the server goes, with one new revision (if its block was in
    /// the section). A server already reconnecting keeps its first deadline.
    ///
    /// The deadline is a task on the current tokio runtime; outside of one,
    /// or with a zero grace period, the server is removed at once. Returns
    /// the revision.
    pub fn disconnected(&self, alias: &str) -> Result<u64> {
        self.disconnected_as(None, alias, Why::new(StateReason::ConnectionLost))
    }

    /// [`Hub::disconnected`] that acts only while `owner` (when given) owns the entry.
    pub(crate) fn disconnected_as(&self, owner: Option<u64>, alias: &str, why: Why) -> Result<u64> {
        let runtime = tokio::runtime::Handle::try_current().ok();
        let hub = Arc::downgrade(&self.inner);
        self.change(alias, why, |state| {
            let (grace, id) = (state.grace, state.next_key + 1);
            let Some(entry) = state.servers.get_mut(alias) else {
                return Err(unknown(alias));
            };
            if (owner.is_some() && entry.owner != owner) || entry.grace.is_some() {
                return Ok(false);
            }
            match runtime.filter(|_| !grace.is_zero()) {
                Some(runtime) => {
                    entry.grace = Some(id);
                    state.next_key = id;
                    runtime.spawn(expire_after(hub, alias.to_string(), id, grace));
                    Ok(false)
                }
                None => {
                    state.servers.remove(alias);
                    Ok(true)
                }
            }
        })
    }

    /// Removes `alias` if grace `id` is still running for it.
    fn expire(&self, alias: &str, id: u64) -> Result<u64> {
        self.change(alias, Why::new(StateReason::GraceExpired), |state| {
            if state.servers.get(alias).is_none_or(|e| e.grace != Some(id)) {
                return Ok(false);
            }
            state.servers.remove(alias);
            Ok(true)
        })
    }
}

/// The grace timer. It holds the hub weakly, so a dropped hub is not kept
/// alive; a reconnect does not cancel it, it just no longer matches `id`.
async fn expire_after(hub: Weak<Inner>, alias: String, id: u64, grace: Duration) {
    tokio::time::sleep(grace).await;
    if let Some(inner) = hub.upgrade() {
        let _ = Hub { inner }.expire(&alias, id);
    }
}
