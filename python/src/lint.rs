//! The lint, as `mcp-preamble lint --format json` runs it.

use mcp_preamble::lint::{DEFAULT_MAX_TOKENS, HostProfile, Linter, ServerLint};
use mcp_preamble::settings::Settings;
use pyo3::prelude::*;

use crate::errors::to_py;
use crate::server::NativeServer;

/// Each server's lint result (findings, and with `hosts` what survives each
/// host's cut) as a JSON array of the crate's `ServerLint`. A server read
/// from a capture with both handshakes is compared with its other one
/// (`MCP015`), as `mcp-preamble lint` does.
#[pyfunction]
#[pyo3(signature = (servers, hosts=None, max_tokens=DEFAULT_MAX_TOKENS, encoding=None))]
pub fn lint_json(
    py: Python<'_>,
    servers: Vec<PyRef<'_, NativeServer>>,
    hosts: Option<String>,
    max_tokens: usize,
    encoding: Option<String>,
) -> PyResult<String> {
    let mut settings = Settings::new();
    settings.overrides.encoding = encoding;
    let encoding = settings.encoding().map_err(to_py)?;
    let mut linter = Linter::new().encoding(encoding).max_tokens(max_tokens);
    if let Some(list) = hosts {
        linter = linter.hosts(HostProfile::parse_list(&list, max_tokens).map_err(to_py)?);
    }
    // Each server with the snapshots it is compared with (a capture's other era).
    let runs: Vec<Vec<_>> = servers
        .iter()
        .map(|s| {
            std::iter::once(&s.snapshot)
                .chain(&s.other_eras)
                .cloned()
                .collect()
        })
        .collect();
    let results: Vec<ServerLint> = py.detach(|| {
        runs.iter()
            .filter_map(|run| linter.check_connects(run, None))
            .collect()
    });
    Ok(serde_json::to_string(&results).unwrap_or_default())
}
