//! The assembler (settings as the CLI takes them) and its result.

use std::collections::BTreeMap;
use std::path::PathBuf;

use mcp_preamble::settings::Keywords;
use mcp_preamble::{Assembler, Assembly, ServerSnapshot};
use pyo3::prelude::*;

use crate::errors::{raise, to_py};
use crate::pins::NativeLock;
use crate::server::NativeServer;

/// An assembler (`mcp_preamble.Assembler` wraps it).
#[pyclass(module = "mcp_preamble._native", frozen)]
pub struct NativeAssembler {
    inner: Assembler,
}

/// The `Assembler` keywords, as the CLI's `preview` flags and the policy
/// file's `[defaults]` keys take them. Counts arrive as the decimal text
/// of a Python int, so they are checked as the CLI checks its flags
/// ([`Keywords`]).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub struct PyKeywords {
    policy: Option<PathBuf>,
    budget: Option<String>,
    total_budget: Option<String>,
    defer_over: Option<String>,
    server_budgets: BTreeMap<String, String>,
    deferred: Vec<String>,
    template: Option<String>,
    encoding: Option<String>,
    model: Option<String>,
    tokenizer: Option<String>,
    tool_names: Option<String>,
    target: Option<String>,
    /// The keys only the policy file has (`order`, `on_change`, `dedup`,
    /// `similarity`, …) as one JSON object: read by the file's own schema.
    policy_keys: String,
}

/// The crate's keywords of `k`.
fn keywords(k: PyKeywords) -> PyResult<Keywords> {
    let policy_keys = serde_json::from_str(&k.policy_keys).map_err(|e| {
        raise(
            "invalid_json",
            format!("invalid json: {e}"),
            e.to_string(),
            None,
            None,
            None,
        )
    })?;
    let mut out = Keywords::default();
    out.policy = k.policy;
    out.budget = k.budget;
    out.total_budget = k.total_budget;
    out.defer_over = k.defer_over;
    out.server_budgets = k.server_budgets;
    out.deferred = k.deferred;
    out.template = k.template;
    out.encoding = k.encoding;
    out.model = k.model;
    out.tokenizer = k.tokenizer;
    out.tool_names = k.tool_names;
    out.target = k.target;
    out.policy_keys = policy_keys;
    Ok(out)
}

#[pymethods]
impl NativeAssembler {
    /// The policy file (if any) with the keywords over it, as the CLI puts
    /// its flags over `--policy`: the same settings give the same section.
    #[new]
    #[pyo3(signature = (keywords, lock=None))]
    fn new(keywords: PyKeywords, lock: Option<PyRef<'_, NativeLock>>) -> PyResult<NativeAssembler> {
        let mut inner = self::keywords(keywords)?.assembler().map_err(to_py)?;
        if let Some(lock) = lock {
            inner = inner.lock(lock.lock().clone());
        }
        Ok(NativeAssembler { inner })
    }

    /// Assembles the servers' section (the GIL is released meanwhile).
    fn assemble(
        &self,
        py: Python<'_>,
        servers: Vec<PyRef<'_, NativeServer>>,
    ) -> PyResult<NativeAssembly> {
        let snapshots: Vec<ServerSnapshot> = servers.iter().map(|s| s.snapshot.clone()).collect();
        let assembly = py
            .detach(|| self.inner.assemble(&snapshots))
            .map_err(to_py)?;
        Ok(NativeAssembly { inner: assembly })
    }
}

/// An assembled section and its report.
#[pyclass(module = "mcp_preamble._native", frozen)]
pub struct NativeAssembly {
    inner: Assembly,
}

#[pymethods]
impl NativeAssembly {
    /// The section.
    #[getter]
    fn text(&self) -> &str {
        self.inner.text()
    }

    /// The report as the crate writes it ([`Assembly::to_json`]), without
    /// the GIL (a whole corpus's report is tens of kilobytes).
    fn report_json(&self, py: Python<'_>) -> String {
        py.detach(|| self.inner.to_json())
    }

    /// The report exactly as `mcp-preamble preview --json` prints it for
    /// the same files: the assembly and the (empty) connection rows, secret
    /// -shaped values redacted, terminal-acting characters escaped.
    fn cli_json(&self, py: Python<'_>) -> String {
        py.detach(|| self.inner.to_preview_json())
    }
}
