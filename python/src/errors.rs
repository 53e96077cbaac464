//! Rust errors as the package's Python exceptions.
//!
//! The classes live in `mcp_preamble._errors` (pure Python, so they have
//! docstrings, `__repr__`s and one `McpPreambleError` base); this builds
//! the right one from the crate's error kind.

use mcp_preamble::{Error, ErrorKind};
use pyo3::prelude::*;

/// The kind's name as Python sees it (`exc.kind`): stable, snake_case.
pub fn kind_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::InvalidJson => "invalid_json",
        ErrorKind::InvalidMessage => "invalid_message",
        ErrorKind::RpcError => "rpc_error",
        ErrorKind::Io => "io",
        ErrorKind::Template => "template",
        ErrorKind::UnknownTemplate => "unknown_template",
        ErrorKind::UnknownEncoding => "unknown_encoding",
        ErrorKind::UnknownModel => "unknown_model",
        ErrorKind::InvalidTokenizer => "invalid_tokenizer",
        ErrorKind::InvalidConfig => "invalid_config",
        ErrorKind::Connect => "connect",
        ErrorKind::Timeout => "timeout",
        ErrorKind::Drift => "drift",
        // A kind added to the crate later: the base class, named "other".
        _ => "other",
    }
}

/// The Python exception for `err`.
pub fn to_py(err: Error) -> PyErr {
    let rpc = err
        .rpc_error()
        .map(|r| (r.method.clone(), r.code, r.message.clone()));
    raise(
        kind_name(err.kind()),
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
