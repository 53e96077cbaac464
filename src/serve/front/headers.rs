//! The header rules of the Streamable HTTP transport (SEP-2243, in the
//! 2026-07-28 revision), in one place for every inbound path (a session,
//! a stateless request, the fast call, rmcp's):
//!
//! - before anything is decoded ([`head`], from the gate): the request
//!   head at most [`MAX_HEAD_BYTES`] and 100 fields (hyper's count), an MCP
//!   header value at most [`MAX_VALUE_BYTES`], at most [`MAX_PARAMS`]
//!   `Mcp-Param-*` headers (431 past one of these); each singleton MCP
//!   header (`Mcp-Method`, `Mcp-Name`, `MCP-Protocol-Version`,
//!   `Mcp-Session-Id`, `Last-Event-ID`, each `Mcp-Param-*`) sent once;
//! - against the body of a POST ([`agree`], before the fast call and
//!   rmcp): `Mcp-Method` is the body's `method`, `Mcp-Name` its name (or
//!   URI, or task id), decoded from `=?base64?…?=`, each `Mcp-Param-*` a
//!   tool's `x-mcp-header` declares its argument's value. On a 2026-07-28
//!   request (`MCP-Protocol-Version`) a missing one is refused too; an
//!   earlier one may omit them, but what it sends must agree.
//!
//! A refusal is HTTP 400 with JSON-RPC error -32020 (`HeaderMismatch`).
//! An `Mcp-Param-*` header no tool declares is not refused.

use base64::Engine as _;
use hyper::header::{HeaderMap, HeaderValue};
use hyper::{Request, StatusCode};
use serde_json::{Value, json};

use crate::serve::front::reply::{Answer, body};
use crate::serve::gateway::Gateway;
use crate::serve::gateway::view::ParamHeader;

/// The JSON-RPC error code of a header that is missing, malformed or
/// disagrees with the body.
pub(in crate::serve) const HEADER_MISMATCH: i64 = -32020;

/// The longest request head (request line and every field), read by
/// hyper before anything else: 431 past it.
pub(in crate::serve) const MAX_HEAD_BYTES: usize = 64 * 1024;

/// The longest value of one MCP header (`Mcp-*`, `MCP-Protocol-Version`,
/// `Last-Event-ID`), before any Base64 is decoded: 431 past it.
pub(in crate::serve) const MAX_VALUE_BYTES: usize = 8 * 1024;

/// The most `Mcp-Param-*` headers one request may carry: 431 past it.
pub(in crate::serve) const MAX_PARAMS: usize = 32;

/// The first version whose requests must carry the headers.
const MODERN: &str = "2026-07-28";

const PARAM: &str = "mcp-param-";

/// Headers that may be sent once only: a second value is one that some
/// proxy may route on while the gateway reads the other.
const SINGLETONS: [&str; 5] = [
    "mcp-method",
    "mcp-name",
    "mcp-protocol-version",
    "mcp-session-id",
    "last-event-id",
];

/// Whether `name` (lowercase) is an MCP header.
fn is_mcp(name: &str) -> bool {
    name.starts_with("mcp-") || name == "last-event-id"
}

/// The head's rules ([module docs](self)): the refusal when one fails.
pub(in crate::serve) fn head(headers: &HeaderMap) -> Option<Answer> {
    let mut params = 0;
    for name in headers.keys() {
        let name = name.as_str();
        if !is_mcp(name) {
            continue;
        }
        if headers
            .get_all(name)
            .iter()
            .any(|v| v.len() > MAX_VALUE_BYTES)
        {
            return Some(too_large(&format!(
                "a {name} header over {MAX_VALUE_BYTES} bytes"
            )));
        }
        let param = name.starts_with(PARAM);
        params += usize::from(param);
        if params > MAX_PARAMS {
            return Some(too_large(&format!(
                "more than {MAX_PARAMS} mcp-param-* headers"
            )));
        }
        if (param || SINGLETONS.contains(&name)) && headers.get_all(name).iter().nth(1).is_some() {
            let why = format!("{name} is sent more than once");
            return Some(mismatch(&Value::Null, &why));
        }
    }
    None
}

/// `431` with its reason, before anything was decoded.
fn too_large(why: &str) -> Answer {
    tracing::info!("refused a request: {why}");
    let text = format!("request header fields too large: {why}");
    body(
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        text,
        "text/plain",
    )
}

/// `400` with a JSON-RPC `HeaderMismatch` error for the request `id`.
fn mismatch(id: &Value, why: &str) -> Answer {
    tracing::info!("refused a request whose headers disagree with it: {why}");
    let error = json!({"jsonrpc": "2.0", "id": id, "error": {
        "code": HEADER_MISMATCH,
        "message": format!("Bad Request: header mismatch: {why}"),
    }});
    body(
        StatusCode::BAD_REQUEST,
        error.to_string(),
        "application/json",
    )
}

/// What the rules read of a body: its method, id and the name its
/// `Mcp-Name` mirrors (the arguments are read again only when a tool
/// declares headers).
#[derive(serde::Deserialize)]
struct Envelope {
    method: Option<String>,
    id: Option<Value>,
    params: Option<Named>,
}

#[derive(serde::Deserialize)]
struct Named {
    name: Option<Value>,
    uri: Option<Value>,
    #[serde(rename = "taskId")]
    task_id: Option<Value>,
}

impl Envelope {
    /// The value `Mcp-Name` mirrors for this method, when it has one:
    /// `Some(None)` for a method that names something its body does not.
    fn named(&self, method: &str) -> Option<Option<&str>> {
        let params = self.params.as_ref();
        let source = match method {
            "tools/call" | "prompts/get" => params.and_then(|p| p.name.as_ref()),
            "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
                params.and_then(|p| p.uri.as_ref())
            }
            "tasks/get" | "tasks/update" | "tasks/cancel" => {
                params.and_then(|p| p.task_id.as_ref())
            }
            _ => return None,
        };
        Some(source.and_then(Value::as_str))
    }
}

/// Whether `req`'s headers agree with its body ([module docs](self)):
/// the refusal when they do not. A body that is not one JSON-RPC message
/// (a batch, or no JSON) is rmcp's to answer.
pub(in crate::serve) fn agree<B>(
    req: &Request<B>,
    bytes: &[u8],
    gateway: &Gateway,
) -> Option<Answer> {
    let envelope = serde_json::from_slice::<Envelope>(bytes).ok()?;
    let why = disagreement(&envelope, req.headers(), bytes, gateway).err()?;
    Some(mismatch(envelope.id.as_ref().unwrap_or(&Value::Null), &why))
}

/// Why `headers` disagree with the body `envelope` was read from, if
/// they do.
fn disagreement(
    envelope: &Envelope,
    headers: &HeaderMap,
    bytes: &[u8],
    gateway: &Gateway,
) -> Result<(), String> {
    let Some(method) = envelope.method.as_deref() else {
        return Ok(());
    };
    let version = one(headers, "mcp-protocol-version")?;
    let modern = version.is_some_and(|v| v >= MODERN);
    // `initialize` is how a client learns the version: it need not say it.
    let requires = modern && envelope.id.is_some() && method != "initialize";
    match one(headers, "mcp-method")? {
        Some(said) if said != method => {
            return Err(format!("Mcp-Method says {said:?}, the body {method:?}"));
        }
        None if requires => return Err("no Mcp-Method header".into()),
        _ => {}
    }
    let named = envelope.named(method);
    match (one(headers, "mcp-name")?, named) {
        (Some(said), Some(named)) => {
            let said = decoded(said).ok_or("Mcp-Name is not valid Base64")?;
            if Some(said.as_str()) != named {
                let body = named.unwrap_or("nothing");
                return Err(format!("Mcp-Name says {said:?}, the body {body:?}"));
            }
        }
        (None, Some(Some(_))) if requires => {
            return Err(format!("no Mcp-Name header for {method}"));
        }
        _ => {}
    }
    if method == "tools/call"
        && let Some(Some(name)) = named
        && let Some(declared) = gateway.view().param_declared.get(name)
    {
        let args = arguments(bytes);
        if let Some(why) = contradiction(declared, &args, headers, modern) {
            return Err(why);
        }
    }
    Ok(())
}

/// The one value of header `name` as text (none when absent); an error
/// when it is not text (a singleton sent twice was refused at the head).
fn one<'a>(headers: &'a HeaderMap, name: &str) -> Result<Option<&'a str>, String> {
    headers
        .get(name)
        .map(HeaderValue::to_str)
        .transpose()
        .map_err(|_| format!("{name} holds characters a header value may not"))
}

/// A `tools/call` body's `params.arguments` (null when it has none).
fn arguments(bytes: &[u8]) -> Value {
    #[derive(serde::Deserialize)]
    struct Call {
        params: Option<Args>,
    }
    #[derive(serde::Deserialize)]
    struct Args {
        arguments: Option<Value>,
    }
    serde_json::from_slice::<Call>(bytes)
        .ok()
        .and_then(|c| c.params?.arguments)
        .unwrap_or(Value::Null)
}

/// Why a declared `Mcp-Param-*` header disagrees with `args`, if one does
/// (`modern`: a value in the body needs its header).
fn contradiction(
    declared: &[ParamHeader],
    args: &Value,
    headers: &HeaderMap,
    modern: bool,
) -> Option<String> {
    for decl in declared {
        let header = format!("Mcp-Param-{}", decl.name);
        let arg = decl.path.iter().try_fold(args, |node, key| node.get(key));
        // Not a primitive (or null): no header can carry it.
        let arg = arg.filter(|a| matches!(a, Value::String(_) | Value::Bool(_) | Value::Number(_)));
        let Some(value) = headers.get(header.as_str()) else {
            match arg {
                Some(_) if modern => {
                    return Some(format!(
                        "no {header} header for the argument {}",
                        decl.path.join(".")
                    ));
                }
                _ => continue,
            }
        };
        let Some(said) = value.to_str().ok().and_then(decoded) else {
            return Some(format!("{header} is not a valid value"));
        };
        let agrees = match arg {
            None => false,
            Some(Value::String(s)) => *s == said,
            Some(Value::Bool(b)) => said == b.to_string(),
            // Integers compare as numbers (`42.0` is 42).
            Some(Value::Number(n)) => match decl.kind.as_deref() {
                Some("integer" | "number") => said
                    .parse::<f64>()
                    .is_ok_and(|h| Some(h) == n.as_f64() && said.trim() == said),
                _ => said == n.to_string(),
            },
            Some(_) => true,
        };
        if !agrees {
            let what = match arg {
                None => "has no value",
                Some(_) => "another value",
            };
            return Some(format!(
                "{header} says {said:?}, the argument {} {what}",
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

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                hyper::header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    #[test]
    fn a_param_header_agrees_with_the_body_or_is_refused() {
        let declared = [
            decl(&["region"], "Region", Some("string")),
            decl(&["opts", "limit"], "Limit", Some("integer")),
        ];
        let args = json!({"region": "eu-west", "opts": {"limit": 42}});
        let agrees = headers(&[("mcp-param-region", "eu-west"), ("mcp-param-limit", "42.0")]);
        assert_eq!(contradiction(&declared, &args, &agrees, true), None);
        let b64 = format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode("eu-west")
        );
        let only_region = headers(&[("mcp-param-region", &b64)]);
        let region = json!({"region": "eu-west"});
        assert_eq!(contradiction(&declared, &region, &only_region, true), None);
        // No value and no header: nothing to say.
        assert_eq!(
            contradiction(&declared, &json!({}), &headers(&[]), true),
            None
        );
        // A value without its header: refused in 2026-07-28, not before.
        assert_eq!(
            contradiction(&declared, &args, &headers(&[]), true).as_deref(),
            Some("no Mcp-Param-Region header for the argument region")
        );
        assert_eq!(contradiction(&declared, &args, &headers(&[]), false), None);
        let lies = headers(&[("mcp-param-region", "us-east")]);
        assert_eq!(
            contradiction(&declared, &region, &lies, true).as_deref(),
            Some("Mcp-Param-Region says \"us-east\", the argument region another value")
        );
        // A header for a value the body does not have.
        assert!(contradiction(&declared, &json!({}), &lies, false).is_some());
        let nested = headers(&[("mcp-param-region", "eu-west"), ("mcp-param-limit", "7")]);
        assert!(contradiction(&declared, &args, &nested, true).is_some());
        let bad = headers(&[("mcp-param-region", "=?base64?***?=")]);
        assert!(contradiction(&declared, &region, &bad, true).is_some());
    }

    #[test]
    fn the_head_refuses_a_second_singleton_and_caps_what_it_holds() {
        let status = |pairs: &[(&str, &str)]| match head(&headers(pairs)) {
            None => StatusCode::OK,
            Some(answer) => answer.status(),
        };
        assert_eq!(
            status(&[("mcp-method", "tools/call"), ("x-other", "a")]),
            StatusCode::OK
        );
        for twice in [
            "mcp-method",
            "Mcp-Name",
            "MCP-Protocol-Version",
            "mcp-param-region",
        ] {
            let pairs = [(twice, "a"), (twice, "a")];
            assert_eq!(status(&pairs), StatusCode::BAD_REQUEST, "{twice}");
        }
        // Other headers may repeat.
        assert_eq!(status(&[("accept", "a"), ("accept", "b")]), StatusCode::OK);
        let long = "x".repeat(MAX_VALUE_BYTES + 1);
        let too_large = StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE;
        assert_eq!(status(&[("mcp-name", &long)]), too_large);
        let names: Vec<String> = (0..=MAX_PARAMS)
            .map(|i| format!("mcp-param-p{i}"))
            .collect();
        let many: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "1")).collect();
        assert_eq!(status(&many), too_large);
        assert_eq!(status(&many[..MAX_PARAMS]), StatusCode::OK);
    }
}
