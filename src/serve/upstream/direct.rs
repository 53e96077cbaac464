//! A forwarded call posted straight to a stateless (2026-07-28) upstream
//! over plain HTTP: one request on a kept connection, its answer (one JSON
//! body or an event stream) read here. rmcp's client puts a service loop,
//! a worker, their channels and reqwest between a call and its socket:
//! most of what the gateway spent on a forwarded call (`benches/serve.rs`).
//!
//! Only a call rmcp would send the same way is posted here: the upstream
//! reached over `http://` as the config says (no TLS, no proxy but for
//! this machine), a client that declared no capabilities (so no request
//! can come back but `ping`), a tool whose schema routes no argument into
//! a header and whose name needs no Base64. An answer that says the
//! request was not taken (a redirect, 401, 403, 404, 405, 406, 415) turns
//! this path off for the upstream and hands the call to rmcp, as does a
//! request the connection could not send.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper::header::{ACCEPT, CONTENT_TYPE, HOST, HeaderName, HeaderValue};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    ClientCapabilities, ClientJsonRpcMessage, ClientRequest, ErrorCode, GetMeta, NumberOrString,
    ProgressToken, ProtocolVersion, RequestId, RequestMetaObject, ServerJsonRpcMessage,
    ServerNotification, ServerRequest, ServerResult,
};
use rmcp::service::ServiceError;

use crate::config::ServerTransport;
use crate::connect::LiveServer;
use crate::serve::upstream::Forward;
use crate::serve::upstream::events::{EventReader, TooLong};
use crate::serve::upstream::piped::{call_line, tool_answer};
use crate::serve::upstream::progress::{HostProgress, relay_to};

/// Idle connections kept per upstream.
const IDLE: usize = 64;

/// How long the rest of an event stream is read after its answer.
const DRAIN: std::time::Duration = std::time::Duration::from_secs(5);

/// The longest answer read (as `wrap` bounds a message).
const MAX_ANSWER: usize = crate::serve::upstream::MAX_MESSAGE_BYTES;

/// An upstream's direct path: where to post, with what, and the
/// connections kept.
pub(crate) struct Direct {
    authority: String,
    path: String,
    headers: Vec<(HeaderName, HeaderValue)>,
    client: rmcp::model::Implementation,
    version: ProtocolVersion,
    idle: Arc<Mutex<Vec<SendRequest<Full<Bytes>>>>>,
    ids: AtomicU64,
    off: AtomicBool,
    /// Calls answered on this path.
    answered: AtomicU64,
}

/// What became of a call offered to the direct path.
pub(crate) enum Posted {
    /// The upstream's answer, or why there is none.
    Answered(Box<Result<ServerResult, ServiceError>>),
    /// Not taken: rmcp sends it (the request is given back).
    Declined(Box<ClientRequest>),
    /// Its event stream ended before the answer (the upstream is told to
    /// cancel): the call ends now, not at its deadline.
    Cut,
}

/// An event stream that ended before its answer.
struct Cut;

impl Direct {
    /// The direct path to `live`, or `None` when its calls go through rmcp.
    pub(crate) fn of(live: &LiveServer) -> Option<Direct> {
        let (ServerTransport::Http { url, headers }, client) = live.reached() else {
            return None;
        };
        let version: ProtocolVersion =
            serde_json::from_value(serde_json::json!(live.snapshot().protocol_version)).ok()?;
        let stateless = version.as_str() >= ProtocolVersion::V_2026_07_28.as_str()
            && ProtocolVersion::KNOWN_VERSIONS.contains(&version);
        if !stateless || client.capabilities != ClientCapabilities::default() {
            return None;
        }
        let uri: hyper::Uri = url.parse().ok()?;
        let host = uri.host()?;
        let local = matches!(host, "127.0.0.1" | "[::1]" | "localhost");
        if uri.scheme_str() != Some("http") || (!local && proxied()) {
            return None;
        }
        let authority = format!("{host}:{}", uri.port_u16().unwrap_or(80));
        let mut extra = Vec::new();
        for (name, value) in headers {
            let name = HeaderName::from_bytes(name.as_bytes()).ok()?;
            let value = HeaderValue::from_str(value).ok()?;
            // A header of the protocol's own set in the config: rmcp's to merge.
            let own = name.as_str().starts_with("mcp-")
                || [ACCEPT, CONTENT_TYPE, HOST, hyper::header::CONTENT_LENGTH].contains(&name);
            if own {
                return None;
            }
            extra.push((name, value));
        }
        Some(Direct {
            authority,
            path: uri.path_and_query().map_or("/", |p| p.as_str()).to_string(),
            headers: extra,
            client: client.client_info.clone(),
            version,
            idle: Arc::default(),
            // Far from rmcp's own ids on the same upstream, and exact in JavaScript.
            ids: AtomicU64::new(1 << 40),
            off: AtomicBool::new(false),
            answered: AtomicU64::new(0),
        })
    }

    /// How many calls this path answered.
    pub(crate) fn answered(&self) -> u64 {
        self.answered.load(Ordering::Relaxed)
    }

    /// Posts a call of `tool` with `params` (and the host's `forward`
    /// headers); progress for it goes to `host`; the upstream is told what
    /// the host declared and the log level it asked for (`told`).
    #[allow(deprecated)] // rmcp marks logging deprecated (SEP-2577)
    pub(crate) async fn call(
        &self,
        tool: &str,
        request: ClientRequest,
        host: &HostProgress,
        forward: &Forward,
        (told, level): (
            Option<&ClientCapabilities>,
            Option<rmcp::model::LoggingLevel>,
        ),
    ) -> Posted {
        let mut request = request;
        if self.off.load(Ordering::Relaxed) || !plain_name(tool) {
            return Posted::Declined(Box::new(request));
        }
        let n = self.ids.fetch_add(1, Ordering::Relaxed);
        let id = RequestId::Number(n as i64);
        let mut meta = RequestMetaObject::with_client_context(
            self.version.clone(),
            self.client.clone(),
            told.cloned().unwrap_or_default(),
        );
        meta.set_progress_token(ProgressToken(NumberOrString::Number(n as i64)));
        if let Some(level) = level {
            meta.set_log_level(level);
        }
        *request.get_meta_mut() = meta;
        let body = call_line(n as i64, &mut request);
        // Given back as it came: rmcp writes its own `_meta`.
        *request.get_meta_mut() = RequestMetaObject::default();
        let Some(body) = body else {
            return Posted::Declined(Box::new(request));
        };
        let mut post = self.post(tool, "tools/call", body);
        for (name, value) in forward {
            if let (Ok(n), Ok(v)) = (HeaderName::try_from(name), HeaderValue::try_from(value)) {
                post.headers_mut().append(n, v);
            }
        }
        let answer = match self.send(post).await {
            Sent::Answer(answer) => answer,
            Sent::Unwritten => return Posted::Declined(Box::new(request)),
            Sent::Lost(e) => {
                tracing::debug!(error = %e, "a direct call's connection failed");
                return Posted::Answered(Box::new(Err(ServiceError::TransportClosed)));
            }
        };
        if !taken(answer.0.status()) {
            tracing::info!(
                status = answer.0.status().as_u16(),
                "the upstream did not take a direct call; its calls go through rmcp from now on"
            );
            self.off.store(true, Ordering::Relaxed);
            return Posted::Declined(Box::new(request));
        }
        // Cancelled when dropped before the answer (or its stream was cut).
        let mut pending = Pending(Some((self, id.clone())));
        let Ok(outcome) = self.read(answer, &id, n, host).await else {
            return Posted::Cut;
        };
        pending.0 = None;
        self.answered.fetch_add(1, Ordering::Relaxed);
        Posted::Answered(Box::new(outcome))
    }

    /// A POST of `body` (a message of `method`, about `name`).
    fn post(&self, name: &str, method: &'static str, body: Vec<u8>) -> Request<Full<Bytes>> {
        let mut request = Request::post(&self.path);
        let headers = request.headers_mut().expect("a new request");
        let set = |h: &mut hyper::HeaderMap, n: HeaderName, v: &str| {
            if let Ok(v) = HeaderValue::from_str(v) {
                h.insert(n, v);
            }
        };
        set(headers, HOST, &self.authority);
        set(headers, CONTENT_TYPE, "application/json");
        set(headers, ACCEPT, "text/event-stream, application/json");
        set(headers, MCP_PROTOCOL_VERSION, self.version.as_str());
        set(headers, MCP_METHOD, method);
        if !name.is_empty() {
            set(headers, MCP_NAME, name);
        }
        for (n, v) in &self.headers {
            headers.insert(n.clone(), v.clone());
        }
        request
            .body(Full::new(Bytes::from(body)))
            .expect("a request of valid parts")
    }

    /// Sends `request` on a kept connection (a fresh one when none is
    /// there or the kept one turns out closed).
    async fn send(&self, mut request: Request<Full<Bytes>>) -> Sent {
        loop {
            let kept = crate::support::lock(&self.idle).pop();
            let fresh = kept.is_none();
            let mut sender = match kept {
                Some(sender) => sender,
                None => match self.connect().await {
                    Some(sender) => sender,
                    None => return Sent::Unwritten,
                },
            };
            if sender.ready().await.is_err() {
                if fresh {
                    return Sent::Unwritten;
                }
                continue;
            }
            match sender.try_send_request(request).await {
                Ok(answer) => return Sent::Answer((answer, sender)),
                Err(mut e) => match e.take_message() {
                    // Never written: try once more on a new connection.
                    Some(back) if !fresh => request = back,
                    Some(_) => return Sent::Unwritten,
                    None => return Sent::Lost(e.into_error().to_string()),
                },
            }
        }
    }

    async fn connect(&self) -> Option<SendRequest<Full<Bytes>>> {
        let stream = tokio::net::TcpStream::connect(&self.authority).await.ok()?;
        let _ = stream.set_nodelay(true);
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .ok()?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "a direct upstream connection ended");
            }
        });
        Some(sender)
    }

    /// Reads the answer to the call `id` (progress token `n`): one JSON
    /// body, or events until the answer ([`Cut`] when they end first). The
    /// connection is kept once the whole body was read.
    async fn read(
        &self,
        (answer, sender): (Response<Incoming>, SendRequest<Full<Bytes>>),
        id: &RequestId,
        n: u64,
        host: &HostProgress,
    ) -> Result<Result<ServerResult, ServiceError>, Cut> {
        let events = answer
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.trim_start().starts_with("text/event-stream"));
        let status = answer.status();
        let mut body = answer.into_body();
        let mut buffer = BytesMut::new();
        let mut reader = EventReader::new(MAX_ANSWER);
        let mut found = None;
        while let Some(frame) = body.frame().await {
            let Ok(frame) = frame else {
                return match events {
                    true => Err(Cut),
                    false => Ok(Err(ServiceError::TransportClosed)),
                };
            };
            let Ok(data) = frame.into_data() else {
                continue;
            };
            if !events {
                if buffer.len() + data.len() > MAX_ANSWER {
                    return Ok(Err(ServiceError::UnexpectedResponse));
                }
                buffer.extend_from_slice(&data);
                continue;
            }
            reader.push(&data);
            while found.is_none() {
                match reader.next_event() {
                    None => break,
                    Some(Err(TooLong)) => return Ok(Err(ServiceError::UnexpectedResponse)),
                    Some(Ok(event)) => found = self.on_message(&event, id, n, host).await,
                }
            }
            // Answered: the host has it now; the stream's end is read after.
            if let Some(found) = found.take() {
                let idle = self.idle.clone();
                tokio::spawn(async move {
                    // A stream kept open past its answer loses its connection.
                    let drained = tokio::time::timeout(DRAIN, async {
                        while let Some(frame) = body.frame().await {
                            frame.ok()?;
                        }
                        Some(())
                    });
                    if let Ok(Some(())) = drained.await {
                        keep(&idle, sender);
                    }
                });
                return Ok(found);
            }
        }
        if events {
            return Err(Cut);
        }
        found = match tool_answer(&buffer) {
            Some((answered, result)) => (answered == *id).then_some(Ok(result)),
            None => {
                let Ok(message) = serde_json::from_slice::<ServerJsonRpcMessage>(&buffer) else {
                    tracing::debug!(%status, "a direct call was answered without a message");
                    return Ok(Err(ServiceError::UnexpectedResponse));
                };
                answer_of(message, id)
            }
        };
        // The body was read to its end: the connection takes the next call.
        if found.is_some() {
            keep(&self.idle, sender);
        }
        Ok(found.unwrap_or(Err(ServiceError::UnexpectedResponse)))
    }

    /// One message of an event stream: the answer, progress (relayed), a
    /// request (answered), or something else (logged).
    async fn on_message(
        &self,
        data: &[u8],
        id: &RequestId,
        n: u64,
        host: &HostProgress,
    ) -> Option<Result<ServerResult, ServiceError>> {
        if let Some((answered, result)) = tool_answer(data) {
            return (answered == *id).then_some(Ok(result));
        }
        let Ok(message) = serde_json::from_slice::<ServerJsonRpcMessage>(data) else {
            tracing::debug!("a direct call's event stream held a message that did not read");
            return None;
        };
        match message {
            ServerJsonRpcMessage::Notification(note) => {
                match note.notification {
                    ServerNotification::ProgressNotification(p)
                        if p.params.progress_token.0 == NumberOrString::Number(n as i64) =>
                    {
                        relay_to(host, p.params).await;
                    }
                    other => tracing::debug!(
                        method = %serde_json::to_value(&other).ok()
                            .and_then(|v| v.get("method").cloned()).unwrap_or_default(),
                        "a notification in a direct call's stream was not routed"
                    ),
                }
                None
            }
            ServerJsonRpcMessage::Request(request) => {
                self.answer_request(request.request, request.id);
                None
            }
            other => answer_of(other, id),
        }
    }

    /// Answers a request of the upstream within a call: `ping`, and
    /// method-not-found for the rest (the client declared no capability).
    fn answer_request(&self, request: ServerRequest, id: RequestId) {
        let reply = match request {
            ServerRequest::PingRequest(_) => {
                ClientJsonRpcMessage::response(rmcp::model::ClientResult::empty(()), id)
            }
            other => ClientJsonRpcMessage::error(
                McpError::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!("{} is not served", method_of(&other)),
                    None,
                ),
                Some(id),
            ),
        };
        self.send_later(reply);
    }

    /// Posts `message` on a task of its own (no answer awaited).
    fn send_later(&self, message: ClientJsonRpcMessage) {
        let Ok(body) = serde_json::to_vec(&message) else {
            return;
        };
        let method = match &message {
            ClientJsonRpcMessage::Notification(_) => "notifications/cancelled",
            _ => "",
        };
        let request = self.post("", method, body);
        let Some(direct) = self.detached() else {
            return;
        };
        tokio::spawn(async move {
            if let Sent::Answer((answer, _)) = direct.send(request).await {
                let _ = answer.into_body().collect().await;
            }
        });
    }

    /// A copy that posts on connections of its own, for a task.
    fn detached(&self) -> Option<Direct> {
        Some(Direct {
            authority: self.authority.clone(),
            path: self.path.clone(),
            headers: self.headers.clone(),
            client: self.client.clone(),
            version: self.version.clone(),
            idle: Arc::default(),
            ids: AtomicU64::new(0),
            off: AtomicBool::new(false),
            answered: AtomicU64::new(0),
        })
    }
}

/// Keeps `sender` for a next call, when its connection is open.
fn keep(idle: &Mutex<Vec<SendRequest<Full<Bytes>>>>, sender: SendRequest<Full<Bytes>>) {
    let mut idle = crate::support::lock(idle);
    if idle.len() < IDLE && !sender.is_closed() {
        idle.push(sender);
    }
}

const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");

/// A request sent on a connection.
enum Sent {
    Answer((Response<Incoming>, SendRequest<Full<Bytes>>)),
    /// Never written: nothing reached the upstream.
    Unwritten,
    /// Written, and the connection failed before an answer.
    Lost(String),
}

/// A call sent and not answered yet: the upstream is told to cancel it
/// when this is dropped (the host cancelled, the call timed out).
struct Pending<'a>(Option<(&'a Direct, RequestId)>);

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        let Some((direct, id)) = self.0.take() else {
            return;
        };
        let why = "the host no longer waits".to_string();
        let params = rmcp::model::CancelledNotificationParam::new(Some(id), Some(why));
        let note = rmcp::model::ClientNotification::CancelledNotification(
            rmcp::model::CancelledNotification::new(params),
        );
        direct.send_later(ClientJsonRpcMessage::notification(note));
    }
}

/// Whether a status says the request was taken (answered, even with an
/// error); the others say nothing ran.
fn taken(status: StatusCode) -> bool {
    !(status.is_redirection() || matches!(status.as_u16(), 401 | 403 | 404 | 405 | 406 | 415))
}

/// The answer in `message` when it answers `id`.
fn answer_of(
    message: ServerJsonRpcMessage,
    id: &RequestId,
) -> Option<Result<ServerResult, ServiceError>> {
    let (answer, answered) = message.into_result()?;
    // An error without an id (unreadable request) answers this one: it
    // was the only request on the stream.
    answered
        .is_none_or(|a| a == *id)
        .then(|| answer.map_err(ServiceError::McpError))
}

/// The `Mcp-Param-*` headers of a host's request ([`Forward`]).
pub(crate) fn forwarded(headers: &hyper::HeaderMap) -> Forward {
    (headers.iter())
        .filter(|(name, _)| name.as_str().starts_with("mcp-param-"))
        .filter_map(|(name, value)| Some((name.to_string(), value.to_str().ok()?.to_string())))
        .collect()
}

/// A name rmcp sends as it is in `Mcp-Name` (no Base64 needed).
fn plain_name(name: &str) -> bool {
    !name.is_empty() && !name.starts_with("=?base64?") && name.bytes().all(|b| b.is_ascii_graphic())
}

/// Whether a proxy is configured for plain HTTP (reqwest would use it).
fn proxied() -> bool {
    ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|v| !v.is_empty()))
}

/// The method of a request, for an error's message.
fn method_of(request: &ServerRequest) -> String {
    serde_json::to_value(request)
        .ok()
        .and_then(|v| v.get("method").and_then(|m| m.as_str()).map(str::to_string))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_answer_to_the_call_is_its_answer() {
        let id = RequestId::Number(5);
        let read = |json: serde_json::Value| {
            let bytes = serde_json::to_vec(&json).unwrap();
            let message: ServerJsonRpcMessage = serde_json::from_value(json).unwrap();
            let read = answer_of(message, &id).map(|r| r.is_ok());
            // A tool's result read as that one type reads the same.
            if let Some((answered, _)) = tool_answer(&bytes) {
                assert_eq!((answered == id).then_some(true), read);
            }
            read
        };
        let result = serde_json::json!({"content": []});
        assert_eq!(
            read(serde_json::json!({"jsonrpc": "2.0", "id": 5, "result": result})),
            Some(true)
        );
        assert_eq!(
            read(serde_json::json!({"jsonrpc": "2.0", "id": 6, "result": result})),
            None
        );
        let error = serde_json::json!({"code": -32602, "message": "no"});
        assert_eq!(
            read(serde_json::json!({"jsonrpc": "2.0", "id": 5, "error": error})),
            Some(false)
        );
        assert_eq!(
            read(serde_json::json!({"jsonrpc": "2.0", "id": null, "error": error})),
            Some(false)
        );
        assert_eq!(
            read(serde_json::json!({"jsonrpc": "2.0", "id": 4, "error": error})),
            None
        );
        let note =
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
        assert_eq!(read(note), None);
    }

    #[test]
    fn a_refusal_or_a_redirect_says_nothing_ran() {
        for status in [301, 302, 307, 308, 401, 403, 404, 405, 406, 415] {
            assert!(!taken(StatusCode::from_u16(status).unwrap()), "{status}");
        }
        for status in [200, 202, 400, 500, 502] {
            assert!(taken(StatusCode::from_u16(status).unwrap()), "{status}");
        }
    }

    #[test]
    fn a_name_that_needs_base64_goes_to_rmcp() {
        assert!(plain_name("get_invoice"));
        for name in [
            "",
            " lead",
            "trail ",
            "tab\tin",
            "caf\u{e9}",
            "=?base64?eA==?=",
        ] {
            assert!(!plain_name(name), "{name:?}");
        }
    }
}
