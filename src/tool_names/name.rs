//! One tool's name as the model sees it, and the parts of a pattern.

use std::fmt;

/// The cap providers put on a tool name, in characters (OpenAI and
/// Anthropic: `^[a-zA-Z0-9_-]{1,64}$`).
pub const MAX_LEN: usize = 64;

/// Hex digits of the SHA-256 suffix a pattern's long names get.
pub(super) const PATTERN_HASH: usize = 8;

/// A piece of a pattern.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Part {
    Text(String),
    Server,
    Tool,
}

/// How a name came to fit (or not) the 64-character cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Fit {
    /// Within the cap as it is.
    Whole,
    /// Cut at the cap, as the host cuts it (VS Code): two long names can
    /// end up the same.
    Cut,
    /// Shortened with a hash of the whole name (Codex, patterns), or given
    /// a hash because an earlier tool of a [`NameTable`](super::NameTable) had the name.
    Hashed,
    /// Longer than the cap, and the host sends it so: the provider rejects
    /// the request, so the model cannot call this tool (nor, with Claude
    /// Code, any other).
    OverCap,
}

/// One tool's name as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ExposedName {
    pub(super) name: String,
    pub(super) fit: Fit,
}

impl ExposedName {
    /// The name.
    pub fn as_str(&self) -> &str {
        &self.name
    }

    /// How it fits the cap.
    pub fn fit(&self) -> Fit {
        self.fit
    }

    /// The name, owned.
    pub fn into_string(self) -> String {
        self.name
    }
}

impl fmt::Display for ExposedName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.name)
    }
}
