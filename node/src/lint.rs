//! The lint, as `mcp-preamble lint --format json` runs it.

use mcp_preamble::lint::{HostProfile, Linter, ServerLint};
use mcp_preamble::settings::Settings;
use napi::bindgen_prelude::ClassInstance;
use napi_derive::napi;

use crate::errors::to_js;
use crate::server::NativeServer;

/// Each server's lint result (findings, and with `hosts` what survives each
/// host's cut) as a JSON array of the crate's `ServerLint`. A server read
/// from a capture with both handshakes is compared with its other one
/// (`MCP015`), as `mcp-preamble lint` does.
#[napi(catch_unwind)]
// Registered with Node when the module loads; a test build has no such caller.
#[cfg_attr(test, allow(dead_code))]
pub fn lint_json(
    servers: Vec<ClassInstance<'_, NativeServer>>,
    hosts: Option<String>,
    max_tokens: u32,
    encoding: Option<String>,
) -> napi::Result<String> {
    let max_tokens = max_tokens as usize;
    let mut settings = Settings::new();
    settings.overrides.encoding = encoding;
    let encoding = settings.encoding().map_err(to_js)?;
    let mut linter = Linter::new().encoding(encoding).max_tokens(max_tokens);
    if let Some(list) = hosts {
        linter = linter.hosts(HostProfile::parse_list(&list, max_tokens).map_err(to_js)?);
    }
    let results: Vec<ServerLint> = servers
        .iter()
        .filter_map(|s| {
            // Each server with the snapshots it is compared with (a capture's other era).
            let run: Vec<_> = std::iter::once(&s.snapshot)
                .chain(&s.other_eras)
                .cloned()
                .collect();
            linter.check_connects(&run, None)
        })
        .collect();
    Ok(serde_json::to_string(&results).unwrap_or_default())
}
