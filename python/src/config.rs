//! MCP client configs (Claude Desktop / Cursor `mcpServers`, VS Code
//! `servers`, `url` entries) read by the crate, for `connect_config`.

use std::path::PathBuf;

use mcp_preamble::files::McpConfig;
use pyo3::prelude::*;

use crate::errors::to_py;

/// The servers of a config file as JSON (the crate's
/// `McpConfig::startable_json`), with VS Code variables expanded as the CLI
/// expands them.
#[pyfunction]
pub fn config_json(py: Python<'_>, path: PathBuf) -> PyResult<String> {
    let config = py.detach(|| McpConfig::from_path(&path)).map_err(to_py)?;
    Ok(config.startable_json())
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
