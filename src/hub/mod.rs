//! A shared, live view of the section for agent loops (feature `hub`).
//!
//! The [`Hub`] holds the current snapshot of every server by alias and the
//! section assembled from them. Reading it before each model request costs
//! an `Arc` clone; a change re-assembles only the server that changed (the
//! others come from the per-server memo) and, when the section's bytes
//! changed, bumps the revision and publishes the new section to
//! subscribers.
//!
//! ## Revisions and prompt caches
//!
//! Provider prompt caches match an exact prefix of the request: Anthropic's
//! in the order tools → system → messages, OpenAI's from 1,024 tokens on.
//! So the revision changes if and only if [`Section::text`] changes: a
//! server that is excluded, an identical snapshot sent again, or a server
//! that reconnects within its grace period leaves the revision, the
//! [`Section::digest`] and the bytes alone, and wakes no subscriber. A host
//! can place the section in one of two ways:
//!
//! - **In the system prompt, re-sent every request.** Nothing to do but read
//!   [`Hub::section`]. Each new revision breaks the cached prefix from the
//!   section on: the system prompt after it and the whole conversation are
//!   read (and, with Anthropic, written to the cache) again at the uncached
//!   price, once. Simplest, and the model sees one current text.
//! - **A fixed system prompt, and a change message in the conversation.**
//!   Keep the system prompt as it was at the start; when the revision moves,
//!   append [`Hub::changes_since`]`(sent)` rendered by [`Delta::render`] as a
//!   message, and take the delta's `to` as the new `sent`. The prefix never
//!   changes, so only the new message is uncached; the price is context:
//!   the old blocks stay in the system prompt, superseded by the message (as
//!   Claude Code announces changes), and messages add up until the host
//!   starts afresh.
//!
//! ## Flapping servers
//!
//! [`Hub::disconnected`] keeps a server's block for a grace period
//! ([`DEFAULT_GRACE`], set with [`Hub::grace`]); a reconnect within it that
//! brings the same snapshot changes nothing in the section. After it, the
//! block goes with one new revision. [`Hub::state`] tells which of
//! [`ServerState`] a server is in, and [`Hub::subscribe_states`] tells of
//! every change with its [`StateReason`]. [`Hub::remove`], and a live
//! connection the host closes, drops or detaches, remove a server at once;
//! a live connection that ends on its own gets the grace period.

//!
//! ## Without tokio
//!
//! The [`Roster`] is the hub's bookkeeping of states, grace deadlines and
//! revisions as a state machine without I/O (time is passed in). It is
//! there without feature `hub`: the Python and Node packages' `LiveSection`
//! drive it, so every binding reports the same [`StateChange`]s.

#[cfg(feature = "hub")]
mod events;
#[cfg(feature = "hub")]
mod grace;
#[cfg(feature = "hub")]
mod review;
mod roster;
#[cfg(feature = "hub")]
mod section;

#[cfg(feature = "hub")]
use std::collections::{BTreeMap, VecDeque};
#[cfg(feature = "hub")]
use std::sync::{Arc, Mutex};
#[cfg(feature = "hub")]
use std::time::Duration;

#[cfg(feature = "hub")]
use tokio::sync::watch;

#[cfg(feature = "hub")]
use crate::assemble::{Assembler, Memo};
#[cfg(feature = "hub")]
use crate::error::{Error, ErrorKind, Result};
#[cfg(feature = "hub")]
use crate::model::{ServerSnapshot, Tool};
#[cfg(feature = "hub")]
use crate::pin::Pin;

#[cfg(feature = "hub")]
pub(crate) use events::Why;
#[cfg(feature = "hub")]
#[cfg_attr(docsrs, doc(cfg(feature = "hub")))]
pub use grace::DEFAULT_GRACE;
pub use roster::{Roster, ServerState, StateChange, StateReason};
#[cfg(feature = "hub")]
#[cfg_attr(docsrs, doc(cfg(feature = "hub")))]
pub use section::{Delta, Section};

#[cfg(feature = "hub")]
/// How many past revisions [`Hub::changes_since`] can answer from.
const HISTORY: usize = 256;

#[cfg(feature = "hub")]
/// How many names of tools no server lists any more a gateway keeps
/// reserved (so a tool that comes back gets its name, and no other takes
/// it meanwhile); past that, the oldest are forgotten.
#[cfg(feature = "serve")]
pub(crate) const RETIRED_NAMES: usize = 4096;

#[cfg(feature = "hub")]
/// How many state changes a slow [`Hub::subscribe_states`] receiver may
/// fall behind before it misses the oldest (it then gets `Lagged`).
const STATE_EVENTS: usize = 1024;

#[cfg(feature = "hub")]
/// One server as the hub holds it.
#[derive(Clone)]
struct Entry {
    /// Version key for the memo: new whenever the snapshot changes.
    key: u64,
    /// The live connection that owns the entry, if any.
    owner: Option<u64>,
    snapshot: ServerSnapshot,
    /// While disconnected and kept: the id of the grace timer that may remove it.
    grace: Option<u64>,
}

#[cfg(feature = "hub")]
/// The blocks of one past revision, for deltas.
struct Past {
    revision: u64,
    blocks: Arc<BTreeMap<String, String>>,
    names: Arc<BTreeMap<String, String>>,
}

#[cfg(feature = "hub")]
struct State {
    servers: BTreeMap<String, Entry>,
    /// The names a gateway has served, by (alias, tool), that tools keep
    /// (see `served_names`).
    #[cfg(feature = "serve")]
    served: Arc<crate::tool_names::Kept>,
    next_key: u64,
    assembler: Assembler,
    memo: Memo,
    history: VecDeque<Past>,
    grace: Duration,
}

#[cfg(feature = "hub")]
impl State {
    /// Where `alias` stands.
    fn state_of(&self, alias: &str) -> ServerState {
        match self.servers.get(alias) {
            None => ServerState::Gone,
            Some(e) if e.grace.is_some() => ServerState::Reconnecting,
            Some(_) => ServerState::Connected,
        }
    }
}

#[cfg(feature = "hub")]
struct Inner {
    state: Mutex<State>,
    tx: watch::Sender<Arc<Section>>,
    /// Servers pending review against the lock, by alias.
    pins: watch::Sender<Arc<BTreeMap<String, Pin>>>,
    /// State changes, for [`Hub::subscribe_states`].
    states: tokio::sync::broadcast::Sender<StateChange>,
}

#[cfg(feature = "hub")]
#[cfg_attr(docsrs, doc(cfg(feature = "hub")))]
/// The live section of an agent loop: cheap to clone, safe to share.
///
/// ```
/// use mcp_preamble::{Assembler, ServerSnapshot, Tool};
/// use mcp_preamble::hub::Hub;
///
/// let hub = Hub::new(Assembler::new().budget(256));
/// hub.upsert("billing", ServerSnapshot::new("invoice-server")
///     .with_instructions("Always call list_periods before get_invoice.")
///     .with_tool(Tool::new("list_periods", "List billing periods.")))?;
/// let section = hub.section();                  // before every model request
/// assert!(section.text().contains("### billing"));
/// let r = section.revision();
/// hub.update_tools("billing", vec![Tool::new("get_invoice", "Get an invoice.")])?;
/// let delta = hub.changes_since(r);             // for byte-stable system prompts
/// assert_eq!(delta.changed[0].0, "billing");
/// assert_ne!(hub.section().digest(), section.digest());
/// # Ok::<(), mcp_preamble::Error>(())
/// ```
#[derive(Clone)]
pub struct Hub {
    inner: Arc<Inner>,
}

#[cfg(feature = "hub")]
impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("revision", &self.revision())
            .finish_non_exhaustive()
    }
}

#[cfg(feature = "hub")]
impl Hub {
    /// A hub with no servers, assembling with `assembler`; servers that
    /// disconnect are kept for [`DEFAULT_GRACE`] (see [`Hub::grace`]).
    pub fn new(assembler: Assembler) -> Hub {
        let blocks = Arc::new(BTreeMap::new());
        let names = Arc::new(BTreeMap::new());
        let assembly = assembler.empty_assembly();
        let empty = Section {
            revision: 0,
            digest: section::digest(assembly.text()),
            assembly,
            blocks: blocks.clone(),
            names: names.clone(),
        };
        let (tx, _) = watch::channel(Arc::new(empty));
        let (pins, _) = watch::channel(Arc::default());
        let mut history = VecDeque::new();
        history.push_back(Past {
            revision: 0,
            blocks,
            names,
        });
        Hub {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    servers: BTreeMap::new(),
                    #[cfg(feature = "serve")]
                    served: Arc::default(),
                    next_key: 0,
                    assembler,
                    memo: Memo::default(),
                    history,
                    grace: DEFAULT_GRACE,
                }),
                tx,
                pins,
                states: tokio::sync::broadcast::Sender::new(STATE_EVENTS),
            }),
        }
    }

    /// The current section. No work is done here: it was assembled when
    /// the servers last changed.
    pub fn section(&self) -> Arc<Section> {
        self.inner.tx.borrow().clone()
    }

    /// The current revision. It only grows, and it changes exactly when the
    /// section's text changes.
    pub fn revision(&self) -> u64 {
        self.inner.tx.borrow().revision
    }

    /// A receiver that sees every new revision (the current one first). A
    /// change that leaves the text as it was wakes no one.
    pub fn subscribe(&self) -> watch::Receiver<Arc<Section>> {
        self.inner.tx.subscribe()
    }

    /// The limits the hub's assembler reads servers within.
    #[cfg(feature = "serve")]
    pub(crate) fn limits(&self) -> crate::limits::Limits {
        *self.guard().assembler.limits_ref()
    }

    /// The aliases of the servers held (also those kept while
    /// reconnecting), sorted.
    pub fn aliases(&self) -> Vec<String> {
        self.guard().servers.keys().cloned().collect()
    }

    /// The snapshot held for `alias`.
    pub fn snapshot(&self, alias: &str) -> Option<ServerSnapshot> {
        self.guard().servers.get(alias).map(|e| e.snapshot.clone())
    }

    /// Adds a server or replaces it; its alias is set to `alias`. A server
    /// kept while reconnecting is connected again. Returns the revision,
    /// unchanged when the section's text is.
    pub fn upsert(&self, alias: impl Into<String>, snapshot: ServerSnapshot) -> Result<u64> {
        self.upsert_as(None, alias.into(), snapshot, Why::new(StateReason::Added))
    }

    /// [`Hub::upsert`] for a live connection: it owns the entry until
    /// someone else replaces it.
    pub(crate) fn upsert_as(
        &self,
        owner: Option<u64>,
        alias: String,
        snapshot: ServerSnapshot,
        why: Why,
    ) -> Result<u64> {
        self.change(&alias.clone(), why, |state| {
            let mut snapshot = snapshot;
            snapshot.alias = Some(alias.clone());
            if let Some(entry) = state.servers.get_mut(&alias)
                && entry.snapshot == snapshot
            {
                // A reconnect with nothing new: the new connection takes
                // over, and the section stays as it is.
                entry.owner = owner;
                entry.grace = None;
                return Ok(false);
            }
            state.next_key += 1;
            let entry = Entry {
                key: state.next_key,
                owner,
                snapshot,
                grace: None,
            };
            state.servers.insert(alias, entry);
            Ok(true)
        })
    }

    /// [`Hub::upsert`] for many servers, with one new revision for all
    /// of them (start-up with many servers wakes subscribers once). On an
    /// error nothing changes.
    pub fn upsert_all(
        &self,
        servers: impl IntoIterator<Item = (String, ServerSnapshot)>,
    ) -> Result<u64> {
        let servers = servers.into_iter().map(|(a, s)| (None, a, s)).collect();
        self.upsert_many(servers, Why::new(StateReason::Added))
    }

    /// A new owner for each of `servers` (for [`Hub::attach_all`]), put in
    /// the hub at once.
    #[cfg(feature = "rmcp")]
    pub(crate) fn upsert_owned(
        &self,
        servers: Vec<(String, ServerSnapshot)>,
        why: Why,
    ) -> Result<Vec<u64>> {
        let owned: Vec<_> = servers
            .into_iter()
            .map(|(a, s)| (Some(self.new_owner()), a, s))
            .collect();
        let owners = owned.iter().map(|(o, _, _)| o.unwrap_or(0)).collect();
        self.upsert_many(owned, why)?;
        Ok(owners)
    }

    fn upsert_many(
        &self,
        servers: Vec<(Option<u64>, String, ServerSnapshot)>,
        why: Why,
    ) -> Result<u64> {
        let mut state = self.guard();
        let before = state.servers.clone();
        let was: Vec<ServerState> = servers.iter().map(|(_, a, _)| state.state_of(a)).collect();
        for (owner, alias, mut snapshot) in servers.iter().cloned() {
            snapshot.alias = Some(alias.clone());
            match state.servers.get_mut(&alias) {
                Some(entry) if entry.snapshot == snapshot => {
                    entry.owner = owner;
                    entry.grace = None;
                }
                _ => {
                    state.next_key += 1;
                    let key = state.next_key;
                    state.servers.insert(
                        alias,
                        Entry {
                            key,
                            owner,
                            snapshot,
                            grace: None,
                        },
                    );
                }
            }
        }
        let published = self.publish(&mut state);
        match published {
            Ok(revision) => {
                for ((_, alias, _), was) in servers.iter().zip(was) {
                    let now = state.state_of(alias);
                    self.emit(alias, was, now, why, revision);
                }
            }
            Err(_) => state.servers = before,
        }
        published
    }

    /// Replaces one server's tools (after `notifications/tools/list_changed`).
    pub fn update_tools(&self, alias: &str, tools: Vec<Tool>) -> Result<u64> {
        self.update_tools_as(None, alias, tools)
    }

    /// [`Hub::update_tools`] that acts only while `owner` (when given) still
    /// owns the entry, so a stale connection cannot touch a newer one.
    pub(crate) fn update_tools_as(
        &self,
        owner: Option<u64>,
        alias: &str,
        tools: Vec<Tool>,
    ) -> Result<u64> {
        self.change(alias, Why::new(StateReason::Connected), |state| {
            let next = state.next_key + 1;
            let Some(entry) = state.servers.get_mut(alias) else {
                return Err(unknown(alias));
            };
            if owner.is_some() && entry.owner != owner {
                return Ok(false);
            }
            if entry.snapshot.tools == tools {
                return Ok(false);
            }
            entry.snapshot.tools = tools;
            entry.snapshot.tools_error = None;
            entry.key = next;
            state.next_key = next;
            Ok(true)
        })
    }

    #[cfg(feature = "rmcp")]
    /// Replaces one server's instructions and cache hints (after a new
    /// handshake), only while `owner` still owns the entry.
    pub(crate) fn update_handshake_as(
        &self,
        owner: u64,
        alias: &str,
        instructions: crate::model::Instructions,
        cache: Option<crate::model::CacheHints>,
    ) -> Result<u64> {
        self.change(alias, Why::new(StateReason::Connected), |state| {
            let next = state.next_key + 1;
            let Some(entry) = state.servers.get_mut(alias) else {
                return Err(unknown(alias));
            };
            let snapshot = &mut entry.snapshot;
            if entry.owner != Some(owner)
                || (snapshot.instructions == instructions && snapshot.cache == cache)
            {
                return Ok(false);
            }
            snapshot.instructions = instructions;
            snapshot.cache = cache;
            entry.key = next;
            state.next_key = next;
            Ok(true)
        })
    }

    /// Removes a server now, with no grace period (see [`Hub::disconnected`]).
    pub fn remove(&self, alias: &str) -> Result<u64> {
        self.remove_as(None, alias, Why::new(StateReason::Removed))
    }

    /// [`Hub::remove`] that acts only while `owner` (when given) owns the entry.
    pub(crate) fn remove_as(&self, owner: Option<u64>, alias: &str, why: Why) -> Result<u64> {
        self.change(alias, why, |state| match state.servers.get(alias) {
            None => Err(unknown(alias)),
            Some(e) if owner.is_some() && e.owner != owner => Ok(false),
            Some(_) => {
                state.servers.remove(alias);
                Ok(true)
            }
        })
    }

    #[cfg(feature = "rmcp")]
    /// A new owner id for a live connection.
    pub(crate) fn new_owner(&self) -> u64 {
        let mut state = self.guard();
        state.next_key += 1;
        state.next_key
    }

    /// The template the hub's assembler renders the section with: render
    /// a [`Delta`] with it ([`Delta::render`]), so that the change message
    /// matches the section (an XML section gets an XML message).
    ///
    /// ```
    /// use mcp_preamble::{Assembler, ServerSnapshot, Template};
    /// use mcp_preamble::hub::Hub;
    /// let hub = Hub::new(Assembler::new().template(Template::xml()));
    /// let sent = hub.revision();
    /// hub.upsert("billing", ServerSnapshot::new("invoice").with_instructions("Call list_periods first."))?;
    /// let message = hub.changes_since(sent).render(&hub.template())?.unwrap();
    /// assert!(message.starts_with('<'), "{message}");
    /// # Ok::<(), mcp_preamble::Error>(())
    /// ```
    pub fn template(&self) -> crate::template::Template {
        self.guard().assembler.template_ref().clone()
    }

    /// What changed since `revision`: blocks added, removed and changed.
    pub fn changes_since(&self, revision: u64) -> Delta {
        let state = self.guard();
        let now = self.section();
        let old = state
            .history
            .iter()
            .find(|p| p.revision == revision)
            .map(|p| (p.blocks.clone(), p.names.clone()));
        drop(state);
        let mut delta = Delta {
            from: revision,
            to: now.revision,
            full: old.is_none(),
            added: Vec::new(),
            removed: Vec::new(),
            changed: Vec::new(),
            names: BTreeMap::new(),
        };
        let empty = Arc::default();
        let (old, old_names) = old.unwrap_or_else(|| (empty, Arc::default()));
        for (alias, block) in now.blocks.iter() {
            match old.get(alias) {
                None => delta.added.push((alias.clone(), block.clone())),
                Some(before) if before != block => {
                    delta.changed.push((alias.clone(), block.clone()))
                }
                Some(_) => continue,
            }
            delta.names.insert(alias.clone(), now.names[alias].clone());
        }
        for alias in old.keys().filter(|a| !now.blocks.contains_key(*a)) {
            delta.removed.push(alias.clone());
            delta.names.insert(alias.clone(), old_names[alias].clone());
        }
        delta
    }

    fn guard(&self) -> std::sync::MutexGuard<'_, State> {
        crate::support::lock(&self.inner.state)
    }

    /// Applies `edit` to the entry of `alias` and, when it changed
    /// something, re-assembles; a new revision is published only when the
    /// text changed. If assembling fails, the entry is put back as it was.
    /// Writers are serialized; readers never wait. A change of the
    /// server's [`ServerState`] is told to [`Hub::subscribe_states`] with `why`.
    fn change(
        &self,
        alias: &str,
        why: Why,
        edit: impl FnOnce(&mut State) -> Result<bool>,
    ) -> Result<u64> {
        let mut state = self.guard();
        let before = state.servers.get(alias).cloned();
        let was = state.state_of(alias);
        if !edit(&mut state)? {
            // A grace period started or ended: the state may have changed, the text not.
            let revision = self.revision();
            self.emit(alias, was, state.state_of(alias), why, revision);
            return Ok(revision);
        }
        let published = self.publish(&mut state);
        match &published {
            Ok(revision) => self.emit(alias, was, state.state_of(alias), why, *revision),
            Err(_) => {
                match before {
                    Some(entry) => state.servers.insert(alias.to_string(), entry),
                    None => state.servers.remove(alias),
                };
            }
        }
        published
    }

    /// Re-assembles and publishes a new revision.
    fn publish(&self, state: &mut State) -> Result<u64> {
        let assembly = assemble(state)?;
        let aliases: Vec<&String> = state.servers.keys().collect();
        // Blocks by the hub's own alias (the shown name may be sanitized or suffixed).
        let mut blocks = BTreeMap::new();
        let mut names = BTreeMap::new();
        for s in assembly.servers().iter().filter(|s| s.included) {
            let alias = aliases[s.index];
            blocks.insert(alias.clone(), s.text.clone());
            names.insert(alias.clone(), s.name.clone());
        }
        let (blocks, names) = (Arc::new(blocks), Arc::new(names));
        let pending: BTreeMap<String, Pin> = assembly
            .servers()
            .iter()
            .filter(|s| s.pin.pending())
            .map(|s| (aliases[s.index].clone(), s.pin.clone()))
            .collect();
        self.inner.pins.send_if_modified(|p| {
            let changed = **p != pending;
            if changed {
                *p = Arc::new(pending);
            }
            changed
        });
        let current = self.section();
        if assembly.text() == current.text() {
            // Same bytes, same revision, no wake-up: only the report is
            // refreshed (an excluded server, a version string…).
            if let Some(last) = state.history.back_mut() {
                last.blocks = blocks.clone();
                last.names = names.clone();
            }
            let section = Arc::new(Section {
                revision: current.revision,
                digest: current.digest.clone(),
                assembly,
                blocks,
                names,
            });
            self.inner.tx.send_if_modified(|s| {
                *s = section;
                false
            });
            return Ok(current.revision);
        }
        let revision = current.revision + 1;
        state.history.push_back(Past {
            revision,
            blocks: blocks.clone(),
            names: names.clone(),
        });
        while state.history.len() > HISTORY {
            state.history.pop_front();
        }
        tracing::debug!(
            revision,
            tokens = assembly.total_tokens(),
            servers = assembly.servers().len(),
            "published"
        );
        self.inner.tx.send_replace(Arc::new(Section {
            revision,
            digest: section::digest(assembly.text()),
            assembly,
            blocks,
            names,
        }));
        Ok(revision)
    }
}

#[cfg(feature = "hub")]
/// Assembles the servers (the memo reused). A gateway's hub names tools
/// keeping every name it has served, and keeps the names given.
fn assemble(state: &mut State) -> Result<crate::report::Assembly> {
    let keys: Vec<u64> = state.servers.values().map(|e| e.key).collect();
    #[cfg(feature = "serve")]
    if state.assembler.exposes() {
        state.assembler.keep_names(Some(state.served.clone()));
    }
    let servers: Vec<&ServerSnapshot> = state.servers.values().map(|e| &e.snapshot).collect();
    let assembly = state
        .assembler
        .assemble_with(&servers, Some((&keys, &mut state.memo)))?;
    #[cfg(feature = "serve")]
    if let Some(names) = assembly.names() {
        let kept = crate::tool_names::Kept {
            given: state.served.given.kept_after(names, RETIRED_NAMES),
            reserved: state.served.reserved.clone(),
        };
        state.served = Arc::new(kept);
    }
    Ok(assembly)
}

#[cfg(feature = "hub")]
fn unknown(alias: &str) -> Error {
    Error::new(
        ErrorKind::InvalidConfig,
        format!("no server with alias {alias:?}"),
    )
}
