//! A snapshot from what an MCP client kept: the handshake result and the
//! `tools/list` pages in every shape the Python and Node packages are given
//! them (bare results, JSON-RPC responses, a list of tools, JSON text, SDK
//! objects already turned into JSON). One reader, so the packages agree.

use serde_json::{Map, Value};

use super::parse_json;
use crate::error::{Error, ErrorKind, Result};
use crate::model::{Era, ServerSnapshot};

/// The keys that make an object a `tools/list` page (or its JSON-RPC
/// response) rather than a tool.
const PAGE_KEYS: [&str; 4] = ["tools", "result", "error", "jsonrpc"];

fn is_page(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|o| PAGE_KEYS.iter().any(|k| o.contains_key(*k)))
}

/// The JSON type's name, as errors name what they got.
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `value`, or the JSON its text holds when it is a string.
fn read_text(value: &Value, what: &str) -> Result<Value> {
    match value {
        Value::String(text) => parse_json(text, what),
        other => Ok(other.clone()),
    }
}

/// Whether a handshake result (bare or in its response) is `server/discover`'s.
fn is_discover(result: &Value) -> bool {
    let inner = result
        .get("result")
        .filter(|r| r.is_object())
        .unwrap_or(result);
    inner.get("supportedVersions").is_some()
}

/// The `tools/list` pages of `tools`: none (`null`), one page, a list of
/// pages, or a list of tools (one page of them).
fn pages(tools: &Value) -> Result<Vec<Value>> {
    match tools {
        Value::Null => Ok(Vec::new()),
        Value::String(_) => Ok(vec![read_text(tools, "tools/list page 1")?]),
        page if is_page(page) => Ok(vec![page.clone()]),
        Value::Array(items)
            if !items.is_empty() && items.iter().all(|p| p.is_string() || is_page(p)) =>
        {
            let read =
                |(i, p): (usize, &Value)| read_text(p, &format!("tools/list page {}", i + 1));
            items.iter().enumerate().map(read).collect()
        }
        Value::Array(items) => {
            let mut page = Map::new();
            page.insert("tools".into(), Value::Array(items.clone()));
            Ok(vec![Value::Object(page)])
        }
        other => Err(Error::new(
            ErrorKind::InvalidConfig,
            format!(
                "tools: expected an array or a tools/list result, got {}",
                type_name(other)
            ),
        )),
    }
}

impl ServerSnapshot {
    /// A snapshot of what a client kept of a server: its handshake result
    /// and its tools, in any shape the official SDKs give them once turned
    /// into JSON. The Python and Node packages build every `Server` here.
    ///
    /// - `era`: [`Era::Modern`] reads `result` as a `server/discover`
    ///   result, [`Era::Legacy`] as an `initialize` result; `None` tells
    ///   them apart by `supportedVersions`.
    /// - `result`: the result, bare or in its JSON-RPC response, or a JSON
    ///   string of either. Absent (`null`) optional fields are absent.
    /// - `tools`: `null` (no tools listed), one `tools/list` result or its
    ///   response, a list of them (one per page), a list of tools, or JSON
    ///   text of any of these (a page may be a JSON string too).
    ///
    /// A page that is a JSON-RPC error ends the list and is kept in
    /// [`ServerSnapshot::tools_error`], as capture files are read: the tools
    /// before it stay. Other errors: [`ErrorKind::InvalidJson`] (text that
    /// does not parse, naming the page), [`ErrorKind::InvalidMessage`] (a
    /// result or page of the wrong shape), [`ErrorKind::InvalidConfig`]
    /// (`tools` of no shape above), [`ErrorKind::RpcError`] (`result` is an
    /// error response).
    ///
    /// ```
    /// use mcp_preamble::ServerSnapshot;
    /// use serde_json::json;
    /// let init = json!({"protocolVersion": "2025-06-18", "serverInfo": {"name": "invoice"}});
    /// let tool = json!({"name": "list_periods", "inputSchema": {"type": "object"}});
    /// let a = ServerSnapshot::from_handshake(None, &init, &json!([tool]))?;
    /// let b = ServerSnapshot::from_handshake(None, &init, &json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [tool]}}))?;
    /// assert_eq!(a, b);
    /// assert_eq!(a.tools[0].name, "list_periods");
    /// # Ok::<(), mcp_preamble::Error>(())
    /// ```
    pub fn from_handshake(
        era: Option<Era>,
        result: &Value,
        tools: &Value,
    ) -> Result<ServerSnapshot> {
        let modern = match era {
            Some(era) => era == Era::Modern,
            None => is_discover(&read_text(result, "handshake result")?),
        };
        let method = if modern {
            "server/discover"
        } else {
            "initialize"
        };
        let result = read_text(result, &format!("{method} response"))?;
        let mut snapshot = if modern {
            ServerSnapshot::from_discover(&result)?
        } else {
            ServerSnapshot::from_initialize(&result)?
        };
        for page in pages(tools)? {
            if let Err(err) = snapshot.push_tools_page(&page) {
                match err.rpc_error() {
                    Some(rpc) => {
                        snapshot.tools_error = Some(rpc.clone());
                        break;
                    }
                    None => return Err(err),
                }
            }
        }
        Ok(snapshot)
    }

    /// [`ServerSnapshot::from_handshake`] from JSON texts (`tools` may be `null`).
    pub fn from_handshake_json(
        era: Option<Era>,
        result: &str,
        tools: &str,
    ) -> Result<ServerSnapshot> {
        let method = match era {
            Some(Era::Modern) => "server/discover response",
            Some(Era::Legacy) => "initialize response",
            None => "handshake result",
        };
        let result = parse_json(result, method)?;
        let tools = parse_json(tools, "tools")?;
        ServerSnapshot::from_handshake(era, &result, &tools)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn init() -> Value {
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "invoice", "version": "1.0"}, "instructions": "Call list_periods first."})
    }

    fn discover() -> Value {
        json!({"supportedVersions": ["2025-11-25", "2026-07-28"], "capabilities": {},
               "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "invoice", "version": "1.0"}}})
    }

    fn tool(name: &str) -> Value {
        json!({"name": name, "description": "d", "inputSchema": {"type": "object"}})
    }

    fn names(s: &ServerSnapshot) -> Vec<&str> {
        s.tools.iter().map(|t| t.name.as_str()).collect()
    }

    #[test]
    fn every_page_shape_gives_the_same_snapshot() {
        let page = |t: &[&str], cursor: Option<&str>| json!({"tools": t.iter().map(|n| tool(n)).collect::<Vec<_>>(), "nextCursor": cursor});
        let response = |p: Value| json!({"jsonrpc": "2.0", "id": 2, "result": p});
        let shapes = [
            json!([tool("a"), tool("b")]),
            page(&["a", "b"], None),
            response(page(&["a", "b"], None)),
            json!([page(&["a"], Some("c1")), page(&["b"], None)]),
            json!([
                response(page(&["a"], Some("c1"))),
                response(page(&["b"], None))
            ]),
            Value::String(page(&["a", "b"], None).to_string()),
            json!([page(&["a"], Some("c1")).to_string(), page(&["b"], None)]),
        ];
        let want = ServerSnapshot::from_handshake(None, &init(), &shapes[0]).unwrap();
        assert_eq!(names(&want), ["a", "b"]);
        for shape in &shapes[1..] {
            let got = ServerSnapshot::from_handshake(None, &init(), shape).unwrap();
            assert_eq!(got, want, "{shape}");
        }
    }

    #[test]
    fn sdk_dumps_with_nulls_read_as_absent_fields() {
        // What pydantic's model_dump(by_alias=True, mode="json") writes.
        let dumped = json!({"name": "a", "title": null, "description": null, "inputSchema": {"type": "object"},
                            "outputSchema": null, "annotations": null, "icons": null, "_meta": null});
        let mut result = init();
        result["instructions"] = Value::Null;
        let s = ServerSnapshot::from_handshake(
            None,
            &result,
            &json!({"tools": [dumped], "nextCursor": null, "_meta": null}),
        )
        .unwrap();
        assert_eq!(s.tools[0].description, None);
        assert_eq!(s.tools[0].annotations, None);
        assert_eq!(s.instructions.raw(), None);
        assert_eq!(s.era, Era::Legacy);
    }

    #[test]
    fn the_era_is_told_by_supported_versions_unless_given() {
        let s = ServerSnapshot::from_handshake(None, &discover(), &Value::Null).unwrap();
        assert_eq!(
            (s.era, s.protocol_version.as_str()),
            (Era::Modern, "2026-07-28")
        );
        let wrapped = json!({"jsonrpc": "2.0", "id": 1, "result": discover()});
        assert_eq!(
            ServerSnapshot::from_handshake(None, &wrapped, &Value::Null).unwrap(),
            s
        );
        let text = Value::String(init().to_string());
        assert_eq!(
            ServerSnapshot::from_handshake(None, &text, &json!([]))
                .unwrap()
                .era,
            Era::Legacy
        );
        // Told it is a discover result, an initialize result lacks supportedVersions.
        let err =
            ServerSnapshot::from_handshake(Some(Era::Modern), &init(), &Value::Null).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidMessage);
        assert_eq!(
            err.to_string(),
            "invalid message: server/discover result has no supportedVersions array"
        );
    }

    #[test]
    fn an_error_page_ends_the_list_and_is_kept() {
        let error =
            json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": "boom"}});
        let pages =
            json!([{"tools": [tool("a")], "nextCursor": "c"}, error, {"tools": [tool("b")]}]);
        let s = ServerSnapshot::from_handshake(None, &init(), &pages).unwrap();
        assert_eq!(names(&s), ["a"]);
        let kept = s.tools_error.unwrap();
        assert_eq!(
            (kept.method.as_str(), kept.code, kept.message.as_str()),
            ("tools/list", -32603, "boom")
        );
    }

    #[test]
    fn bad_inputs_are_typed_errors_with_exact_messages() {
        let cases: [(Value, Value, ErrorKind, &str); 5] = [
            (
                init(),
                json!(3),
                ErrorKind::InvalidConfig,
                "invalid configuration: tools: expected an array or a tools/list result, got number",
            ),
            (
                init(),
                json!({"name": "a"}),
                ErrorKind::InvalidConfig,
                "invalid configuration: tools: expected an array or a tools/list result, got object",
            ),
            (
                init(),
                json!(["{\"tools\": [", "{}"]),
                ErrorKind::InvalidJson,
                "invalid json: tools/list page 1: EOF while parsing a list at line 1 column 11",
            ),
            (
                json!("{not json"),
                Value::Null,
                ErrorKind::InvalidJson,
                "invalid json: handshake result: key must be a string at line 1 column 2",
            ),
            (
                json!({"capabilities": {}}),
                Value::Null,
                ErrorKind::InvalidMessage,
                "invalid message: initialize result has no protocolVersion",
            ),
        ];
        for (result, tools, kind, message) in cases {
            let err = ServerSnapshot::from_handshake(None, &result, &tools).unwrap_err();
            assert_eq!((err.kind(), err.to_string().as_str()), (kind, message));
        }
        let err =
            ServerSnapshot::from_handshake(None, &init(), &json!([tool("a"), 1])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid message: tools/list result tools[1] is not a json object"
        );
        let rpc = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}});
        let err =
            ServerSnapshot::from_handshake(Some(Era::Modern), &rpc, &Value::Null).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::RpcError);
        assert_eq!(
            err.to_string(),
            "json-rpc error response: server/discover failed with -32601: Method not found"
        );
    }

    #[test]
    fn json_texts_read_as_values() {
        let tools = json!([tool("a")]).to_string();
        let s = ServerSnapshot::from_handshake_json(None, &init().to_string(), &tools).unwrap();
        assert_eq!(
            s,
            ServerSnapshot::from_handshake(None, &init(), &json!([tool("a")])).unwrap()
        );
        let err = ServerSnapshot::from_handshake_json(None, &init().to_string(), "[").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid json: tools: EOF while parsing a list at line 1 column 1"
        );
    }
}
