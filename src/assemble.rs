//! The entry point: [`Assembler`] runs the stages and builds the [`Assembly`].

use std::sync::Arc;

use serde::Serialize;

use crate::error::Result;
use crate::model::{Instructions, ServerSnapshot};
use crate::sanitize;
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
}

impl std::fmt::Debug for Assembler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Assembler")
            .field("template", &self.template.name())
            .field("encoding", &self.counter.name())
            .field("order", &self.order)
            .field("list_tool_only_servers", &self.list_tool_only_servers)
            .field("tool_descriptions", &self.tool_descriptions)
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
        }
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
        let mut prepared: Vec<Prepared> = servers
            .iter()
            .enumerate()
            .map(|(i, s)| Prepared::new(i, s, self.tool_descriptions))
            .collect();
        if self.order == Order::Name {
            prepared.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
        }
        disambiguate_names(&mut prepared);

        let mut reports = Vec::with_capacity(prepared.len());
        let mut blocks: Vec<(usize, String)> = Vec::new();
        let mut session = self.template.session(0)?;
        for p in &prepared {
            let mut report = p.report();
            let has_text = p.view.instructions.is_some();
            let has_tools = !p.view.tools.is_empty();
            if has_text || (has_tools && self.list_tool_only_servers) {
                let block = session.block(&p.view)?;
                report.tokens = self.counter.count(&block);
                report.included = true;
                blocks.push((reports.len(), block));
            } else if has_tools {
                report.diagnostics.push(
                    "omitted: no instructions, and servers with only tools are not listed".into(),
                );
            } else {
                report
                    .diagnostics
                    .push("omitted: no instructions and no tools".into());
            }
            reports.push(report);
        }
        drop(session);

        let mut text = String::new();
        if blocks.is_empty() {
            return Ok(self.finish(text, reports));
        }
        let session = self.template.session(blocks.len())?;
        let parts = session.body_parts(blocks.len())?;
        for (i, part) in parts.iter().enumerate() {
            text.push_str(part);
            if let Some((r, block)) = blocks.get(i) {
                let start = text.len();
                text.push_str(block);
                reports[*r].span = Some((start, text.len()));
                reports[*r].text = block.clone();
            }
        }
        Ok(self.finish(text, reports))
    }

    fn finish(&self, text: String, servers: Vec<ServerReport>) -> Assembly {
        Assembly {
            encoding: self.counter.name().to_string(),
            template: self.template.name().to_string(),
            total_tokens: self.counter.count(&text),
            text,
            servers,
        }
    }
}

/// A tool as the template sees it.
#[derive(Debug, Clone, Serialize)]
struct ToolView {
    name: String,
    title: Option<String>,
    description: Option<String>,
}

/// A server as the template sees it (all text sanitized, not yet escaped).
#[derive(Debug, Clone, Serialize)]
struct ServerView {
    name: String,
    alias: Option<String>,
    server_name: String,
    title: Option<String>,
    version: String,
    era: &'static str,
    protocol_version: String,
    instructions: Option<String>,
    note: Option<String>,
    tools: Vec<ToolView>,
    more_tools: usize,
}

/// One server after sanitizing.
struct Prepared<'a> {
    index: usize,
    source: &'a ServerSnapshot,
    view: ServerView,
    diagnostics: Vec<String>,
}

impl<'a> Prepared<'a> {
    fn new(index: usize, s: &'a ServerSnapshot, descriptions: bool) -> Prepared<'a> {
        let mut diagnostics = Vec::new();
        let instructions = match &s.instructions {
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
        if let Some(err) = &s.tools_error {
            diagnostics.push(format!(
                "tools/list failed with {}: {}",
                err.code,
                sanitize::line(&err.message)
            ));
        }
        let tools = s
            .tools
            .iter()
            .filter_map(|t| {
                let name = sanitize::line(&t.name);
                if name.is_empty() {
                    return None;
                }
                Some(ToolView {
                    name,
                    title: t.title.as_deref().map(sanitize::line),
                    description: if descriptions {
                        t.description
                            .as_deref()
                            .map(sanitize::text)
                            .filter(|d| !d.is_empty())
                    } else {
                        None
                    },
                })
            })
            .collect::<Vec<_>>();
        if tools.len() < s.tools.len() {
            diagnostics.push(format!(
                "{} tool(s) with an empty name not listed",
                s.tools.len() - tools.len()
            ));
        }
        let view = ServerView {
            name: s.display_name(),
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
        Prepared {
            index,
            source: s,
            view,
            diagnostics,
        }
    }

    fn sort_key(&self) -> (&str, &str, &str, Option<&str>, usize, usize) {
        (
            &self.view.name,
            &self.source.server_info.name,
            &self.source.server_info.version,
            self.source.instructions.raw(),
            self.source.tools.len(),
            self.index,
        )
    }

    fn report(&self) -> ServerReport {
        ServerReport {
            name: self.view.name.clone(),
            alias: self.view.alias.clone(),
            server_name: self.view.server_name.clone(),
            version: self.view.version.clone(),
            era: self.view.era,
            protocol_version: self.view.protocol_version.clone(),
            instructions: self.source.instructions.state(),
            tools: self.view.tools.len(),
            included: false,
            text: String::new(),
            span: None,
            tokens: 0,
            removed: Vec::new(),
            truncated: false,
            diagnostics: self.diagnostics.clone(),
        }
    }
}

/// Gives servers that would show the same name a suffix ` (2)`, ` (3)`, …
fn disambiguate_names(prepared: &mut [Prepared<'_>]) {
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for p in prepared.iter_mut() {
        let n = seen.entry(p.view.name.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            let renamed = format!("{} ({})", p.view.name, n);
            p.diagnostics.push(format!(
                "another server has the name {:?}; shown as {:?}",
                p.view.name, renamed
            ));
            p.view.name = renamed;
        }
    }
}

/// One removal from a server's block (none yet in this version).
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
    /// Whether the server has a block in the section.
    pub included: bool,
    /// The server's block, exactly as it stands in the section (empty when not included).
    pub text: String,
    /// Byte range of [`ServerReport::text`] in [`Assembly::text`].
    pub span: Option<(usize, usize)>,
    /// Tokens of [`ServerReport::text`].
    pub tokens: usize,
    /// What was removed from the block, and why.
    pub removed: Vec<Removal>,
    /// Whether the block was cut with a marker.
    pub truncated: bool,
    /// Problems with the server's data (blank instructions, a failed `tools/list`, …).
    pub diagnostics: Vec<String>,
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
