//! The assembler (settings as the CLI takes them) and its result.

use std::collections::BTreeMap;
use std::path::PathBuf;

use std::str::FromStr;

use mcp_preamble::hosts::Host;
use mcp_preamble::settings::{Defaults, Settings, parse_count};
use mcp_preamble::text::json_safe;
use mcp_preamble::{Assembler, Assembly, ServerSnapshot, ToolNames, redact};
use pyo3::prelude::*;

use crate::errors::{keyed, raise, to_py};
use crate::pins::NativeLock;
use crate::server::NativeServer;

/// An assembler (`mcp_preamble.Assembler` wraps it).
#[pyclass(module = "mcp_preamble._native", frozen)]
pub struct NativeAssembler {
    inner: Assembler,
}

/// The `Assembler` keywords, as the CLI's `preview` flags and the policy
/// file's `[defaults]` keys take them. Counts arrive as the decimal text
/// of a Python int, so they are checked as the CLI checks its flags.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub struct Keywords {
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

/// A count keyword checked as the CLI checks its flag (`unit`: tokens, tools).
fn count(key: &str, value: Option<&String>, unit: &str) -> PyResult<Option<usize>> {
    value
        .map(|v| parse_count(v, unit).map_err(|e| keyed(key, e)))
        .transpose()
}

/// `keywords` over the policy file, as the CLI lays its flags over `--policy`.
fn settings(k: &Keywords) -> PyResult<Settings> {
    let mut settings = match &k.policy {
        Some(path) => Settings::from_path(path).map_err(to_py)?,
        None => Settings::new(),
    };
    let mut over = policy_keys(&k.policy_keys)?;
    over.budget = count("budget", k.budget.as_ref(), "tokens")?;
    over.total_budget = count("total_budget", k.total_budget.as_ref(), "tokens")?;
    over.defer_over = count("defer_over", k.defer_over.as_ref(), "tools")?;
    over.template.clone_from(&k.template);
    over.encoding.clone_from(&k.encoding);
    over.model.clone_from(&k.model);
    over.tokenizer.clone_from(&k.tokenizer);
    over.tool_names = k
        .tool_names
        .as_deref()
        .map(ToolNames::from_str)
        .transpose()
        .map_err(to_py)?;
    settings.overrides = over;
    for (alias, n) in &k.server_budgets {
        let n = count(&format!("server_budgets[{alias:?}]"), Some(n), "tokens")?;
        settings
            .server_overrides
            .entry(alias.clone())
            .or_default()
            .budget = n;
    }
    for alias in &k.deferred {
        settings
            .server_overrides
            .entry(alias.clone())
            .or_default()
            .deferred = true;
    }
    Ok(settings)
}

/// The policy-file-only keys, each read by the file's schema (`Defaults`),
/// so a value is refused with the message the policy file gets.
fn policy_keys(json: &str) -> PyResult<Defaults> {
    let keys: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(json).map_err(|e| {
            raise(
                "invalid_json",
                format!("invalid json: {e}"),
                e.to_string(),
                None,
                None,
                None,
            )
        })?;
    for (key, value) in &keys {
        let one = serde_json::Value::Object([(key.clone(), value.clone())].into_iter().collect());
        if let Err(e) = serde_json::from_value::<Defaults>(one) {
            let detail = format!("{key}: {e}");
            return Err(raise(
                "invalid_config",
                format!("invalid configuration: {detail}"),
                detail,
                None,
                None,
                None,
            ));
        }
    }
    serde_json::from_value(serde_json::Value::Object(keys)).map_err(|e| {
        let detail = e.to_string();
        raise(
            "invalid_config",
            format!("invalid configuration: {detail}"),
            detail,
            None,
            None,
            None,
        )
    })
}

/// `--target`: `section`, or `namespace` (each block also fitted to the
/// characters of a namespace description: Codex's cap in the host table).
fn namespace_chars(target: Option<&str>) -> PyResult<Option<usize>> {
    match target {
        None | Some("section") => Ok(None),
        Some("namespace") => {
            let codex = Host::Codex.profile().cut.cap();
            Ok(Some(codex.map_or(usize::MAX, |c| c.limit)))
        }
        Some(other) => {
            let detail = format!("target: {other:?} is not \"section\" or \"namespace\"");
            Err(raise(
                "invalid_config",
                format!("invalid configuration: {detail}"),
                detail,
                None,
                None,
                None,
            ))
        }
    }
}

#[pymethods]
impl NativeAssembler {
    /// The policy file (if any) with the keywords over it, as the CLI puts
    /// its flags over `--policy`: the same settings give the same section.
    #[new]
    #[pyo3(signature = (keywords, lock=None))]
    fn new(keywords: Keywords, lock: Option<PyRef<'_, NativeLock>>) -> PyResult<NativeAssembler> {
        let settings = settings(&keywords)?;
        let chars = namespace_chars(keywords.target.as_deref())?;
        let mut inner = Assembler::from_settings(&settings).map_err(to_py)?;
        if let Some(lock) = lock {
            inner = inner.lock(lock.lock().clone());
        }
        if let Some(chars) = chars {
            inner = inner.namespace_chars(chars);
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
