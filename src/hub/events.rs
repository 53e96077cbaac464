//! State events: every change of a server's [`ServerState`], with why.

use std::process::ExitStatus;

use tokio::sync::broadcast;

use super::Hub;
use super::grace::ServerState;
use crate::support::string_enum;

string_enum! {
    /// Why a server's state changed ([`StateChange::reason`]).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
    #[serde(rename_all = "snake_case")]
    #[non_exhaustive]
    pub enum StateReason {
        /// The host added the server ([`Hub::upsert`]).
        Added => "added",
        /// A live connection is followed ([`Hub::attach`], `Hub::connect`),
        /// or a server kept while reconnecting came back.
        Connected => "connected",
        /// The hub's supervisor started the server again after it ended.
        Restarted => "restarted",
        /// The connection ended without the host closing it (the server
        /// exited or crashed, the network dropped): the block is kept for
        /// the grace period.
        ConnectionLost => "connection_lost",
        /// The host closed, dropped or detached the connection.
        Closed => "closed",
        /// The host removed the server ([`Hub::remove`]).
        Removed => "removed",
        /// The grace period ended before the server came back.
        GraceExpired => "grace_expired",
        /// The server ended again after its restart budget was spent
        /// (`Restart::max_restarts` within `Restart::window`): the hub
        /// gave up on it and removed it.
        GaveUp => "gave_up",
    }
    /// The reason in snake case, as in the JSON.
    fn as_str;
}

/// One change of a server's [`ServerState`] in a [`Hub`]
/// ([`Hub::subscribe_states`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StateChange {
    /// The server's alias.
    pub alias: String,
    /// Its state from now on.
    pub state: ServerState,
    /// Why it changed.
    pub reason: StateReason,
    /// How the server's process ended, when the hub started it (stdio
    /// servers of `Hub::connect`) and the change is its end.
    pub exit_status: Option<ExitStatus>,
    /// The revision after the change (a server kept while reconnecting
    /// leaves the section as it was).
    pub revision: u64,
}

impl std::fmt::Display for StateChange {
    /// `billing: reconnecting (connection_lost, exit status: 1)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} ({}", self.alias, self.state, self.reason)?;
        if let Some(status) = &self.exit_status {
            write!(f, ", {status}")?;
        }
        f.write_str(")")
    }
}

/// What a caller of `Hub::change` tells about the change, for the event.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Why {
    pub reason: StateReason,
    pub exit_status: Option<ExitStatus>,
}

impl Why {
    pub(crate) fn new(reason: StateReason) -> Why {
        Why {
            reason,
            exit_status: None,
        }
    }

    #[cfg(feature = "rmcp")]
    pub(crate) fn exit(mut self, status: Option<ExitStatus>) -> Why {
        self.exit_status = status;
        self
    }
}

impl Hub {
    /// A receiver of every server's state changes from now on, in order:
    /// `connected` (added, followed, back within its grace period,
    /// restarted), `reconnecting` (the connection ended on its own; with
    /// the exit status when the hub started the server) and `gone`
    /// (closed or removed by the host, its grace period ended, or its
    /// restart budget was spent). A
    /// change that leaves a server's state as it was (new tools, say) is
    /// not an event: [`Hub::subscribe`] tells of those.
    ///
    /// A receiver that falls more than 1,024 changes behind misses the
    /// oldest and is told so (`RecvError::Lagged`); [`Hub::state`] always
    /// has the current state.
    ///
    /// ```
    /// use mcp_preamble::{Assembler, ServerSnapshot};
    /// use mcp_preamble::hub::{Hub, ServerState, StateReason};
    ///
    /// let hub = Hub::new(Assembler::new());
    /// let mut states = hub.subscribe_states();
    /// hub.upsert("billing", ServerSnapshot::new("invoice-server"))?;
    /// hub.remove("billing")?;
    /// let added = states.try_recv().unwrap();
    /// assert_eq!((added.state, added.reason), (ServerState::Connected, StateReason::Added));
    /// let gone = states.try_recv().unwrap();
    /// assert_eq!((gone.state, gone.reason), (ServerState::Gone, StateReason::Removed));
    /// # Ok::<(), mcp_preamble::Error>(())
    /// ```
    pub fn subscribe_states(&self) -> broadcast::Receiver<StateChange> {
        self.inner.states.subscribe()
    }

    /// Tells subscribers that `alias` went from `before` to `after`.
    pub(super) fn emit(
        &self,
        alias: &str,
        before: ServerState,
        after: ServerState,
        why: Why,
        revision: u64,
    ) {
        if before == after {
            return;
        }
        // No receiver is not an error: nobody is listening.
        let _ = self.inner.states.send(StateChange {
            alias: alias.to_string(),
            state: after,
            reason: why.reason,
            exit_status: why.exit_status,
            revision,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_serialize_as_their_names() {
        let names: Vec<&str> = StateReason::ALL.iter().map(|r| r.as_str()).collect();
        assert_eq!(
            names,
            [
                "added",
                "connected",
                "restarted",
                "connection_lost",
                "closed",
                "removed",
                "grace_expired",
                "gave_up"
            ]
        );
        for r in StateReason::ALL {
            assert_eq!(serde_json::to_value(r).unwrap(), r.as_str());
            assert_eq!(r.to_string(), r.as_str());
        }
    }
}
