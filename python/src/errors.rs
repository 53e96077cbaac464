//! Rust errors as the package's Python exceptions.
//!
//! The classes live in `mcp_preamble._errors` (pure Python, so they have
//! docstrings, `__repr__`s and one `McpPreambleError` base); this builds
//! the right one from the crate's error kind.

use mcp_preamble::Error;
use pyo3::prelude::*;

/// The Python exception for `err`.
pub fn to_py(err: Error) -> PyErr {
    let rpc = err
        .rpc_error()
        .map(|r| (r.method.clone(), r.code, r.message.clone()));
    raise(
        err.kind().as_str(),
        err.to_string(),
        err.detail().to_string(),
        err.line(),
        err.template_name().map(str::to_string),
        rpc,
    )
}

/// A package exception of `kind` made here (input the crate never saw,
/// such as a JSON document Python could not encode).
pub fn raise(
    kind: &str,
    message: String,
    detail: String,
    line: Option<usize>,
    template: Option<String>,
    rpc: Option<(String, i64, String)>,
) -> PyErr {
    Python::attach(|py| {
        let built = py
            .import("mcp_preamble._errors")
            .and_then(|m| m.getattr("_from_native"))
            .and_then(|f| f.call1((kind, message, detail, line, template, rpc)));
        match built {
            Ok(exc) => PyErr::from_value(exc),
            Err(e) => e,
        }
    })
}
