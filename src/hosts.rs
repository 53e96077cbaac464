//! The hosts: what each host does with a server's instructions and tools,
//! one row per host in one table, with the source of each fact.
//!
//! A row ([`Profile`]) says how the host names tools ([`NameRule`], the
//! rules themselves are in [`tool_names`](crate::tool_names)), what it
//! forwards of a server's instructions ([`Cut`]: a [`HostCap`] in the
//! host's own [`Unit`], per server or for all servers' text), where it
//! places them, and where each fact comes from. Everything that knows
//! about hosts reads this table: the lint's host cuts
//! ([`lint::HostProfile`](crate::lint::HostProfile), `--hosts`), the
//! gateway's `serve --as` (`serve::ServeAs`), the tool-name schemes
//! ([`ToolNames`](crate::ToolNames), `--tool-names`), and the names the
//! CLI's help and errors list.
//!
//! A host's cap is not a token budget: Claude Code counts UTF-16 code
//! units (JavaScript's `String.prototype.length`), and a [`HostCap`] says
//! so in its type. Token budgets stay in the model's tokens (the
//! assembler's counter); [`Assembler::host_cap`](crate::Assembler::host_cap)
//! makes both hold at once.
//!
//! # Adding a host
//!
//! Add one row to `TABLE` below: the name (lowercase, kebab-case, not
//! `all`, `plain` or starting with `mcp-preamble`), older names it is
//! known by, its [`NameRule`] (or `None`), its [`Cut`], where it places
//! the instructions, the sources, and whether the facts are only reported
//! by users or authors. `--hosts`, `serve --as`, `--tool-names`, their
//! help and their errors follow from the row. A new *kind* of rule also
//! needs a variant here and its code: a [`NameRule`] in
//! `tool_names/rules.rs`, a [`Unit`] in [`Unit::measure`] (and the lint's
//! cut in `lint/rules/cuts.rs`).

use std::fmt;

/// What a host counts its cap in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Unit {
    /// UTF-16 code units (JavaScript's `.length`): `😀` is 2.
    Utf16,
    /// Unicode scalar values (Rust's `chars()`): `😀` is 1. Also the unit
    /// of hosts whose unit is not known.
    Chars,
}

impl Unit {
    /// The length of `text` in this unit.
    pub fn measure(self, text: &str) -> usize {
        match self {
            Unit::Utf16 => text.encode_utf16().count(),
            Unit::Chars => text.chars().count(),
        }
    }

    /// The unit's short name: `utf16` or `chars`.
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Utf16 => "utf16",
            Unit::Chars => "chars",
        }
    }

    /// The unit for people: `UTF-16 code units` or `characters`.
    pub fn describe(self) -> &'static str {
        match self {
            Unit::Utf16 => "UTF-16 code units",
            Unit::Chars => "characters",
        }
    }
}

/// What text a host's cap applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Scope {
    /// Each server's instructions on their own. A gateway is one server to
    /// the host, so its whole text gets one cap.
    PerServer,
    /// All servers' instructions together.
    AllServers,
}

/// A host's cap: at most `limit` of `unit` reach the model. Not a token
/// budget: it is counted in the host's unit, never in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct HostCap {
    /// What the limit counts.
    pub unit: Unit,
    /// How many of `unit` the host keeps.
    pub limit: usize,
    /// What text the limit applies to.
    pub scope: Scope,
}

impl HostCap {
    /// A cap of `limit` `unit`s per server.
    pub const fn per_server(unit: Unit, limit: usize) -> HostCap {
        HostCap {
            unit,
            limit,
            scope: Scope::PerServer,
        }
    }

    /// The length of `text` in the cap's unit.
    pub fn measure(&self, text: &str) -> usize {
        self.unit.measure(text)
    }

    /// Whether `text` is within the cap.
    pub fn fits(&self, text: &str) -> bool {
        self.measure(text) <= self.limit
    }

    /// The cap less `reserve` units (text the caller appends), or `None`
    /// when nothing is left.
    pub fn less(self, reserve: usize) -> Option<HostCap> {
        let limit = self.limit.checked_sub(reserve).filter(|l| *l > 0)?;
        Some(HostCap { limit, ..self })
    }
}

impl fmt::Display for HostCap {
    /// `2048 UTF-16 code units`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.limit, self.unit.describe())
    }
}

/// What a host forwards of a server's instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Cut {
    /// Nothing: the instructions never reach the model.
    Nothing,
    /// The first [`HostCap::limit`] units, cut wherever that falls.
    Cap(HostCap),
    /// Not known.
    Unknown,
}

impl Cut {
    /// The cap, when the host has one.
    pub fn cap(self) -> Option<HostCap> {
        match self {
            Cut::Cap(c) => Some(c),
            _ => None,
        }
    }
}

/// A kind of tool-naming rule; each is computed in
/// [`tool_names`](crate::tool_names) (its module docs give the details).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NameRule {
    /// `mcp__<server>__<tool>`, each UTF-16 unit outside `[A-Za-z0-9_-]`
    /// as `_`, sent whole past 64 characters.
    Mcp,
    /// `mcp_<server>_<tool>` with VS Code's server prefix, cut at 64.
    Vscode,
    /// `mcp__<server>__<tool>`, each character outside `[A-Za-z0-9_]` as
    /// `_`, shortened with SHA-1 past 64.
    Codex,
}

/// Where a host's model reads a server's instructions (issue 51.4): what
/// `install` and `wrap --as` deliver them through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Reads {
    /// The `instructions` field of the handshake, placed in the system
    /// prompt (within [`Profile::cut`]).
    Instructions,
    /// The server's namespace description in tool search (within
    /// [`Profile::cut`], which is its cap).
    NamespaceDescription,
    /// Nowhere: the host stores the field and never sends it. `wrap` puts
    /// the budgeted text in the description of its reader tool, which the
    /// host does send.
    Nowhere,
    /// Not known.
    Unknown,
}

impl Reads {
    /// The channel for people, as the README's per-host table and
    /// `install` name it.
    pub fn describe(self) -> &'static str {
        match self {
            Reads::Instructions => "the instructions field (system prompt)",
            Reads::NamespaceDescription => "the server's namespace description",
            Reads::Nowhere => "nowhere (the reader tool's description instead)",
            Reads::Unknown => "not known",
        }
    }
}

/// One more fact about a host, with its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Fact {
    /// The fact.
    pub fact: &'static str,
    /// Where it comes from.
    pub source: &'static str,
}

const fn fact(fact: &'static str, source: &'static str) -> Fact {
    Fact { fact, source }
}

/// One host: its name, how it names tools, what it cuts, where it places
/// instructions, and the source of each fact.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Profile {
    /// The host's name, as `--hosts`, `serve --as` and `--tool-names` take it.
    pub name: &'static str,
    /// Other names it is known by (accepted by `--hosts` and `serve --as`).
    pub aliases: &'static [&'static str],
    /// How it names MCP tools, when known.
    pub tool_names: Option<NameRule>,
    /// The source of [`Profile::tool_names`].
    pub tool_names_source: &'static str,
    /// What it forwards of a server's instructions.
    pub cut: Cut,
    /// Where in the request the instructions go, as far as known.
    pub placement: &'static str,
    /// The source of the cut and the placement.
    pub source: &'static str,
    /// `true` when the cut and placement are reported by users or authors
    /// and not documented by the host or checked against its code.
    pub reported: bool,
    /// Whether the host sends the model each MCP tool's definition (name
    /// and description) itself, so a tool list in the section only repeats
    /// it ([`Assembler::tool_list`](crate::Assembler::tool_list)).
    pub sends_tools: bool,
    /// Where its model reads a server's instructions.
    pub reads: Reads,
    /// The cap on each tool's description, when it has one (`wrap --as`
    /// fits descriptions to it).
    pub description_cap: Option<HostCap>,
    /// More facts (names, starting servers), each with its source.
    pub facts: &'static [Fact],
}

/// The hosts, one row each. Order matters only for lists (help, errors).
const TABLE: &[Profile] = &[
    Profile {
        name: "claude-code",
        aliases: &[],
        tool_names: Some(NameRule::Mcp),
        tool_names_source: "services/mcp/normalization.ts and mcpStringUtils.ts (as quoted in public analyses of its bundled source); names over 64 fail the request: anthropics/claude-code #2412, #19770, #19882",
        cut: Cut::Cap(HostCap::per_server(Unit::Utf16, 2048)),
        placement: "the system prompt, in a section of MCP server instructions (reported)",
        source: "github.com/anthropics/claude-code issue #39106: the first 2,048 characters (JavaScript string length, UTF-16 code units) are forwarded, cut mid-word, and `… [truncated]` appended; the cap is undocumented",
        reported: false,
        sends_tools: true,
        reads: Reads::Instructions,
        description_cap: Some(HostCap::per_server(Unit::Utf16, 2048)),
        facts: &[
            fact(
                "each tool description is cut at 2,048 characters (JavaScript length) and `… [truncated]` appended, silently",
                "anthropics/claude-code #41593 (since v2.1.84) and #87650 (v2.1.234, the constant in the binary); its MCP docs, \"for MCP server authors\": tool descriptions and server instructions are cut at 2KB each",
            ),
            fact(
                "the tool-search path (a tool_reference) caps a tool's name at 64 characters, although tool definitions take 128",
                "anthropics/claude-code #16425",
            ),
            fact(
                "a plugin's servers are named mcp__plugin_<plugin>_<server>__<tool>",
                "Yeachan-Heo/oh-my-claudecode #241, cloudflare/skills #11, ChromeDevTools/chrome-devtools-mcp #1169",
            ),
            fact(
                "`alwaysLoad: true` on a server's entry loads its tools up front instead of behind tool search (v2.1.119)",
                "anthropics/claude-code #54158; modu-ai/moai-adk PR #755",
            ),
        ],
    },
    Profile {
        name: "vscode",
        aliases: &[],
        tool_names: Some(NameRule::Vscode),
        tool_names_source: "src/vs/workbench/contrib/mcp/common/mcpTypes.ts (McpToolName), mcpService.ts / mcpServer.ts (McpPrefixGenerator, McpTool); the prefix from serverInfo.title since microsoft/vscode PR #318638",
        cut: Cut::Unknown,
        placement: "not documented",
        source: "not known",
        reported: true,
        sends_tools: true,
        reads: Reads::Unknown,
        description_cap: None,
        facts: &[fact(
            "the tool prefix comes from serverInfo.title (else serverInfo.name, else the config key), at most 18 characters; the whole name at most 64; prefixes that collide are numbered (`foo2_`)",
            "microsoft/vscode PR #318638 (McpPrefixGenerator, mcpServer.ts) and PR #249929 (mcp_<server>_<tool>)",
        )],
    },
    Profile {
        name: "codex",
        aliases: &["chatgpt"],
        tool_names: Some(NameRule::Codex),
        tool_names_source: "codex-rs/core/src/mcp_connection_manager.rs and mcp/mod.rs (qualify_tools, sanitize_responses_api_tool_name; mcp__ prefix since openai/codex PR #5309)",
        cut: Cut::Cap(HostCap::per_server(Unit::Chars, 512)),
        placement: "not documented (a server's namespace description in tool search)",
        source: "ChatGPT / Codex: about 512 characters, reported by server authors",
        reported: true,
        sends_tools: true,
        reads: Reads::NamespaceDescription,
        description_cap: None,
        facts: &[fact(
            "from 0.153 names may be 128 characters, sanitized to [A-Za-z0-9_], collisions told apart by a hash; Bedrock-backed providers still fail past 64, so the naming rule here keeps 64",
            "openai/codex PR #39594 (the limit raised) and #1289 (the Bedrock regression after it)",
        )],
    },
    Profile {
        name: "opencode",
        aliases: &[],
        tool_names: Some(NameRule::Mcp),
        tool_names_source: "anomalyco/opencode PR #33533 (mcp__ prefix) and PR #3842 (characters); no shortening, inferred from anomalyco/opencode #3523",
        cut: Cut::Unknown,
        placement: "not documented",
        source: "not known",
        reported: true,
        sends_tools: true,
        reads: Reads::Unknown,
        description_cap: None,
        facts: &[],
    },
    Profile {
        name: "claude-desktop",
        aliases: &["claude-ai"],
        tool_names: None,
        tool_names_source: "",
        cut: Cut::Nothing,
        placement: "stored, not forwarded: the model never reads them",
        source: "claude.ai drops the instructions field: anthropics/claude-ai-mcp #93, as cited in jeffdafoe/llm-memory-api PR #233 (tool descriptions are the channel it delivers); Claude Desktop the same, reported in this project's issue 51",
        reported: true,
        sends_tools: true,
        reads: Reads::Nowhere,
        description_cap: None,
        facts: &[fact(
            "its config runs stdio servers only (an HTTP entry is skipped; `wrap --url` relays one)",
            "modelcontextprotocol.io quickstart for Claude Desktop users; home-assistant/home-assistant.io PR #36577",
        )],
    },
    Profile {
        name: "cursor",
        aliases: &[],
        tool_names: None,
        tool_names_source: "",
        cut: Cut::Unknown,
        placement: "no evidence that it forwards them",
        source: "not known (tried in this project's issue 51: no evidence either way)",
        reported: true,
        sends_tools: true,
        reads: Reads::Unknown,
        description_cap: None,
        facts: &[],
    },
    Profile {
        name: "gemini-cli",
        aliases: &[],
        tool_names: None,
        tool_names_source: "",
        cut: Cut::Unknown,
        placement: "not documented",
        source: "not known",
        reported: true,
        sends_tools: true,
        reads: Reads::Unknown,
        description_cap: None,
        facts: &[fact(
            "with folder trust on, it starts no MCP server of an untrusted folder (`gemini mcp list` shows them disabled)",
            "geminicli.com/docs/cli/trusted-folders; google-gemini/gemini-cli PR #26457",
        )],
    },
    Profile {
        name: "generic-4000",
        aliases: &[],
        tool_names: None,
        tool_names_source: "",
        cut: Cut::Cap(HostCap::per_server(Unit::Chars, 4000)),
        placement: "not documented",
        source: "reported by server authors",
        reported: true,
        sends_tools: false,
        reads: Reads::Instructions,
        description_cap: None,
        facts: &[],
    },
    Profile {
        name: "none",
        aliases: &[],
        tool_names: None,
        tool_names_source: "",
        cut: Cut::Nothing,
        placement: "not forwarded",
        source: "hosts that store the instructions and never send them to the model (several, reported by server authors)",
        reported: true,
        sends_tools: false,
        reads: Reads::Nowhere,
        description_cap: None,
        facts: &[],
    },
];

/// One row of the host table: a small handle, cheap to copy and compare.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Host(u8);

/// The row named `name`, at compile time (a missing name fails the build).
const fn row(name: &str) -> Host {
    let mut i = 0;
    while i < TABLE.len() {
        let (a, b) = (TABLE[i].name.as_bytes(), name.as_bytes());
        if a.len() == b.len() {
            let mut k = 0;
            while k < a.len() && a[k] == b[k] {
                k += 1;
            }
            if k == a.len() {
                return Host(i as u8);
            }
        }
        i += 1;
    }
    panic!("no such host in the table")
}

// Named handles to the rows code refers to.
#[allow(non_upper_case_globals)]
impl Host {
    /// Claude Code.
    pub const ClaudeCode: Host = row("claude-code");
    /// VS Code (Copilot Chat).
    pub const Vscode: Host = row("vscode");
    /// Codex (and ChatGPT).
    pub const Codex: Host = row("codex");
    /// OpenCode.
    pub const Opencode: Host = row("opencode");
    /// Claude Desktop (and Claude.ai).
    pub const ClaudeDesktop: Host = row("claude-desktop");
    /// Cursor.
    pub const Cursor: Host = row("cursor");
}

impl Host {
    /// Every host, in the table's order.
    pub fn all() -> impl Iterator<Item = Host> + Clone {
        (0..TABLE.len()).map(|i| Host(i as u8))
    }

    /// The host with this name or alias.
    pub fn named(name: &str) -> Option<Host> {
        Host::all().find(|h| h.as_str() == name || h.profile().aliases.contains(&name))
    }

    /// The host's row.
    pub fn profile(self) -> &'static Profile {
        &TABLE[self.0 as usize]
    }

    /// The host's name: `claude-code`, `codex`, ….
    pub fn as_str(self) -> &'static str {
        self.profile().name
    }
}

/// The characters a block may take as a namespace description (`preview
/// --target namespace`, [`Assembler::namespace_chars`](crate::Assembler::namespace_chars)):
/// the smallest host cap, Codex's.
pub fn namespace_chars() -> usize {
    Host::Codex
        .profile()
        .cut
        .cap()
        .map_or(usize::MAX, |c| c.limit)
}

impl fmt::Debug for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Host({})", self.as_str())
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_parse_back() {
        let mut seen = std::collections::HashSet::new();
        for h in Host::all() {
            let p = h.profile();
            for n in std::iter::once(&p.name).chain(p.aliases) {
                assert!(seen.insert(*n), "{n} twice");
                assert!(
                    *n != "all"
                        && *n != "plain"
                        && !n.starts_with("mcp-preamble")
                        && !n.is_empty()
                        && n.bytes()
                            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                    "{n:?} cannot be given on the command line"
                );
                assert_eq!(Host::named(n), Some(h));
            }
            assert!(
                !p.source.is_empty() && !p.placement.is_empty(),
                "{}",
                p.name
            );
            assert_eq!(p.tool_names.is_some(), !p.tool_names_source.is_empty());
            // The channel agrees with the cut: nothing forwarded is read nowhere,
            // a namespace description has its cap.
            assert_eq!(
                p.cut == Cut::Nothing,
                p.reads == Reads::Nowhere,
                "{}",
                p.name
            );
            if p.reads == Reads::NamespaceDescription {
                assert!(p.cut.cap().is_some(), "{}", p.name);
            }
            assert!(
                p.facts
                    .iter()
                    .all(|f| !f.fact.is_empty() && !f.source.is_empty()),
                "{}",
                p.name
            );
        }
        assert_eq!(Host::named("cursor"), Some(Host::Cursor));
        assert_eq!(Host::named("claude-ai"), Some(Host::ClaudeDesktop));
        assert_eq!(Host::named("chatgpt"), Some(Host::Codex));
        assert_eq!(format!("{:?}", Host::ClaudeCode), "Host(claude-code)");
    }

    #[test]
    fn caps_count_in_their_unit() {
        let cap = Host::ClaudeCode.profile().cut.cap().unwrap();
        assert_eq!(cap.unit, Unit::Utf16);
        assert_eq!(cap.measure("😀a"), 3);
        assert_eq!(Unit::Chars.measure("😀a"), 2);
        assert_eq!(cap.less(cap.limit), None);
        assert_eq!(cap.less(48).unwrap().limit + 48, cap.limit);
        assert_eq!(
            Host::Codex.profile().cut.cap().unwrap().to_string(),
            "512 characters"
        );
    }
}
