//! A forwarded call written whole to a stdio upstream and its answer taken
//! whole from its stdout (`connect/pipe.rs`), not through rmcp's client:
//! the request as rmcp would write it (its `_meta` included), the answer
//! read as a `tools/call` result first (rmcp reads every answer as an
//! untagged union of twenty results, trying each in turn).

use rmcp::model::{
    CallToolRequestMethod, CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
    ClientRequest, GetMeta, JsonRpcMessage, JsonRpcRequest, JsonRpcVersion2_0, MetaObject,
    NumberOrString, ProgressToken, ProtocolVersion, RequestId, RequestMetaObject,
    ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::ServiceError;

use crate::connect::pipe::{Pipe, Unanswered};

/// One call ready to be written: its line, with `n` for its id and its
/// progress token.
pub(crate) struct Written {
    n: i64,
    line: Vec<u8>,
}

impl Written {
    /// The call's id on the pipe.
    pub(crate) fn id(&self) -> RequestId {
        RequestId::Number(self.n)
    }

    /// The progress token the upstream was given for the call.
    pub(crate) fn token(&self) -> ProgressToken {
        ProgressToken(NumberOrString::Number(self.n))
    }
}

/// `request` as rmcp's client writes it to an upstream that speaks
/// `version` and was connected as `client`: a 2026-07-28 one gets the
/// client's context in `_meta` (`told`: what the host declared, else the
/// connection's own capabilities; `level`: the log level asked for), an
/// earlier one only the progress token. The request back when it does not
/// serialize.
#[allow(deprecated)] // rmcp marks logging deprecated (SEP-2577)
pub(crate) fn written(
    pipe: &Pipe,
    mut request: ClientRequest,
    (version, client): (&ProtocolVersion, &ClientConfig),
    told: Option<&ClientCapabilities>,
    level: Option<rmcp::model::LoggingLevel>,
) -> Result<Written, Box<ClientRequest>> {
    let n = pipe.next_id();
    let written = Written {
        n,
        line: Vec::new(),
    };
    let mut meta = match version.has_initialize() {
        true => RequestMetaObject::new(),
        false => {
            let told = told.cloned().unwrap_or_else(|| client.capabilities.clone());
            let mut meta = RequestMetaObject::with_client_context(
                version.clone(),
                client.client_info.clone(),
                told,
            );
            if let Some(level) = level {
                meta.set_log_level(level);
            }
            meta
        }
    };
    meta.set_progress_token(written.token());
    *request.get_meta_mut() = meta;
    if let Some(mut line) = call_line(n, &mut request) {
        line.push(b'\n');
        return Ok(Written { line, ..written });
    }
    let message = JsonRpcRequest {
        jsonrpc: JsonRpcVersion2_0,
        id: written.id(),
        request,
    };
    let Ok(mut line) = serde_json::to_vec(&message) else {
        return Err(Box::new(message.request));
    };
    line.push(b'\n');
    Ok(Written { line, ..written })
}

/// `request` written as the JSON-RPC request `n` when it is a `tools/call`
/// whose `_meta` is in its extensions alone (as the gateway makes every
/// forwarded call): the same JSON rmcp writes, written straight from the
/// params. rmcp's request serializer turns the params into a `Value` to
/// merge two `_meta`s and then writes that, most of what writing a
/// forwarded call cost. `None` for any other request (left to rmcp as
/// it came); once written, the request's `_meta` is gone from it.
/// The direct HTTP post writes its calls with it too.
pub(crate) fn call_line(n: i64, request: &mut ClientRequest) -> Option<Vec<u8>> {
    #[derive(serde::Serialize)]
    struct Line<'a> {
        jsonrpc: JsonRpcVersion2_0,
        id: i64,
        method: CallToolRequestMethod,
        params: &'a CallToolRequestParams,
    }
    let ClientRequest::CallToolRequest(call) = request else {
        return None;
    };
    if call.params.meta.is_some() || call.extensions.get::<MetaObject>().is_some() {
        return None;
    }
    call.params.meta = call.extensions.remove::<RequestMetaObject>();
    let line = serde_json::to_vec(&Line {
        jsonrpc: JsonRpcVersion2_0,
        id: n,
        method: CallToolRequestMethod,
        params: &call.params,
    });
    // Written, the `_meta` is spent (both callers drop or reset it); else it
    // goes back where rmcp reads it.
    let meta = call.params.meta.take();
    if line.is_err()
        && let Some(meta) = meta
    {
        call.extensions.insert(meta);
    }
    line.ok()
}

/// Writes `call` to `pipe` and reads its answer as rmcp's client would
/// hand it over.
pub(crate) async fn ask(pipe: Pipe, call: Written) -> Result<ServerResult, ServiceError> {
    match pipe.ask(call.n, &call.line).await {
        Ok(line) => answer_of(&line),
        Err(Unanswered::Unwritten | Unanswered::Closed) => Err(ServiceError::TransportClosed),
    }
}

/// The result or error in the JSON-RPC answer `line`: a tool's result read
/// as one, else (a task, an input request, another result) as rmcp reads
/// any answer.
pub(crate) fn answer_of(line: &[u8]) -> Result<ServerResult, ServiceError> {
    match tool_answer(line) {
        Some((_, result)) => Ok(result),
        None => match serde_json::from_slice::<ServerJsonRpcMessage>(line) {
            Ok(JsonRpcMessage::Response(response)) => Ok(response.result),
            Ok(JsonRpcMessage::Error(error)) => Err(ServiceError::McpError(error.error)),
            _ => Err(ServiceError::UnexpectedResponse),
        },
    }
}

/// The id and the result of `message` when it is an answer holding a
/// `tools/call` result (read as that one type, where rmcp tries twenty);
/// `None` for any other message (an error, another result, a request).
/// The direct HTTP post reads its answers with it too.
pub(crate) fn tool_answer(message: &[u8]) -> Option<(RequestId, ServerResult)> {
    #[derive(serde::Deserialize)]
    struct Answer<T> {
        id: RequestId,
        result: T,
    }
    // rmcp's CallToolResult refuses a result type other than "complete".
    let answer = serde_json::from_slice::<Answer<CallToolResult>>(message).ok()?;
    Some((answer.id, ServerResult::CallToolResult(answer.result)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answer `line` as the host gets it, read here or as rmcp reads it.
    fn host(read: Result<ServerResult, ServiceError>) -> String {
        match read {
            Ok(r) => match crate::serve::gateway::call::response("a", "t", r) {
                Ok(r) => serde_json::to_string(&ServerResult::from(r)).unwrap(),
                Err(e) => format!("error: {}", e.message),
            },
            Err(e) => format!("error: {e}"),
        }
    }

    fn by_rmcp(line: &str) -> Result<ServerResult, ServiceError> {
        match serde_json::from_str::<ServerJsonRpcMessage>(line) {
            Ok(JsonRpcMessage::Response(r)) => Ok(r.result),
            Ok(JsonRpcMessage::Error(e)) => Err(ServiceError::McpError(e.error)),
            _ => Err(ServiceError::UnexpectedResponse),
        }
    }

    #[test]
    fn an_answer_reads_here_as_rmcp_reads_it() {
        let error = r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"no such tool"}}"#;
        assert_eq!(host(answer_of(error.as_bytes())), host(by_rmcp(error)));
        assert!(host(by_rmcp(error)).contains("no such tool"));
        for result in [
            r#"{"content":[{"type":"text","text":"2026-07"}],"isError":false}"#,
            r#"{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":1},"_meta":{"k":"v"}}"#,
            r#"{"content":[],"isError":true,"resultType":"complete"}"#,
            r#"{}"#,
            r#"{"_meta":{"k":1}}"#,
            r#"{"resultType":"task","task":{"taskId":"t1","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":null}}"#,
            r#"{"resultType":"input_required","inputRequests":{},"requestState":"s"}"#,
            r#"{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"}]}"#,
            r#"{"content":"not a list"}"#,
        ] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":3,"result":{result}}}"#);
            assert_eq!(
                host(answer_of(line.as_bytes())),
                host(by_rmcp(&line)),
                "{result}"
            );
        }
    }

    #[test]
    fn a_call_is_written_as_rmcp_writes_it() {
        let client = ClientConfig::default();
        let params = [
            r#"{"name":"t"}"#,
            r#"{"name":"t","arguments":{"k":[1,{"z":null}],"s":"\u2028\"q\""}}"#,
            r#"{"name":"t","arguments":{},"requestState":"s","inputResponses":{"a":{"action":"cancel"}}}"#,
        ];
        for version in [ProtocolVersion::V_2025_06_18, ProtocolVersion::V_2026_07_28] {
            for p in params {
                let params: CallToolRequestParams = serde_json::from_str(p).unwrap();
                let request = || {
                    ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(
                        params.clone(),
                    ))
                };
                let stdin: crate::connect::pipe::Stdin = Box::new(tokio::io::sink());
                let (pipe, _answers) =
                    Pipe::new(std::sync::Arc::new(tokio::sync::Mutex::new(stdin)));
                let here = written(&pipe, request(), (&version, &client), None, None).unwrap();
                // rmcp's own writing of the same request, `_meta` and id as here.
                let mut theirs = request();
                let sent: serde_json::Value = serde_json::from_slice(&here.line).unwrap();
                *theirs.get_meta_mut() =
                    serde_json::from_value(sent["params"]["_meta"].clone()).unwrap();
                let rmcp = serde_json::to_value(JsonRpcRequest {
                    jsonrpc: JsonRpcVersion2_0,
                    id: here.id(),
                    request: theirs,
                })
                .unwrap();
                assert_eq!(sent, rmcp, "{p}");
                assert!(here.line.ends_with(b"}\n"));
            }
        }
        // A call whose `_meta` rmcp merges from two places is left to rmcp.
        let mut params = CallToolRequestParams::new("t");
        params.meta = Some(RequestMetaObject::new());
        let mut call = ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(params));
        assert!(call_line(1, &mut call).is_none());
    }

    #[test]
    fn a_2025_upstream_gets_the_progress_token_and_a_2026_one_the_clients_context() {
        let stdin: crate::connect::pipe::Stdin = Box::new(tokio::io::sink());
        let (pipe, _answers) = Pipe::new(std::sync::Arc::new(tokio::sync::Mutex::new(stdin)));
        let client = ClientConfig::default();
        let call = |version: ProtocolVersion| {
            let request = ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(
                rmcp::model::CallToolRequestParams::new("t"),
            ));
            let w = written(&pipe, request, (&version, &client), None, None).unwrap();
            serde_json::from_slice::<serde_json::Value>(&w.line).unwrap()
        };
        let old = call(ProtocolVersion::V_2025_06_18);
        assert_eq!(
            old["params"]["_meta"],
            serde_json::json!({"progressToken": old["id"]})
        );
        let new = call(ProtocolVersion::V_2026_07_28);
        assert_eq!(new["params"]["_meta"]["progressToken"], new["id"]);
        let meta: RequestMetaObject =
            serde_json::from_value(new["params"]["_meta"].clone()).unwrap();
        assert_eq!(meta.protocol_version(), Some(ProtocolVersion::V_2026_07_28));
        assert_eq!(
            meta.client_capabilities(),
            Some(client.capabilities.clone())
        );
        assert!(
            meta.missing_required_keys(&ProtocolVersion::V_2026_07_28)
                .is_empty()
        );
    }
}
