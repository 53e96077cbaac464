//! The [`Linter`] and its settings: thresholds, tokenizer, host profiles,
//! severities. Running it is in the module root, which hands a `Pass` a
//! reference to these settings.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::dedup::{self, ToolTextCache};
use crate::error::Result;
use crate::tokens::{Encoding, Tiktoken, TokenCounter};
use crate::tool_policy::ToolFilter;

use super::codes::{LintCode, Severity};
use super::hosts::HostProfile;

/// Default for [`Linter::max_tokens`]: about 2,000 characters of English
/// prose, where one widely used host cuts every server's instructions.
pub const DEFAULT_MAX_TOKENS: usize = 400;

/// Default for [`Linter::max_tool_tokens`]: a tool description over this
/// many tokens (about 4,000 characters of English) gets `MCP014`.
pub const DEFAULT_MAX_TOOL_TOKENS: usize = 1000;

/// Runs the lint pass with a token threshold, a tokenizer and per-code severities.
///
/// ```
/// use mcp_preamble::{ServerSnapshot, Tool};
/// use mcp_preamble::lint::{LintCode, Linter, Severity};
///
/// let server = ServerSnapshot::new("invoice")
///     .with_instructions("Always call list_periods before get_invoices.")
///     .with_tool(Tool::new("list_periods", "List billing periods."))
///     .with_tool(Tool::new("get_invoice", "Get an invoice by id."));
/// let findings = Linter::new().max_tokens(200).lint(&server);
/// assert_eq!(findings.len(), 1);
/// assert_eq!(findings[0].code, LintCode::UnknownTool);
/// assert_eq!(findings[0].severity, Severity::Error);
/// assert_eq!(
///     findings[0].message,
///     "instructions mention `get_invoices`, which is not one of the server's tools; did you mean `get_invoice`?"
/// );
/// ```
#[derive(Clone)]
pub struct Linter {
    pub(super) counter: Arc<dyn TokenCounter>,
    pub(super) models: Vec<Arc<dyn TokenCounter>>,
    pub(super) max_tokens: usize,
    pub(super) max_tool_tokens: usize,
    pub(super) hosts: Vec<HostProfile>,
    pub(super) similarity: f64,
    pub(super) severities: BTreeMap<LintCode, Option<Severity>>,
    pub(super) tool_texts: ToolTextCache,
    pub(super) tool_filters: BTreeMap<String, ToolFilter>,
    pub(super) learned: bool,
}

impl fmt::Debug for Linter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Linter")
            .field("encoding", &self.counter.name())
            .field("max_tokens", &self.max_tokens)
            .field("max_tool_tokens", &self.max_tool_tokens)
            .field("hosts", &self.hosts)
            .field("similarity", &self.similarity)
            .field("severities", &self.severities)
            .field("learned", &self.learned)
            .finish()
    }
}

impl Default for Linter {
    fn default() -> Linter {
        Linter::new()
    }
}

impl Linter {
    /// A linter with `o200k_base` counts, a threshold of
    /// [`DEFAULT_MAX_TOKENS`], the assembler's default similarity (0.75), and
    /// every code on at its default severity.
    pub fn new() -> Linter {
        Linter {
            counter: Arc::new(Tiktoken::new(Encoding::O200kBase)),
            models: Vec::new(),
            max_tokens: DEFAULT_MAX_TOKENS,
            max_tool_tokens: DEFAULT_MAX_TOOL_TOKENS,
            hosts: Vec::new(),
            similarity: dedup::DEFAULT_SIMILARITY,
            severities: BTreeMap::new(),
            tool_texts: ToolTextCache::default(),
            tool_filters: BTreeMap::new(),
            learned: true,
        }
    }

    /// The operator's filter of one server's tools, by alias (or
    /// `serverInfo.name`; the policy file's `[servers.<alias>.tools]`): the
    /// server is linted with the tools the model is sent, and a mention of
    /// a tool the filter hides gets `MCP003`.
    pub fn tool_filter(mut self, alias: impl Into<String>, filter: ToolFilter) -> Linter {
        self.tool_filters.insert(alias.into(), filter);
        self
    }

    /// Whether MCP020 and MCP021 also take the learned lexical model's
    /// reading of a unit that their phrases and clause readers do not match
    /// (a warning, "… (learned model)"); on by default. Off, the two codes
    /// are the rules' alone.
    pub fn learned(mut self, on: bool) -> Linter {
        self.learned = on;
        self
    }

    /// Instructions over this many tokens (sanitized) get `MCP004`.
    pub fn max_tokens(mut self, tokens: usize) -> Linter {
        self.max_tokens = tokens;
        self
    }

    /// A tool description over this many tokens (sanitized) gets `MCP014`
    /// (default [`DEFAULT_MAX_TOOL_TOKENS`]).
    pub fn max_tool_tokens(mut self, tokens: usize) -> Linter {
        self.max_tool_tokens = tokens;
        self
    }

    /// Checks what survives these hosts ([`HostProfile::known`],
    /// [`HostProfile::mcp_preamble`]): each server's
    /// [`ServerLint::hosts`](super::ServerLint::hosts) gets a row per host, and a constraint sentence
    /// a forwarding host cuts off gets `MCP010` (one finding per host, at
    /// the first such sentence). Off by default.
    ///
    /// ```
    /// use mcp_preamble::ServerSnapshot;
    /// use mcp_preamble::lint::{HostProfile, LintCode, Linter};
    ///
    /// let text = format!("{} You must call list_periods before get_invoice.", "Billing data. ".repeat(40));
    /// let server = ServerSnapshot::new("invoice").with_instructions(text);
    /// let linter = Linter::new().hosts(["claude-code".parse::<HostProfile>()?, "codex".parse()?]);
    /// let result = linter.check(&server, None);
    /// let lost: Vec<&str> = result.findings.iter()
    ///     .filter(|f| f.code == LintCode::LostUnderHostCut)
    ///     .map(|f| f.message.as_str())
    ///     .collect();
    /// assert_eq!(lost, ["codex (reported) forwards the first 512 characters; this constraint sentence never reaches the model"]);
    /// assert_eq!(result.hosts[0].lost.len(), 0); // claude-code keeps all 607 characters
    /// # Ok::<(), mcp_preamble::Error>(())
    /// ```
    pub fn hosts(mut self, hosts: impl IntoIterator<Item = HostProfile>) -> Linter {
        self.hosts = hosts.into_iter().collect();
        self
    }

    /// The restatement threshold, as [`Assembler::similarity`](crate::Assembler::similarity).
    pub fn similarity(mut self, threshold: dedup::Similarity) -> Linter {
        self.similarity = threshold.get();
        self
    }

    /// [`Linter::similarity`] from a number: fails with
    /// [`ErrorKind::InvalidConfig`](crate::ErrorKind::InvalidConfig)
    /// outside `0.0..=1.0`.
    pub fn similarity_threshold(self, threshold: f64) -> Result<Linter> {
        Ok(self.similarity(dedup::Similarity::new(threshold)?))
    }

    /// Counts tokens with this tiktoken encoding (default: `o200k_base`).
    pub fn encoding(self, encoding: Encoding) -> Linter {
        self.token_counter(Tiktoken::new(encoding))
    }

    /// Also counts each server's instructions and tool definitions with
    /// `counter` (repeatable), so [`ServerLint::models`](super::ServerLint::models)
    /// and the text report's token table show what each audience pays,
    /// side by side (`lint --models gpt-4o,llama-3.1,claude-sonnet-4`).
    pub fn compare(mut self, counter: impl TokenCounter + 'static) -> Linter {
        self.models.push(Arc::new(counter));
        self
    }

    /// Counts tokens with your own [`TokenCounter`].
    pub fn token_counter(mut self, counter: impl TokenCounter + 'static) -> Linter {
        self.counter = Arc::new(counter);
        self
    }

    /// Turns a code off.
    pub fn allow(mut self, code: LintCode) -> Linter {
        self.severities.insert(code, None);
        self
    }

    /// Gives every finding of a code this severity (and turns it back on).
    pub fn severity(mut self, code: LintCode, severity: Severity) -> Linter {
        self.severities.insert(code, Some(severity));
        self
    }
}
