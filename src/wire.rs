//! Reading handshake and `tools/list` results off the wire, in both eras.

use std::path::Path;

use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind, Result, RpcError};
use crate::model::{
    CacheHints, Era, Instructions, ServerInfo, ServerSnapshot, Tool, ToolAnnotations,
};

mod handshake;
mod skills;

pub use skills::SKILLS_EXTENSION;
#[cfg_attr(not(feature = "serve"), allow(unused_imports))]
pub(crate) use skills::skill as read_skill;

const SERVER_INFO_META: &str = "io.modelcontextprotocol/serverInfo";

fn invalid(detail: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidMessage, detail)
}

/// Takes the `result` out of a JSON-RPC response, or accepts a bare result.
fn unwrap_result<'a>(msg: &'a Value, method: &str) -> Result<&'a Map<String, Value>> {
    let obj = msg
        .as_object()
        .ok_or_else(|| invalid(format!("{method} response is not a json object")))?;
    if let Some(err) = obj.get("error") {
        let code = err.get("code").and_then(Value::as_i64).unwrap_or(0);
        let message = err
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        return Err(Error::rpc(RpcError {
            method: method.to_string(),
            code,
            message,
        }));
    }
    // A bare result of these methods never has a top-level `result` key.
    match obj.get("result") {
        Some(Value::Object(result)) => Ok(result),
        Some(_) => Err(invalid(format!("{method} result is not a json object"))),
        None if obj.contains_key("jsonrpc") => Err(invalid(format!(
            "{method} response has neither result nor error"
        ))),
        None => Ok(obj),
    }
}

fn opt_str<'a>(obj: &'a Map<String, Value>, key: &str, what: &str) -> Result<Option<&'a str>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(invalid(format!("{what}.{key} is not a string"))),
    }
}

fn server_info(value: Option<&Value>, what: &str) -> Result<ServerInfo> {
    let Some(value) = value else {
        return Err(invalid(format!("{what} has no serverInfo")));
    };
    let obj = value
        .as_object()
        .ok_or_else(|| invalid(format!("{what} serverInfo is not a json object")))?;
    let ctx = format!("{what} serverInfo");
    Ok(ServerInfo {
        name: opt_str(obj, "name", &ctx)?.unwrap_or_default().to_string(),
        version: opt_str(obj, "version", &ctx)?
            .unwrap_or_default()
            .to_string(),
        title: opt_str(obj, "title", &ctx)?.map(str::to_string),
    })
}

fn cache_hints(obj: &Map<String, Value>, what: &str) -> Result<Option<CacheHints>> {
    let ttl_ms = match obj.get("ttlMs") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .ok_or_else(|| invalid(format!("{what}.ttlMs is not a non-negative integer")))?,
        ),
    };
    let cache_scope = opt_str(obj, "cacheScope", what)?.map(str::to_string);
    if ttl_ms.is_none() && cache_scope.is_none() {
        return Ok(None);
    }
    Ok(Some(CacheHints {
        ttl_ms,
        cache_scope,
    }))
}

fn instructions(obj: &Map<String, Value>, what: &str) -> Result<Instructions> {
    Ok(Instructions::from_raw(opt_str(obj, "instructions", what)?))
}

fn tool(value: &Value, index: usize) -> Result<Tool> {
    let what = format!("tools/list result tools[{index}]");
    let obj = value
        .as_object()
        .ok_or_else(|| invalid(format!("{what} is not a json object")))?;
    let name =
        opt_str(obj, "name", &what)?.ok_or_else(|| invalid(format!("{what} has no name")))?;
    // Annotations are hints only: a malformed one is dropped, not fatal.
    let annotations = obj
        .get("annotations")
        .and_then(|a| serde_json::from_value::<ToolAnnotations>(a.clone()).ok());
    Ok(Tool {
        name: name.to_string(),
        title: opt_str(obj, "title", &what)?.map(str::to_string),
        description: opt_str(obj, "description", &what)?.map(str::to_string),
        input_schema: obj
            .get("inputSchema")
            .cloned()
            .unwrap_or(Value::Null)
            .into(),
        annotations,
        output_schema: (obj.get("outputSchema"))
            .filter(|o| !o.is_null())
            .map(|o| o.clone().into()),
        icons: obj.get("icons").filter(|i| !i.is_null()).cloned(),
        meta: obj.get("_meta").filter(|m| !m.is_null()).cloned(),
    })
}

impl ServerSnapshot {
    /// Reads an `initialize` result (2025 era), bare or inside its JSON-RPC response.
    ///
    /// A JSON-RPC error response gives an [`ErrorKind::RpcError`] naming
    /// `initialize`, the code and the message.
    pub fn from_initialize(msg: &Value) -> Result<ServerSnapshot> {
        let result = unwrap_result(msg, "initialize")?;
        let what = "initialize result";
        let protocol_version = opt_str(result, "protocolVersion", what)?
            .ok_or_else(|| invalid("initialize result has no protocolVersion"))?;
        Ok(ServerSnapshot::handshake(
            server_info(result.get("serverInfo"), what)?,
            instructions(result, what)?,
            Era::Legacy,
            protocol_version.to_string(),
        ))
    }

    /// Reads a `server/discover` result (2026-07-28 revision), bare or inside
    /// its JSON-RPC response.
    ///
    /// `serverInfo` is read from `_meta["io.modelcontextprotocol/serverInfo"]`
    /// (or a plain `serverInfo` key), the version is the newest of
    /// `supportedVersions`, and `ttlMs`/`cacheScope` become [`ServerSnapshot::cache`].
    pub fn from_discover(msg: &Value) -> Result<ServerSnapshot> {
        let result = unwrap_result(msg, "server/discover")?;
        let what = "server/discover result";
        let versions = result
            .get("supportedVersions")
            .and_then(Value::as_array)
            .ok_or_else(|| invalid("server/discover result has no supportedVersions array"))?;
        // Revisions are dates, so the newest is the greatest string.
        let protocol_version = versions
            .iter()
            .filter_map(Value::as_str)
            .max()
            .ok_or_else(|| invalid("server/discover result has an empty supportedVersions"))?;
        let info = result
            .get("_meta")
            .and_then(|m| m.get(SERVER_INFO_META))
            .or_else(|| result.get("serverInfo"));
        let mut snapshot = ServerSnapshot::handshake(
            server_info(info, what)?,
            instructions(result, what)?,
            Era::Modern,
            protocol_version.to_string(),
        );
        snapshot.cache = cache_hints(result, what)?;
        Ok(snapshot)
    }

    /// Appends one `tools/list` page, bare or inside its JSON-RPC response, and
    /// returns its `nextCursor` (fetch the next page while it is `Some`).
    ///
    /// A JSON-RPC error response is returned as an [`ErrorKind::RpcError`]
    /// naming `tools/list`; the snapshot is left as it was. The shortest
    /// `ttlMs` over the pages is kept in [`ServerSnapshot::tools_cache`].
    pub fn push_tools_page(&mut self, msg: &Value) -> Result<Option<String>> {
        let result = unwrap_result(msg, "tools/list")?;
        let what = "tools/list result";
        let list = result
            .get("tools")
            .and_then(Value::as_array)
            .ok_or_else(|| invalid("tools/list result has no tools array"))?;
        let tools = list
            .iter()
            .enumerate()
            .map(|(i, t)| tool(t, i))
            .collect::<Result<Vec<_>>>()?;
        let cursor = opt_str(result, "nextCursor", what)?.map(str::to_string);
        if let Some(hints) = cache_hints(result, what)? {
            self.tools_cache = Some(match self.tools_cache.take() {
                None => hints,
                Some(old) => CacheHints {
                    ttl_ms: match (old.ttl_ms, hints.ttl_ms) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    },
                    cache_scope: old.cache_scope.or(hints.cache_scope),
                },
            });
        }
        self.tools.extend(tools);
        Ok(cursor)
    }
}

fn parse_json(text: &str, what: &str) -> Result<Value> {
    serde_json::from_str(text)
        .map_err(|e| Error::new(ErrorKind::InvalidJson, format!("{what}: {e}")).with_source(e))
}

impl ServerSnapshot {
    /// [`ServerSnapshot::from_initialize`] from JSON text.
    pub fn from_initialize_json(text: &str) -> Result<ServerSnapshot> {
        ServerSnapshot::from_initialize(&parse_json(text, "initialize response")?)
    }

    /// [`ServerSnapshot::from_discover`] from JSON text.
    pub fn from_discover_json(text: &str) -> Result<ServerSnapshot> {
        ServerSnapshot::from_discover(&parse_json(text, "server/discover response")?)
    }
}

/// One capture file: a server's raw handshakes, as in `tests/corpus/`.
///
/// The format (see `tests/corpus/README.md`) holds the `initialize` response
/// and its `tools/list` pages (and `skills/list` pages, for servers that
/// declare the Skills extension), and the `server/discover` response and its
/// pages from a second connection. Messages the server sent unasked are ignored.
#[derive(Debug, Clone)]
pub struct Capture {
    /// `package@version` that was run.
    pub server: String,
    /// The MCP SDK the server is built on.
    pub sdk: String,
    /// The day of the capture.
    pub captured: String,
    initialize: Option<Value>,
    tools_list_pages: Vec<Value>,
    discover: Option<Value>,
    discover_tools_list_pages: Vec<Value>,
    skills_list_pages: Vec<Value>,
    discover_skills_list_pages: Vec<Value>,
}

impl Capture {
    /// Parses a capture from JSON text.
    pub fn from_json(text: &str) -> Result<Capture> {
        let value = parse_json(text, "capture")?;
        let obj = value
            .as_object()
            .ok_or_else(|| invalid("capture is not a json object"))?;
        let text_field = |key: &str| -> Result<String> {
            Ok(opt_str(obj, key, "capture")?
                .unwrap_or_default()
                .to_string())
        };
        let pages = |key: &str| -> Result<Vec<Value>> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(a)) => Ok(a.clone()),
                Some(_) => Err(invalid(format!("capture.{key} is not an array"))),
            }
        };
        let capture = Capture {
            server: text_field("server")?,
            sdk: text_field("sdk")?,
            captured: text_field("captured")?,
            initialize: obj.get("initialize").filter(|v| !v.is_null()).cloned(),
            tools_list_pages: pages("tools_list_pages")?,
            discover: obj.get("discover").filter(|v| !v.is_null()).cloned(),
            discover_tools_list_pages: pages("discover_tools_list_pages")?,
            skills_list_pages: pages("skills_list_pages")?,
            discover_skills_list_pages: pages("discover_skills_list_pages")?,
        };
        if capture.initialize.is_none() && capture.discover.is_none() {
            return Err(invalid("capture has neither initialize nor discover"));
        }
        Ok(capture)
    }

    /// Reads and parses a capture file.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Capture> {
        let path = path.as_ref();
        let text = crate::error::read_file(path)?;
        Capture::from_json(&text)
    }

    /// The eras whose handshake succeeded in this capture, modern first.
    pub fn eras(&self) -> Vec<Era> {
        let ok = |v: &Option<Value>| v.as_ref().is_some_and(|v| v.get("error").is_none());
        let mut eras = Vec::new();
        if ok(&self.discover) {
            eras.push(Era::Modern);
        }
        if ok(&self.initialize) {
            eras.push(Era::Legacy);
        }
        eras
    }

    /// The snapshot a host would hold: the `server/discover` connection when
    /// that handshake succeeded, the `initialize` one otherwise.
    pub fn snapshot(&self) -> Result<ServerSnapshot> {
        match self.eras().first() {
            Some(era) => self.snapshot_in(*era),
            // Neither succeeded: report the legacy handshake's error.
            None => self.snapshot_in(if self.initialize.is_some() {
                Era::Legacy
            } else {
                Era::Modern
            }),
        }
    }

    /// The snapshot of every era whose handshake succeeded, the one
    /// [`Capture::snapshot`] picks first: what
    /// [`Linter::check_connects`](crate::lint::Linter::check_connects) compares for
    /// `MCP015`. A further era whose `tools/list` pages do not read is left
    /// out, since the first era is linted either way.
    pub fn era_snapshots(&self) -> Result<Vec<ServerSnapshot>> {
        let mut all = vec![self.snapshot()?];
        for era in self.eras().into_iter().skip(1) {
            if let Ok(s) = self.snapshot_in(era) {
                all.push(s);
            }
        }
        Ok(all)
    }

    /// The snapshot of one era's connection.
    ///
    /// A failed handshake is an error; a failed `tools/list` is not: its
    /// error is kept in [`ServerSnapshot::tools_error`] with the tools read
    /// before it (and likewise for `skills/list`, [`ServerSnapshot::skills_error`]).
    pub fn snapshot_in(&self, era: Era) -> Result<ServerSnapshot> {
        let (handshake, pages, skills) = match era {
            Era::Legacy => (
                &self.initialize,
                &self.tools_list_pages,
                &self.skills_list_pages,
            ),
            Era::Modern => (
                &self.discover,
                &self.discover_tools_list_pages,
                &self.discover_skills_list_pages,
            ),
        };
        let handshake = handshake
            .as_ref()
            .ok_or_else(|| invalid(format!("capture has no {} handshake", era.as_str())))?;
        let mut snapshot = match era {
            Era::Legacy => ServerSnapshot::from_initialize(handshake)?,
            Era::Modern => ServerSnapshot::from_discover(handshake)?,
        };
        for page in pages {
            if let Err(err) = snapshot.push_tools_page(page) {
                match err.rpc_error() {
                    Some(rpc) => {
                        snapshot.tools_error = Some(rpc.clone());
                        break;
                    }
                    None => return Err(err),
                }
            }
        }
        for page in skills {
            if let Err(err) = snapshot.push_skills_page(page) {
                match err.rpc_error() {
                    Some(rpc) => {
                        snapshot.skills_error = Some(rpc.clone());
                        break;
                    }
                    None => return Err(err),
                }
            }
        }
        Ok(snapshot)
    }
}

/// The version of the snapshot file format written by [`SnapshotFile::to_json`]
/// (2: the snapshot may carry `skills`; version 1 files are read).
pub const SNAPSHOT_FORMAT_VERSION: u32 = 2;

/// A snapshot file: one server's [`ServerSnapshot`] as JSON, so previews and
/// tests can run offline.
///
/// Format (version 2): `{"mcp_preamble_snapshot": 2, "captured_ms": <unix
/// ms>, "snapshot": <ServerSnapshot>}`, where the snapshot has `alias`,
/// `server_info` (`name`, `version`, `title`), `instructions` (`{"state":
/// "absent"}`, or `"blank"`/`"present"` with `"raw"`), `tools` (as in
/// `tools/list`), `era` (`"legacy"`/`"modern"`), `protocol_version`, and,
/// when known, `cache` and `tools_cache` (`ttlMs`, `cacheScope`) and
/// `tools_error` (`method`, `code`, `message`); since version 2, when the
/// server has any, `skills` (`uri`, `name`, `description`, `frontmatter`,
/// `resources`), `skills_skipped` and `skills_error`. Version 1 (no skills)
/// is read as it is.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SnapshotFile {
    /// The format version.
    #[serde(rename = "mcp_preamble_snapshot")]
    pub version: u32,
    /// When the snapshot was taken, in milliseconds since the Unix epoch.
    pub captured_ms: u64,
    /// The server.
    pub snapshot: ServerSnapshot,
}

impl SnapshotFile {
    /// A file for `snapshot` taken at `captured_ms`.
    pub fn new(snapshot: ServerSnapshot, captured_ms: u64) -> SnapshotFile {
        SnapshotFile {
            version: SNAPSHOT_FORMAT_VERSION,
            captured_ms,
            snapshot,
        }
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        // Plain data: serializing cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Parses a snapshot file; a newer format version is an error.
    pub fn from_json(text: &str) -> Result<SnapshotFile> {
        let value = parse_json(text, "snapshot file")?;
        let version = value
            .get("mcp_preamble_snapshot")
            .and_then(Value::as_u64)
            .ok_or_else(|| invalid("not a snapshot file (no mcp_preamble_snapshot version)"))?;
        if version > u64::from(SNAPSHOT_FORMAT_VERSION) {
            return Err(invalid(format!(
                "snapshot file format {version} is newer than this version reads ({SNAPSHOT_FORMAT_VERSION})"
            )));
        }
        serde_json::from_value(value)
            .map_err(|e| invalid(format!("snapshot file: {e}")).with_source(e))
    }
}

/// The server of a capture or snapshot file as the CLI names it (its alias,
/// else the file's stem), then, for a capture that holds both handshakes,
/// the other era's snapshot under the same alias (the second value): what
/// `mcp-preamble lint` compares for `MCP015` ([`Capture::era_snapshots`]).
/// A snapshot file holds one era.
///
/// ```
/// use mcp_preamble::files::load_server_eras;
/// let (server, others) = load_server_eras("tests/corpus/seed-invoice-server.json")?;
/// assert_eq!(server.alias.as_deref(), Some("seed-invoice-server"));
/// assert_eq!(others.len(), 1);
/// assert_eq!((server.era.as_str(), others[0].era.as_str()), ("modern", "legacy"));
/// # Ok::<(), mcp_preamble::Error>(())
/// ```
pub fn load_server_eras(path: impl AsRef<Path>) -> Result<(ServerSnapshot, Vec<ServerSnapshot>)> {
    let path = path.as_ref();
    // Read once: a FIFO (or a file changed meanwhile) has no second reading.
    let text = crate::error::read_file(path)?;
    let mut first = server_of_text(&text)?;
    if first.alias.is_none() {
        first.alias = path.file_stem().map(|s| s.to_string_lossy().into_owned());
    }
    let mut others = Vec::new();
    let capture = (!is_snapshot_file(&text)).then(|| Capture::from_json(&text));
    if let Some(Ok(eras)) = capture.map(|c| c.and_then(|c| c.era_snapshots())) {
        for mut s in eras.into_iter().skip(1) {
            s.alias.clone_from(&first.alias);
            others.push(s);
        }
    }
    Ok((first, others))
}

fn is_snapshot_file(text: &str) -> bool {
    text.contains("\"mcp_preamble_snapshot\"")
}

/// The server of a file's text: a snapshot file or a capture.
fn server_of_text(text: &str) -> Result<ServerSnapshot> {
    if is_snapshot_file(text) {
        Ok(SnapshotFile::from_json(text)?.snapshot)
    } else {
        Capture::from_json(text)?.snapshot()
    }
}

/// Loads a server from a file: a capture (the `tests/corpus/` format) or a
/// [`SnapshotFile`], told apart by their keys.
pub fn load_server_file(path: impl AsRef<Path>) -> Result<ServerSnapshot> {
    server_of_text(&crate::error::read_file(path.as_ref())?)
}
