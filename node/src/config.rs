//! MCP client configs (Claude Desktop / Cursor `mcpServers`, VS Code
//! `servers`, `url` entries) read by the crate, for `connectConfig`.

use mcp_preamble::files::{McpConfig, ServerTransport};
use napi_derive::napi;
use serde_json::json;

use crate::errors::to_js;

/// The servers of a config file as JSON (sorted by alias): `{"alias",
/// "command", "args", "env", "cwd"}` or `{"alias", "url", "headers"}`,
/// with VS Code variables expanded as the CLI expands them.
// Free functions are registered only outside `cfg(test)` (napi's macro).
#[napi(catch_unwind)]
#[cfg_attr(test, allow(dead_code))]
pub fn config_json(path: String) -> napi::Result<String> {
    let config = McpConfig::from_path(std::path::Path::new(&path)).map_err(to_js)?;
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

/// How many times this process read the tokenizer file at `path` (the
/// crate's `tokens::file_reads`): one per content, however many assemblers.
#[napi]
#[cfg_attr(test, allow(dead_code))]
pub fn tokenizer_file_reads(path: String) -> i64 {
    i64::try_from(mcp_preamble::tokens::file_reads(path)).unwrap_or(i64::MAX)
}
