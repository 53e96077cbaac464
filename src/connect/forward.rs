//! Headers a gateway adds to one request to an HTTP upstream beyond the
//! ones rmcp's client writes: its host's `Mcp-Param-*` headers that no
//! tool declares, which an intermediary passes on unchanged (SEP-2243).
//! rmcp has no per-request header API: they ride in the request's
//! extensions, and the connection's HTTP client
//! (`subscriptions::HttpClient`) writes them.

use std::collections::HashMap;

use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, GetExtensions, JsonRpcMessage};

/// The `Mcp-Param-*` headers (name, value) one request carries on.
#[derive(Clone, Debug, Default)]
pub(crate) struct ParamHeaders(pub(crate) Vec<(String, String)>);

/// The prefix of every header [`ParamHeaders`] may add.
const PARAM: &str = "mcp-param-";

/// `headers` with the [`ParamHeaders`] of `message` added: `Mcp-Param-*`
/// ones only (so never `Mcp-Method`, `Mcp-Name` or a credential), and
/// none rmcp set itself (a declared argument's header is rmcp's).
pub(super) fn add(message: &ClientJsonRpcMessage, headers: &mut HashMap<HeaderName, HeaderValue>) {
    let JsonRpcMessage::Request(request) = message else {
        return;
    };
    let Some(ParamHeaders(extra)) = request.request.extensions().get::<ParamHeaders>() else {
        return;
    };
    for (name, value) in extra {
        let name = HeaderName::from_bytes(name.as_bytes());
        let (Ok(name), Ok(value)) = (name, HeaderValue::from_str(value)) else {
            continue;
        };
        if name.as_str().starts_with(PARAM) && !headers.contains_key(&name) {
            headers.insert(name, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_param_headers_rmcp_did_not_set_are_added() {
        let message = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "t", "arguments": {}}});
        let mut message: ClientJsonRpcMessage = serde_json::from_value(message).unwrap();
        let extra = [
            ("mcp-param-trace", "abc"),
            ("mcp-param-region", "host's"),
            ("mcp-method", "tools/list"),
            ("mcp-name", "other"),
            ("authorization", "Bearer x"),
            ("mcp-param-bad", "line\nbreak"),
        ];
        let extra = extra.map(|(n, v)| (n.to_string(), v.to_string()));
        let JsonRpcMessage::Request(request) = &mut message else {
            unreachable!()
        };
        (request.request.extensions_mut()).insert(ParamHeaders(extra.to_vec()));
        let own = |n: &'static str, v: &'static str| {
            (HeaderName::from_static(n), HeaderValue::from_static(v))
        };
        let mut headers = HashMap::from([
            own("mcp-method", "tools/call"),
            own("mcp-name", "t"),
            own("mcp-param-region", "eu-west"),
        ]);
        add(&message, &mut headers);
        let mut got: Vec<(String, String)> = (headers.iter())
            .map(|(n, v)| (n.to_string(), v.to_str().unwrap().to_string()))
            .collect();
        got.sort();
        let want = [
            ("mcp-method", "tools/call"),
            ("mcp-name", "t"),
            ("mcp-param-region", "eu-west"),
            ("mcp-param-trace", "abc"),
        ];
        assert_eq!(got, want.map(|(n, v)| (n.to_string(), v.to_string())));
    }
}
