//! Work an assembler keeps by content, so that a repeat assembly (or a
//! server unchanged among changed ones) does not do it again: blocks
//! rendered from a view, and de-duplication within a server.
//!
//! Each memo is keyed by everything its work reads, and a hit is checked
//! against the whole stored key, so a hash collision can only cost the
//! work. [`DedupKey`] holds what
//! [`Prepared::dedup_within`](super::prepare::Prepared::dedup_within)
//! reads: the sanitized instructions, the tool names, the tool
//! descriptions compared against and the settings; a stage that makes it
//! read more must add that to the key. Shared by clones of an assembler,
//! whatever their settings: the keys hold the settings that matter.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use crate::budget::Trim;
use crate::dedup::ToolText;
use crate::limits::LimitHit;
use crate::report::{Removal, Restatement};
use crate::support::{self, hash, hash::MemoState};
use crate::template::{ServerView, Template};

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

/// Most bytes of text each memo keeps before it starts over.
const MEMO_BYTES: usize = 16 << 20;

/// Entries by the hash of their key, and about how many bytes they hold.
struct Entries<K, V> {
    by_hash: HashMap<u64, Vec<(K, V)>, MemoState>,
    bytes: usize,
}

impl<K, V> Default for Entries<K, V> {
    fn default() -> Self {
        Entries {
            by_hash: HashMap::with_hasher(hash::memo_state()),
            bytes: 0,
        }
    }
}

impl<K, V: Clone> Entries<K, V> {
    fn get(&self, hash: u64, matches: impl Fn(&K) -> bool) -> Option<V> {
        let bucket = self.by_hash.get(&hash)?;
        bucket
            .iter()
            .find(|(k, _)| matches(k))
            .map(|(_, v)| v.clone())
    }

    fn insert(&mut self, hash: u64, key: K, value: V, bytes: usize) {
        if self.bytes + bytes > MEMO_BYTES {
            self.by_hash.clear();
            self.bytes = 0;
        }
        if bytes <= MEMO_BYTES {
            self.bytes += bytes;
            self.by_hash.entry(hash).or_default().push((key, value));
        }
    }
}

/// De-duplication outcomes by [`DedupKey`].
#[derive(Clone, Default)]
pub(crate) struct DedupMemo(Arc<Mutex<Entries<DedupKey, Arc<DedupOutcome>>>>);

impl DedupMemo {
    /// The outcome for `key`, from the memo or from `compute` (run
    /// without the lock held, so assemblies on other threads go on).
    pub fn get_or_compute(
        &self,
        key: DedupKey,
        compute: impl FnOnce(&DedupKey) -> DedupOutcome,
    ) -> Arc<DedupOutcome> {
        let hash = hash::memo_hash(&key);
        let lock = || support::lock(&self.0);
        if let Some(found) = lock().get(hash, |k| *k == key) {
            return found;
        }
        let outcome = Arc::new(compute(&key));
        // The key's text, the trim's copy and the text left.
        let bytes = 3 * key.text.len();
        lock().insert(hash, key, outcome.clone(), bytes);
        outcome
    }
}

/// Blocks by template and view: `None` for a block that runs out of fuel.
/// A block depends on nothing else: running out of fuel is decided on a
/// fresh session, so the fuel earlier blocks spent does not matter. The
/// key holds the template, so its address is not reused while it lives.
#[derive(Clone, Default)]
pub(crate) struct BlockMemo(Arc<Mutex<BlockEntries>>);

/// Blocks (`None`: out of fuel) by template and view.
type BlockEntries = Entries<(Template, ServerView), Option<String>>;

impl BlockMemo {
    /// The block of `view` in `template`, from the memo or from `render`
    /// (run without the lock held; an error is not kept).
    pub fn get_or_render(
        &self,
        template: &Template,
        view: &ServerView,
        render: impl FnOnce() -> crate::error::Result<Option<String>>,
    ) -> crate::error::Result<Option<String>> {
        let hash = hash::memo_hash((template.address(), view));
        let lock = || support::lock(&self.0);
        let same = |(t, v): &(Template, ServerView)| t.same(template) && v == view;
        if let Some(found) = lock().get(hash, same) {
            return Ok(found);
        }
        let block = render()?;
        let bytes = view.bytes() + block.as_ref().map_or(0, String::len);
        let key = (template.clone(), view.clone());
        lock().insert(hash, key, block.clone(), bytes);
        Ok(block)
    }
}
