//! Per-server work kept between assemblies, keyed by the caller's version of
//! each server (the hub's), so an unchanged server costs a lookup.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;

use super::prepare::Prepared;
use crate::budget::Rendered;
use crate::pin::{Effect, Pin};

/// A server once prepared (sanitize, policy, de-duplication within it).
#[derive(Clone, PartialEq, Eq, Hash)]
pub(super) struct PreparedKey {
    /// The caller's version of the server.
    pub version: u64,
    /// The name it is shown by (it depends on the other servers).
    pub name: String,
    /// What decides its tools' visibility: a block de-duplicated against
    /// loaded tools is never reused once they are deferred.
    pub visibility: u64,
    /// Its pin and `on_change`: a block held or dropped is never reused
    /// once the server is pinned again.
    pub pin: u64,
    /// The names the model sees for its tools (they depend on the scheme
    /// and on the other servers).
    pub names: u64,
}

/// A server compared with the lock.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(super) struct PinKey {
    pub version: u64,
    pub pin: u64,
}

/// A server after fitting: also what else decides its block.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(super) struct FittedKey {
    pub prepared: PreparedKey,
    /// The earlier server whose instructions these repeat.
    pub twin_of: Option<String>,
    /// The limit it was fitted to.
    pub limit: Option<usize>,
}

/// A fitted server and its block (`None` when omitted).
#[derive(Clone)]
pub(super) struct FittedEntry {
    pub prepared: Arc<Prepared>,
    pub block: Option<Rendered>,
}

/// Entries of one stage, each stamped with the last assembly that used it.
#[derive(Clone)]
pub(super) struct Stage<K, V> {
    entries: HashMap<K, (u64, V)>,
}

impl<K, V> Default for Stage<K, V> {
    fn default() -> Self {
        Stage {
            entries: HashMap::new(),
        }
    }
}

impl<K: Eq + Hash, V: Clone> Stage<K, V> {
    /// The entry for `key`, marked as used by `generation`.
    pub fn get(&mut self, key: &K, generation: u64) -> Option<V> {
        let hit = self.entries.get_mut(key)?;
        hit.0 = generation;
        Some(hit.1.clone())
    }

    pub fn insert(&mut self, key: K, generation: u64, value: V) {
        self.entries.insert(key, (generation, value));
    }

    fn evict(&mut self, generation: u64) {
        self.entries.retain(|_, v| v.0 == generation);
    }
}

/// Per-server work kept between assemblies (see [`Assembler::assemble_with`](super::builder::Assembler::assemble_with)).
#[derive(Clone, Default)]
pub(crate) struct Memo {
    pub(super) generation: u64,
    pub(super) prepared: Stage<PreparedKey, Arc<Prepared>>,
    pub(super) fitted: Stage<FittedKey, FittedEntry>,
    pub(super) pins: Stage<PinKey, Arc<(Pin, Effect)>>,
}

impl Memo {
    /// Starts an assembly.
    pub(super) fn next_generation(&mut self) -> u64 {
        self.generation += 1;
        self.generation
    }

    /// Drops what the last assembly did not use.
    pub(super) fn evict(&mut self) {
        self.prepared.evict(self.generation);
        self.fitted.evict(self.generation);
        self.pins.evict(self.generation);
    }
}
