//! De-duplication within a server, kept by content: a repeat assembly (or
//! a server unchanged among changed ones) finds its units, restatements
//! and repeats without segmenting and comparing them again.
//!
//! Keyed by everything [`Prepared::dedup_within`](super::prepare::Prepared::dedup_within)
//! reads: the sanitized instructions, the tool names, the tool
//! descriptions compared against and the settings; a stage that makes it
//! read more must add that to [`DedupKey`].

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use crate::budget::Trim;
use crate::dedup::ToolText;
use crate::limits::LimitHit;
use crate::report::{Removal, Restatement};

/// What de-duplication within a server reads.
pub(super) struct DedupKey {
    /// The sanitized instructions.
    pub text: String,
    /// The server's tool names (loaded and deferred), normalized, sorted.
    pub names: Vec<String>,
    /// Descriptions of loaded tools, and of deferred ones. Compared by
    /// identity: the tool-text cache gives equal texts the same `Arc`, and
    /// the key holds it, so its address is not reused while the entry lives.
    pub loaded: Vec<Arc<ToolText>>,
    pub deferred: Vec<Arc<ToolText>>,
    /// The similarity threshold's bits.
    pub similarity: u64,
    /// Most units compared.
    pub max_units: usize,
}

impl PartialEq for DedupKey {
    fn eq(&self, other: &DedupKey) -> bool {
        let same = |a: &[Arc<ToolText>], b: &[Arc<ToolText>]| {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| Arc::ptr_eq(x, y))
        };
        self.text == other.text
            && self.names == other.names
            && same(&self.loaded, &other.loaded)
            && same(&self.deferred, &other.deferred)
            && self.similarity == other.similarity
            && self.max_units == other.max_units
    }
}

impl Hash for DedupKey {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.text.hash(h);
        self.names.hash(h);
        for tools in [&self.loaded, &self.deferred] {
            tools.len().hash(h);
            for t in tools {
                std::ptr::hash(Arc::as_ptr(t), h);
            }
        }
        self.similarity.hash(h);
        self.max_units.hash(h);
    }
}

impl DedupKey {
    /// The tool names as the unit priorities look them up.
    pub fn name_set(&self) -> HashSet<String> {
        self.names.iter().cloned().collect()
    }
}

/// What de-duplication within a server found.
pub(super) struct DedupOutcome {
    /// The instructions as units, repeats and restatements dropped.
    pub trim: Trim,
    /// The instructions left.
    pub kept_text: Option<String>,
    /// What it dropped, in unit order.
    pub removed: Vec<Removal>,
    /// Units kept because they restate a deferred tool.
    pub restatements_kept: Vec<Restatement>,
    /// The unit limit, when the instructions had more units.
    pub hit: Option<LimitHit>,
}

/// Most bytes of instructions the memo keeps before it starts over.
const MEMO_BYTES: usize = 16 << 20;

/// Outcomes by key, shared by clones of an assembler (keys hold every
/// setting they depend on).
#[derive(Clone, Default)]
pub(crate) struct DedupMemo(Arc<Mutex<Entries>>);

#[derive(Default)]
struct Entries {
    by_hash: HashMap<u64, Vec<(DedupKey, Arc<DedupOutcome>)>>,
    bytes: usize,
}

impl DedupMemo {
    /// The outcome for `key`, from the memo or from `compute` (run
    /// without the lock held, so assemblies on other threads go on).
    pub fn get_or_compute(
        &self,
        key: DedupKey,
        compute: impl FnOnce(&DedupKey) -> DedupOutcome,
    ) -> Arc<DedupOutcome> {
        let hash = {
            let mut h = std::hash::DefaultHasher::new();
            key.hash(&mut h);
            h.finish()
        };
        let lock = || self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(bucket) = lock().by_hash.get(&hash)
            && let Some((_, found)) = bucket.iter().find(|(k, _)| *k == key)
        {
            return found.clone();
        }
        let outcome = Arc::new(compute(&key));
        // The key's text, the trim's copy and the text left.
        let bytes = 3 * key.text.len();
        let mut entries = lock();
        if entries.bytes + bytes > MEMO_BYTES {
            entries.by_hash.clear();
            entries.bytes = 0;
        }
        if bytes <= MEMO_BYTES {
            entries.bytes += bytes;
            let entry = (key, outcome.clone());
            entries.by_hash.entry(hash).or_default().push(entry);
        }
        outcome
    }
}
