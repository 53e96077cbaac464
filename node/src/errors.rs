//! Rust errors as the package's JavaScript errors.
//!
//! The class lives in `index.js` (`McpPreambleError`, with `kind`,
//! `detail`, `line`, `template`, `rpc`); a native call that fails throws an
//! `Error` whose message is those fields as JSON, which the JavaScript side
//! turns into a `McpPreambleError` with the crate's message.

use mcp_preamble::{Error, ErrorKind};
use serde_json::json;

/// The kind's name as JavaScript sees it (`err.kind`): the same snake_case
/// names as the Python package's.
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

/// The thrown error for `err`.
pub fn to_js(err: Error) -> napi::Error {
    let rpc = err
        .rpc_error()
        .map(|r| json!({ "method": r.method, "code": r.code, "message": r.message }));
    raise(
        kind_name(err.kind()),
        err.to_string(),
        err.detail(),
        json!({ "line": err.line(), "template": err.template_name(), "rpc": rpc }),
    )
}

/// A package error of `kind` made here (input the crate never saw);
/// `more` holds `line`, `template` and `rpc` when there are any.
pub fn raise(kind: &str, message: String, detail: &str, more: serde_json::Value) -> napi::Error {
    let mut fields = json!({ "kind": kind, "message": message, "detail": detail });
    if let (Some(fields), serde_json::Value::Object(more)) = (fields.as_object_mut(), more) {
        fields.extend(more);
    }
    let payload = json!({ "mcpPreambleError": fields });
    napi::Error::from_reason(payload.to_string())
}

/// `invalid json: WHAT: …` for a JSON text JavaScript handed over.
pub fn parse(text: &str, what: &str) -> napi::Result<serde_json::Value> {
    serde_json::from_str(text).map_err(|e| {
        let detail = format!("{what}: {e}");
        raise(
            "invalid_json",
            format!("invalid json: {detail}"),
            &detail,
            json!({}),
        )
    })
}
