//! Tool names a host sends past the model API's cap (MCP019).

use crate::hosts::Host;
use crate::lint::LintCode;
use crate::lint::pass::Pass;
use crate::tool_names::{Fit, MAX_LEN, ToolNames};

impl Pass<'_> {
    /// MCP019: per host of `--hosts` with a naming rule, each tool whose
    /// name that host sends whole past [`MAX_LEN`].
    pub(super) fn names_over_host_caps(&mut self) {
        let server = self.server;
        let info = &server.server_info;
        let hosts: Vec<Host> = self
            .linter
            .hosts
            .iter()
            .filter_map(|p| Host::named(p.name))
            .filter(|h| h.profile().tool_names.is_some())
            .collect();
        for host in hosts {
            let scheme = ToolNames::host(host);
            let label =
                scheme.server_label(server.alias.as_deref(), &info.name, info.title.as_deref());
            for t in &server.tools {
                let name = scheme.exposed(label, &t.name);
                if name.fit() != Fit::OverCap {
                    continue;
                }
                let message = format!(
                    "{host} sends tool `{}` as `{}`, {} characters: past the model API's {MAX_LEN}, every request fails",
                    t.name,
                    name.as_str(),
                    name.as_str().chars().count()
                );
                let fix = LintCode::ToolNameOverHostCap.fix().to_string();
                let severity = LintCode::ToolNameOverHostCap.default_severity();
                self.push_tool(
                    LintCode::ToolNameOverHostCap,
                    severity,
                    message,
                    &t.name,
                    None,
                    fix,
                );
            }
        }
    }
}
