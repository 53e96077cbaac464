//! `mcp_preamble._native`: the Rust crate for Python.
//!
//! The pure-Python package around it (`python/mcp_preamble/`) holds the
//! public API; this module only moves values across. Reports cross as the
//! crate's own JSON (a public format), so the Python results are exactly
//! what the CLI and the crate report.

use pyo3::prelude::*;

mod assembly;
mod config;
mod errors;
mod lint;
mod live;
mod pins;
mod server;

/// The extension module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<server::NativeServer>()?;
    m.add_class::<assembly::NativeAssembler>()?;
    m.add_class::<assembly::NativeAssembly>()?;
    m.add_class::<pins::NativeLock>()?;
    m.add_class::<live::NativeRoster>()?;
    m.add_function(wrap_pyfunction!(lint::lint_json, m)?)?;
    m.add_function(wrap_pyfunction!(config::config_json, m)?)?;
    m.add_function(wrap_pyfunction!(config::policy_keys, m)?)?;
    m.add_function(wrap_pyfunction!(config::tokenizer_file_reads, m)?)?;
    // The package's version is the crate's (one workspace version).
    m.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
