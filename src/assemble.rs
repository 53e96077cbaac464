//! The entry point: [`Assembler`] runs the stages and builds the [`Assembly`].

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use serde::Serialize;

use crate::budget::{self, Trim};
use crate::dedup::{self, ToolTextCache};
use crate::error::Result;
use crate::model::{Instructions, ServerSnapshot};
use crate::sanitize;
use crate::segment;
use crate::template::Template;
use crate::tokens::{Counter, Encoding, Tiktoken, TokenCounter};

/// The order of servers in the section.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
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
    template: Template,
    counter: Counter,
    order: Order,
    list_tool_only_servers: bool,
    tool_descriptions: bool,
    dedup: bool,
    similarity: f64,
    budget: Option<usize>,
    server_budgets: BTreeMap<String, usize>,
    total_budget: Option<usize>,
    policies: BTreeMap<String, Policy>,
    tool_texts: ToolTextCache,
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
    include: bool,
    instructions: Option<String>,
    weight: f64,
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
            weight: 1.0,
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

    /// The server's weight when a total budget is shared (default 1; values
    /// are used to a thousandth, and anything at or below zero counts as 0.001).
    pub fn weight(mut self, weight: f64) -> Policy {
        self.weight = weight;
        self
    }

    fn weight_millis(&self) -> u64 {
        if self.weight.is_finite() && self.weight > 0.0 {
            ((self.weight * 1000.0).round() as u64).clamp(1, 1_000_000_000)
        } else {
            1
        }
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
            .field("similarity", &self.similarity)
            .field("budget", &self.budget)
            .field("server_budgets", &self.server_budgets)
            .field("total_budget", &self.total_budget)
            .field("policies", &self.policies)
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
            dedup: true,
            similarity: dedup::DEFAULT_SIMILARITY,
            budget: None,
            server_budgets: BTreeMap::new(),
            total_budget: None,
            policies: BTreeMap::new(),
            tool_texts: ToolTextCache::default(),
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

    /// The operator's [`Policy`] for one server, by alias (or `serverInfo.name`).
    pub fn policy(mut self, alias: impl Into<String>, policy: Policy) -> Assembler {
        self.policies.insert(alias.into(), policy);
        self
    }

    /// Whether to remove sentences that restate tool descriptions, repeated
    /// sentences, and instructions identical to another server's (default: `true`).
    pub fn dedup(mut self, yes: bool) -> Assembler {
        self.dedup = yes;
        self
    }

    /// The similarity at or above which a sentence counts as restating a
    /// tool description (Dice coefficient of content words; default 0.75).
    /// Fails with [`ErrorKind::InvalidConfig`](crate::ErrorKind::InvalidConfig) outside `0.0..=1.0`.
    pub fn similarity_threshold(mut self, threshold: f64) -> Result<Assembler> {
        self.similarity = dedup::similarity(threshold)?;
        Ok(self)
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

    /// Counts tokens with your own [`TokenCounter`].
    pub fn token_counter(mut self, counter: impl TokenCounter + 'static) -> Assembler {
        self.counter = Counter::new(Arc::new(counter));
        self
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

    /// Whether tool descriptions are shown next to tool names (default:
    /// `false`: the model receives them with the tool definitions already).
    pub fn tool_descriptions(mut self, yes: bool) -> Assembler {
        self.tool_descriptions = yes;
        self
    }

    /// Assembles the section for these servers.
    ///
    /// Fails only on a template error; every problem with a server's own data
    /// is reported in its [`ServerReport::diagnostics`]. When no server has a
    /// block the section is empty (no heading either).
    pub fn assemble(&self, servers: &[ServerSnapshot]) -> Result<Assembly> {
        let refs: Vec<&ServerSnapshot> = servers.iter().collect();
        self.assemble_with(&refs, None)
    }

    /// Assembles, reusing per-server work from `memo` for servers whose key
    /// (given by the caller, who knows what changed) was seen before.
    pub(crate) fn assemble_with(
        &self,
        servers: &[&ServerSnapshot],
        mut memo: Option<(&[u64], &mut Memo)>,
    ) -> Result<Assembly> {
        // Order and names first: both depend on every server.
        let mut order: Vec<usize> = (0..servers.len()).collect();
        let names: Vec<String> = servers.iter().map(|s| s.display_name()).collect();
        if self.order == Order::Name {
            let key = |i: usize| {
                let s = servers[i];
                (
                    &names[i],
                    s.alias.is_none(),
                    &s.server_info.name,
                    &s.server_info.version,
                    s.instructions.raw(),
                    s.tools.len(),
                )
            };
            // Full content breaks the remaining ties, so input order never shows.
            let content = |i: usize| serde_json::to_string(servers[i]).unwrap_or_default();
            order.sort_by(|a, b| {
                key(*a)
                    .cmp(&key(*b))
                    .then_with(|| content(*a).cmp(&content(*b)))
                    .then(a.cmp(b))
            });
        }
        let shown = disambiguate(
            &order
                .iter()
                .map(|i| (names[*i].as_str(), servers[*i].alias.is_some()))
                .collect::<Vec<_>>(),
        );
        // Budgets and policies go by alias; a server without one is found by
        // its own name only when no alias claims that name.
        let claimed: HashSet<&str> = names
            .iter()
            .zip(servers)
            .filter(|(_, s)| s.alias.is_some())
            .map(|(n, _)| n.as_str())
            .collect();
        let config_key = |i: usize| -> Option<&str> {
            let name = names[i].as_str();
            (servers[i].alias.is_some() || !claimed.contains(name)).then_some(name)
        };

        let mut session = self.template.session(0)?;
        let mut measure = |view: &ServerView| -> Result<(String, usize)> {
            let block = session.block(view)?;
            let n = self.counter.count(&block);
            Ok((block, n))
        };
        if let Some((_, m)) = memo.as_mut() {
            m.generation += 1;
        }

        // Stage A, per server: sanitize, policy, untrimmed size, de-duplication within the server.
        // Shared with the memo: cloned only when a later stage changes one.
        let mut prepared: Vec<Arc<Prepared>> = Vec::with_capacity(order.len());
        for (pos, &i) in order.iter().enumerate() {
            let (name, renamed_from) = &shown[pos];
            let key = memo.as_ref().map(|(keys, _)| (keys[i], name.clone()));
            if let (Some(k), Some((_, m))) = (&key, memo.as_mut())
                && let Some(hit) = m.stage_a.get_mut(k)
            {
                hit.0 = m.generation;
                prepared.push(hit.1.clone());
                continue;
            }
            let mut p = Prepared::new(
                servers[i],
                name,
                renamed_from.as_deref(),
                config_key(i),
                self,
            );
            if p.candidate {
                let first = measure(&p.view)?;
                p.report.tokens_before = first.1;
                p.untrimmed = Some(first);
                if self.dedup {
                    p.dedup_within(servers[i], self.similarity, &self.tool_texts);
                }
            }
            if let (Some(k), Some((_, m))) = (key, memo.as_mut()) {
                let generation = m.generation;
                m.stage_a.insert(k, (generation, Arc::new(p.clone())));
            }
            prepared.push(Arc::new(p));
        }

        // (a) across servers: instructions identical to an earlier server's.
        if self.dedup {
            let mut seen: HashMap<&str, String> = HashMap::new();
            let mut twins = Vec::new();
            for (k, p) in prepared.iter().enumerate() {
                if let Some(whole) = p.whole.as_deref() {
                    match seen.get(whole) {
                        Some(first) => twins.push((k, first.clone())),
                        None => {
                            seen.insert(whole, p.view.name.clone());
                        }
                    }
                }
            }
            for (k, first) in twins {
                Arc::make_mut(&mut prepared[k]).make_twin(first);
            }
        }

        // Limits: own budgets, then fair shares of the total.
        let mut limits: Vec<Option<usize>> = prepared.iter().map(|p| p.budget).collect();
        if let Some(total) = self.total_budget {
            let overhead = self.overhead(prepared.iter().filter(|p| p.candidate).count())?;
            let available = total.saturating_sub(overhead);
            let mut needs = Vec::with_capacity(prepared.len());
            for (p, limit) in prepared.iter().zip(&limits) {
                needs.push(if p.candidate {
                    let n = measure(&p.view)?.1;
                    limit.map_or(n, |l| n.min(l))
                } else {
                    0
                });
            }
            if needs.iter().sum::<usize>() > available {
                let weights: Vec<u64> = prepared.iter().map(|p| p.weight).collect();
                let shares = budget::fair_shares(available, &needs, &weights);
                for (limit, share) in limits.iter_mut().zip(shares) {
                    *limit = Some(limit.map_or(share, |l| l.min(share)));
                }
            }
        }

        // Stages (b)-(d), per server: fit the block into its limit.
        let mut fitted: Vec<Option<(String, usize)>> = vec![None; prepared.len()];
        for (k, p) in prepared.iter_mut().enumerate() {
            if !p.candidate {
                continue;
            }
            let key = memo.as_ref().map(|(keys, _)| {
                (
                    keys[order[k]],
                    p.view.name.clone(),
                    p.twin_of.clone(),
                    limits[k],
                )
            });
            if let (Some(key), Some((_, m))) = (&key, memo.as_mut())
                && let Some(hit) = m.stage_b.get_mut(key)
            {
                hit.0 = m.generation;
                *p = hit.1.clone();
                fitted[k] = hit.2.clone();
                continue;
            }
            fitted[k] = Arc::make_mut(p).fit(limits[k], &mut measure)?;
            if let (Some(key), Some((_, m))) = (key, memo.as_mut()) {
                let generation = m.generation;
                m.stage_b
                    .insert(key, (generation, p.clone(), fitted[k].clone()));
            }
        }
        let mut layout = self.layout(&fitted)?;
        if let Some(total) = self.total_budget {
            // Token merges where blocks meet the body can cost a token or two:
            // shrink the largest block until the whole section fits.
            while self.count_section(&layout) > total {
                let over = self.count_section(&layout) - total;
                let Some(k) = (0..fitted.len())
                    .filter(|k| fitted[*k].is_some())
                    .max_by_key(|k| (fitted[*k].as_ref().map_or(0, |f| f.1), *k))
                else {
                    break;
                };
                let current = fitted[k].as_ref().map_or(0, |f| f.1);
                limits[k] = Some(current.saturating_sub(over.max(1)));
                let p = Arc::make_mut(&mut prepared[k]);
                p.reset_fit();
                let refit = p.fit(limits[k], &mut measure)?;
                // A block that cannot shrink (say, one that renders empty) goes.
                fitted[k] = refit.filter(|(_, n)| *n < current);
                if fitted[k].is_none() {
                    p.omit_for_total();
                }
                layout = self.layout(&fitted)?;
            }
        }
        if let Some((_, m)) = memo.as_mut() {
            m.evict();
        }

        let total_tokens = self.count_section(&layout);
        let Layout { text, spans, .. } = layout;
        let mut reports = Vec::with_capacity(prepared.len());
        for (k, p) in prepared.into_iter().enumerate() {
            let mut report = p.report.clone();
            report.budget = limits[k];
            report.index = order[k];
            if let (Some((block, n)), Some(span)) = (fitted[k].take(), spans[k]) {
                report.included = true;
                report.text = block;
                report.tokens = n;
                report.span = Some(span);
            }
            reports.push(report);
        }
        Ok(Assembly {
            encoding: self.counter.name().to_string(),
            template: self.template.name().to_string(),
            total_tokens,
            text,
            servers: reports,
        })
    }

    /// Tokens of the section around `count` blocks.
    fn overhead(&self, count: usize) -> Result<usize> {
        if count == 0 {
            return Ok(0);
        }
        let session = self.template.session(count)?;
        Ok(self.counter.count(&session.body_parts(count)?.concat()))
    }

    /// The section text, each server's span in it, and where its pieces start.
    fn layout(&self, fitted: &[Option<(String, usize)>]) -> Result<Layout> {
        let mut spans = vec![None; fitted.len()];
        let blocks: Vec<(usize, &str)> = fitted
            .iter()
            .enumerate()
            .filter_map(|(i, f)| f.as_ref().map(|(b, _)| (i, b.as_str())))
            .collect();
        let mut text = String::new();
        let mut starts = Vec::new();
        if blocks.is_empty() {
            return Ok(Layout {
                text,
                spans,
                starts,
            });
        }
        let session = self.template.session(blocks.len())?;
        let parts = session.body_parts(blocks.len())?;
        for (k, part) in parts.iter().enumerate() {
            starts.push(text.len());
            text.push_str(part);
            if let Some((i, block)) = blocks.get(k) {
                let start = text.len();
                starts.push(start);
                text.push_str(block);
                spans[*i] = Some((start, text.len()));
            }
        }
        Ok(Layout {
            text,
            spans,
            starts,
        })
    }

    /// Tokens of the section. When the counter splits after newlines (see
    /// [`TokenCounter::splits_after_newline`]), the section is counted piece
    /// by piece at the block and body starts that follow a newline, so
    /// unchanged pieces come from the memo; otherwise it is counted whole.
    fn count_section(&self, layout: &Layout) -> usize {
        let text = &layout.text;
        if !self.counter.splits_after_newline() {
            return self.counter.count(text);
        }
        let bytes = text.as_bytes();
        let mut cuts: Vec<usize> = layout
            .starts
            .iter()
            .copied()
            .filter(|&p| {
                p > 0
                    && p < bytes.len()
                    && bytes[p - 1] == b'\n'
                    && !bytes[p].is_ascii_whitespace()
                    && bytes[p] != b'/'
            })
            .collect();
        cuts.dedup();
        let mut total = 0;
        let mut from = 0;
        for cut in cuts.into_iter().chain(std::iter::once(text.len())) {
            if cut > from {
                total += self.counter.count(&text[from..cut]);
                from = cut;
            }
        }
        total
    }
}

/// The section text, each server's byte span in it, and the start of every
/// body part and block.
struct Layout {
    text: String,
    spans: Vec<Option<(usize, usize)>>,
    starts: Vec<usize>,
}

/// Per-server work kept between assemblies, keyed by the caller's version
/// key of each server (see [`Assembler::assemble_with`]).
#[derive(Clone, Default)]
pub(crate) struct Memo {
    generation: u64,
    /// (key, shown name) -> the server after stage A.
    stage_a: HashMap<(u64, String), (u64, Arc<Prepared>)>,
    /// (key, shown name, twin of, limit) -> the server after fitting, and its block.
    #[allow(clippy::type_complexity)]
    stage_b: HashMap<
        (u64, String, Option<String>, Option<usize>),
        (u64, Arc<Prepared>, Option<(String, usize)>),
    >,
}

impl Memo {
    /// Drops what the last assembly did not use.
    fn evict(&mut self) {
        let g = self.generation;
        self.stage_a.retain(|_, v| v.0 == g);
        self.stage_b.retain(|_, v| v.0 == g);
    }
}

/// A tool as the template sees it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ToolView {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
}

/// A server as the template sees it (all text sanitized, not yet escaped).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ServerView {
    pub name: String,
    pub alias: Option<String>,
    pub server_name: String,
    pub title: Option<String>,
    pub version: String,
    pub era: &'static str,
    pub protocol_version: String,
    pub instructions: Option<String>,
    pub note: Option<String>,
    pub tools: Vec<ToolView>,
    pub more_tools: usize,
}

/// One server on its way through the stages.
#[derive(Clone)]
struct Prepared {
    /// The server as it will be rendered, updated by each stage.
    view: ServerView,
    /// The view after de-duplication, before any budget trimming.
    deduped: Option<ServerView>,
    /// The instructions as units, once de-duplicated.
    trim: Option<Trim>,
    /// Removals of the de-duplication stage (kept across refits).
    dedup_removed: Vec<Removal>,
    /// Whether operator text replaced the instructions (never de-duplicated).
    replaced: bool,
    /// The untrimmed block and its tokens, reused when nothing was removed.
    untrimmed: Option<(String, usize)>,
    /// The normalized instructions, to find servers with the same ones.
    whole: Option<String>,
    /// The earlier server whose instructions these repeat.
    twin_of: Option<String>,
    candidate: bool,
    budget: Option<usize>,
    weight: u64,
    report: ServerReport,
}

impl Prepared {
    fn new(
        s: &ServerSnapshot,
        name: &str,
        renamed_from: Option<&str>,
        config_key: Option<&str>,
        config: &Assembler,
    ) -> Prepared {
        let mut diagnostics = Vec::new();
        let mut removed = Vec::new();
        if let Some(original) = renamed_from {
            diagnostics.push(format!(
                "another server has the name {original:?}; shown as {name:?}"
            ));
        }
        let policy = config_key.and_then(|k| config.policies.get(k));
        let mut policy_notes = Vec::new();
        let mut instructions = match &s.instructions {
            Instructions::Present(raw) => Some(sanitize::text(raw)).filter(|t| !t.is_empty()),
            Instructions::Blank(raw) => {
                diagnostics.push(format!(
                    "instructions are blank ({} characters of whitespace or invisible text); not rendered",
                    raw.chars().count()
                ));
                None
            }
            Instructions::Absent => None,
        };
        let mut replaced = false;
        let mut excluded = false;
        if let Some(policy) = policy {
            if let Some(text) = &policy.instructions {
                removed.extend(instructions.take().map(policy_removal));
                instructions = Some(sanitize::text(text)).filter(|t| !t.is_empty());
                replaced = true;
                policy_notes.push("instructions replaced".to_string());
            }
            if !policy.include {
                excluded = true;
                removed.extend(instructions.take().map(policy_removal));
                policy_notes.push("excluded".to_string());
                diagnostics.push("omitted: excluded by policy".to_string());
            }
            if policy.weight_millis() != 1000 {
                policy_notes.push(format!("weight {}", policy.weight_millis() as f64 / 1000.0));
            }
        }
        if let Some(err) = &s.tools_error {
            diagnostics.push(format!(
                "tools/list failed with {}: {}",
                err.code,
                sanitize::line(&err.message)
            ));
        }
        let tools = if excluded {
            Vec::new()
        } else {
            s.tools
                .iter()
                .filter_map(|t| {
                    let name = sanitize::line(&t.name);
                    if name.is_empty() {
                        return None;
                    }
                    Some(ToolView {
                        name,
                        title: t.title.as_deref().map(sanitize::line),
                        description: if config.tool_descriptions {
                            t.description
                                .as_deref()
                                .map(sanitize::text)
                                .filter(|d| !d.is_empty())
                        } else {
                            None
                        },
                    })
                })
                .collect::<Vec<_>>()
        };
        let named = s
            .tools
            .iter()
            .filter(|t| !sanitize::line(&t.name).is_empty())
            .count();
        if named < s.tools.len() {
            diagnostics.push(format!(
                "{} tool(s) with an empty name not listed",
                s.tools.len() - named
            ));
        }
        let has_text = instructions.is_some();
        let has_tools = !tools.is_empty();
        let candidate = !excluded && (has_text || (has_tools && config.list_tool_only_servers));
        if !excluded && !candidate {
            diagnostics.push(if has_tools {
                "omitted: no instructions, and servers with only tools are not listed".into()
            } else {
                "omitted: no instructions and no tools".into()
            });
        }
        let view = ServerView {
            name: name.to_string(),
            alias: s.alias.as_deref().map(sanitize::line),
            server_name: sanitize::line(&s.server_info.name),
            title: s.server_info.title.as_deref().map(sanitize::line),
            version: sanitize::line(&s.server_info.version),
            era: s.era.as_str(),
            protocol_version: sanitize::line(&s.protocol_version),
            instructions,
            note: None,
            tools,
            more_tools: 0,
        };
        let report = ServerReport {
            name: view.name.clone(),
            alias: view.alias.clone(),
            server_name: view.server_name.clone(),
            version: view.version.clone(),
            era: view.era,
            protocol_version: view.protocol_version.clone(),
            instructions: s.instructions.state(),
            tools: s.tools.len(),
            policy: (!policy_notes.is_empty()).then(|| policy_notes.join("; ")),
            included: false,
            text: String::new(),
            span: None,
            budget: None,
            tokens_before: 0,
            tokens: 0,
            removed,
            truncated: false,
            diagnostics,
            index: 0,
        };
        Prepared {
            view,
            deduped: None,
            trim: None,
            dedup_removed: Vec::new(),
            replaced,
            untrimmed: None,
            whole: None,
            twin_of: None,
            candidate,
            budget: config_key
                .and_then(|k| config.server_budgets.get(k))
                .copied()
                .or(config.budget),
            weight: policy.map_or(1000, Policy::weight_millis),
            report,
        }
    }

    /// Stage (a) within the server: drops units that restate one of its tool
    /// descriptions or repeat an earlier unit.
    fn dedup_within(&mut self, source: &ServerSnapshot, threshold: f64, cache: &ToolTextCache) {
        let Some(text) = self.view.instructions.clone() else {
            return;
        };
        if self.replaced {
            self.trim = Some(self.trim_of(text));
            return;
        }
        self.whole = Some(dedup::normalize(&text)).filter(|w| !w.is_empty());
        let mut trim = self.trim_of(text);
        let tools: Vec<_> = source
            .tools
            .iter()
            .filter_map(|t| Some(cache.get(&t.name, t.description.as_deref()?)))
            .collect();
        let mut units_seen: HashSet<String> = HashSet::new();
        for (k, unit) in trim.units.iter().enumerate() {
            let unit_text = unit.text(&trim.text);
            let restates = matches!(
                unit.kind,
                segment::UnitKind::Sentence | segment::UnitKind::ListItem
            )
            .then(|| dedup::restated_tool(unit_text, &tools, threshold))
            .flatten();
            if let Some(tool) = restates {
                trim.keep[k] = false;
                self.dedup_removed.push(Removal {
                    text: unit_text.to_string(),
                    reason: "restates_tool",
                    tool: Some(tool.to_string()),
                    server: None,
                });
                continue;
            }
            let norm = dedup::normalize(unit_text);
            if !norm.is_empty() && !units_seen.insert(norm) {
                trim.keep[k] = false;
                self.dedup_removed.push(Removal {
                    text: unit_text.to_string(),
                    reason: "repeated",
                    tool: None,
                    server: None,
                });
            }
        }
        self.view.instructions = trim.render(&trim.keep);
        self.trim = Some(trim);
    }

    /// Stage (a) across servers: the instructions equal `first`'s, which
    /// come earlier in the section; show a reference instead.
    fn make_twin(&mut self, first: String) {
        let text = self
            .trim
            .as_ref()
            .map(|t| t.text.clone())
            .unwrap_or_default();
        self.dedup_removed = vec![Removal {
            text,
            reason: "same_as_server",
            tool: None,
            server: Some(first.clone()),
        }];
        self.view.instructions = None;
        self.view.note = Some(format!("Same instructions as {first} above."));
        self.trim = None;
        self.twin_of = Some(first);
    }

    fn trim_of(&self, text: String) -> Trim {
        let units = segment::units(&text);
        let names: Vec<String> = self
            .view
            .tools
            .iter()
            .map(|t| dedup::normalize(&t.name))
            .collect();
        let priority = units
            .iter()
            .map(|u| dedup::priority(u, u.text(&text), &names))
            .collect();
        let keep = vec![true; units.len()];
        Trim {
            text,
            units,
            priority,
            keep,
        }
    }

    /// Stages (b)–(d): fits the de-duplicated view into `limit`.
    fn fit(
        &mut self,
        limit: Option<usize>,
        measure: &mut dyn FnMut(&ServerView) -> Result<(String, usize)>,
    ) -> Result<Option<(String, usize)>> {
        let base = self
            .deduped
            .get_or_insert_with(|| self.view.clone())
            .clone();
        if self.trim.is_none()
            && self.twin_of.is_none()
            && let Some(text) = base.instructions.clone()
        {
            self.trim = Some(self.trim_of(text));
        }
        let rendered = self
            .untrimmed
            .clone()
            .filter(|_| self.dedup_removed.is_empty());
        let fitted = budget::fit(base, self.trim.as_ref(), limit, rendered, measure)?;
        self.report.removed.retain(|r| r.reason == "policy");
        self.report
            .removed
            .extend(self.dedup_removed.iter().cloned());
        self.report.removed.extend(fitted.removed);
        self.report.truncated = fitted.truncated;
        if fitted.block.is_none() {
            let diag = format!(
                "omitted: its heading alone is over the budget of {} tokens",
                limit.unwrap_or(0)
            );
            if !self.report.diagnostics.contains(&diag) {
                self.report.diagnostics.push(diag);
            }
        }
        Ok(fitted.block)
    }

    fn omit_for_total(&mut self) {
        let diag = "omitted: the section is over its total budget".to_string();
        if !self.report.diagnostics.contains(&diag) {
            self.report.diagnostics.push(diag);
        }
    }

    fn reset_fit(&mut self) {
        self.report
            .diagnostics
            .retain(|d| !d.starts_with("omitted: its heading alone"));
    }
}

fn policy_removal(text: String) -> Removal {
    Removal {
        text,
        reason: "policy",
        tool: None,
        server: None,
    }
}

/// The shown names, in section order. A name a host alias claims is kept
/// by that server; any other server that would show the same name gets a
/// suffix ` (2)`, ` (3)`, … that no other server's name has (the original
/// name is kept beside it).
fn disambiguate(names: &[(&str, bool)]) -> Vec<(String, Option<String>)> {
    let mut taken: HashSet<String> = names.iter().map(|(n, _)| n.to_string()).collect();
    let mut owner: HashMap<&str, usize> = HashMap::new();
    // Aliased servers claim their names first, then the rest in order.
    for (k, (name, aliased)) in names.iter().enumerate() {
        if *aliased {
            owner.entry(name).or_insert(k);
        }
    }
    for (k, (name, _)) in names.iter().enumerate() {
        owner.entry(name).or_insert(k);
    }
    names
        .iter()
        .enumerate()
        .map(|(k, (name, _))| {
            if owner.get(name) == Some(&k) {
                return (name.to_string(), None);
            }
            let mut n = 2;
            let renamed = loop {
                let candidate = format!("{name} ({n})");
                if !taken.contains(&candidate) {
                    break candidate;
                }
                n += 1;
            };
            taken.insert(renamed.clone());
            (renamed, Some(name.to_string()))
        })
        .collect()
}

/// One removal from a server's block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Removal {
    /// The text removed.
    pub text: String,
    /// Why: `restates_tool`, `repeated`, `same_as_server`, `budget` or `policy`.
    pub reason: &'static str,
    /// The tool whose description it restates, for `restates_tool`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The server it duplicates, for `same_as_server`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
}

/// What happened to one server.
#[derive(Debug, Clone, Serialize)]
pub struct ServerReport {
    /// The name shown in the section.
    pub name: String,
    /// The host's alias, when given.
    pub alias: Option<String>,
    /// `serverInfo.name`, sanitized.
    pub server_name: String,
    /// `serverInfo.version`, sanitized.
    pub version: String,
    /// `"legacy"` or `"modern"`.
    pub era: &'static str,
    /// The negotiated protocol version.
    pub protocol_version: String,
    /// `"present"`, `"absent"` or `"blank"`.
    pub instructions: &'static str,
    /// How many tools the server has.
    pub tools: usize,
    /// The operator policy that applied (`excluded`, `instructions replaced`, `weight 2`), if any.
    pub policy: Option<String>,
    /// Whether the server has a block in the section.
    pub included: bool,
    /// The server's block, exactly as it stands in the section (empty when not included).
    pub text: String,
    /// Byte range of [`ServerReport::text`] in [`Assembly::text`].
    pub span: Option<(usize, usize)>,
    /// The token budget the block was fitted to (its own budget, or its
    /// share of the total when that is smaller); `None` when unlimited.
    pub budget: Option<usize>,
    /// Tokens of the server's block before de-duplication and trimming.
    pub tokens_before: usize,
    /// Tokens of [`ServerReport::text`].
    pub tokens: usize,
    /// What was removed from the block, and why.
    pub removed: Vec<Removal>,
    /// Whether the block was cut with a marker.
    pub truncated: bool,
    /// Problems with the server's data (blank instructions, a failed `tools/list`, …).
    pub diagnostics: Vec<String>,
    /// The server's position in the input of [`Assembler::assemble`] (not
    /// in the JSON, which stays the same whatever the input order).
    #[serde(skip)]
    pub index: usize,
}

/// The assembled section and its report.
#[derive(Debug, Clone, Serialize)]
pub struct Assembly {
    encoding: String,
    template: String,
    text: String,
    total_tokens: usize,
    servers: Vec<ServerReport>,
}

impl Assembly {
    /// The empty section of `assembler` (no servers).
    #[cfg(feature = "hub")]
    pub(crate) fn empty(assembler: &Assembler) -> Assembly {
        Assembly {
            encoding: assembler.counter.name().to_string(),
            template: assembler.template.name().to_string(),
            text: String::new(),
            total_tokens: 0,
            servers: Vec::new(),
        }
    }

    /// The section, ready to go into a system prompt.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Tokens of [`Assembly::text`].
    pub fn total_tokens(&self) -> usize {
        self.total_tokens
    }

    /// The encoding the counts are in, e.g. `"o200k_base"`.
    pub fn encoding(&self) -> &str {
        &self.encoding
    }

    /// The template's name.
    pub fn template(&self) -> &str {
        &self.template
    }

    /// One report per input server, in section order.
    pub fn servers(&self) -> &[ServerReport] {
        &self.servers
    }

    /// The report as pretty JSON.
    pub fn to_json(&self) -> String {
        // Serializing plain strings and numbers cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}
