//! The tools the model is sent and the names it sees for them: each
//! server's tool filter applied, then the assembler's [`ToolNames`] scheme,
//! computed once per assembly over every server (a host's names can depend
//! on the other servers: VS Code numbers repeated prefixes; a table never
//! gives one name twice).

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::builder::{Assembler, Shown};
use super::names::Placement;
use crate::model::ServerSnapshot;
use crate::tool_names::{ExposedName, Kept, NameTable, ToolNames};

impl Assembler {
    /// The names the model sees for the servers' tools (default:
    /// [`ToolNames::plain`], their own): with a host's scheme the tool
    /// list and the deferred index show the host's names
    /// (`mcp__billing__get_invoice` under Claude Code). See the crate docs,
    /// "Tool names".
    ///
    /// ```
    /// use mcp_preamble::tool_names::Host;
    /// use mcp_preamble::{Assembler, ServerSnapshot, Tool, ToolNames};
    ///
    /// let server = ServerSnapshot::new("billing-server")
    ///     .with_alias("billing")
    ///     .with_tool(Tool::new("get_invoice", "Get one invoice."));
    /// let assembly = Assembler::new()
    ///     .tool_names(ToolNames::host(Host::ClaudeCode))
    ///     .assemble(&[server])?;
    /// assert!(assembly.text().contains("mcp__billing__get_invoice"));
    /// # Ok::<(), mcp_preamble::Error>(())
    /// ```
    pub fn tool_names(mut self, names: ToolNames) -> Assembler {
        self.tool_names = names;
        self
    }

    /// Keeps, per server, what the model is sent (`report::Exposure`) in
    /// each assembly, for a gateway to serve; off by default, as nothing
    /// else reads it.
    #[cfg(feature = "serve")]
    pub(crate) fn exposing(mut self) -> Assembler {
        self.expose = true;
        self
    }

    /// Names tools keeping the names of `kept` ([`ToolNames::table_keeping`]):
    /// a gateway's hub gives the names it has served, so none moves.
    #[cfg(feature = "serve")]
    pub(crate) fn keep_names(&mut self, kept: Option<Arc<Kept>>) {
        self.kept_names = kept;
    }

    /// Whether assemblies keep each server's `report::Exposure`.
    #[cfg(feature = "serve")]
    pub(crate) fn exposes(&self) -> bool {
        self.expose
    }

    /// The tool-name scheme in effect.
    pub fn tool_names_ref(&self) -> &ToolNames {
        &self.tool_names
    }

    /// Shows every name of the tool-name scheme ([`Assembler::tool_names`])
    /// as `host` shows a tool of that name of the server `server`: for a
    /// section read through a gateway, which a host knows as one server
    /// (`server`, the key its config gives the gateway) whose tools are
    /// named by the scheme. The section's tool lists and its prose then
    /// name tools as the model sees them (`mcp__preamble__billing__get_invoice`
    /// under Claude Code), while the assembly keeps the scheme's names for
    /// the gateway to serve. A host whose naming is not known shows the
    /// scheme's names as they are.
    ///
    /// ```
    /// use mcp_preamble::hosts::Host;
    /// use mcp_preamble::{Assembler, ServerSnapshot, Tool, ToolNames};
    ///
    /// let server = ServerSnapshot::new("billing-server")
    ///     .with_alias("billing")
    ///     .with_instructions("Call get_invoice with an id from list_periods.")
    ///     .with_tool(Tool::new("get_invoice", "Get one invoice."));
    /// let assembly = Assembler::new()
    ///     .tool_names("{server}__{tool}".parse()?)
    ///     .shown_through(ToolNames::host(Host::ClaudeCode), "preamble")
    ///     .assemble(&[server])?;
    /// assert!(assembly.text().contains("`mcp__preamble__billing__get_invoice`"));
    /// # Ok::<(), mcp_preamble::Error>(())
    /// ```
    pub fn shown_through(mut self, host: ToolNames, server: impl Into<String>) -> Assembler {
        self.shown = (!host.is_plain()).then(|| {
            Arc::new(Shown {
                host,
                server: server.into(),
            })
        });
        self
    }

    /// The host name a tool exposed as `name` is shown under
    /// ([`Assembler::shown_through`]), `name` itself when none is set.
    pub fn shown_name(&self, name: &str) -> String {
        match &self.shown {
            Some(s) => s.host.exposed(&s.server, name).into_string(),
            None => name.to_string(),
        }
    }
}

impl Shown {
    /// `names` (by own name) as the host shows them.
    fn names(&self, names: &BTreeMap<String, ExposedName>) -> BTreeMap<String, ExposedName> {
        (names.iter())
            .map(|(k, v)| (k.clone(), self.host.exposed(&self.server, v.as_str())))
            .collect()
    }
}

/// One server's tools by their own name: the name the model sees.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct ServerNames {
    names: BTreeMap<String, ExposedName>,
    /// The names as a host shows them ([`Assembler::shown_through`]);
    /// empty when none is set.
    shown: BTreeMap<String, ExposedName>,
    /// The tools the operator's filter hides, by their own names.
    pub hidden: Vec<String>,
    /// The names the scheme would give them (as `hidden`): a gateway refuses
    /// a call under one as hidden rather than unknown.
    pub hidden_names: Vec<String>,
    /// For the memo keys: what the names are.
    pub fingerprint: u64,
}

impl ServerNames {
    /// The name the model sees for the tool named `tool` by its server;
    /// `tool` itself under the plain scheme.
    pub fn of<'a>(&'a self, tool: &'a str) -> &'a str {
        self.get(tool).unwrap_or(tool)
    }

    /// The name the model sees for the tool named `tool` by its server,
    /// when the scheme names it (not under the plain scheme).
    pub fn get(&self, tool: &str) -> Option<&str> {
        self.sent(tool).map(ExposedName::as_str)
    }

    /// The name the host sends the model for the tool named `tool` by its
    /// server: the scheme's, as a host it is shown through shows it.
    pub fn sent(&self, tool: &str) -> Option<&ExposedName> {
        match self.shown.is_empty() {
            true => self.exposed(tool),
            false => self.shown.get(tool),
        }
    }

    /// The scheme's name for the tool named `tool` by its server (none
    /// under the plain scheme): the name a gateway serves it under.
    pub fn exposed(&self, tool: &str) -> Option<&ExposedName> {
        self.names.get(tool)
    }
}

/// A server's tools after its filter, and the names it hid.
pub(super) type Filtered = Option<(ServerSnapshot, Vec<String>)>;

/// Per input server: what its filter (by its config key) keeps, when it
/// hides any tool.
pub(super) fn filtered(
    config: &Assembler,
    servers: &[&ServerSnapshot],
    placement: &Placement,
) -> Vec<Filtered> {
    servers
        .iter()
        .zip(&placement.config_keys)
        .map(|(s, key)| {
            let policy = config.policies.get(key.as_ref()?.as_str())?;
            policy.tools.filter(s)
        })
        .collect()
}

/// Per section position, the names of that server's tools (`servers` as
/// filtered; `filtered` says what each hid), keeping those of `kept` (see
/// [`ToolNames::table_keeping`]); and the table of every name given (empty
/// under the plain scheme).
pub(super) fn expose(
    scheme: &ToolNames,
    servers: &[&ServerSnapshot],
    placement: &Placement,
    filtered: &[Filtered],
    (kept, shown): (Option<&Kept>, Option<&Shown>),
) -> (Vec<Arc<ServerNames>>, NameTable) {
    let hidden = |i: usize| {
        filtered[i]
            .as_ref()
            .map(|(_, h)| h.clone())
            .unwrap_or_default()
    };
    if scheme.is_plain() {
        let plain = placement
            .order
            .iter()
            .map(|&i| {
                let hidden = hidden(i);
                let mut h = std::hash::DefaultHasher::new();
                hidden.hash(&mut h);
                Arc::new(ServerNames {
                    names: BTreeMap::new(),
                    shown: BTreeMap::new(),
                    hidden_names: hidden.clone(),
                    hidden,
                    fingerprint: h.finish(),
                })
            })
            .collect();
        return (plain, NameTable::default());
    }
    let label = |s: &ServerSnapshot| {
        let info = &s.server_info;
        scheme
            .server_label(s.alias.as_deref(), &info.name, info.title.as_deref())
            .to_string()
    };
    let labels: Vec<String> = placement.order.iter().map(|&i| label(servers[i])).collect();
    let pairs = placement.order.iter().zip(&labels).flat_map(|(&i, l)| {
        servers[i]
            .tools
            .iter()
            .map(move |t| (l.as_str(), t.name.as_str()))
    });
    let table = scheme.table_keeping(pairs, kept.unwrap_or(&Kept::default()));
    let names = placement
        .order
        .iter()
        .zip(&labels)
        .map(|(&i, l)| {
            let mut names = BTreeMap::new();
            for t in &servers[i].tools {
                if let Some(n) = table.get(l, &t.name) {
                    names.insert(t.name.clone(), n.clone());
                }
            }
            let hidden = hidden(i);
            let hidden_names = hidden
                .iter()
                .map(|t| scheme.exposed(l, t).into_string())
                .collect();
            let shown = shown.map(|s| s.names(&names)).unwrap_or_default();
            let mut h = std::hash::DefaultHasher::new();
            names.iter().for_each(|(k, v)| (k, v.as_str()).hash(&mut h));
            shown.values().for_each(|v| v.as_str().hash(&mut h));
            hidden.hash(&mut h);
            Arc::new(ServerNames {
                names,
                shown,
                hidden,
                hidden_names,
                fingerprint: h.finish(),
            })
        })
        .collect();
    (names, table)
}
