//! The assembler (settings as the CLI takes them) and its result.

use std::collections::BTreeMap;
use std::path::PathBuf;

use mcp_preamble::settings::Settings;
use mcp_preamble::text::json_safe;
use mcp_preamble::{Assembler, Assembly, ServerSnapshot, redact};
use pyo3::prelude::*;

use crate::errors::to_py;
use crate::pins::NativeLock;
use crate::server::NativeServer;

/// An assembler (`mcp_preamble.Assembler` wraps it).
#[pyclass(module = "mcp_preamble._native", frozen)]
pub struct NativeAssembler {
    inner: Assembler,
}

#[pymethods]
impl NativeAssembler {
    /// The policy file (if any) with the arguments over it, as the CLI puts
    /// its flags over `--policy`: the same settings give the same section.
    #[new]
    #[pyo3(signature = (
        policy=None, budget=None, total_budget=None, template=None, encoding=None,
        server_budgets=BTreeMap::new(), dedup=None, lock=None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        policy: Option<PathBuf>,
        budget: Option<usize>,
        total_budget: Option<usize>,
        template: Option<String>,
        encoding: Option<String>,
        server_budgets: BTreeMap<String, usize>,
        dedup: Option<bool>,
        lock: Option<PyRef<'_, NativeLock>>,
    ) -> PyResult<NativeAssembler> {
        let mut settings = match &policy {
            Some(path) => Settings::from_path(path).map_err(to_py)?,
            None => Settings::new(),
        };
        let over = &mut settings.overrides;
        over.budget = budget;
        over.total_budget = total_budget;
        over.template = template;
        over.encoding = encoding;
        over.dedup = dedup;
        let mut inner = Assembler::from_settings(&settings).map_err(to_py)?;
        for (alias, tokens) in server_budgets {
            inner = inner.server_budget(alias, tokens);
        }
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

    /// The report as the crate writes it ([`Assembly::to_json`]).
    fn report_json(&self) -> String {
        self.inner.to_json()
    }

    /// The report exactly as `mcp-preamble preview --json` prints it for
    /// the same files: the assembly and the (empty) connection rows, secret
    /// -shaped values redacted, terminal-acting characters escaped.
    fn cli_json(&self) -> String {
        let mut report = serde_json::json!({ "assembly": &self.inner, "connections": [] });
        redact::json_strings(&mut report, redact::secrets);
        let pretty = serde_json::to_string_pretty(&report).unwrap_or_default() + "\n";
        redact::secrets(&json_safe(&pretty)).into_owned()
    }
}
