//! CORS for `serve --listen`: a web page of an origin the gateway serves
//! (this machine's on loopback; `--allowed-host`'s past it) may call it
//! from a browser. The origin rules themselves are the front's; this only
//! answers a preflight and lets the page read the answer.

use hyper::header::{
    ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN,
    ACCESS_CONTROL_EXPOSE_HEADERS, ACCESS_CONTROL_MAX_AGE, ACCESS_CONTROL_REQUEST_HEADERS,
    ACCESS_CONTROL_REQUEST_METHOD, HeaderValue, ORIGIN, VARY,
};
use hyper::{Method, Request, StatusCode};

use crate::serve::front::reply::{Answer, body};

/// The request headers a page may send: what MCP clients send over
/// Streamable HTTP (SEP-2243's `Mcp-Method`, `Mcp-Name` and every
/// `Mcp-Param-*` among them). Any other asked for is left out of the
/// answer, and the browser then does not send the request.
const ALLOWED: &[&str] = &[
    "accept",
    "authorization",
    "content-type",
    "last-event-id",
    "mcp-method",
    "mcp-name",
    "mcp-protocol-version",
    "mcp-session-id",
];

/// `Mcp-Param-{name}`: one header per argument a tool routes.
const PARAM: &str = "mcp-param-";

/// The answer headers a page may read besides the simple ones: the
/// session, the OAuth challenge, when to retry after a `429`.
const EXPOSED: &str = "Mcp-Session-Id, WWW-Authenticate, Retry-After";

/// Whether a page may send header `name` (lowercase).
fn allowed(name: &str) -> bool {
    ALLOWED.contains(&name) || name.strip_prefix(PARAM).is_some_and(|n| !n.is_empty())
}

/// The answer to a preflight (`OPTIONS` with `Origin` and
/// `Access-Control-Request-Method`) from an origin the front let through:
/// `204`, the methods MCP uses, the headers asked for that MCP clients
/// send. No token is asked of a preflight (a browser sends none).
pub(in crate::serve) fn preflight<B>(req: &Request<B>) -> Option<Answer> {
    let headers = req.headers();
    if req.method() != Method::OPTIONS || !headers.contains_key(ACCESS_CONTROL_REQUEST_METHOD) {
        return None;
    }
    let origin = headers.get(ORIGIN)?.clone();
    let asked: Vec<String> = headers
        .get_all(ACCESS_CONTROL_REQUEST_HEADERS)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|h| h.trim().to_ascii_lowercase())
        .filter(|h| allowed(h))
        .collect();
    let mut answer = body(StatusCode::NO_CONTENT, String::new(), "text/plain");
    let out = answer.headers_mut();
    out.remove(hyper::header::CONTENT_TYPE);
    out.insert(ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    out.insert(
        ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, DELETE"),
    );
    if let Ok(list) = HeaderValue::from_str(&asked.join(", "))
        && !asked.is_empty()
    {
        out.insert(ACCESS_CONTROL_ALLOW_HEADERS, list);
    }
    out.insert(ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
    out.insert(VARY, HeaderValue::from_static("Origin"));
    Some(answer)
}

/// Lets the page of `origin` (one the front let through) read `answer`.
pub(in crate::serve) fn allow(answer: &mut Answer, origin: HeaderValue) {
    let out = answer.headers_mut();
    out.insert(ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    out.insert(
        ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(EXPOSED),
    );
    out.append(VARY, HeaderValue::from_static("Origin"));
}
