//! The tools the model is sent and the names it sees for them: each
//! server's tool filter applied, then the assembler's [`ToolNames`] scheme,
//! computed once per assembly over every server (a host's names can depend
//! on the other servers: VS Code numbers repeated prefixes; a table never
//! gives one name twice).

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::builder::Assembler;
use super::names::Placement;
use crate::model::ServerSnapshot;
use crate::tool_names::{ExposedName, Kept, NameTable, ToolNames};

/// One server's tools by their own name: the name the model sees.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct ServerNames {
    names: BTreeMap<String, ExposedName>,
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
        self.exposed(tool).map(ExposedName::as_str)
    }

    /// The scheme's name for the tool named `tool` by its server (none
    /// under the plain scheme).
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
    kept: Option<&Kept>,
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
            let mut h = std::hash::DefaultHasher::new();
            names.iter().for_each(|(k, v)| (k, v.as_str()).hash(&mut h));
            hidden.hash(&mut h);
            Arc::new(ServerNames {
                names,
                hidden,
                hidden_names,
                fingerprint: h.finish(),
            })
        })
        .collect();
    (names, table)
}
