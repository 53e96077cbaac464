//! One server's snapshot: from a capture or snapshot file, or from what a
//! client stored (the handshake result and the `tools/list` pages as JSON).

use mcp_preamble::ServerSnapshot;
use mcp_preamble::files::{SnapshotFile, load_server_eras};
use napi::bindgen_prelude::ClassInstance;
use napi_derive::napi;

use crate::errors::{parse, to_js};

/// A server snapshot (`Server` of index.js wraps it).
#[napi]
#[derive(Clone)]
pub struct NativeServer {
    pub(crate) snapshot: ServerSnapshot,
    /// A capture's other handshake, which the lint compares with (`MCP015`).
    pub(crate) other_eras: Vec<ServerSnapshot>,
}

impl NativeServer {
    fn of(snapshot: ServerSnapshot) -> NativeServer {
        NativeServer {
            snapshot,
            other_eras: Vec::new(),
        }
    }
}

#[napi]
impl NativeServer {
    /// A capture file (`tests/corpus/` format) or a snapshot file; without
    /// an alias in the file or given, the file's stem (as the CLI does).
    #[napi(factory, catch_unwind)]
    pub fn from_capture(path: String, alias: Option<String>) -> napi::Result<NativeServer> {
        let path = std::path::PathBuf::from(path);
        // As `mcp-preamble lint` reads it: a capture with both handshakes
        // keeps the other one to compare with.
        let (mut snapshot, mut other_eras) = load_server_eras(&path).map_err(to_js)?;
        if let Some(alias) = alias {
            for s in std::iter::once(&mut snapshot).chain(&mut other_eras) {
                s.alias = Some(alias.clone());
            }
        }
        Ok(NativeServer {
            snapshot,
            other_eras,
        })
    }

    /// A handshake result (`initialize` or `server/discover`, bare or in its
    /// envelope) and the `tools/list` pages, each a JSON text.
    #[napi(factory, catch_unwind)]
    pub fn from_handshake(
        discover: bool,
        result: String,
        pages: Vec<String>,
        alias: Option<String>,
    ) -> napi::Result<NativeServer> {
        let mut snapshot = if discover {
            ServerSnapshot::from_discover_json(&result)
        } else {
            ServerSnapshot::from_initialize_json(&result)
        }
        .map_err(to_js)?;
        // A page that is a JSON-RPC error ends the list and is kept on the
        // snapshot, as capture files are read: the tools before it stay.
        for (i, page) in pages.iter().enumerate() {
            let page = parse(page, &format!("tools/list page {}", i + 1))?;
            if let Err(err) = snapshot.push_tools_page(&page) {
                match err.rpc_error() {
                    Some(rpc) => {
                        snapshot.tools_error = Some(rpc.clone());
                        break;
                    }
                    None => return Err(to_js(err)),
                }
            }
        }
        if alias.is_some() {
            snapshot.alias = alias;
        }
        Ok(NativeServer::of(snapshot))
    }

    /// A snapshot file's text (what [`NativeServer::snapshot_json`] wrote).
    #[napi(factory, catch_unwind)]
    pub fn from_snapshot_json(text: String) -> napi::Result<NativeServer> {
        let file = SnapshotFile::from_json(&text).map_err(to_js)?;
        Ok(NativeServer::of(file.snapshot))
    }

    /// The snapshot file format (`mcp-preamble snapshot`), stamped `captured_ms`.
    #[napi]
    pub fn snapshot_json(&self, captured_ms: f64) -> String {
        // A JavaScript timestamp: a whole, non-negative number of milliseconds.
        let ms = if captured_ms.is_finite() && captured_ms > 0.0 {
            captured_ms as u64
        } else {
            0
        };
        SnapshotFile::new(self.snapshot.clone(), ms).to_json()
    }

    /// The same server under another alias.
    #[napi]
    pub fn with_alias(&self, alias: String) -> NativeServer {
        let rename = |s: &ServerSnapshot| s.clone().with_alias(alias.clone());
        NativeServer {
            snapshot: rename(&self.snapshot),
            other_eras: self.other_eras.iter().map(rename).collect(),
        }
    }

    /// The eras of the capture's other handshakes (`"legacy"`, `"modern"`).
    #[napi(getter)]
    pub fn other_eras(&self) -> Vec<String> {
        self.other_eras.iter().map(|s| s.era.to_string()).collect()
    }

    #[napi(getter)]
    pub fn alias(&self) -> Option<String> {
        self.snapshot.alias.clone()
    }

    /// The name the section shows (alias, else `serverInfo.name`).
    #[napi(getter)]
    pub fn name(&self) -> String {
        self.snapshot.display_name()
    }

    #[napi(getter)]
    pub fn server_name(&self) -> String {
        self.snapshot.server_info.name.clone()
    }

    #[napi(getter)]
    pub fn version(&self) -> String {
        self.snapshot.server_info.version.clone()
    }

    /// The instructions as sent (before sanitizing), `null` when absent.
    #[napi(getter)]
    pub fn instructions(&self) -> Option<String> {
        self.snapshot.instructions.raw().map(str::to_string)
    }

    #[napi(getter)]
    pub fn instructions_state(&self) -> String {
        self.snapshot.instructions.state().to_string()
    }

    #[napi(getter)]
    pub fn era(&self) -> String {
        self.snapshot.era.to_string()
    }

    #[napi(getter)]
    pub fn protocol_version(&self) -> String {
        self.snapshot.protocol_version.clone()
    }

    #[napi(getter)]
    pub fn tool_names(&self) -> Vec<String> {
        self.snapshot.tools.iter().map(|t| t.name.clone()).collect()
    }

    /// The same snapshot (a capture's other handshake aside).
    #[napi]
    pub fn equals(&self, other: ClassInstance<'_, NativeServer>) -> bool {
        other.snapshot == self.snapshot
    }
}
