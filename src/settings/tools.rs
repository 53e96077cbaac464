//! `[servers.<alias>.tools]`, `[servers.<alias>.tool.<name>]` and
//! `always_load`, as a [`Policy`]'s tool rules.

use super::ServerSettings;
use crate::assemble::Policy;

impl ServerSettings {
    /// `p` with this server's tool filter, overrides and `always_load`.
    pub(super) fn tool_policy(&self, mut p: Policy) -> Policy {
        if let Some(filter) = &self.tools {
            p = p.tools(filter.clone());
        }
        for (name, o) in &self.tool {
            p = p.tool(name.clone(), o.clone());
        }
        if let Some(yes) = self.always_load {
            p = p.always_load(yes);
        }
        p
    }
}
