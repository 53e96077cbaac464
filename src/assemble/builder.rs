//! The assembler's settings: the builder a host configures once.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Deserialize;

use super::reuse::{BlockMemo, DedupMemo};
use crate::dedup::{self, Similarity, ToolTextCache};
use crate::error::Result;
use crate::hosts::HostCap;
use crate::limits::Limits;
use crate::pin::{Lock, OnChange};
use crate::sanitize;
use crate::template::Template;
use crate::tokens::{Counter, Encoding, Tiktoken, TokenCounter};
use crate::tool_names::{Kept, ToolNames};
use crate::tool_policy::{ToolFilter, ToolOverride, ToolRules};
use crate::visibility::{self, DeferWhen, Visibility};

/// The order of servers in the section; `order = "name"` or
/// `"insertion"` in the policy file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Order {
    /// By displayed name (alias, else `serverInfo.name`), then by content;
    /// the same servers give the same section whatever order they come in.
    #[default]
    Name,
    /// In the order given to [`Assembler::assemble`].
    Insertion,
}

/// Builds the instructions section from server snapshots.
///
/// ```
/// use mcp_preamble::{Assembler, ServerSnapshot, Tool};
///
/// let server = ServerSnapshot::new("invoice-server")
///     .with_instructions("Always call list_periods before get_invoice.")
///     .with_tool(Tool::new("list_periods", "List billing periods."));
/// let assembly = Assembler::new().assemble(&[server])?;
/// assert!(assembly.text().contains("### invoice-server"));
/// # Ok::<(), mcp_preamble::Error>(())
/// ```
#[derive(Clone)]
pub struct Assembler {
    pub(super) template: Template,
    pub(super) counter: Counter,
    pub(super) order: Order,
    pub(super) list_tool_only_servers: bool,
    pub(super) tool_descriptions: bool,
    pub(super) tool_list: bool,
    pub(super) shortening_note: bool,
    pub(super) full_text_hint: Option<Arc<str>>,
    pub(super) dedup: bool,
    pub(super) dedup_across_servers: bool,
    pub(super) similarity: f64,
    pub(super) budget: Option<usize>,
    pub(super) server_budgets: BTreeMap<String, usize>,
    pub(super) total_budget: Option<usize>,
    pub(super) host_cap: Option<HostCap>,
    pub(super) policies: BTreeMap<String, Policy>,
    pub(super) limits: Limits,
    pub(super) visibility: visibility::Rules,
    pub(super) tool_texts: ToolTextCache,
    pub(super) dedup_memo: DedupMemo,
    pub(super) block_memo: BlockMemo,
    pub(super) lock: Option<Lock>,
    pub(super) on_change: Option<OnChange>,
    pub(super) tool_names: ToolNames,
    pub(super) namespace_chars: Option<usize>,
    /// Each server is assembled for a room of its own (`wrap`).
    pub(super) own_room: bool,
    /// Keep each server's `Exposure` in the assembly (a gateway serves it).
    pub(super) expose: bool,
    /// The names tools keep (a gateway's served names, set by its hub).
    pub(super) kept_names: Option<Arc<Kept>>,
    /// The host and server name the section's tool names are shown
    /// through (a gateway's host), if any.
    pub(super) shown: Option<Arc<Shown>>,
}

/// The host a section's tool names are shown through, and the name it
/// knows the gateway by ([`Assembler::shown_through`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shown {
    pub host: ToolNames,
    pub server: String,
}

/// What the operator decides for one server, by alias.
///
/// ```
/// use mcp_preamble::{Assembler, Policy};
/// let assembler = Assembler::new()
///     .policy("scratch", Policy::new().exclude())
///     .policy("billing", Policy::new().replace_instructions("Use only for invoices.").weight(2.0));
/// # let _ = assembler;
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    pub(super) include: bool,
    pub(super) instructions: Option<String>,
    pub(super) label: Option<String>,
    pub(super) weight: f64,
    pub(super) on_change: Option<OnChange>,
    pub(super) tools: ToolRules,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy::new()
    }
}

impl Policy {
    /// Include the server as it is, with weight 1.
    pub fn new() -> Policy {
        Policy {
            include: true,
            instructions: None,
            label: None,
            weight: 1.0,
            on_change: None,
            tools: ToolRules::default(),
        }
    }

    /// Leave the server out of the section.
    pub fn exclude(mut self) -> Policy {
        self.include = false;
        self
    }

    /// Show this operator text instead of the server's instructions. It is
    /// sanitized and escaped like server text, but never de-duplicated.
    pub fn replace_instructions(mut self, text: impl Into<String>) -> Policy {
        self.instructions = Some(text.into());
        self
    }

    /// A label shown with the server's block when its text is the
    /// operator's ([`Policy::replace_instructions`]), so the section does not
    /// present operator text as the server's: markdown adds a line
    /// `Text from the operator: <label>` under the heading, xml the
    /// attributes `source="operator" label="<label>"`. It is escaped like
    /// server text; without replaced instructions it is not shown.
    pub fn label(mut self, label: impl Into<String>) -> Policy {
        self.label = Some(label.into());
        self
    }

    /// The server's weight when a total budget is shared (default 1).
    ///
    /// It cannot fail: the value is clamped to `0.001..=1000` (the range of
    /// [`Weight`](crate::settings::Weight), which the policy file's
    /// `weight` is checked against) and used to a thousandth; NaN counts as
    /// the default 1. The report shows the weight in effect.
    pub fn weight(mut self, weight: f64) -> Policy {
        self.weight = if weight.is_nan() {
            1.0
        } else {
            weight.clamp(0.001, 1000.0)
        };
        self
    }

    /// What reaches the model when the server differs from its pin in the
    /// [`Assembler::lock`]; overrides [`Assembler::on_change`].
    pub fn on_change(mut self, on_change: OnChange) -> Policy {
        self.on_change = Some(on_change);
        self
    }

    /// Which of the server's tools the model is sent: the tools the
    /// filter hides leave the tool list, the deferred index and the pin,
    /// and an instruction whose only tool references are hidden tools is
    /// removed ([`RemovalReason::MentionsHiddenTool`](crate::report::RemovalReason::MentionsHiddenTool)).
    /// See the crate docs, "Tool names".
    ///
    /// ```
    /// use mcp_preamble::settings::ToolFilter;
    /// use mcp_preamble::{Assembler, Policy, ServerSnapshot, Tool};
    /// let s = ServerSnapshot::new("billing")
    ///     .with_instructions("Call get_invoice for one invoice. Call void_invoice to cancel one.")
    ///     .with_tool(Tool::new("get_invoice", "Get an invoice."))
    ///     .with_tool(Tool::new("void_invoice", "Void an invoice."));
    /// let a = Assembler::new()
    ///     .policy("billing", Policy::new().tools(ToolFilter::new().deny("void_*")))
    ///     .assemble(&[s])?;
    /// assert!(!a.text().contains("void_invoice"));
    /// assert_eq!(a.servers()[0].hidden_tools, ["void_invoice"]);
    /// # Ok::<(), mcp_preamble::Error>(())
    /// ```
    pub fn tools(mut self, filter: ToolFilter) -> Policy {
        self.tools.filter = filter;
        self
    }

    /// What the model is told about one tool instead of what the server
    /// says (description, title, annotations), and whether it is always
    /// loaded; de-duplication compares instructions with the overridden
    /// description.
    pub fn tool(mut self, name: impl Into<String>, tool: ToolOverride) -> Policy {
        self.tools.overrides.insert(name.into(), tool);
        self
    }

    /// Whether the server's tools are never deferred behind tool search,
    /// whatever [`Assembler::defer`], [`Assembler::defer_over`] or
    /// [`Assembler::defer_when`] say (a tool's own
    /// [`ToolOverride::always_load`] wins over this).
    pub fn always_load(mut self, yes: bool) -> Policy {
        self.tools.always_load = Some(yes);
        self
    }

    pub(super) fn weight_millis(&self) -> u64 {
        // The setter clamped it to 0.001..=1000.
        ((self.weight * 1000.0).round() as u64).clamp(1, 1_000_000)
    }
}

impl std::fmt::Debug for Assembler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Assembler")
            .field("template", &self.template.name())
            .field("encoding", &self.counter.name())
            .field("order", &self.order)
            .field("list_tool_only_servers", &self.list_tool_only_servers)
            .field("tool_descriptions", &self.tool_descriptions)
            .field("dedup", &self.dedup)
            .field("dedup_across_servers", &self.dedup_across_servers)
            .field("similarity", &self.similarity)
            .field("budget", &self.budget)
            .field("server_budgets", &self.server_budgets)
            .field("total_budget", &self.total_budget)
            .field("host_cap", &self.host_cap)
            .field("policies", &self.policies)
            .field("limits", &self.limits)
            .field("visibility", &self.visibility)
            .field("lock", &self.lock.as_ref().map(|l| l.keys().count()))
            .field("on_change", &self.on_change)
            .field("tool_names", &self.tool_names.to_string())
            .field("shown", &self.shown)
            .finish()
    }
}

impl Default for Assembler {
    fn default() -> Assembler {
        Assembler::new()
    }
}

impl Assembler {
    /// An assembler with the markdown template and `o200k_base` counts.
    ///
    /// The tokenizer is loaded here, not on the first request.
    pub fn new() -> Assembler {
        Assembler {
            template: Template::markdown(),
            counter: Counter::new(Arc::new(Tiktoken::new(Encoding::O200kBase))),
            order: Order::Name,
            list_tool_only_servers: true,
            tool_descriptions: false,
            tool_list: true,
            shortening_note: true,
            full_text_hint: None,
            dedup: true,
            dedup_across_servers: false,
            similarity: dedup::DEFAULT_SIMILARITY,
            budget: None,
            server_budgets: BTreeMap::new(),
            total_budget: None,
            host_cap: None,
            policies: BTreeMap::new(),
            limits: Limits::default(),
            visibility: visibility::Rules::default(),
            tool_texts: ToolTextCache::default(),
            dedup_memo: DedupMemo::default(),
            block_memo: BlockMemo::default(),
            lock: None,
            on_change: None,
            tool_names: ToolNames::plain(),
            namespace_chars: None,
            own_room: false,
            expose: false,
            kept_names: None,
            shown: None,
        }
    }

    /// The token budget of each server's block (default: none).
    pub fn budget(mut self, tokens: usize) -> Assembler {
        self.budget = Some(tokens);
        self
    }

    /// The token budget of one server's block, by its alias (or, for a server
    /// without an alias, its `serverInfo.name`); overrides [`Assembler::budget`].
    pub fn server_budget(mut self, alias: impl Into<String>, tokens: usize) -> Assembler {
        self.server_budgets.insert(alias.into(), tokens);
        self
    }

    /// A budget for the whole section, shared between servers by weighted
    /// max-min fairness when their own budgets add up to more.
    pub fn total_budget(mut self, tokens: usize) -> Assembler {
        self.total_budget = Some(tokens);
        self
    }

    /// A host's cap on the whole section, in the host's unit (not tokens):
    /// the section, its frame included, also fits `cap`, on top of the
    /// token budgets ([`Assembler::budget`], [`Assembler::server_budget`],
    /// [`Assembler::total_budget`]), which keep counting the model's
    /// tokens. When the section is over the cap, the servers share a
    /// smaller total of tokens by the same max-min fairness, each block
    /// walking its ladder further, until the section fits.
    ///
    /// ```
    /// use mcp_preamble::hosts::{Host, Unit};
    /// use mcp_preamble::{Assembler, ServerSnapshot};
    ///
    /// let cap = Host::ClaudeCode.profile().cut.cap().unwrap();
    /// assert_eq!(cap.unit, Unit::Utf16);
    /// let server = ServerSnapshot::new("docs").with_instructions("Search the docs first. ".repeat(400));
    /// let assembly = Assembler::new().budget(1000).host_cap(cap).assemble(&[server])?;
    /// let block = &assembly.servers()[0];
    /// assert!(block.tokens <= 1000); // the model's tokens
    /// assert!(cap.fits(assembly.text())); // UTF-16 units
    /// # Ok::<(), mcp_preamble::Error>(())
    /// ```
    pub fn host_cap(mut self, cap: HostCap) -> Assembler {
        self.host_cap = Some(cap);
        self
    }

    /// The operator's [`Policy`] for one server, by alias (or `serverInfo.name`).
    pub fn policy(mut self, alias: impl Into<String>, policy: Policy) -> Assembler {
        self.policies.insert(alias.into(), policy);
        self
    }

    /// Whether to remove sentences that restate tool descriptions and
    /// repeated sentences (default: `true`); also the switch for
    /// [`Assembler::dedup_across_servers`].
    pub fn dedup(mut self, yes: bool) -> Assembler {
        self.dedup = yes;
        self
    }

    /// Bounds on the work one server's data can cost (default:
    /// [`Limits::default`]); past one, the server is cut and its report
    /// says which limit ([`ServerReport::limits`](crate::ServerReport::limits)).
    pub fn limits(mut self, limits: Limits) -> Assembler {
        self.limits = limits;
        self
    }

    /// Whether a server whose instructions are byte-identical (after
    /// sanitizing and de-duplication within it) to an earlier server's shows
    /// a one-line reference to that server instead (default: `false`).
    ///
    /// Off by default because every server is untrusted: a reference lets
    /// one server's block stand in for another's, so a rule moves under
    /// the wrong server's scope, and a server that sorts first could send a
    /// look-alike (`~~Never~~ call …`, `<!-- Never -->`) to make the other
    /// server's rule disappear. Even when on, only byte-identical text is
    /// replaced: the escaping is a function of the text alone, so the two
    /// blocks would render the same bytes.
    pub fn dedup_across_servers(mut self, yes: bool) -> Assembler {
        self.dedup_across_servers = yes;
        self
    }

    /// The similarity at or above which a sentence counts as restating a
    /// tool description (Dice coefficient of content words; default 0.75).
    pub fn similarity(mut self, threshold: Similarity) -> Assembler {
        self.similarity = threshold.get();
        self
    }

    /// [`Assembler::similarity`] from a number: fails with
    /// [`ErrorKind::InvalidConfig`](crate::ErrorKind::InvalidConfig) outside `0.0..=1.0`
    /// ([`Similarity::new`]).
    pub fn similarity_threshold(self, threshold: f64) -> Result<Assembler> {
        Ok(self.similarity(Similarity::new(threshold)?))
    }

    /// Renders with this template (default: [`Template::markdown`]).
    pub fn template(mut self, template: Template) -> Assembler {
        self.template = template;
        self
    }

    /// Counts tokens with this tiktoken encoding (default: `o200k_base`).
    pub fn encoding(self, encoding: Encoding) -> Assembler {
        self.token_counter(Tiktoken::new(encoding))
    }

    /// Counts tokens as `model` reads them, from the model table
    /// ([`Model::known`](crate::tokens::Model::known)): OpenAI models with
    /// their tiktoken encoding, Claude models with the
    /// [`ClaudeEstimate`](crate::tokens::ClaudeEstimate). Fails with
    /// [`ErrorKind::UnknownModel`](crate::ErrorKind::UnknownModel) (naming
    /// the closest model), and with
    /// [`ErrorKind::InvalidConfig`](crate::ErrorKind::InvalidConfig) for a
    /// model counted with its `tokenizer.json` (Llama, Qwen, Gemma,
    /// DeepSeek): give it with [`Assembler::tokenizer_file`], or
    /// `Model::from_name(name)?.counter(Some(path))`.
    pub fn model(self, model: &str) -> Result<Assembler> {
        let counter = crate::tokens::Model::from_name(model)?.counter(None)?;
        Ok(self.token_counter(counter))
    }

    /// Counts tokens with a Hugging Face `tokenizer.json` (feature
    /// `tokenizers`; without it, an
    /// [`ErrorKind::InvalidConfig`](crate::ErrorKind::InvalidConfig) error).
    /// Budgets are exact in that tokenizer. Fails as
    /// `tokens::HfTokenizer::from_file` does.
    pub fn tokenizer_file(self, path: impl AsRef<std::path::Path>) -> Result<Assembler> {
        #[cfg(feature = "tokenizers")]
        return Ok(self.token_counter(crate::tokens::HfTokenizer::from_file(path)?));
        #[cfg(not(feature = "tokenizers"))]
        return Err(crate::tokens::without_tokenizers(path.as_ref()));
    }

    /// Counts tokens with your own [`TokenCounter`].
    pub fn token_counter(mut self, counter: impl TokenCounter + 'static) -> Assembler {
        self.counter = Counter::new(Arc::new(counter));
        self
    }

    /// The counter, shared (for settings that build one counter for the
    /// assembler and the linter).
    pub(crate) fn counter_arc(&self) -> Arc<dyn TokenCounter> {
        self.counter.inner()
    }

    /// Sets the server order (default: [`Order::Name`]).
    pub fn order(mut self, order: Order) -> Assembler {
        self.order = order;
        self
    }

    /// Whether servers with tools but no instructions are listed by their
    /// tools (default: `true`). Servers with neither are always omitted.
    pub fn list_tool_only_servers(mut self, yes: bool) -> Assembler {
        self.list_tool_only_servers = yes;
        self
    }

    /// Whether a block lists its server's loaded tools (default: `true`).
    /// Off for a host that sends the model every tool definition itself
    /// ([`Profile::sends_tools`](crate::hosts::Profile::sends_tools); the
    /// gateway turns it off under `serve --as` such a host): the block then
    /// spends its budget on what only it carries, and servers with only
    /// tools get no block. Deferred tools are still indexed.
    ///
    /// ```
    /// use mcp_preamble::{Assembler, ServerSnapshot, Tool};
    /// let s = ServerSnapshot::new("billing")
    ///     .with_instructions("Always call list_periods first.")
    ///     .with_tool(Tool::new("list_periods", "List billing periods."));
    /// let a = Assembler::new().tool_list(false).assemble(&[s])?;
    /// assert!(!a.text().contains("Tools:"));
    /// # Ok::<(), mcp_preamble::Error>(())
    /// ```
    pub fn tool_list(mut self, yes: bool) -> Assembler {
        self.tool_list = yes;
        self
    }

    /// Whether a block that lost instruction units to its budget says so
    /// in one line, counted inside the budget (default: `true`; the policy
    /// file's `[defaults] shortening_note = false` turns it off): how much
    /// of the instructions is shown, and where the rest is
    /// ([`Assembler::full_text_hint`]). Templates get the line as
    /// `s.shortened` (none when nothing was lost or this is off). The line
    /// is there at every budget where the block is not down to one unit:
    /// headings give way to it first, then units in the drop order.
    ///
    /// ```
    /// use mcp_preamble::{Assembler, ServerSnapshot};
    /// let s = ServerSnapshot::new("notes").with_instructions(
    ///     "Never delete a note without asking. Notes are markdown files in folders that you can \
    ///      browse and search freely, with tags and links between them.",
    /// );
    /// let a = Assembler::new().budget(30).assemble(&[s.clone()])?;
    /// assert!(a.text().contains("Shortened to fit:"));
    /// let a = Assembler::new().budget(30).shortening_note(false).assemble(&[s])?;
    /// assert!(!a.text().contains("Shortened to fit:"));
    /// # Ok::<(), mcp_preamble::Error>(())
    /// ```
    pub fn shortening_note(mut self, yes: bool) -> Assembler {
        self.shortening_note = yes;
        self
    }

    /// Whether blocks get the shortening line ([`Assembler::shortening_note`]).
    #[cfg(feature = "serve")]
    pub(crate) fn shortening_note_on(&self) -> bool {
        self.shortening_note
    }

    /// Where the model can read a shortened server's whole instructions,
    /// ending its shortening line ("…; full text: `hint`."): a tool the
    /// host offers, a resource. The gateway names its reader tool.
    pub fn full_text_hint(mut self, hint: impl Into<String>) -> Assembler {
        self.full_text_hint = Some(Arc::from(sanitize::line(&hint.into())));
        self
    }

    /// Whether tool descriptions are shown next to tool names (default:
    /// `false`: the model receives them with the tool definitions already).
    pub fn tool_descriptions(mut self, yes: bool) -> Assembler {
        self.tool_descriptions = yes;
        self
    }

    /// The visibility of one server's tools, by alias (or `serverInfo.name`):
    /// [`Visibility::Deferred`] when the host puts them behind tool search.
    /// Overrides [`Assembler::defer_over`] and [`Assembler::defer_when`] for
    /// that server, so [`Visibility::Loaded`] keeps a server out of them.
    /// See the crate docs, "Deferred tools".
    pub fn visibility(mut self, alias: impl Into<String>, visibility: Visibility) -> Assembler {
        self.visibility.servers.insert(alias.into(), visibility);
        self
    }

    /// Defers one server's tools: `.visibility(alias, Visibility::Deferred)`.
    pub fn defer(self, alias: impl Into<String>) -> Assembler {
        self.visibility(alias, Visibility::Deferred)
    }

    /// The visibility of one server's tools whose name matches `pattern`
    /// (`*` any run of characters, `?` one character); it overrides the
    /// server's. Patterns apply in the order given: the last one that
    /// matches a tool wins.
    pub fn tool_visibility(
        mut self,
        alias: impl Into<String>,
        pattern: impl Into<String>,
        visibility: Visibility,
    ) -> Assembler {
        let rules = self.visibility.tools.entry(alias.into()).or_default();
        rules.push((pattern.into(), visibility));
        self
    }

    /// Defers one server's tools whose name matches `pattern`:
    /// `.tool_visibility(alias, pattern, Visibility::Deferred)`.
    pub fn defer_tools(self, alias: impl Into<String>, pattern: impl Into<String>) -> Assembler {
        self.tool_visibility(alias, pattern, Visibility::Deferred)
    }

    /// Defers the tools of every server with more than `tools` tools,
    /// unless [`Assembler::visibility`] says otherwise for it.
    pub fn defer_over(mut self, tools: usize) -> Assembler {
        self.visibility.over_tools = Some(tools);
        self
    }

    /// Defers the tools of every server whose tool definitions cost more
    /// tokens than `when` allows, unless [`Assembler::visibility`] says
    /// otherwise for it; each server's cost is then in
    /// [`ServerReport::tool_tokens`](crate::ServerReport::tool_tokens).
    pub fn defer_when(mut self, when: DeferWhen) -> Assembler {
        self.visibility.when = Some(when);
        self
    }

    /// Compares every server with its pin in `lock`: each report gets a
    /// [`Pin`](crate::pin::Pin) ([`ServerReport::pin`](crate::ServerReport::pin)),
    /// and servers that are new or changed are rendered as their
    /// [`OnChange`] says. Without a lock every server is
    /// [`PinState::Unpinned`](crate::pin::PinState::Unpinned). See the crate
    /// docs, "Pins and drift".
    pub fn lock(mut self, lock: Lock) -> Assembler {
        self.lock = Some(lock);
        self
    }

    /// What reaches the model when a server differs from its pin, for
    /// servers whose [`Policy::on_change`] is unset (default: render the
    /// new text, [`OnChange::Accept`], while the server stays pending
    /// review: [`Pin::pending`](crate::pin::Pin::pending)).
    pub fn on_change(mut self, on_change: OnChange) -> Assembler {
        self.on_change = Some(on_change);
        self
    }

    /// Also renders each server's block as a namespace description of at
    /// most `max_chars` characters ([`ServerReport::namespace`](crate::ServerReport::namespace)), next to the
    /// section: Codex and OpenAI tool search show a description per
    /// server's namespace and surface about its first 512 characters. The
    /// description is a room per server: it starts with the framing line of
    /// [`Assembler::own_room`] (who wrote the text and what it cannot do, 79
    /// characters and a line break) when the cap leaves 40 characters of text
    /// after it, then the server's instructions as the section has them
    /// (sanitized, tool names rewritten, de-duplicated, before budgets),
    /// whole units in order of priority (constraints first) as long as they
    /// fit; a first unit longer than the room left is cut at a word with `…`.
    ///
    /// ```
    /// use mcp_preamble::{Assembler, ServerSnapshot};
    /// let s = ServerSnapshot::new("billing").with_instructions(
    ///     "Billing data for the finance team. Never void a paid invoice.",
    /// );
    /// let a = Assembler::new().namespace_chars(40).assemble(&[s])?;
    /// let ns = a.servers()[0].namespace.as_ref().unwrap();
    /// assert_eq!(ns.text, "Never void a paid invoice.");
    /// assert_eq!(ns.units_left_out, 1);
    /// # Ok::<(), mcp_preamble::Error>(())
    /// ```
    pub fn namespace_chars(mut self, max_chars: usize) -> Assembler {
        self.namespace_chars = Some(max_chars);
        self
    }

    /// Whether each server gets a room of its own in the host (`wrap`, which
    /// serves one server's section as that server's `instructions`). The
    /// template's body then sees `room` = `"server"` (else `"section"`), and
    /// the built-in templates frame each block in one short line instead of
    /// the section's heading and paragraph. Default: false.
    pub fn own_room(mut self, own: bool) -> Assembler {
        self.own_room = own;
        self
    }

    /// The template blocks render with (for the hub's change messages).
    #[cfg(feature = "hub")]
    pub(crate) fn template_ref(&self) -> &Template {
        &self.template
    }

    /// The tool filter of the server configured under `key`, if any.
    pub(crate) fn tool_filter_of(&self, key: Option<&str>) -> Option<&ToolFilter> {
        let p = self.policies.get(key?)?;
        Some(&p.tools.filter).filter(|f| !f.is_empty())
    }

    /// The lock servers are compared with, if any.
    pub(crate) fn lock_ref(&self) -> Option<&Lock> {
        self.lock.as_ref()
    }

    /// The lock, created empty when there was none (for re-pinning).
    #[cfg(feature = "hub")]
    pub(crate) fn lock_mut(&mut self) -> &mut Lock {
        self.lock.get_or_insert_with(Lock::new)
    }

    /// The limits servers are cut to (and pinned within).
    #[cfg(feature = "hub")]
    pub(crate) fn limits_ref(&self) -> &Limits {
        &self.limits
    }

    /// An `on_change` other than `accept` that this assembler sets (by
    /// default or for some server), if any: it means nothing without a lock.
    pub(crate) fn reviewing_on_change(&self) -> Option<OnChange> {
        self.on_change
            .into_iter()
            .chain(self.policies.values().filter_map(|p| p.on_change))
            .find(|c| *c != OnChange::Accept)
    }

    /// A server's `on_change`: its policy's, else the default.
    pub(super) fn on_change_for(&self, config_key: Option<&str>) -> Option<OnChange> {
        config_key
            .and_then(|k| self.policies.get(k))
            .and_then(|p| p.on_change)
            .or(self.on_change)
    }
}
