//! The names the model sees for each server's tools, under the assembler's
//! [`ToolNames`] scheme: computed once per assembly over every server (a
//! host's names can depend on the other servers: VS Code numbers repeated
//! prefixes; a table never gives one name twice).

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::names::Placement;
use crate::model::ServerSnapshot;
use crate::tool_names::{ExposedName, ToolNames};

/// One server's tools by their own name: the name the model sees.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct ServerNames {
    names: BTreeMap<String, ExposedName>,
    /// For the memo keys: what the names are.
    pub fingerprint: u64,
}

impl ServerNames {
    /// The name the model sees for the tool named `tool` by its server;
    /// `tool` itself under the plain scheme.
    pub fn of<'a>(&'a self, tool: &'a str) -> &'a str {
        self.names.get(tool).map_or(tool, ExposedName::as_str)
    }
}

/// Per section position, the names of that server's tools.
pub(super) fn expose(
    scheme: &ToolNames,
    servers: &[&ServerSnapshot],
    placement: &Placement,
) -> Vec<Arc<ServerNames>> {
    if scheme.is_plain() {
        let none = Arc::new(ServerNames::default());
        return vec![none; placement.order.len()];
    }
    let label = |s: &ServerSnapshot| {
        let info = &s.server_info;
        scheme
            .server_label(s.alias.as_deref(), &info.name, info.title.as_deref())
            .to_string()
    };
    let labels: Vec<String> = placement.order.iter().map(|&i| label(servers[i])).collect();
    let table = scheme.table(placement.order.iter().zip(&labels).flat_map(|(&i, l)| {
        servers[i]
            .tools
            .iter()
            .map(move |t| (l.as_str(), t.name.as_str()))
    }));
    placement
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
            let mut h = std::hash::DefaultHasher::new();
            names.iter().for_each(|(k, v)| (k, v.as_str()).hash(&mut h));
            Arc::new(ServerNames {
                names,
                fingerprint: h.finish(),
            })
        })
        .collect()
}
