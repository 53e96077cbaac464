//! What the hub publishes: a [`Section`] per revision, and [`Delta`]s
//! between revisions, which render as a change message.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use crate::error::Result;
use crate::report::Assembly;
use crate::template::Template;

/// The section at one revision.
#[derive(Debug, Clone)]
pub struct Section {
    pub(super) revision: u64,
    pub(super) digest: String,
    pub(super) assembly: Assembly,
    pub(super) blocks: Arc<BTreeMap<String, String>>,
    pub(super) names: Arc<BTreeMap<String, String>>,
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
    crate::support::hash::sha256_hex(text.as_bytes())
}

/// What changed between two revisions, for hosts that keep the system
/// prompt byte-stable and announce changes in a message instead
/// ([`Delta::render`]).
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
    /// The name each server above is shown under, by alias (for a removed
    /// server, the name it had at `from`): sanitized, not yet escaped.
    pub names: BTreeMap<String, String>,
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

    /// The change as a message to send in the conversation, for a host that
    /// keeps the system prompt as it was: servers added, changed (the new
    /// block replaces the old) and removed. `None` when nothing changed.
    ///
    /// `template` is the one the hub's assembler uses: pass
    /// [`Hub::template`](super::Hub::template), so the message matches the section. The built-ins render
    /// with their companions in `templates/` (`markdown-changes.jinja`,
    /// `xml-changes.jinja`); your own template must define a macro
    /// `changes(c)`, where `c` has `full`, `from`, `to`, and the lists
    /// `added`, `changed` and `removed` of items with `alias`, `name` (both
    /// unescaped) and `block` (the block exactly as in the section, already
    /// escaped; none for removed servers). Blocks are placed as they are, so
    /// server text is escaped exactly as in the section; names go through
    /// the same filter as the section's headings.
    ///
    /// ```
    /// use mcp_preamble::{Assembler, ServerSnapshot, Template};
    /// use mcp_preamble::hub::Hub;
    /// let hub = Hub::new(Assembler::new());
    /// let sent = hub.revision();                 // the system prompt was built here
    /// hub.upsert("billing", ServerSnapshot::new("invoice").with_instructions("Call list_periods first."))?;
    /// let message = hub.changes_since(sent).render(&Template::markdown())?.unwrap();
    /// assert!(message.starts_with("## MCP server changes\n"));
    /// assert!(message.contains("Added:\n\n### billing\n\nCall list_periods first.\n"));
    /// # Ok::<(), mcp_preamble::Error>(())
    /// ```
    pub fn render(&self, template: &Template) -> Result<Option<String>> {
        if self.is_empty() {
            return Ok(None);
        }
        let item = |alias: &'_ str, block: Option<&'_ str>| {
            let name = self.names.get(alias).map_or(alias, String::as_str);
            ChangeItem {
                alias: alias.to_string(),
                name: name.to_string(),
                block: block.map(str::to_string),
            }
        };
        let view = ChangesView {
            full: self.full,
            from: self.from,
            to: self.to,
            added: self.added.iter().map(|(a, b)| item(a, Some(b))).collect(),
            changed: self.changed.iter().map(|(a, b)| item(a, Some(b))).collect(),
            removed: self.removed.iter().map(|a| item(a, None)).collect(),
        };
        template.render_changes(&view).map(Some)
    }
}

/// The `c` of a `changes(c)` macro.
#[derive(Serialize)]
struct ChangesView {
    full: bool,
    from: u64,
    to: u64,
    added: Vec<ChangeItem>,
    changed: Vec<ChangeItem>,
    removed: Vec<ChangeItem>,
}

#[derive(Serialize)]
struct ChangeItem {
    alias: String,
    name: String,
    block: Option<String>,
}
