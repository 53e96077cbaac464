//! `Mcp-Param-*` headers (2026-07-28): a tool whose input schema marks an
//! argument `x-mcp-header` has it copied into a header, for proxies and
//! gateways that route on it. A header that says one thing while the body
//! says another is refused before any upstream sees the call: HTTP 400 with
//! JSON-RPC error -32020 (`HeaderMismatch`), on every inbound path (the fast
//! call and rmcp's, with or without a session). A header the body does not
//! contradict, or a missing one, changes nothing.

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::{Request, StatusCode};
use serde_json::{Value, json};

use crate::serve::front::cut::Teed;
use crate::serve::front::reply::{Answer, body, plain};
use crate::serve::gateway::Gateway;
use crate::serve::gateway::view::ParamHeader;

/// The JSON-RPC error code of a header that contradicts the body.
pub(in crate::serve) const HEADER_MISMATCH: i64 = -32020;

const PREFIX: &str = "mcp-param-";

/// Whether `req` carries any `Mcp-Param-*` header.
pub(in crate::serve) fn carries(req: &Request<Teed>) -> bool {
    req.headers().keys().any(|k| k.as_str().starts_with(PREFIX))
}

/// `req` with its body read (at most `limit` bytes), or the answer that
/// refuses it: a contradiction, or a body over the limit.
pub(in crate::serve) async fn checked(
    req: Request<Teed>,
    gateway: &Gateway,
    limit: usize,
) -> Result<Request<Full<Bytes>>, Answer> {
    let (parts, incoming) = req.into_parts();
    let bytes = match Limited::new(incoming, limit).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => {
            return Err(plain(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload too large, or a body that could not be read",
            ));
        }
    };
    if let Ok(message) = serde_json::from_slice::<Value>(&bytes)
        && message.get("method").and_then(Value::as_str) == Some("tools/call")
        && let Some(name) = message.pointer("/params/name").and_then(Value::as_str)
    {
        let view = gateway.view();
        if let Some(declared) = view.param_declared.get(name) {
            let args = message.pointer("/params/arguments").unwrap_or(&Value::Null);
            if let Some(why) = contradiction(declared, args, &parts.headers) {
                tracing::info!("refused a call whose Mcp-Param header contradicts its body");
                let id = message.get("id").cloned().unwrap_or(Value::Null);
                let error = json!({"jsonrpc": "2.0", "id": id, "error": {
                    "code": HEADER_MISMATCH,
                    "message": format!("Bad Request: the request headers and body disagree: {why}"),
                }});
                return Err(body(
                    StatusCode::BAD_REQUEST,
                    error.to_string(),
                    "application/json",
                ));
            }
        }
    }
    Ok(Request::from_parts(parts, Full::new(bytes)))
}

/// Why a declared header disagrees with `args`, if one does.
fn contradiction(
    declared: &[ParamHeader],
    args: &Value,
    headers: &hyper::HeaderMap,
) -> Option<String> {
    for decl in declared {
        let header = format!("Mcp-Param-{}", decl.name);
        let mut values = headers.get_all(header.as_str()).iter();
        let Some(value) = values.next() else { continue };
        if values.next().is_some() {
            return Some(format!("{header} is sent more than once"));
        }
        let Some(said) = value.to_str().ok().and_then(decoded) else {
            return Some(format!("{header} is not a valid value"));
        };
        let arg = decl.path.iter().try_fold(args, |node, key| node.get(key));
        let agrees = match arg {
            // No value in the body: the header is ignored.
            None | Some(Value::Null) => true,
            Some(Value::String(s)) => *s == said,
            Some(Value::Bool(b)) => said == b.to_string(),
            Some(Value::Number(n)) => match decl.kind.as_deref() {
                Some("integer" | "number") => said
                    .parse::<f64>()
                    .is_ok_and(|h| Some(h) == n.as_f64() && said.trim() == said),
                _ => said == n.to_string(),
            },
            // Not a primitive: no header can carry it.
            Some(_) => true,
        };
        if !agrees {
            return Some(format!(
                "{header} says {said:?}, the argument {} another value",
                decl.path.join(".")
            ));
        }
    }
    None
}

/// A header's value: as sent, or the UTF-8 inside `=?base64?…?=`.
fn decoded(value: &str) -> Option<String> {
    let Some(inner) = value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    else {
        return Some(value.to_string());
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(inner)
        .ok()?;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decl(path: &[&str], name: &str, kind: Option<&str>) -> ParamHeader {
        ParamHeader {
            path: path.iter().map(|s| s.to_string()).collect(),
            name: name.to_string(),
            kind: kind.map(str::to_string),
        }
    }

    fn headers(pairs: &[(&str, &str)]) -> hyper::HeaderMap {
        let mut h = hyper::HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                hyper::header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    #[test]
    fn a_header_that_contradicts_the_body_is_found_and_one_that_agrees_is_not() {
        let declared = [
            decl(&["region"], "Region", Some("string")),
            decl(&["opts", "limit"], "Limit", Some("integer")),
        ];
        let args = json!({"region": "eu-west", "opts": {"limit": 42}});
        let agrees = headers(&[("mcp-param-region", "eu-west"), ("mcp-param-limit", "42.0")]);
        assert_eq!(contradiction(&declared, &args, &agrees), None);
        let b64 = format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode("eu-west")
        );
        assert_eq!(
            contradiction(&declared, &args, &headers(&[("mcp-param-region", &b64)])),
            None
        );
        // Absent from the body, or no header: nothing to contradict.
        assert_eq!(contradiction(&declared, &json!({}), &agrees), None);
        assert_eq!(contradiction(&declared, &args, &headers(&[])), None);
        let lies = headers(&[("mcp-param-region", "us-east")]);
        assert_eq!(
            contradiction(&declared, &args, &lies).as_deref(),
            Some("Mcp-Param-Region says \"us-east\", the argument region another value")
        );
        let nested = headers(&[("mcp-param-limit", "7")]);
        assert!(contradiction(&declared, &args, &nested).is_some());
        let bad = headers(&[("mcp-param-region", "=?base64?***?=")]);
        assert!(contradiction(&declared, &args, &bad).is_some());
        let twice = headers(&[
            ("mcp-param-region", "eu-west"),
            ("mcp-param-region", "eu-west"),
        ]);
        assert!(contradiction(&declared, &args, &twice).is_some());
    }
}
