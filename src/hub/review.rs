//! Review in a live hub: the lock it compares servers with, the servers
//! pending review, approving them, and new settings that keep both.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::sync::watch;

use super::{Hub, unknown};
use crate::assemble::Assembler;
use crate::error::{Error, ErrorKind, Result};
use crate::pin::{Lock, Pin};

impl Hub {
    /// Assembles with `assembler` from now on (say, the host turned tool
    /// search on: [`Assembler::defer`], or the policy file was edited:
    /// `hub.reconfigure(Assembler::from_policy(&file)?)`), as an ordinary
    /// change: a new revision when the section's bytes change, and
    /// [`Hub::changes_since`] lists the blocks that differ.
    ///
    /// Review survives the reload: when `assembler` has no
    /// [`Assembler::lock`] of its own, the hub's lock, with every approval
    /// made with [`Hub::approve`], is kept, so a held change stays held and
    /// [`Hub::pending`] stays as it was. An `assembler` with its own lock
    /// replaces the hub's. When neither has a lock and `assembler` sets an
    /// `on_change` of `hold`, `drop` or `fail`, this fails with
    /// [`ErrorKind::InvalidConfig`] and nothing changes: those settings
    /// mean nothing without a lock, and the change would go live unreviewed.
    ///
    /// The per-server memo starts over, as it holds work done with the old
    /// settings. On any error nothing changes.
    pub fn reconfigure(&self, assembler: Assembler) -> Result<u64> {
        let mut state = self.guard();
        let mut assembler = assembler;
        if assembler.lock_ref().is_none() {
            match state.assembler.lock_ref() {
                Some(lock) => assembler = assembler.lock(lock.clone()),
                None => {
                    if let Some(on_change) = assembler.reviewing_on_change() {
                        return Err(Error::new(
                            ErrorKind::InvalidConfig,
                            format!(
                                "on_change = \"{on_change}\" needs a lock, and neither the hub nor the new assembler has one (give it one with Assembler::lock)"
                            ),
                        ));
                    }
                }
            }
        }
        let old = std::mem::replace(&mut state.assembler, assembler);
        let memo = std::mem::take(&mut state.memo);
        let published = self.publish(&mut state);
        if published.is_err() {
            state.assembler = old;
            state.memo = memo;
        }
        published
    }

    /// The servers that differ from their pin in the assembler's
    /// [`Lock`] and await review ([`Pin::pending`]), by alias: what a host
    /// shows its user as "server X changed its instructions: approve?".
    /// Empty without a lock.
    pub fn pending(&self) -> Arc<BTreeMap<String, Pin>> {
        self.inner.pins.borrow().clone()
    }

    /// A receiver that wakes whenever [`Hub::pending`] changes: a server
    /// changed or was approved. It also wakes when the section did not
    /// change (a held or dropped change leaves the text as it was).
    pub fn subscribe_pending(&self) -> watch::Receiver<Arc<BTreeMap<String, Pin>>> {
        self.inner.pins.subscribe()
    }

    /// Pins `alias`'s current snapshot in the hub's lock, under its
    /// [`ServerKey`](crate::settings::ServerKey) (the alias as one safe line: every
    /// server the hub holds has an alias, so none loses its key to
    /// another's): the server is
    /// `same` from now on and its new text is rendered. In memory only; save
    /// [`Hub::lock`] with [`Lock::to_json`] to keep it. Returns the revision.
    ///
    /// A host that showed its user a change should use
    /// [`Hub::approve_seen`], so that a server that changes again between
    /// the question and the answer is not approved unseen. Fails when the
    /// hub's assembler has no lock ([`Assembler::lock`]): approving one
    /// server would turn every other one `new`.
    pub fn approve(&self, alias: &str) -> Result<u64> {
        self.approve_if(alias, None)
    }

    /// [`Hub::approve`], only when the server's pending pin is still `seen`
    /// (the one from [`Hub::pending`] that the user was shown) and the
    /// server's whole snapshot is the one `seen` describes (its
    /// [`Pin::sha256`]: every tool and all the text, not only what the diff
    /// shows); otherwise an [`ErrorKind::Drift`] error, and nothing is
    /// pinned.
    pub fn approve_seen(&self, alias: &str, seen: &Pin) -> Result<u64> {
        self.approve_if(alias, Some(seen))
    }

    fn approve_if(&self, alias: &str, seen: Option<&Pin>) -> Result<u64> {
        let mut state = self.guard();
        if state.assembler.lock_ref().is_none() {
            return Err(Error::new(
                ErrorKind::InvalidConfig,
                "the hub has no lock to approve into (give the assembler one with Assembler::lock)",
            ));
        }
        let Some(entry) = state.servers.get(alias) else {
            return Err(unknown(alias));
        };
        if let Some(seen) = seen
            && self.pending().get(alias) != Some(seen)
        {
            return Err(Error::new(
                ErrorKind::Drift,
                format!("{alias:?} changed again since it was shown for approval"),
            ));
        }
        let snapshot = entry.snapshot.clone();
        let limits = *state.assembler.limits_ref();
        // Pinned as the model is sent it: without the tools the operator hides.
        let filter = state.assembler.tool_filter_of(Some(alias)).cloned();
        if let Some(seen) = seen
            && seen.sha256 != Some(crate::pin::digest_of(&snapshot, filter.as_ref(), &limits))
        {
            return Err(Error::new(
                ErrorKind::Drift,
                format!("{alias:?} is not the snapshot that was shown for approval"),
            ));
        }
        let before = state.assembler.clone();
        match &filter {
            Some(f) => state.assembler.lock_mut().pin_sent(&snapshot, f, &limits),
            None => state.assembler.lock_mut().pin_within(&snapshot, &limits),
        }
        let published = self.publish(&mut state);
        if published.is_err() {
            state.assembler = before;
        }
        published
    }

    /// Names tools with `scheme` from now on (a gateway's, so that the
    /// section, its prose and the tools it serves name them alike), never
    /// as one of `reserved` (the gateway's own tools), and keeps what each
    /// server exposes in the section's assembly, unless the hub does all
    /// that already: reassembled as with [`Hub::reconfigure`] (under the
    /// same lock, so no reload in between is undone). From then on every
    /// name given is kept (see `tool_names::Kept`).
    #[cfg(feature = "serve")]
    pub(crate) fn name_tools(
        &self,
        scheme: &crate::tool_names::ToolNames,
        reserved: &[&str],
    ) -> Result<u64> {
        let mut state = self.guard();
        let reserved: std::collections::BTreeSet<String> =
            reserved.iter().map(|r| r.to_string()).collect();
        if state.served.reserved != reserved {
            Arc::make_mut(&mut state.served).reserved = reserved;
        } else if state.assembler.tool_names_ref() == scheme && state.assembler.exposes() {
            return Ok(self.revision());
        }
        let named = state
            .assembler
            .clone()
            .tool_names(scheme.clone())
            .exposing();
        let old = std::mem::replace(&mut state.assembler, named);
        let memo = std::mem::take(&mut state.memo);
        let published = self.publish(&mut state);
        if published.is_err() {
            state.assembler = old;
            state.memo = memo;
        }
        published
    }

    /// The tool-name scheme the hub's assembler names tools with.
    #[cfg(feature = "serve")]
    pub(crate) fn tool_names(&self) -> crate::tool_names::ToolNames {
        self.guard().assembler.tool_names_ref().clone()
    }

    /// The name a host shows a tool exposed as `name` under
    /// ([`Assembler::shown_name`]).
    #[cfg(feature = "serve")]
    pub(crate) fn shown_name(&self, name: &str) -> String {
        self.guard().assembler.shown_name(name)
    }

    /// The lock the hub compares servers with, with every approval in it.
    pub fn lock(&self) -> Option<Lock> {
        self.guard().assembler.lock_ref().cloned()
    }
}
