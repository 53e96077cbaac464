//! Which tools the model sees: *loaded* tools' definitions go with every
//! request, *deferred* ones wait behind the host's tool search. Only loaded
//! descriptions can make an instruction sentence redundant.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use serde::Serialize;

use crate::model::ServerSnapshot;
use crate::support::string_enum;
use crate::tokens::Counter;

/// Whether the host sends a tool's definition with every request.
///
/// Set per server with [`Assembler::visibility`](crate::Assembler::visibility)
/// or [`Assembler::defer`](crate::Assembler::defer), per tool with
/// [`Assembler::tool_visibility`](crate::Assembler::tool_visibility), or
/// automatically with [`Assembler::defer_over`](crate::Assembler::defer_over)
/// and [`Assembler::defer_when`](crate::Assembler::defer_when).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Visibility {
    /// The host sends the tool's definition (the default).
    #[default]
    Loaded,
    /// The tool is behind tool search (Claude Code's deferred tools, the
    /// Anthropic API's `defer_loading`, Codex's namespaces): the model does
    /// not see its description until it searches.
    Deferred,
}

/// When to defer a server's tools automatically, by what their definitions
/// cost: each tool's name, description and input schema (compact JSON),
/// counted apart with the assembler's tokenizer and summed per server
/// ([`ServerReport::tool_tokens`](crate::ServerReport::tool_tokens)). A server
/// is deferred when the sum is *over* the threshold.
///
/// ```
/// use mcp_preamble::{Assembler, DeferWhen};
/// // A tenth of a 200K context window: 20,000 tokens.
/// let when = DeferWhen::ContextShare { context: 200_000, share: 0.10 };
/// assert_eq!(when.threshold(), 20_000);
/// let assembler = Assembler::new().defer_when(when);
/// # let _ = assembler;
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum DeferWhen {
    /// More than this many tokens.
    Tokens(usize),
    /// More than `share` (0.0 to 1.0) of a context window of `context` tokens.
    ContextShare {
        /// The model's context window, in tokens.
        context: usize,
        /// The fraction of it (0.10 for 10%); clamped to 0.0..=1.0, NaN counts as 1.0.
        share: f64,
    },
}

impl DeferWhen {
    /// The threshold in tokens (rounded down).
    pub fn threshold(&self) -> usize {
        match *self {
            DeferWhen::Tokens(n) => n,
            DeferWhen::ContextShare { context, share } => {
                let share = if share.is_nan() {
                    1.0
                } else {
                    share.clamp(0.0, 1.0)
                };
                (context as f64 * share).floor() as usize
            }
        }
    }
}

string_enum! {
    /// Why a server has deferred tools (in the JSON: `configured`,
    /// `tool_pattern`, `tool_count`, `tool_tokens`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
    #[serde(rename_all = "snake_case")]
    #[non_exhaustive]
    pub enum DeferReason {
        /// [`Assembler::visibility`](crate::Assembler::visibility) or [`Assembler::defer`](crate::Assembler::defer) for its alias.
        Configured => "configured",
        /// Only some tools, by [`Assembler::tool_visibility`](crate::Assembler::tool_visibility).
        ToolPattern => "tool_pattern",
        /// It has more tools than [`Assembler::defer_over`](crate::Assembler::defer_over).
        ToolCount => "tool_count",
        /// Its tool definitions are over [`Assembler::defer_when`](crate::Assembler::defer_when).
        ToolTokens => "tool_tokens",
    }
    /// The name used in the JSON report: `configured`, `tool_pattern`,
    /// `tool_count` or `tool_tokens`.
    fn as_str;
}

/// The assembler's visibility settings.
#[derive(Debug, Clone, Default)]
pub(crate) struct Rules {
    pub servers: BTreeMap<String, Visibility>,
    /// Per alias, in the order given: the last matching pattern wins.
    pub tools: BTreeMap<String, Vec<(String, Visibility)>>,
    pub over_tools: Option<usize>,
    pub when: Option<DeferWhen>,
}

/// One server's visibility, resolved.
#[derive(Debug, Clone, Default)]
pub(crate) struct Resolved {
    /// Per tool of the snapshot: behind tool search.
    pub deferred: Vec<bool>,
    pub reason: Option<DeferReason>,
    /// The tools' definition tokens, when [`DeferWhen`] measured them.
    pub tool_tokens: Option<usize>,
}

impl Rules {
    /// What decides the visibility of the server configured under `key`,
    /// as a hash: with the server's version it keys the memo.
    pub fn fingerprint(&self, key: Option<&str>) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        let key = key.unwrap_or_default();
        (
            self.servers.get(key),
            self.tools.get(key),
            self.over_tools,
            self.when.map(|w| w.threshold()),
        )
            .hash(&mut h);
        h.finish()
    }

    /// The visibility of each of `s`'s tools: a pattern for the tool, else
    /// the server's own setting, else the automatic modes, else loaded.
    pub fn resolve(&self, key: Option<&str>, s: &ServerSnapshot, counter: &Counter) -> Resolved {
        let tool_tokens = self.when.map(|_| tool_tokens(s, counter));
        let (server, reason) = match key.and_then(|k| self.servers.get(k)) {
            Some(v) => (*v, Some(DeferReason::Configured)),
            None if self.over_tools.is_some_and(|n| s.tools.len() > n) => {
                (Visibility::Deferred, Some(DeferReason::ToolCount))
            }
            None if self
                .when
                .zip(tool_tokens)
                .is_some_and(|(w, n)| n > w.threshold()) =>
            {
                (Visibility::Deferred, Some(DeferReason::ToolTokens))
            }
            None => (Visibility::Loaded, None),
        };
        let patterns = key.and_then(|k| self.tools.get(k)).map_or(&[][..], |v| v);
        let deferred: Vec<bool> = s
            .tools
            .iter()
            .map(|t| {
                let v = patterns
                    .iter()
                    .rev()
                    .find(|(p, _)| glob(p, &t.name))
                    .map_or(server, |(_, v)| *v);
                v == Visibility::Deferred
            })
            .collect();
        let reason = if !deferred.contains(&true) {
            None
        } else if server == Visibility::Deferred {
            reason
        } else {
            Some(DeferReason::ToolPattern)
        };
        Resolved {
            deferred,
            reason,
            tool_tokens,
        }
    }
}

/// Tokens of a server's tool definitions: each name, description and
/// compact input schema counted apart.
pub(crate) fn tool_tokens(s: &ServerSnapshot, counter: &Counter) -> usize {
    s.tools
        .iter()
        .map(|t| {
            let schema = serde_json::to_string(&t.input_schema).unwrap_or_default();
            counter.count(&t.name)
                + t.description.as_deref().map_or(0, |d| counter.count(d))
                + counter.count(&schema)
        })
        .sum()
}

/// A tool-name pattern: `*` matches any run of characters, `?` one
/// character, anything else itself.
pub(crate) fn glob(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut i, mut j) = (0, 0);
    // The last `*` and where in the name it was tried, to back up to.
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        if i < p.len() && (p[i] == '?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob("firecrawl_*", "firecrawl_search"));
        assert!(glob("*", ""));
        assert!(glob("*_feedback", "firecrawl_search_feedback"));
        assert!(glob("get_?", "get_x"));
        assert!(!glob("get_?", "get_xy"));
        assert!(glob("a*b*c", "aXbYbZc"));
        assert!(!glob("a*b*c", "aXbYbZ"));
        assert!(glob("exact", "exact"));
        assert!(!glob("exact", "exactly"));
    }

    #[test]
    fn context_share_threshold() {
        let t = |share| {
            DeferWhen::ContextShare {
                context: 1000,
                share,
            }
            .threshold()
        };
        assert_eq!(t(0.1), 100);
        assert_eq!(t(2.0), 1000);
        assert_eq!(t(-1.0), 0);
        assert_eq!(t(f64::NAN), 1000);
    }
}
