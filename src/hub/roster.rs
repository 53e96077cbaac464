//! Where each server of a live section stands, as a state machine without
//! I/O: no tasks, no timers, no clock. The caller tells it what happened
//! (a connection came, ended on its own, was closed) and what time it is;
//! it answers with the [`StateChange`]s and the next grace deadline to wake
//! up at. The Python and Node packages' `LiveSection`s drive this one
//! machine, so they report the same changes for the same events.

use std::process::ExitStatus;
use std::time::Duration;

use crate::support::string_enum;

string_enum! {
    /// Where a server stands in a [`Hub`](crate::hub::Hub) or a [`Roster`].
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
    #[serde(rename_all = "lowercase")]
    #[non_exhaustive]
    pub enum ServerState {
        /// Held and current: added by the host, or followed by a live connection.
        Connected => "connected",
        /// Disconnected, its block kept until the grace period ends.
        Reconnecting => "reconnecting",
        /// Not held: removed, past its grace period, or never added.
        Gone => "gone",
    }
    /// `connected`, `reconnecting` or `gone` (as in the JSON).
    fn as_str;
}

string_enum! {
    /// Why a server's state changed ([`StateChange::reason`]).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
    #[serde(rename_all = "snake_case")]
    #[non_exhaustive]
    pub enum StateReason {
        /// The host added the server (`Hub::upsert`, a package's `add`).
        Added => "added",
        /// A live connection is followed (`Hub::attach`, `Hub::connect`),
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
        /// The host removed the server (`Hub::remove`).
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
    impl FromStr, Err = String, |s| format!("unknown state reason {s:?}");
}

/// One change of a server's [`ServerState`] (`Hub::subscribe_states`, a
/// [`Roster`]'s answers).
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

impl StateChange {
    /// A change without an exit status.
    pub fn new(alias: &str, state: ServerState, reason: StateReason, revision: u64) -> StateChange {
        StateChange {
            alias: alias.to_string(),
            state,
            reason,
            exit_status: None,
            revision,
        }
    }
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

/// The reason a server that was `before` and is connected now gives.
fn connect_reason(before: ServerState) -> StateReason {
    match before {
        ServerState::Gone => StateReason::Added,
        _ => StateReason::Connected,
    }
}

/// One server the roster holds.
#[derive(Debug, Clone)]
struct Slot<T> {
    alias: String,
    /// The connection that brought it (a late end of an older one is ignored).
    owner: u64,
    server: T,
    /// While reconnecting: when its grace period ends.
    deadline: Option<Duration>,
    /// It announced a change: re-list its tools before the next section.
    stale: bool,
}

/// The servers of a live section, their states and grace deadlines, and
/// the section's revision: the sans-I/O core of the packages' `LiveSection`.
///
/// `T` is the server as the caller holds it (a snapshot); the roster
/// compares it to tell whether the section must be assembled again. Time
/// is a [`Duration`] since any fixed origin the caller picks (a monotonic
/// clock): the roster never reads a clock. Servers keep the order they
/// were first added in.
///
/// ```
/// use std::time::Duration;
/// use mcp_preamble::hub::{Roster, ServerState, StateReason};
///
/// let mut roster = Roster::new(Duration::from_secs(30));
/// let (owner, change) = roster.connected("billing", "v1");
/// assert_eq!(change.unwrap().reason, StateReason::Added);
/// let t = Duration::from_secs(100);
/// roster.lost("billing", Some(owner), t);                 // the server died
/// assert_eq!(roster.state("billing"), ServerState::Reconnecting);
/// assert_eq!(roster.next_deadline(), Some(t + Duration::from_secs(30)));
/// assert!(roster.expire(t + Duration::from_secs(29)).is_empty());
/// let gone = roster.expire(t + Duration::from_secs(30));
/// assert_eq!((gone[0].state, gone[0].reason), (ServerState::Gone, StateReason::GraceExpired));
/// ```
#[derive(Debug, Clone)]
pub struct Roster<T> {
    grace: Duration,
    slots: Vec<Slot<T>>,
    next_owner: u64,
    revision: u64,
    /// The digest of the last section assembled; `None` before the first.
    digest: Option<String>,
    /// The servers changed since the last section was assembled.
    dirty: bool,
}

impl<T: PartialEq + Clone> Roster<T> {
    /// An empty roster whose servers keep their block for `grace` after
    /// their connection ends on its own (zero: they go at once).
    pub fn new(grace: Duration) -> Roster<T> {
        Roster {
            grace,
            slots: Vec::new(),
            next_owner: 0,
            revision: 0,
            digest: None,
            dirty: true,
        }
    }

    /// The grace period.
    pub fn grace(&self) -> Duration {
        self.grace
    }

    fn slot(&self, alias: &str) -> Option<&Slot<T>> {
        self.slots.iter().find(|s| s.alias == alias)
    }

    fn slot_mut(&mut self, alias: &str) -> Option<&mut Slot<T>> {
        self.slots.iter_mut().find(|s| s.alias == alias)
    }

    /// Where `alias` stands.
    pub fn state(&self, alias: &str) -> ServerState {
        match self.slot(alias) {
            None => ServerState::Gone,
            Some(s) if s.deadline.is_some() => ServerState::Reconnecting,
            Some(_) => ServerState::Connected,
        }
    }

    /// The connection that holds `alias` now ([`Roster::connected`]'s owner).
    pub fn owner(&self, alias: &str) -> Option<u64> {
        self.slot(alias).map(|s| s.owner)
    }

    /// The servers held (those reconnecting too), in the order first added.
    pub fn servers(&self) -> impl Iterator<Item = (&str, &T)> {
        self.slots.iter().map(|s| (s.alias.as_str(), &s.server))
    }

    /// The section's revision: up by one each time its bytes changed
    /// ([`Roster::assembled`]); 0 before the first.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    fn change(&self, alias: &str, before: ServerState, reason: StateReason) -> Option<StateChange> {
        let after = self.state(alias);
        (before != after).then(|| StateChange::new(alias, after, reason, self.revision))
    }

    /// A connection brought `server` under `alias`: a new server, one that
    /// replaces the one held, or one back within its grace period (the same
    /// `server` as before leaves the section as it was). Returns the new
    /// connection's owner id and the change (none when it was connected).
    pub fn connected(&mut self, alias: &str, server: T) -> (u64, Option<StateChange>) {
        let before = self.state(alias);
        self.next_owner += 1;
        let owner = self.next_owner;
        match self.slot_mut(alias) {
            Some(slot) => {
                let changed = slot.server != server;
                *slot = Slot {
                    owner,
                    server,
                    deadline: None,
                    stale: false,
                    alias: slot.alias.clone(),
                };
                self.dirty |= changed;
            }
            None => {
                self.slots.push(Slot {
                    alias: alias.to_string(),
                    owner,
                    server,
                    deadline: None,
                    stale: false,
                });
                self.dirty = true;
            }
        }
        (owner, self.change(alias, before, connect_reason(before)))
    }

    /// Whether `owner` (any, when `None`) holds a connected `alias`.
    fn holds(&self, alias: &str, owner: Option<u64>) -> bool {
        self.slot(alias)
            .is_some_and(|s| s.deadline.is_none() && owner.is_none_or(|o| o == s.owner))
    }

    /// The connection of `owner` (any, when `None`) to `alias` ended on its
    /// own at `now`: the server is kept until `now + grace`
    /// (`reconnecting`), or goes at once with a zero grace. A server
    /// already reconnecting keeps its first deadline; a stale owner changes
    /// nothing.
    pub fn lost(&mut self, alias: &str, owner: Option<u64>, now: Duration) -> Option<StateChange> {
        if !self.holds(alias, owner) {
            return None;
        }
        if self.grace.is_zero() {
            return self.remove(alias, None, StateReason::ConnectionLost);
        }
        let deadline = now.saturating_add(self.grace);
        if let Some(slot) = self.slot_mut(alias) {
            slot.deadline = Some(deadline);
            slot.stale = false;
        }
        self.change(alias, ServerState::Connected, StateReason::ConnectionLost)
    }

    /// Takes `alias` out at once, for `reason` (the host closed or removed
    /// it). With an `owner`, only while that connection holds it connected:
    /// the close of a connection that already ended leaves its grace period.
    pub fn remove(
        &mut self,
        alias: &str,
        owner: Option<u64>,
        reason: StateReason,
    ) -> Option<StateChange> {
        if owner.is_some() && !self.holds(alias, owner) {
            return None;
        }
        let at = self.slots.iter().position(|s| s.alias == alias)?;
        let before = self.state(alias);
        self.slots.remove(at);
        self.dirty = true;
        self.change(alias, before, reason)
    }

    /// The servers whose grace period ended by `now`, removed.
    pub fn expire(&mut self, now: Duration) -> Vec<StateChange> {
        let due: Vec<String> = self
            .slots
            .iter()
            .filter(|s| s.deadline.is_some_and(|d| d <= now))
            .map(|s| s.alias.clone())
            .collect();
        due.iter()
            .filter_map(|a| self.remove(a, None, StateReason::GraceExpired))
            .collect()
    }

    /// The earliest grace deadline: when to call [`Roster::expire`] next.
    pub fn next_deadline(&self) -> Option<Duration> {
        self.slots.iter().filter_map(|s| s.deadline).min()
    }

    /// `alias` announced a change of its tools (a connected server only):
    /// [`Roster::take_stale`] will name it. Whether it was marked.
    pub fn mark_changed(&mut self, alias: &str) -> bool {
        match self.slot_mut(alias) {
            Some(slot) if slot.deadline.is_none() => {
                slot.stale = true;
                true
            }
            _ => false,
        }
    }

    /// The servers marked changed, sorted, unmarked.
    pub fn take_stale(&mut self) -> Vec<String> {
        let mut stale: Vec<String> = Vec::new();
        for slot in self.slots.iter_mut().filter(|s| s.stale) {
            slot.stale = false;
            stale.push(slot.alias.clone());
        }
        stale.sort();
        stale
    }

    /// A re-listing of `alias` gave `server`: kept when `owner` (any, when
    /// `None`) still holds it connected. Whether it differs from the one held.
    pub fn updated(&mut self, alias: &str, owner: Option<u64>, server: T) -> bool {
        if !self.holds(alias, owner) {
            return false;
        }
        let Some(slot) = self.slot_mut(alias) else {
            return false;
        };
        if slot.server == server {
            return false;
        }
        slot.server = server;
        self.dirty = true;
        true
    }

    /// The servers to assemble the section from, when it must be assembled
    /// (the first time, or a server changed since); then
    /// [`Roster::assembled`] with the new section's digest.
    pub fn pending_assembly(&mut self) -> Option<Vec<T>> {
        if self.digest.is_some() && !self.dirty {
            return None;
        }
        self.dirty = false;
        Some(self.slots.iter().map(|s| s.server.clone()).collect())
    }

    /// A section was assembled with `digest`: the revision, one more when
    /// its bytes changed (or it is the first).
    pub fn assembled(&mut self, digest: &str) -> u64 {
        if self.digest.as_deref() != Some(digest) {
            self.revision += 1;
            self.digest = Some(digest.to_string());
        }
        self.revision
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRACE: Duration = Duration::from_secs(30);

    fn at(secs: u64) -> Duration {
        Duration::from_secs(secs)
    }

    fn seen(changes: impl IntoIterator<Item = StateChange>) -> Vec<String> {
        changes
            .into_iter()
            .map(|c| format!("{}:{}:{}", c.alias, c.state, c.reason))
            .collect()
    }

    #[test]
    fn connect_kill_reconnect_expire_close() {
        let mut r = Roster::new(GRACE);
        let mut log = Vec::new();
        let (first, c) = r.connected("a", 1);
        log.extend(c);
        log.extend(r.lost("a", Some(first), at(10)));
        assert_eq!(r.next_deadline(), Some(at(40)));
        let (second, c) = r.connected("a", 1);
        log.extend(c);
        assert_eq!(r.next_deadline(), None);
        // The first connection's late end is not the second's.
        assert_eq!(r.lost("a", Some(first), at(11)), None);
        log.extend(r.lost("a", Some(second), at(20)));
        // Closing the connection that ended does not cut its grace short.
        assert_eq!(r.remove("a", Some(second), StateReason::Closed), None);
        log.extend(r.expire(at(49)));
        log.extend(r.expire(at(50)));
        let (third, c) = r.connected("a", 1);
        log.extend(c);
        log.extend(r.remove("a", Some(third), StateReason::Closed));
        assert_eq!(
            seen(log),
            [
                "a:connected:added",
                "a:reconnecting:connection_lost",
                "a:connected:connected",
                "a:reconnecting:connection_lost",
                "a:gone:grace_expired",
                "a:connected:added",
                "a:gone:closed",
            ]
        );
    }

    #[test]
    fn the_revision_moves_only_when_the_bytes_do() {
        let mut r = Roster::new(GRACE);
        assert_eq!(r.pending_assembly(), Some(vec![]));
        assert_eq!(r.assembled("empty"), 1);
        assert_eq!(r.pending_assembly(), None);
        let (owner, _) = r.connected("a", 1);
        assert_eq!(r.pending_assembly(), Some(vec![1]));
        assert_eq!(r.assembled("one"), 2);
        // Back within grace with the same server: nothing to assemble.
        r.lost("a", Some(owner), at(0));
        r.connected("a", 1);
        assert_eq!(r.pending_assembly(), None);
        // A re-listing that differs is assembled; the same bytes keep the revision.
        assert!(r.updated("a", None, 2));
        assert!(!r.updated("a", None, 2));
        assert_eq!(r.pending_assembly(), Some(vec![2]));
        assert_eq!(r.assembled("one"), 2);
    }

    #[test]
    fn order_is_first_added_and_a_replacement_keeps_its_place() {
        let mut r = Roster::new(GRACE);
        r.connected("b", 1);
        r.connected("a", 2);
        r.connected("b", 3);
        let order: Vec<(&str, i32)> = r.servers().map(|(a, s)| (a, *s)).collect();
        assert_eq!(order, [("b", 3), ("a", 2)]);
    }

    #[test]
    fn stale_marks_only_connected_servers_and_a_lost_one_drops_its_mark() {
        let mut r = Roster::new(GRACE);
        r.connected("b", 1);
        r.connected("a", 1);
        assert!(r.mark_changed("b") && r.mark_changed("a") && !r.mark_changed("zz"));
        assert_eq!(r.take_stale(), ["a", "b"]);
        assert!(r.take_stale().is_empty());
        r.mark_changed("a");
        r.lost("a", None, at(0));
        assert!(!r.mark_changed("a"));
        assert!(r.take_stale().is_empty());
        // A reconnecting server takes no re-listing.
        assert!(!r.updated("a", None, 9));
    }

    #[test]
    fn zero_grace_removes_at_once_and_a_second_loss_keeps_the_first_deadline() {
        let mut r = Roster::new(Duration::ZERO);
        r.connected("a", 1);
        assert_eq!(seen(r.lost("a", None, at(5))), ["a:gone:connection_lost"]);
        let mut r = Roster::new(GRACE);
        r.connected("a", 1);
        r.lost("a", None, at(5));
        assert_eq!(r.lost("a", None, at(20)), None);
        assert_eq!(r.next_deadline(), Some(at(35)));
        assert_eq!(r.remove("zz", None, StateReason::Removed), None);
    }
}
