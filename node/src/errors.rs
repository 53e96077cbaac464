//! Rust errors as the package's JavaScript errors.
//!
//! The class lives in `index.js` (`McpPreambleError`, with `kind`,
//! `detail`, `line`, `template`, `rpc`); a native call that fails throws an
//! `Error` whose message is those fields as JSON, which the JavaScript side
//! turns into a `McpPreambleError` with the crate's message.

use mcp_preamble::Error;
use serde_json::json;

/// The thrown error for `err`.
pub fn to_js(err: Error) -> napi::Error {
    let rpc = err
        .rpc_error()
        .map(|r| json!({ "method": r.method, "code": r.code, "message": r.message }));
    raise(
        err.kind().as_str(),
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
