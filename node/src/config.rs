//! MCP client configs (Claude Desktop / Cursor `mcpServers`, VS Code
//! `servers`, `url` entries) read by the crate, for `connectConfig`.

use mcp_preamble::files::McpConfig;
use napi_derive::napi;

use crate::errors::to_js;

/// The servers of a config file as JSON (the crate's
/// `McpConfig::startable_json`), with VS Code variables expanded as the CLI
/// expands them.
// Free functions are registered only outside `cfg(test)` (napi's macro).
#[napi(catch_unwind)]
#[cfg_attr(test, allow(dead_code))]
pub fn config_json(path: String) -> napi::Result<String> {
    let config = McpConfig::from_path(std::path::Path::new(&path)).map_err(to_js)?;
    Ok(config.startable_json())
}

/// How many times this process read the tokenizer file at `path` (the
/// crate's `tokens::file_reads`): one per content, however many assemblers.
#[napi]
#[cfg_attr(test, allow(dead_code))]
pub fn tokenizer_file_reads(path: String) -> i64 {
    i64::try_from(mcp_preamble::tokens::file_reads(path)).unwrap_or(i64::MAX)
}
