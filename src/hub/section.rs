//! What the hub publishes: a [`Section`] per revision, and [`Delta`]s
//! between revisions.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::report::Assembly;

/// The section at one revision.
#[derive(Debug, Clone)]
pub struct Section {
    pub(super) revision: u64,
    pub(super) digest: String,
    pub(super) assembly: Assembly,
    pub(super) blocks: Arc<BTreeMap<String, String>>,
}

impl Section {
    /// The revision this section belongs to (0 before any server was added).
    /// It changes exactly when [`Section::text`] does: a new revision's text
    /// always differs from the one before (it may equal an older one's).
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// The SHA-256 of [`Section::text`], 64 lowercase hex digits. Unlike the
    /// revision it holds across hubs and restarts: equal digests mean equal
    /// bytes, so a prompt cache can still be warm.
    pub fn digest(&self) -> &str {
        &self.digest
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

/// SHA-256 of `text` as lowercase hex.
pub(super) fn digest(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What changed between two revisions, for hosts that keep the system
/// prompt byte-stable and announce changes in a message instead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
