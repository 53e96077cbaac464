//! A shared, live view of the section for agent loops (feature `hub`).
//!
//! The [`Hub`] holds the current snapshot of every server by alias and the
//! section assembled from them. Reading it before each model request costs
//! an `Arc` clone; a change re-assembles only the server that changed (the
//! others come from the per-server memo), bumps the revision, and publishes
//! the new section to subscribers.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use crate::assemble::{Assembler, Memo};
use crate::error::{Error, ErrorKind, Result};
use crate::model::{ServerSnapshot, Tool};
use crate::report::Assembly;

/// The section at one revision.
#[derive(Debug, Clone)]
pub struct Section {
    revision: u64,
    assembly: Assembly,
    blocks: Arc<BTreeMap<String, String>>,
}

impl Section {
    /// The revision this section belongs to (0 before any server was added).
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// The section text, ready for a system prompt.
    pub fn text(&self) -> &str {
        self.assembly.text()
    }

    /// The full report.
    pub fn assembly(&self) -> &Assembly {
        &self.assembly
    }

    /// Each included server's block, by alias.
    pub fn blocks(&self) -> &BTreeMap<String, String> {
        &self.blocks
    }
}

/// What changed between two revisions, for hosts that keep the system
/// prompt byte-stable and announce changes in a message instead.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Delta {
    /// The revision the delta starts from.
    pub from: u64,
    /// The current revision.
    pub to: u64,
    /// `true` when `from` is too old (or unknown): `added` then holds every
    /// current block, and the host should start over from the section.
    pub full: bool,
    /// Servers with a block now and none at `from`: (alias, block).
    pub added: Vec<(String, String)>,
    /// Servers with a block at `from` and none now.
    pub removed: Vec<String>,
    /// Servers whose block changed: (alias, new block).
    pub changed: Vec<(String, String)>,
}

impl Delta {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        !self.full && self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }

    /// Applies this delta to the blocks of the section at [`Delta::from`].
    pub fn apply(&self, blocks: &mut BTreeMap<String, String>) {
        if self.full {
            blocks.clear();
        }
        for alias in &self.removed {
            blocks.remove(alias);
        }
        for (alias, block) in self.added.iter().chain(&self.changed) {
            blocks.insert(alias.clone(), block.clone());
        }
    }
}

/// How many past revisions [`Hub::changes_since`] can answer from.
const HISTORY: usize = 256;

struct State {
    /// By alias: (version key, owning live connection if any, snapshot).
    servers: BTreeMap<String, (u64, Option<u64>, ServerSnapshot)>,
    next_key: u64,
    assembler: Assembler,
    memo: Memo,
    history: VecDeque<(u64, Arc<BTreeMap<String, String>>)>,
}

struct Inner {
    state: Mutex<State>,
    tx: watch::Sender<Arc<Section>>,
}

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
/// # Ok::<(), mcp_preamble::Error>(())
/// ```
#[derive(Clone)]
pub struct Hub {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("revision", &self.revision())
            .finish_non_exhaustive()
    }
}

impl Hub {
    /// A hub with no servers, assembling with `assembler`.
    pub fn new(assembler: Assembler) -> Hub {
        let empty = Section {
            revision: 0,
            assembly: Assembly::empty(&assembler),
            blocks: Arc::new(BTreeMap::new()),
        };
        let (tx, _) = watch::channel(Arc::new(empty));
        let mut history = VecDeque::new();
        history.push_back((0, Arc::new(BTreeMap::new())));
        Hub {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    servers: BTreeMap::new(),
                    next_key: 0,
                    assembler,
                    memo: Memo::default(),
                    history,
                }),
                tx,
            }),
        }
    }

    /// The current section. No work is done here: it was assembled when
    /// the servers last changed.
    pub fn section(&self) -> Arc<Section> {
        self.inner.tx.borrow().clone()
    }

    /// The current revision; it only grows.
    pub fn revision(&self) -> u64 {
        self.inner.tx.borrow().revision
    }

    /// A receiver that sees every new section (the current one first).
    pub fn subscribe(&self) -> watch::Receiver<Arc<Section>> {
        self.inner.tx.subscribe()
    }

    /// The aliases of the servers held, sorted.
    pub fn aliases(&self) -> Vec<String> {
        self.lock().servers.keys().cloned().collect()
    }

    /// The snapshot held for `alias`.
    pub fn snapshot(&self, alias: &str) -> Option<ServerSnapshot> {
        self.lock().servers.get(alias).map(|(_, _, s)| s.clone())
    }

    /// Adds a server or replaces it; its alias is set to `alias`. Returns
    /// the new revision (unchanged when the snapshot is the same).
    pub fn upsert(&self, alias: impl Into<String>, snapshot: ServerSnapshot) -> Result<u64> {
        self.upsert_as(None, alias.into(), snapshot)
    }

    /// [`Hub::upsert`] for a live connection: it owns the entry until
    /// someone else replaces it.
    pub(crate) fn upsert_as(
        &self,
        owner: Option<u64>,
        alias: String,
        snapshot: ServerSnapshot,
    ) -> Result<u64> {
        self.change(&alias.clone(), |state| {
            let mut snapshot = snapshot;
            snapshot.alias = Some(alias.clone());
            if state
                .servers
                .get(&alias)
                .is_some_and(|(_, o, s)| *o == owner && *s == snapshot)
            {
                return Ok(false);
            }
            state.next_key += 1;
            let key = state.next_key;
            state.servers.insert(alias, (key, owner, snapshot));
            Ok(true)
        })
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
        self.change(alias, |state| {
            let next = state.next_key + 1;
            let Some((key, o, snapshot)) = state.servers.get_mut(alias) else {
                return Err(unknown(alias));
            };
            if owner.is_some() && *o != owner {
                return Ok(false);
            }
            if snapshot.tools == tools {
                return Ok(false);
            }
            snapshot.tools = tools;
            snapshot.tools_error = None;
            *key = next;
            state.next_key = next;
            Ok(true)
        })
    }

    /// Replaces one server's instructions and cache hints (after a new
    /// handshake), only while `owner` still owns the entry.
    pub(crate) fn update_handshake_as(
        &self,
        owner: u64,
        alias: &str,
        instructions: crate::model::Instructions,
        cache: Option<crate::model::CacheHints>,
    ) -> Result<u64> {
        self.change(alias, |state| {
            let next = state.next_key + 1;
            let Some((key, o, snapshot)) = state.servers.get_mut(alias) else {
                return Err(unknown(alias));
            };
            if *o != Some(owner)
                || (snapshot.instructions == instructions && snapshot.cache == cache)
            {
                return Ok(false);
            }
            snapshot.instructions = instructions;
            snapshot.cache = cache;
            *key = next;
            state.next_key = next;
            Ok(true)
        })
    }

    /// Removes a server (on close: its instructions go with it).
    pub fn remove(&self, alias: &str) -> Result<u64> {
        self.remove_as(None, alias)
    }

    /// [`Hub::remove`] that acts only while `owner` (when given) owns the entry.
    pub(crate) fn remove_as(&self, owner: Option<u64>, alias: &str) -> Result<u64> {
        self.change(alias, |state| match state.servers.get(alias) {
            None => Err(unknown(alias)),
            Some((_, o, _)) if owner.is_some() && *o != owner => Ok(false),
            Some(_) => {
                state.servers.remove(alias);
                Ok(true)
            }
        })
    }

    /// Assembles with `assembler` from now on (say, the host turned tool
    /// search on: [`Assembler::defer`]), as an ordinary change: a new
    /// revision, and [`Hub::changes_since`] lists the blocks that differ.
    /// The per-server memo starts over, as it holds work done with the old
    /// settings. On a template error nothing changes.
    pub fn reconfigure(&self, assembler: Assembler) -> Result<u64> {
        let mut state = self.lock();
        let old = std::mem::replace(&mut state.assembler, assembler);
        let memo = std::mem::take(&mut state.memo);
        let published = self.publish(&mut state);
        if published.is_err() {
            state.assembler = old;
            state.memo = memo;
        }
        published
    }

    /// A new owner id for a live connection.
    pub(crate) fn new_owner(&self) -> u64 {
        let mut state = self.lock();
        state.next_key += 1;
        state.next_key
    }

    /// What changed since `revision`: blocks added, removed and changed.
    pub fn changes_since(&self, revision: u64) -> Delta {
        let state = self.lock();
        let now = self.section();
        let current = now.blocks.clone();
        let old = state
            .history
            .iter()
            .find(|(r, _)| *r == revision)
            .map(|(_, b)| b.clone());
        drop(state);
        let Some(old) = old else {
            return Delta {
                from: revision,
                to: now.revision,
                full: true,
                added: current
                    .iter()
                    .map(|(a, b)| (a.clone(), b.clone()))
                    .collect(),
                removed: Vec::new(),
                changed: Vec::new(),
            };
        };
        let mut delta = Delta {
            from: revision,
            to: now.revision,
            full: false,
            added: Vec::new(),
            removed: Vec::new(),
            changed: Vec::new(),
        };
        for (alias, block) in current.iter() {
            match old.get(alias) {
                None => delta.added.push((alias.clone(), block.clone())),
                Some(before) if before != block => {
                    delta.changed.push((alias.clone(), block.clone()))
                }
                Some(_) => {}
            }
        }
        delta.removed = old
            .keys()
            .filter(|a| !current.contains_key(*a))
            .cloned()
            .collect();
        delta
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Applies `edit` to the entry of `alias` and, when it changed
    /// something, re-assembles and publishes. If assembling fails, the entry
    /// is put back as it was. Writers are serialized; readers never wait.
    fn change(&self, alias: &str, edit: impl FnOnce(&mut State) -> Result<bool>) -> Result<u64> {
        let mut state = self.lock();
        let before = state.servers.get(alias).cloned();
        if !edit(&mut state)? {
            return Ok(self.revision());
        }
        let published = self.publish(&mut state);
        if published.is_err() {
            match before {
                Some(entry) => state.servers.insert(alias.to_string(), entry),
                None => state.servers.remove(alias),
            };
        }
        published
    }

    /// Re-assembles and publishes a new revision.
    fn publish(&self, state: &mut State) -> Result<u64> {
        let aliases: Vec<&String> = state.servers.keys().collect();
        let keys: Vec<u64> = state.servers.values().map(|(k, _, _)| *k).collect();
        let servers: Vec<&ServerSnapshot> = state.servers.values().map(|(_, _, s)| s).collect();
        let assembly = state
            .assembler
            .assemble_with(&servers, Some((&keys, &mut state.memo)))?;
        // Blocks by the hub's own alias (the shown name may be sanitized or suffixed).
        let blocks: BTreeMap<String, String> = assembly
            .servers()
            .iter()
            .filter(|s| s.included)
            .map(|s| (aliases[s.index].clone(), s.text.clone()))
            .collect();
        let blocks = Arc::new(blocks);
        let revision = self.revision() + 1;
        state.history.push_back((revision, blocks.clone()));
        while state.history.len() > HISTORY {
            state.history.pop_front();
        }
        self.inner.tx.send_replace(Arc::new(Section {
            revision,
            assembly,
            blocks,
        }));
        Ok(revision)
    }
}

fn unknown(alias: &str) -> Error {
    Error::new(
        ErrorKind::InvalidConfig,
        format!("no server with alias {alias:?}"),
    )
}
