//! One server's snapshot: from a capture or snapshot file, or from what a
//! client stored (the handshake result and the `tools/list` pages as JSON).

use std::path::PathBuf;

use mcp_preamble::files::{SnapshotFile, load_server_eras};
use mcp_preamble::{Era, ServerSnapshot};
use pyo3::prelude::*;

use crate::errors::{raise, to_py};

/// A server snapshot (`mcp_preamble.Server` wraps it).
#[pyclass(module = "mcp_preamble._native", frozen)]
#[derive(Clone)]
pub struct NativeServer {
    pub snapshot: ServerSnapshot,
    /// A capture's other handshake, which the lint compares with (`MCP015`).
    pub other_eras: Vec<ServerSnapshot>,
}

impl NativeServer {
    fn of(snapshot: ServerSnapshot) -> NativeServer {
        NativeServer {
            snapshot,
            other_eras: Vec::new(),
        }
    }
}

#[pymethods]
impl NativeServer {
    /// A capture file (`tests/corpus/` format) or a snapshot file; without
    /// an alias in the file or given, the file's stem (as the CLI does).
    #[staticmethod]
    #[pyo3(signature = (path, alias=None))]
    fn from_capture(
        py: Python<'_>,
        path: PathBuf,
        alias: Option<String>,
    ) -> PyResult<NativeServer> {
        // As `mcp-preamble lint` reads it: a capture with both handshakes
        // keeps the other one to compare with. Read without the GIL: a FIFO's
        // writer may be another thread of this process.
        let (mut snapshot, mut other_eras) =
            py.detach(|| load_server_eras(&path)).map_err(to_py)?;
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
    /// `"modern"`, or `None` (told by `supportedVersions`).
    #[staticmethod]
    #[pyo3(signature = (era, result, tools, alias=None))]
    fn from_handshake(
        era: Option<&str>,
        result: &str,
        tools: &str,
        alias: Option<String>,
    ) -> PyResult<NativeServer> {
        let era = era.map(str::parse::<Era>).transpose().map_err(|e| {
            raise(
                "invalid_config",
                format!("invalid configuration: {e}"),
                e.clone(),
                None,
                None,
                None,
            )
        })?;
        let mut snapshot =
            ServerSnapshot::from_handshake_json(era, result, tools).map_err(to_py)?;
        if alias.is_some() {
            snapshot.alias = alias;
        }
        Ok(NativeServer::of(snapshot))
    }

    /// A snapshot file's text (what [`NativeServer::snapshot_json`] wrote).
    #[staticmethod]
    fn from_snapshot_json(text: &str) -> PyResult<NativeServer> {
        let file = SnapshotFile::from_json(text).map_err(to_py)?;
        Ok(NativeServer::of(file.snapshot))
    }

    /// The snapshot file format (`mcp-preamble snapshot`), stamped `captured_ms`.
    fn snapshot_json(&self, captured_ms: u64) -> String {
        SnapshotFile::new(self.snapshot.clone(), captured_ms).to_json()
    }

    /// The same server under another alias.
    fn with_alias(&self, alias: String) -> NativeServer {
        let rename = |s: &ServerSnapshot| s.clone().with_alias(alias.clone());
        NativeServer {
            snapshot: rename(&self.snapshot),
            other_eras: self.other_eras.iter().map(rename).collect(),
        }
    }

    /// The eras of the capture's other handshakes (`"legacy"`, `"modern"`).
    #[getter]
    fn other_eras(&self) -> Vec<String> {
        self.other_eras.iter().map(|s| s.era.to_string()).collect()
    }

    #[getter]
    fn alias(&self) -> Option<String> {
        self.snapshot.alias.clone()
    }

    /// The name the section shows (alias, else `serverInfo.name`).
    #[getter]
    fn name(&self) -> String {
        self.snapshot.display_name()
    }

    #[getter]
    fn server_name(&self) -> String {
        self.snapshot.server_info.name.clone()
    }

    #[getter]
    fn version(&self) -> String {
        self.snapshot.server_info.version.clone()
    }

    /// The instructions as sent (before sanitizing), `None` when absent.
    #[getter]
    fn instructions(&self) -> Option<String> {
        self.snapshot.instructions.raw().map(str::to_string)
    }

    #[getter]
    fn instructions_state(&self) -> String {
        self.snapshot.instructions.state().to_string()
    }

    #[getter]
    fn era(&self) -> String {
        self.snapshot.era.to_string()
    }

    #[getter]
    fn protocol_version(&self) -> String {
        self.snapshot.protocol_version.clone()
    }

    #[getter]
    fn tool_names(&self) -> Vec<String> {
        self.snapshot.tools.iter().map(|t| t.name.clone()).collect()
    }

    /// The same snapshot (a capture's other handshake aside).
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<NativeServer>()
            .is_ok_and(|o| o.get().snapshot == self.snapshot)
    }
}
