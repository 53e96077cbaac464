//! The names the model sees for a server's tools: hosts rename them
//! (`get_invoice` of server `billing` is `mcp__billing__get_invoice` in
//! Claude Code), so instructions that say `get_invoice` name a tool the
//! model does not have. A [`ToolNames`] scheme computes the host's name for
//! each (server, tool); the assembler renders those names in the tool
//! list, the deferred index and the instructions (see the crate docs, "Tool
//! names").
//!
//! Each host's rule, and where it comes from (read from the host's source
//! where it is public; "inferred" where it is not). Which host names by
//! which rule ([`NameRule`]) is its row of the host
//! table ([`crate::hosts`]); the rules are computed here:
//!
//! | scheme | name | characters | past 64 characters |
//! |---|---|---|---|
//! | `claude-code` | `mcp__<server>__<tool>` | each UTF-16 unit outside `[A-Za-z0-9_-]` becomes `_`, in the server and the tool separately | sent whole: the API rejects the request (`tools.N.custom.name: String should have at most 64 characters`) |
//! | `vscode` | `mcp_<server>_<tool>` | server: lower-cased, runs outside `[a-z0-9_.-]` become one `_`, cut to 13; a repeated server prefix gets `2`, `3`, … before its `_`; then every `.` becomes `_` | cut at 64 UTF-16 units, silently |
//! | `codex` | `mcp__<server>__<tool>` | each character outside `[A-Za-z0-9_]` becomes `_` | the first 24 characters, then the 40 hex digits of SHA-1 of the unsanitized name |
//! | `opencode` | `mcp__<server>__<tool>` | as `claude-code` | sent whole: the provider rejects it |
//! | `plain` | `<tool>` | unchanged | sent whole |
//! | a pattern, e.g. `{server}__{tool}` | the pattern | each character outside `[A-Za-z0-9_-]` becomes `_` | the first 55 characters, `_`, then 8 hex digits of SHA-256 of `server`, NUL, `tool` |
//!
//! Sources:
//! - Claude Code: `mcp__` + `normalizeNameForMCP(server)` + `__` +
//!   `normalizeNameForMCP(tool)` with `name.replace(/[^a-zA-Z0-9_-]/g, '_')`
//!   (`services/mcp/normalization.ts`, `mcpStringUtils.ts`, as quoted in
//!   public analyses of its bundled source); no shortening: names over 64
//!   fail the request (anthropics/claude-code #2412, #19770, #19882). The
//!   extra rule for `claude.ai …` connectors (collapse `_` runs) is not
//!   reproduced: those servers are not in MCP client configs.
//! - VS Code: `McpToolName { Prefix = 'mcp_', MaxPrefixLen = 18, MaxLength = 64 }`
//!   (`src/vs/workbench/contrib/mcp/common/mcpTypes.ts`), the prefix from
//!   `McpPrefixGenerator` (`mcpService.ts`, later `mcpServer.ts`) and the
//!   name `(prefix + tool.name).replaceAll('.', '_').slice(0, 64)`
//!   (`McpTool`, `mcpServer.ts`). Since microsoft/vscode PR #318638 the
//!   prefix comes from the server's announced `serverInfo.title`, else its
//!   `serverInfo.name` ([`ToolNames::server_label`]). Inferred: tool names
//!   with other characters than `.` outside `[A-Za-z0-9_-]` are passed as they are.
//! - Codex: `qualify_tools` / `sanitize_responses_api_tool_name` in
//!   `codex-rs/core/src/mcp_connection_manager.rs` and `mcp/mod.rs`
//!   (`mcp__` prefix since openai/codex PR #5309). Versions differ on
//!   whether `-` is kept; the newest (`mcp/mod.rs`) replaces it, as here.
//!   Codex keeps the first of two tools that end up with one name.
//! - OpenCode: `mcp__<server>__<tool>` since anomalyco/opencode PR #33533
//!   (before: `<server>_<tool>`, which the pattern `{server}_{tool}`
//!   reproduces), each part through `[^a-zA-Z0-9_-]` → `_` (PR #3842).
//!   Inferred: no shortening (the provider's error for a 65-character name
//!   is reported in anomalyco/opencode #3523).
//!
//! Two tools can end up with one name (`a.b` and `a_b` under Claude Code).
//! [`ToolNames::exposed`] gives the host's name for one tool, as the host
//! computes it, collisions included; [`ToolNames::table`] names a set of
//! tools and never gives one name twice: see [`NameTable`].

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

use crate::error::{Error, ErrorKind, Result};
use crate::hosts::NameRule;

mod name;
mod rules;
pub use name::{ExposedName, Fit, MAX_LEN};
use name::{PATTERN_HASH, Part};
use rules::{
    capped_or_over, codex, hashed, js_safe, parse_pattern, rust_safe, vscode, vscode_prefix,
};

/// A host: a row of the host table ([`crate::hosts`]). Those with a
/// [`NameRule`] name tools by it
/// ([`ToolNames::hosts`]).
pub use crate::hosts::Host;

/// The scheme of the tools' own names.
const PLAIN: &str = "plain";

/// How the model sees a server's tools named: a host's scheme, the tools'
/// own names ([`ToolNames::plain`], the default), or a pattern of your own.
///
/// ```
/// use mcp_preamble::tool_names::{Host, ToolNames};
///
/// let names = ToolNames::host(Host::ClaudeCode);
/// assert_eq!(names.exposed("billing", "get.invoice").as_str(), "mcp__billing__get_invoice");
/// let gateway: ToolNames = "{server}__{tool}".parse()?;
/// assert_eq!(gateway.exposed("billing", "get_invoice").as_str(), "billing__get_invoice");
/// # Ok::<(), mcp_preamble::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ToolNames(Scheme);

#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
enum Scheme {
    #[default]
    Plain,
    Host(Host),
    Pattern(Pattern),
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Pattern {
    text: String,
    parts: Vec<Part>,
    /// The parts outside `[ ]`, when a prefix is given only on collision.
    bare: Option<Vec<Part>>,
    /// The longest name given ([`MAX_LEN`] unless [`ToolNames::within`]).
    max: usize,
    /// The shortest `max` may be: the pattern's own text and a hash.
    least: usize,
}

impl ToolNames {
    /// The tools' own names, unchanged (the default): for hosts that pass
    /// MCP tool names through.
    pub fn plain() -> ToolNames {
        ToolNames(Scheme::Plain)
    }

    /// The scheme of one host; the tools' own names for a host whose
    /// naming is not known ([`Profile::tool_names`](crate::hosts::Profile::tool_names) is `None`).
    pub fn host(host: Host) -> ToolNames {
        match host.profile().tool_names {
            Some(_) => ToolNames(Scheme::Host(host)),
            None => ToolNames::plain(),
        }
    }

    /// The hosts whose naming is known, in the host table's order.
    pub fn hosts() -> impl Iterator<Item = Host> + Clone {
        Host::all().filter(|h| h.profile().tool_names.is_some())
    }

    /// The naming rule of a host's scheme.
    fn rule(&self) -> Option<NameRule> {
        match self.0 {
            Scheme::Host(h) => h.profile().tool_names,
            _ => None,
        }
    }

    /// A pattern of your own, such as `"{server}__{tool}"` (a gateway's
    /// names): `{tool}` once, `{server}` at most once, and otherwise only
    /// `A-Z a-z 0-9 _ -`. Each substituted part has the characters outside
    /// those replaced with `_`; a name past 64 characters keeps its first
    /// 55, then `_` and 8 hex digits of a SHA-256 of the server and tool.
    ///
    /// A prefix in brackets is given only to tell tools apart:
    /// `[{server}__]{tool}` names a tool `{tool}` unless another server's
    /// tool of the same table (or a name kept from before) has that name,
    /// and then `{server}__{tool}` ([`ToolNames::table`]).
    ///
    /// Fails with [`ErrorKind::InvalidConfig`] for any other pattern, or
    /// one whose own text leaves fewer than 10 characters for names.
    pub fn pattern(pattern: &str) -> Result<ToolNames> {
        let bad = |why: &str| {
            Error::new(
                ErrorKind::InvalidConfig,
                format!("tool-name pattern {pattern:?} {why}"),
            )
        };
        let (parts, group) = parse_pattern(pattern).map_err(bad)?;
        if !parts.contains(&Part::Tool) {
            return Err(bad("has no {tool}"));
        }
        let bare = match group {
            Some(g) if parts[g.clone()].contains(&Part::Tool) => {
                return Err(bad("has {tool} inside [ ]: only a prefix may be optional"));
            }
            Some(g) if g.is_empty() => return Err(bad("has an empty [ ]")),
            Some(g) => Some(
                (parts.iter().enumerate())
                    .filter(|(i, _)| !g.contains(i))
                    .map(|(_, p)| p.clone())
                    .collect(),
            ),
            None => None,
        };
        let fixed: usize = parts
            .iter()
            .map(|p| match p {
                Part::Text(t) => t.len(),
                _ => 0,
            })
            .sum();
        if fixed + PATTERN_HASH + 2 > MAX_LEN {
            return Err(bad("leaves too little of the 64 characters for names"));
        }
        Ok(ToolNames(Scheme::Pattern(Pattern {
            text: pattern.to_string(),
            parts,
            bare,
            max: MAX_LEN,
            least: fixed + PATTERN_HASH + 2,
        })))
    }

    /// A pattern's names at most `max` characters (a longer one keeps its
    /// first `max - 9`, then `_` and the 8 hex digits), for a host that
    /// puts a prefix of its own before them: a gateway's names, which the
    /// host shows as `mcp__<gateway>__<name>` under the same 64-character
    /// cap. `max` is taken within what the pattern leaves room for (its
    /// own text and the hash) and 64; other schemes are returned as they
    /// are.
    pub fn within(self, max: usize) -> ToolNames {
        match self.0 {
            Scheme::Pattern(mut p) => {
                p.max = max.clamp(p.least, MAX_LEN);
                ToolNames(Scheme::Pattern(p))
            }
            other => ToolNames(other),
        }
    }

    /// The longest name this scheme gives without reporting it over the
    /// cap: [`MAX_LEN`], or a pattern's [`ToolNames::within`].
    fn max_len(&self) -> usize {
        match &self.0 {
            Scheme::Pattern(p) => p.max,
            _ => MAX_LEN,
        }
    }

    /// The host this scheme reproduces, if it is a host's.
    pub fn as_host(&self) -> Option<Host> {
        match self.0 {
            Scheme::Host(h) => Some(h),
            _ => None,
        }
    }

    /// Whether this is a pattern of your own ([`ToolNames::pattern`]).
    pub fn is_pattern(&self) -> bool {
        matches!(self.0, Scheme::Pattern(_))
    }

    /// Whether names can tell two servers' tools of one name apart: every
    /// scheme but a pattern without `{server}` (and [`ToolNames::plain`]).
    pub fn tells_servers_apart(&self) -> bool {
        match &self.0 {
            Scheme::Pattern(p) => p.parts.contains(&name::Part::Server),
            Scheme::Plain => false,
            Scheme::Host(_) => true,
        }
    }

    /// Whether names are the tools' own ([`ToolNames::plain`]).
    pub fn is_plain(&self) -> bool {
        self.0 == Scheme::Plain
    }

    /// The server name the host builds tool names from, of a server's
    /// identities: its `alias` (the key in the client's config), its
    /// `serverInfo.name` and `serverInfo.title`. VS Code uses the announced
    /// title, else the name (microsoft/vscode PR #318638); every other
    /// scheme uses the alias, else the name.
    pub fn server_label<'a>(
        &self,
        alias: Option<&'a str>,
        name: &'a str,
        title: Option<&'a str>,
    ) -> &'a str {
        match self.rule() {
            Some(NameRule::Vscode) => title.filter(|t| !t.is_empty()).unwrap_or(name),
            _ => alias.unwrap_or(name),
        }
    }

    /// The name the model sees for `tool` of `server` (a name from
    /// [`ToolNames::server_label`]), as the host computes it: two tools can
    /// get one name. Use [`ToolNames::table`] to name a set of tools.
    pub fn exposed(&self, server: &str, tool: &str) -> ExposedName {
        if let Scheme::Pattern(p) = &self.0 {
            return p.apply(server, tool);
        }
        match self.rule() {
            Some(NameRule::Mcp) => {
                capped_or_over(format!("mcp__{}__{}", js_safe(server), js_safe(tool)))
            }
            Some(NameRule::Vscode) => vscode(&vscode_prefix(server, 1), tool),
            Some(NameRule::Codex) => codex(server, tool),
            _ => capped_or_over(tool.to_string()),
        }
    }

    /// Names a set of tools, given as (server, tool) in a stable order (the
    /// section's order; sort them for names that do not depend on it).
    ///
    /// Collision-free: no two different (server, tool) pairs get one name.
    /// When a tool's name ([`ToolNames::exposed`]) was already given, it
    /// gets that name with a SHA-256 suffix instead (fitted to 64
    /// characters, [`Fit::Hashed`]) and the table lists the collision
    /// ([`NameTable::collisions`]): the host itself would send two tools
    /// under one name (or, like Codex, drop the later one). VS Code's
    /// numbered prefixes for servers whose prefixes repeat are given here.
    /// A pair given twice is named once.
    pub fn table<'a>(&self, tools: impl IntoIterator<Item = (&'a str, &'a str)>) -> NameTable {
        self.table_keeping(tools, &Kept::default())
    }

    /// As [`ToolNames::table`], keeping the names of `kept` (the names a
    /// gateway has served so far): a pair of `kept` gets its name there,
    /// and no other pair gets a name `kept` holds, whether or not the
    /// pair that holds it is given now, nor a reserved one. So a name,
    /// once given, never moves to another tool, whatever is added or
    /// listed first later.
    pub(crate) fn table_keeping<'a>(
        &self,
        tools: impl IntoIterator<Item = (&'a str, &'a str)>,
        kept: &Kept,
    ) -> NameTable {
        // Nothing kept (every table outside a gateway): no lookups per tool.
        let keeping = !(kept.given.is_empty() && kept.reserved.is_empty());
        let (tools, shared) = self.shared_bare_names(tools);
        let mut table = NameTable::default();
        let mut vscode_prefixes: BTreeMap<&str, String> = BTreeMap::new();
        let mut taken_prefixes: BTreeSet<String> = BTreeSet::new();
        for (server, tool) in tools {
            let key = (server.to_string(), tool.to_string());
            if table.index.contains_key(&key) {
                continue;
            }
            let wanted = match self.rule() {
                Some(NameRule::Vscode) => {
                    let prefix = vscode_prefixes.entry(server).or_insert_with(|| {
                        let mut n = 1;
                        while taken_prefixes.contains(&vscode_prefix(server, n)) {
                            n += 1;
                        }
                        let p = vscode_prefix(server, n);
                        taken_prefixes.insert(p.clone());
                        p
                    });
                    vscode(prefix, tool)
                }
                _ => self.wanted((server, tool), &shared, kept),
            };
            let taken = |name: &str| {
                table.by_name.contains_key(name)
                    || (keeping
                        && (kept.reserved.contains(name)
                            || (kept.given.resolve(name))
                                .is_some_and(|owner| owner != (server, tool))))
            };
            let mut given = match keeping.then(|| kept.given.get(server, tool)).flatten() {
                Some(name) if !table.by_name.contains_key(name.as_str()) => name.clone(),
                _ => wanted.clone(),
            };
            let mut n = 0u32;
            while taken(given.as_str()) {
                n += 1;
                given = ExposedName {
                    name: hashed(
                        &wanted.name,
                        &format!("{server}\u{0}{tool}\u{0}{n}"),
                        self.max_len(),
                    ),
                    fit: Fit::Hashed,
                };
            }
            if given.name != wanted.name {
                table.collisions.push(Collision {
                    server: server.to_string(),
                    tool: tool.to_string(),
                    wanted: wanted.name,
                    given: given.name.clone(),
                });
            }
            let at = table.entries.len();
            table.by_name.insert(given.name.clone(), at);
            table.index.insert(key.clone(), at);
            table.entries.push((key.0, key.1, given));
        }
        table
    }

    /// The name `(server, tool)` wants: [`ToolNames::exposed`], or under a
    /// pattern with a `[ ]` prefix the bare name when no other tool of the
    /// table wants it (`shared`) and no other held or reserved it before.
    fn wanted(
        &self,
        (server, tool): (&str, &str),
        shared: &BTreeSet<String>,
        kept: &Kept,
    ) -> ExposedName {
        let Scheme::Pattern(p) = &self.0 else {
            return self.exposed(server, tool);
        };
        (p.bare(server, tool))
            .filter(|b| !shared.contains(b.as_str()) && !kept.reserved.contains(b.as_str()))
            .filter(|b| {
                (kept.given.resolve(b.as_str())).is_none_or(|owner| owner == (server, tool))
            })
            .unwrap_or_else(|| p.apply(server, tool))
    }

    /// `tools` as a list, and the bare names (a pattern's without its `[ ]`
    /// prefix) more than one of them would get: those tools are prefixed.
    fn shared_bare_names<'a>(
        &self,
        tools: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> (Vec<(&'a str, &'a str)>, BTreeSet<String>) {
        let tools: Vec<(&str, &str)> = tools.into_iter().collect();
        let Scheme::Pattern(p) = &self.0 else {
            return (tools, BTreeSet::new());
        };
        if p.bare.is_none() {
            return (tools, BTreeSet::new());
        }
        let mut owners: BTreeMap<String, BTreeSet<(&str, &str)>> = BTreeMap::new();
        for &(server, tool) in &tools {
            if let Some(b) = p.bare(server, tool) {
                owners.entry(b.name).or_default().insert((server, tool));
            }
        }
        let shared = (owners.into_iter())
            .filter(|(_, o)| o.len() > 1)
            .map(|(b, _)| b)
            .collect();
        (tools, shared)
    }

    /// Every scheme name [`ToolNames::from_str`] knows besides patterns:
    /// the hosts of [`ToolNames::hosts`], then `plain`.
    pub fn names() -> Vec<&'static str> {
        ToolNames::hosts()
            .map(Host::as_str)
            .chain([PLAIN])
            .collect()
    }
}

impl fmt::Display for ToolNames {
    /// The scheme's name (`claude-code`, …, `plain`) or the pattern.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Scheme::Plain => f.pad(PLAIN),
            Scheme::Host(h) => f.pad(h.as_str()),
            Scheme::Pattern(p) => f.pad(&p.text),
        }
    }
}

impl FromStr for ToolNames {
    type Err = Error;

    /// `claude-code`, `vscode`, `codex`, `opencode`, `plain`, or a pattern
    /// (anything with a `{`); fails with [`ErrorKind::InvalidConfig`].
    fn from_str(s: &str) -> Result<ToolNames> {
        if let Some(h) = ToolNames::hosts().find(|h| h.as_str() == s) {
            return Ok(ToolNames::host(h));
        }
        if s == PLAIN {
            return Ok(ToolNames::plain());
        }
        if s.contains('{') {
            return ToolNames::pattern(s);
        }
        let hint = crate::support::distance::did_you_mean(s, ToolNames::names())
            .map(|m| format!(" (did you mean {m:?}?)"))
            .unwrap_or_default();
        Err(Error::new(
            ErrorKind::InvalidConfig,
            format!(
                "unknown tool-name scheme {s:?}{hint}: expected {}, or a pattern with {{tool}} such as \"{{server}}__{{tool}}\"",
                ToolNames::names().join(", ")
            ),
        ))
    }
}

impl<'de> serde::Deserialize<'de> for ToolNames {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<ToolNames, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl serde::Serialize for ToolNames {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// What [`ToolNames::table_keeping`] keeps: the names given so far (a
/// gateway's, across its revisions), and names no tool may get (the
/// gateway's own tools').
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Kept {
    /// The names given, by (server, tool).
    pub given: NameTable,
    /// Names no tool gets.
    pub reserved: BTreeSet<String>,
}

/// A tool that got another name than its scheme's, because an earlier
/// tool of the [`NameTable`] had that one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Collision {
    /// The tool's server (as given to [`ToolNames::table`]).
    pub server: String,
    /// The tool's own name.
    pub tool: String,
    /// The scheme's name for it, which an earlier tool has.
    pub wanted: String,
    /// The name it was given.
    pub given: String,
}

/// Names of a set of tools, one each, none given twice
/// ([`ToolNames::table`]): look a name up either way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameTable {
    entries: Vec<(String, String, ExposedName)>,
    index: BTreeMap<(String, String), usize>,
    by_name: BTreeMap<String, usize>,
    collisions: Vec<Collision>,
}

impl NameTable {
    /// The name of `tool` of `server`, if the table has it.
    pub fn get(&self, server: &str, tool: &str) -> Option<&ExposedName> {
        let k = self.index.get(&(server.to_string(), tool.to_string()))?;
        Some(&self.entries[*k].2)
    }

    /// The (server, tool) a name stands for: how a gateway routes a call.
    pub fn resolve(&self, name: &str) -> Option<(&str, &str)> {
        let (s, t, _) = &self.entries[*self.by_name.get(name)?];
        Some((s, t))
    }

    /// Every (server, tool, name), in the order given.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str, &ExposedName)> {
        self.entries
            .iter()
            .map(|(s, t, n)| (s.as_str(), t.as_str(), n))
    }

    /// The tools named apart because an earlier one had their name.
    pub fn collisions(&self) -> &[Collision] {
        &self.collisions
    }

    /// How many tools the table names.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table names no tool.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The names a gateway keeps after it served `now`: every entry of
    /// `now`, then the entries of `self` (the names kept before) whose tool
    /// `now` does not name, so a tool that leaves and comes back gets its
    /// name again and no other tool takes it meanwhile. At most `retired`
    /// of those are kept, the most recently served first (the rest are
    /// forgotten, oldest first: the table stays bounded when an upstream
    /// churns names).
    #[cfg(feature = "serve")]
    pub(crate) fn kept_after(&self, now: &NameTable, retired: usize) -> NameTable {
        let mut kept = NameTable::default();
        for (s, t, n) in now.iter() {
            kept.insert(s, t, n.clone());
        }
        let mut left = retired;
        for (s, t, n) in self.iter() {
            if left == 0 {
                break;
            }
            if kept.insert(s, t, n.clone()) {
                left -= 1;
            }
        }
        kept
    }

    /// Adds `tool` of `server` under `name`; `false`, and nothing added,
    /// when the pair or the name is in the table already.
    #[cfg(feature = "serve")]
    fn insert(&mut self, server: &str, tool: &str, name: ExposedName) -> bool {
        let key = (server.to_string(), tool.to_string());
        if self.index.contains_key(&key) || self.by_name.contains_key(name.as_str()) {
            return false;
        }
        let at = self.entries.len();
        self.by_name.insert(name.name.clone(), at);
        self.index.insert(key.clone(), at);
        self.entries.push((key.0, key.1, name));
        true
    }

    /// Adds `tool` of `server` under `name`, a name another table gave it
    /// (a gateway serving the tools an assembly named); `false`, and
    /// nothing added, when the pair or the name is in the table already.
    #[cfg(feature = "serve")]
    pub(crate) fn push(&mut self, server: &str, tool: &str, name: ExposedName) -> bool {
        self.insert(server, tool, name)
    }
}

impl Pattern {
    fn apply(&self, server: &str, tool: &str) -> ExposedName {
        self.apply_parts(&self.parts, server, tool)
    }

    /// The name without the `[ ]` prefix, when the pattern has one.
    fn bare(&self, server: &str, tool: &str) -> Option<ExposedName> {
        Some(self.apply_parts(self.bare.as_ref()?, server, tool))
    }

    fn apply_parts(&self, parts: &[Part], server: &str, tool: &str) -> ExposedName {
        let mut name = String::new();
        for p in parts {
            match p {
                Part::Text(t) => name.push_str(t),
                Part::Server => name.push_str(&rust_safe(server, true)),
                Part::Tool => name.push_str(&rust_safe(tool, true)),
            }
        }
        if name.chars().count() <= self.max {
            return ExposedName {
                name,
                fit: Fit::Whole,
            };
        }
        ExposedName {
            name: hashed(&name, &format!("{server}\u{0}{tool}"), self.max),
            fit: Fit::Hashed,
        }
    }
}

#[cfg(test)]
mod tests;
