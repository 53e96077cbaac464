//! The MCP server configs people already have: Claude Desktop / Cursor style
//! (`{"mcpServers": {alias: {command, args, env, cwd}}}`), VS Code style
//! (`{"servers": {alias: {"type": "stdio" | "http", …}}}`), and entries with a
//! `url` (Streamable HTTP).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind, Result};

/// How to reach one configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerTransport {
    /// A child process speaking JSON-RPC over stdio.
    Stdio {
        /// The program to run.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables.
        env: BTreeMap<String, String>,
        /// The working directory, when set.
        cwd: Option<PathBuf>,
    },
    /// A Streamable HTTP endpoint.
    Http {
        /// The endpoint URL.
        url: String,
        /// Extra request headers.
        headers: BTreeMap<String, String>,
    },
}

/// One server of a config file, under the alias the host knows it by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerEntry {
    /// The key of the entry: the server's name in the section.
    pub alias: String,
    /// How to reach it.
    pub transport: ServerTransport,
}

/// A parsed MCP config file: its servers, sorted by alias.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpConfig {
    /// Where it was read from (for messages).
    pub origin: String,
    /// The servers, sorted by alias.
    pub servers: Vec<ServerEntry>,
}

impl McpConfig {
    /// Reads a config file.
    pub fn from_path(path: impl AsRef<Path>) -> Result<McpConfig> {
        let path = path.as_ref();
        let text = crate::error::read_file(path)?;
        McpConfig::from_json(&text, &path.display().to_string())
    }

    /// Parses config JSON; `origin` names it in error messages.
    ///
    /// Errors are [`ErrorKind::InvalidConfig`] and name the origin, the
    /// alias and the field: `invalid configuration: mcp.json: server "x":
    /// "args" must be an array of strings`.
    pub fn from_json(text: &str, origin: &str) -> Result<McpConfig> {
        let bad =
            |detail: String| Error::new(ErrorKind::InvalidConfig, format!("{origin}: {detail}"));
        let value: Value = serde_json::from_str(text)
            .map_err(|e| bad(format!("not valid json: {e}")).with_source(e))?;
        let obj = value
            .as_object()
            .ok_or_else(|| bad("the top level is not a json object".into()))?;
        let (key, servers) = match (obj.get("mcpServers"), obj.get("servers")) {
            (Some(s), _) => ("mcpServers", s),
            (None, Some(s)) => ("servers", s),
            (None, None) => return Err(bad("no \"mcpServers\" or \"servers\" object".into())),
        };
        let servers = servers
            .as_object()
            .ok_or_else(|| bad(format!("\"{key}\" is not a json object")))?;
        let mut out = Vec::with_capacity(servers.len());
        for (alias, entry) in servers {
            let field_err = |detail: String| bad(format!("server {alias:?}: {detail}"));
            let entry = entry
                .as_object()
                .ok_or_else(|| field_err("the entry is not a json object".into()))?;
            out.push(ServerEntry {
                alias: alias.clone(),
                transport: transport(entry).map_err(field_err)?,
            });
        }
        out.sort_by(|a, b| a.alias.cmp(&b.alias));
        Ok(McpConfig {
            origin: origin.to_string(),
            servers: out,
        })
    }
}

fn string(entry: &Map<String, Value>, field: &str) -> std::result::Result<Option<String>, String> {
    match entry.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("\"{field}\" must be a string")),
    }
}

fn strings(entry: &Map<String, Value>, field: &str) -> std::result::Result<Vec<String>, String> {
    match entry.get(field) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("\"{field}\" must be an array of strings")),
        Some(_) => Err(format!("\"{field}\" must be an array of strings")),
    }
}

fn string_map(
    entry: &Map<String, Value>,
    field: &str,
) -> std::result::Result<BTreeMap<String, String>, String> {
    match entry.get(field) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
            .collect::<Option<BTreeMap<_, _>>>()
            .ok_or_else(|| format!("\"{field}\" must map names to strings")),
        Some(_) => Err(format!("\"{field}\" must map names to strings")),
    }
}

fn transport(entry: &Map<String, Value>) -> std::result::Result<ServerTransport, String> {
    let kind = string(entry, "type")?;
    let url = string(entry, "url")?;
    match kind.as_deref() {
        Some("stdio") | None if url.is_none() => {
            let command = string(entry, "command")?
                .filter(|c| !c.is_empty())
                .ok_or_else(|| "\"command\" is missing".to_string())?;
            Ok(ServerTransport::Stdio {
                command,
                args: strings(entry, "args")?,
                env: string_map(entry, "env")?,
                cwd: string(entry, "cwd")?.map(PathBuf::from),
            })
        }
        Some("http") | Some("streamable-http") | Some("streamableHttp") | None => {
            Ok(ServerTransport::Http {
                url: url.ok_or_else(|| "\"url\" is missing".to_string())?,
                headers: string_map(entry, "headers")?,
            })
        }
        Some("stdio") => Err("\"type\" is \"stdio\" but the entry has a \"url\"".into()),
        Some(other) => Err(format!(
            "\"type\" {other:?} is not supported (use \"stdio\" or \"http\")"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_styles() {
        let claude = r#"{"mcpServers": {
            "files": {"command": "npx", "args": ["-y", "server-filesystem", "/tmp"], "env": {"A": "1"}},
            "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}}
        }}"#;
        let c = McpConfig::from_json(claude, "claude.json").unwrap();
        assert_eq!(c.servers.len(), 2);
        assert_eq!(c.servers[0].alias, "files");
        let ServerTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } = &c.servers[0].transport
        else {
            panic!()
        };
        assert_eq!(
            (command.as_str(), args.len(), env["A"].as_str(), cwd),
            ("npx", 3, "1", &None)
        );
        assert!(
            matches!(&c.servers[1].transport, ServerTransport::Http { url, .. } if url == "https://example.com/mcp")
        );

        let vscode = r#"{"servers": {
            "b": {"type": "stdio", "command": "node", "args": ["s.mjs"], "cwd": "/srv"},
            "a": {"type": "http", "url": "http://127.0.0.1:3000/mcp"}
        }}"#;
        let v = McpConfig::from_json(vscode, "mcp.json").unwrap();
        let aliases: Vec<&str> = v.servers.iter().map(|s| s.alias.as_str()).collect();
        assert_eq!(aliases, ["a", "b"]);
        assert!(
            matches!(&v.servers[1].transport, ServerTransport::Stdio { cwd: Some(p), .. } if p == Path::new("/srv"))
        );
    }

    #[test]
    fn errors_name_file_alias_and_field() {
        let cases = [
            (
                "[]",
                "invalid configuration: c.json: the top level is not a json object",
            ),
            (
                "{}",
                "invalid configuration: c.json: no \"mcpServers\" or \"servers\" object",
            ),
            (
                r#"{"mcpServers": []}"#,
                "invalid configuration: c.json: \"mcpServers\" is not a json object",
            ),
            (
                r#"{"mcpServers": {"x": 1}}"#,
                "invalid configuration: c.json: server \"x\": the entry is not a json object",
            ),
            (
                r#"{"mcpServers": {"x": {}}}"#,
                "invalid configuration: c.json: server \"x\": \"command\" is missing",
            ),
            (
                r#"{"mcpServers": {"x": {"command": "a", "args": "b"}}}"#,
                "invalid configuration: c.json: server \"x\": \"args\" must be an array of strings",
            ),
            (
                r#"{"mcpServers": {"x": {"command": "a", "env": {"K": 1}}}}"#,
                "invalid configuration: c.json: server \"x\": \"env\" must map names to strings",
            ),
            (
                r#"{"servers": {"x": {"type": "sse", "url": "u"}}}"#,
                "invalid configuration: c.json: server \"x\": \"type\" \"sse\" is not supported (use \"stdio\" or \"http\")",
            ),
            (
                r#"{"servers": {"x": {"type": "http"}}}"#,
                "invalid configuration: c.json: server \"x\": \"url\" is missing",
            ),
        ];
        for (json, expected) in cases {
            let err = McpConfig::from_json(json, "c.json").unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidConfig);
            assert_eq!(err.to_string(), expected);
        }
        let err = McpConfig::from_json("{", "c.json").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("invalid configuration: c.json: not valid json: ")
        );
    }
}
