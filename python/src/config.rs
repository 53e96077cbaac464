//! MCP client configs (Claude Desktop / Cursor `mcpServers`, VS Code
//! `servers`, `url` entries) read by the crate, for `connect_config`.

use std::path::PathBuf;

use mcp_preamble::files::{McpConfig, ServerTransport};
use pyo3::prelude::*;
use serde_json::json;

use crate::errors::to_py;

/// The servers of a config file as JSON (sorted by alias): `{"alias",
/// "command", "args", "env", "cwd"}` or `{"alias", "url", "headers"}`,
/// with VS Code variables expanded as the CLI expands them.
#[pyfunction]
pub fn config_json(py: Python<'_>, path: PathBuf) -> PyResult<String> {
    let config = py.detach(|| McpConfig::from_path(&path)).map_err(to_py)?;
    let servers: Vec<serde_json::Value> = config
        .servers
        .iter()
        .filter_map(|entry| match &entry.transport {
            ServerTransport::Stdio {
                command,
                args,
                env,
                cwd,
            } => Some(json!({
                "alias": entry.alias,
                "command": command,
                "args": args,
                "env": env,
                "cwd": cwd.as_ref().map(|c| c.display().to_string()),
            })),
            ServerTransport::Http { url, headers } => Some(json!({
                "alias": entry.alias,
                "url": url,
                "headers": headers,
            })),
            // A transport added to the crate later: not startable from here.
            _ => None,
        })
        .collect();
    Ok(serde_json::Value::Array(servers).to_string())
}

/// The keys of the policy file's `[defaults]`, from the file's own schema.
#[pyfunction]
pub fn policy_keys() -> Vec<&'static str> {
    mcp_preamble::settings::Defaults::keys().to_vec()
}

/// How many times this process read the tokenizer file at `path` (the
/// crate's `tokens::file_reads`): one per content, however many assemblers.
#[pyfunction]
pub fn tokenizer_file_reads(path: PathBuf) -> u64 {
    mcp_preamble::tokens::file_reads(path)
}
