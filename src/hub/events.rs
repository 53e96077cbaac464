//! State events: every change of a server's [`ServerState`], with why.

use std::process::ExitStatus;

use tokio::sync::broadcast;

use super::Hub;
use super::roster::{ServerState, StateChange, StateReason};

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
