//! One server's snapshot: from a capture or snapshot file, or from what a
//! client stored (the handshake result and the `tools/list` pages as JSON).

use mcp_preamble::files::{SnapshotFile, load_server_eras};
use mcp_preamble::{Era, ServerSnapshot};
use napi::bindgen_prelude::ClassInstance;
use napi_derive::napi;

use crate::errors::{raise, to_js};

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

    /// A handshake result and its tools, each as JSON text, in every shape
    /// `ServerSnapshot::from_handshake` reads; `era` is `"legacy"`,
    /// `"modern"`, or absent (told by `supportedVersions`).
    #[napi(factory, catch_unwind)]
    pub fn from_handshake(
        era: Option<String>,
        result: String,
        tools: String,
        alias: Option<String>,
    ) -> napi::Result<NativeServer> {
        let era = era.map(|e| e.parse::<Era>()).transpose().map_err(|e| {
            raise(
                "invalid_config",
                format!("invalid configuration: {e}"),
                &e,
                serde_json::json!({}),
            )
        })?;
        let mut snapshot =
            ServerSnapshot::from_handshake_json(era, &result, &tools).map_err(to_js)?;
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
