//! The MCP server configs people already have: Claude Desktop / Cursor style
//! (`{"mcpServers": {alias: {command, args, env, cwd}}}`), VS Code style
//! (`{"servers": {alias: {"type": "stdio" | "http", …}}}`), and entries with a
//! `url` (Streamable HTTP).
//!
//! VS Code variables in string values are expanded where they are known
//! and rejected with a clear error where not, so a server never starts
//! with a literal `${…}` in its arguments: `${env:NAME}` (an error when
//! `NAME` is not set), `${userHome}`, `${workspaceFolder}` (only for a file
//! read with [`McpConfig::from_path`]: the folder holding `.vscode/`, or the
//! file's own folder) and `${pathSeparator}` / `${/}`. Any other
//! `${kind:…}` (`${input:…}`, `${command:…}`, `${config:…}`) or VS Code
//! name is an error. `${NAME}` and `${NAME:-default}` (Claude Code's
//! `.mcp.json`) read the environment: an unset `NAME` is an error, or the
//! default when one is given (also for an empty `NAME`, as in the shell).
//!
//! The text may be JSONC, as VS Code's `mcp.json` is: `//` and `/* */`
//! comments and trailing commas are read, and so are a byte-order mark
//! and CRLF line ends.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind, Result};

mod jsonc;

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
///
/// ```
/// use mcp_preamble::files::{ServerEntry, ServerTransport};
///
/// let entry = ServerEntry::stdio("billing", "node", ["invoice.mjs"])
///     .env("GROW_AFTER_MS", "1200")
///     .cwd("tests/servers");
/// assert!(matches!(&entry.transport, ServerTransport::Stdio { command, .. } if command == "node"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerEntry {
    /// The key of the entry: the server's name in the section.
    pub alias: String,
    /// How to reach it.
    pub transport: ServerTransport,
}

impl ServerEntry {
    /// A stdio server: `command` with `args`, no extra environment, the
    /// host's working directory (see [`ServerEntry::env`], [`ServerEntry::cwd`]).
    pub fn stdio<I, S>(alias: impl Into<String>, command: impl Into<String>, args: I) -> ServerEntry
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ServerEntry {
            alias: alias.into(),
            transport: ServerTransport::Stdio {
                command: command.into(),
                args: args.into_iter().map(Into::into).collect(),
                env: BTreeMap::new(),
                cwd: None,
            },
        }
    }

    /// A Streamable HTTP server at `url`, with no extra headers (see
    /// [`ServerEntry::header`]).
    pub fn http(alias: impl Into<String>, url: impl Into<String>) -> ServerEntry {
        ServerEntry {
            alias: alias.into(),
            transport: ServerTransport::Http {
                url: url.into(),
                headers: BTreeMap::new(),
            },
        }
    }

    /// Sets an environment variable of a stdio server (on top of the few
    /// it inherits from the host); no effect on an HTTP server.
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> ServerEntry {
        if let ServerTransport::Stdio { env, .. } = &mut self.transport {
            env.insert(name.into(), value.into());
        }
        self
    }

    /// Sets the working directory of a stdio server; no effect on an HTTP server.
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> ServerEntry {
        if let ServerTransport::Stdio { cwd, .. } = &mut self.transport {
            *cwd = Some(dir.into());
        }
        self
    }

    /// Sets a request header of an HTTP server; no effect on a stdio server.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> ServerEntry {
        if let ServerTransport::Http { headers, .. } = &mut self.transport {
            headers.insert(name.into(), value.into());
        }
        self
    }
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
        let dir = path.parent().unwrap_or(Path::new(""));
        // `.vscode/mcp.json` belongs to the folder above `.vscode`.
        let workspace = match dir.file_name() {
            Some(name) if name == ".vscode" => dir.parent().unwrap_or(dir),
            _ => dir,
        };
        let workspace = std::path::absolute(workspace).unwrap_or_else(|_| workspace.to_path_buf());
        parse(&text, &path.display().to_string(), Some(&workspace))
    }

    /// Parses config JSON; `origin` names it in error messages.
    ///
    /// Errors are [`ErrorKind::InvalidConfig`] and name the origin, the
    /// alias and the field: `invalid configuration: mcp.json: server "x":
    /// "args" must be an array of strings`.
    pub fn from_json(text: &str, origin: &str) -> Result<McpConfig> {
        parse(text, origin, None)
    }

    /// The servers a client can start, as the JSON array the Python and Node
    /// packages' `connect_config` / `connectConfig` read: `{"alias",
    /// "command", "args", "env", "cwd"}` or `{"alias", "url", "headers"}`,
    /// sorted by alias, variables expanded as [`McpConfig::from_path`] does.
    ///
    /// ```
    /// use mcp_preamble::files::McpConfig;
    ///
    /// let config = McpConfig::from_json(
    ///     r#"{"mcpServers": {"docs": {"url": "https://example.com/mcp"}}}"#,
    ///     "mcp.json",
    /// )?;
    /// assert_eq!(
    ///     config.startable_json(),
    ///     r#"[{"alias":"docs","headers":{},"url":"https://example.com/mcp"}]"#
    /// );
    /// # Ok::<(), mcp_preamble::Error>(())
    /// ```
    pub fn startable_json(&self) -> String {
        let servers: Vec<Value> = self
            .servers
            .iter()
            .map(|entry| match &entry.transport {
                ServerTransport::Stdio {
                    command,
                    args,
                    env,
                    cwd,
                } => serde_json::json!({
                    "alias": entry.alias,
                    "command": command,
                    "args": args,
                    "env": env,
                    "cwd": cwd.as_ref().map(|c| c.display().to_string()),
                }),
                ServerTransport::Http { url, headers } => serde_json::json!({
                    "alias": entry.alias,
                    "url": url,
                    "headers": headers,
                }),
            })
            .collect();
        Value::Array(servers).to_string()
    }
}

/// Parses config JSON; `workspace` is what `${workspaceFolder}` stands for.
fn parse(text: &str, origin: &str, workspace: Option<&Path>) -> Result<McpConfig> {
    {
        let bad =
            |detail: String| Error::new(ErrorKind::InvalidConfig, format!("{origin}: {detail}"));
        let value: Value = serde_json::from_str(&jsonc::to_json(text))
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
            let transport = transport(entry)
                .and_then(|t| expand_transport(t, workspace))
                .map_err(field_err)?;
            out.push(ServerEntry {
                alias: alias.clone(),
                transport,
            });
        }
        out.sort_by(|a, b| a.alias.cmp(&b.alias));
        Ok(McpConfig {
            origin: origin.to_string(),
            servers: out,
        })
    }
}

/// Expands the VS Code variables of every string of `t` (see the module docs).
fn expand_transport(
    t: ServerTransport,
    workspace: Option<&Path>,
) -> std::result::Result<ServerTransport, String> {
    let x = |field: &str, value: &str| expand(field, value, workspace, &|n| std::env::var(n).ok());
    let map = |field: &str, m: BTreeMap<String, String>| {
        m.into_iter()
            .map(|(k, v)| Ok((k, x(field, &v)?)))
            .collect::<std::result::Result<BTreeMap<_, _>, String>>()
    };
    Ok(match t {
        ServerTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => ServerTransport::Stdio {
            command: x("command", &command)?,
            args: args
                .iter()
                .map(|a| x("args", a))
                .collect::<std::result::Result<_, _>>()?,
            env: map("env", env)?,
            cwd: match cwd {
                Some(dir) => match dir.to_str() {
                    Some(text) => Some(PathBuf::from(x("cwd", text)?)),
                    None => Some(dir),
                },
                None => None,
            },
        },
        ServerTransport::Http { url, headers } => ServerTransport::Http {
            url: x("url", &url)?,
            headers: map("headers", headers)?,
        },
    })
}

/// `value` with its VS Code variables expanded; `var` reads the environment.
fn expand(
    field: &str,
    value: &str,
    workspace: Option<&Path>,
    var: &dyn Fn(&str) -> Option<String>,
) -> std::result::Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        out.push_str(&rest[..start]);
        let whole = &rest[start..start + len + 1];
        let name = &whole[2..whole.len() - 1];
        let cut = |s: &str| s.chars().take(60).collect::<String>();
        let unknown = || {
            format!(
                "\"{field}\" uses {:?}, a VS Code variable mcp-preamble cannot expand",
                cut(whole)
            )
        };
        let expanded = match name.split_once(':') {
            Some(("env", var_name)) => var(var_name).ok_or_else(|| {
                format!(
                    "\"{field}\" uses ${{env:{}}}, but that variable is not set",
                    cut(var_name)
                )
            })?,
            Some((var_name, default)) if env_name(var_name) && default.starts_with('-') => {
                (var(var_name).filter(|v| !v.is_empty()))
                    .unwrap_or_else(|| default[1..].to_string())
            }
            Some(("input", id)) => {
                return Err(format!(
                    "\"{field}\" uses ${{input:{}}}, an input VS Code asks the user for; mcp-preamble cannot ask: write the value, or ${{env:NAME}}",
                    cut(id)
                ));
            }
            Some(_) => return Err(unknown()),
            None => named(field, whole, workspace, var)?,
        };
        out.push_str(&expanded);
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A `${NAME}` without a colon: a VS Code variable expanded (or refused
/// when mcp-preamble cannot know it), Claude Code's `${NAME}` read from the
/// environment, anything else left as written.
fn named(
    field: &str,
    whole: &str,
    workspace: Option<&Path>,
    var: &dyn Fn(&str) -> Option<String>,
) -> std::result::Result<String, String> {
    let name = &whole[2..whole.len() - 1];
    let cut = |s: &str| s.chars().take(60).collect::<String>();
    let unknown = || {
        format!(
            "\"{field}\" uses {:?}, a VS Code variable mcp-preamble cannot expand",
            cut(whole)
        )
    };
    Ok(match name {
        "workspaceFolder" => match workspace {
            Some(dir) => dir.display().to_string(),
            None => {
                return Err(format!(
                    "\"{field}\" uses ${{workspaceFolder}}, which is only known for a config read from a file"
                ));
            }
        },
        "userHome" => var("HOME")
            .or_else(|| var("USERPROFILE"))
            .ok_or_else(|| format!("\"{field}\" uses ${{userHome}}, but HOME is not set"))?,
        "pathSeparator" | "/" => std::path::MAIN_SEPARATOR.to_string(),
        "workspaceFolderBasename"
        | "file"
        | "fileBasename"
        | "fileDirname"
        | "relativeFile"
        | "cwd"
        | "execPath"
        | "lineNumber"
        | "selectedText"
        | "fileExtname"
        | "fileBasenameNoExtension"
        | "fileWorkspaceFolder"
        | "relativeFileDirname"
        | "defaultBuildTask" => return Err(unknown()),
        // Claude Code's `${NAME}`.
        _ if env_name(name) => var(name).ok_or_else(|| {
            format!(
                "\"{field}\" uses ${{{}}}, but that variable is not set",
                cut(name)
            )
        })?,
        // Neither: left as written.
        _ => whole.to_string(),
    })
}

/// Whether `name` can name an environment variable (`[A-Za-z_][A-Za-z0-9_]*`).
fn env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
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

    #[test]
    fn vscode_variables_are_expanded_or_rejected() {
        let env = |n: &str| {
            (n == "TOKEN")
                .then(|| "t0k".to_string())
                .or_else(|| (n == "HOME").then(|| "/home/u".into()))
        };
        let ws = Some(Path::new("/work/proj"));
        let x = |v: &str| expand("args", v, ws, &env);
        assert_eq!(x("--token=${env:TOKEN}").unwrap(), "--token=t0k");
        assert_eq!(x("${workspaceFolder}/src").unwrap(), "/work/proj/src");
        assert_eq!(x("${userHome}/x").unwrap(), "/home/u/x");
        assert_eq!(x("${HOME} and ${").unwrap(), "/home/u and ${");
        assert_eq!(x("${TOKEN:-none}/${NOPE:-none}").unwrap(), "t0k/none");
        assert_eq!(x("${NOPE:-}|${1x}|${a b}").unwrap(), "|${1x}|${a b}");
        assert_eq!(
            x("${NOPE}").unwrap_err(),
            "\"args\" uses ${NOPE}, but that variable is not set"
        );
        assert_eq!(
            x("${env:NOPE}").unwrap_err(),
            "\"args\" uses ${env:NOPE}, but that variable is not set"
        );
        assert_eq!(
            x("${input:apiKey}").unwrap_err(),
            "\"args\" uses ${input:apiKey}, an input VS Code asks the user for; mcp-preamble cannot ask: write the value, or ${env:NAME}"
        );
        assert_eq!(
            expand("cwd", "${workspaceFolder}", None, &env).unwrap_err(),
            "\"cwd\" uses ${workspaceFolder}, which is only known for a config read from a file"
        );
        // Through the parser: the error names the file, the server and the field.
        let err = McpConfig::from_json(
            r#"{"servers": {"x": {"command": "node", "cwd": "${workspaceFolder}"}}}"#,
            "mcp.json",
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid configuration: mcp.json: server \"x\": \"cwd\" uses ${workspaceFolder}, which is only known for a config read from a file"
        );
    }

    #[test]
    fn workspace_folder_is_the_folder_above_vscode() {
        let dir = std::env::temp_dir().join(format!("mcp-preamble-ws-{}", std::process::id()));
        std::fs::create_dir_all(dir.join(".vscode")).unwrap();
        let file = dir.join(".vscode/mcp.json");
        std::fs::write(
            &file,
            r#"{"servers": {"x": {"command": "node", "args": ["${workspaceFolder}/s.mjs"]}}}"#,
        )
        .unwrap();
        let config = McpConfig::from_path(&file).unwrap();
        let ServerTransport::Stdio { args, .. } = &config.servers[0].transport else {
            panic!()
        };
        assert_eq!(args[0], format!("{}/s.mjs", dir.display()));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn entry_builders() {
        let e = ServerEntry::stdio("a", "node", ["s.mjs"])
            .env("K", "v")
            .cwd("/srv")
            .header("H", "x");
        assert_eq!(
            e.transport,
            ServerTransport::Stdio {
                command: "node".into(),
                args: vec!["s.mjs".into()],
                env: BTreeMap::from([("K".into(), "v".into())]),
                cwd: Some(PathBuf::from("/srv")),
            }
        );
        let h = ServerEntry::http("b", "http://h/mcp")
            .header("A", "1")
            .env("K", "v");
        assert_eq!(
            h.transport,
            ServerTransport::Http {
                url: "http://h/mcp".into(),
                headers: BTreeMap::from([("A".into(), "1".into())]),
            }
        );
    }
}
