//! The fast lane: a stateless (2026-07-28) `tools/call` answered as one
//! JSON body without rmcp's per-request server (a service loop with its
//! channels and tasks, built and torn down for each POST: most of what a
//! forwarded call cost over HTTP).
//!
//! Only a request that rmcp would take and answer the same way enters it:
//! every header rmcp checks is there once and agrees with the body, and
//! nothing in it needs more than one answer. Anything else (a session,
//! a progress token, a Base64 name, a weighted `Accept`, a body of unknown
//! length) goes to rmcp as before, so the lane changes no answer, only
//! the time it takes. `tests/serve_http/http.rs` holds the two paths to
//! byte-equal answers.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Frame;
use hyper::header::{ACCEPT, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, HeaderMap, HeaderValue};
use hyper::{Method, Request, StatusCode};
use rmcp::model::{
    CallToolResponse, ClientCapabilities, ClientRequest, ErrorCode, GetMeta, ProgressNotification,
    ProgressToken, ProtocolVersion, RequestId, ServerJsonRpcMessage, ServerNotification,
    ServerResult,
};
use rmcp::transport::StreamableHttpServerConfig;
use rmcp::{ErrorData as McpError, ServerHandler};
use tokio::sync::mpsc;

use crate::serve::front::reply::{Answer, body};
use crate::serve::gateway::Gateway;
use crate::serve::gateway::era::HostEra;
use crate::serve::upstream::progress::ProgressTo;

/// Offers `req` (its body read: `bytes`) to the lane of `gateway`: its
/// answer, or the request back for rmcp.
///
/// The keep-alive is rmcp's own (`config`, the one its service was
/// given): an event stream here is kept alive as rmcp keeps its own.
pub(in crate::serve) async fn offer(
    req: Request<Full<Bytes>>,
    bytes: &[u8],
    gateway: &Gateway,
    config: &StreamableHttpServerConfig,
) -> Result<Answer, Request<Full<Bytes>>> {
    let Some(head) = Head::of(&req, gateway, config) else {
        return Err(req);
    };
    match call_of(bytes, &head) {
        Some(mut call) => {
            call.forward = crate::serve::upstream::direct::forwarded(req.headers());
            Ok(answer(call, gateway, config.sse_keep_alive).await)
        }
        None => Err(req),
    }
}

/// What the head of a lane request says: the protocol version and the
/// tool's name, each in its one header.
struct Head {
    version: String,
    name: String,
}

impl Head {
    /// The head of a stateless `tools/call` rmcp would take, or `None`.
    fn of<B>(
        req: &Request<B>,
        gateway: &Gateway,
        config: &StreamableHttpServerConfig,
    ) -> Option<Head> {
        let headers = req.headers();
        if req.method() != Method::POST || headers.contains_key("mcp-session-id") {
            return None;
        }
        let version = only(headers, "mcp-protocol-version")?;
        let supported = ServerHandler::supported_protocol_versions(gateway);
        let known = supported.iter().any(|v| v.as_str() == version)
            && ProtocolVersion::KNOWN_VERSIONS
                .iter()
                .any(|v| v.as_str() == version);
        if !known || version < ProtocolVersion::V_2026_07_28.as_str() {
            return None;
        }
        let name = only(headers, "mcp-name")?;
        let plain_name = !name.starts_with("=?base64?");
        let length = only(headers, CONTENT_LENGTH.as_str())?
            .parse::<u64>()
            .ok()?;
        let lane = only(headers, "mcp-method")? == "tools/call"
            && plain_name
            && length <= u64::try_from(config.max_request_body_bytes).unwrap_or(u64::MAX)
            && accepts_both(headers)
            && only(headers, CONTENT_TYPE.as_str()).is_some_and(is_json);
        lane.then(|| Head {
            version: version.to_string(),
            name: name.to_string(),
        })
    }
}

/// The value of a header sent exactly once, as text.
fn only<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    value.to_str().ok()
}

/// `Accept` lists both JSON and event streams, with no parameters (no
/// weights: rmcp drops a media range weighted zero).
fn accepts_both(headers: &HeaderMap) -> bool {
    let (mut json, mut sse) = (false, false);
    for value in headers.get_all(ACCEPT) {
        let Ok(value) = value.to_str() else {
            return false;
        };
        if value.contains([';', '"']) {
            return false;
        }
        for range in value.split(',').map(str::trim) {
            json |= range.eq_ignore_ascii_case("application/json");
            sse |= range.eq_ignore_ascii_case("text/event-stream");
        }
    }
    json && sse
}

/// `application/json`, perhaps with parameters (`; charset=utf-8`).
fn is_json(value: &str) -> bool {
    let essence = value.split_once(';').map_or(value, |(essence, _)| essence);
    essence.trim().eq_ignore_ascii_case("application/json")
}

/// A lane call: the request and what the client declared.
struct Call {
    id: RequestId,
    request: rmcp::model::CallToolRequestParams,
    progress: Option<ProgressToken>,
    tasks: bool,
    /// The host's headers passed on to an HTTP upstream.
    forward: crate::serve::upstream::Forward,
    version: ProtocolVersion,
}

/// The call in `bytes` when the body agrees with `head` and needs one
/// answer; `None` sends it to rmcp.
fn call_of(bytes: &[u8], head: &Head) -> Option<Call> {
    // Read as that one request, as rmcp reads it (`stdio_lane.rs`).
    let (id, request) = crate::serve::front::stdio_lane::call_of(bytes)?;
    // rmcp keeps `params._meta` beside the request, as its handler's context.
    let meta = request.get_meta().clone();
    let ClientRequest::CallToolRequest(call) = request else {
        return None;
    };
    let version = meta.protocol_version()?;
    let whole = meta
        .missing_required_keys(&ProtocolVersion::V_2026_07_28)
        .is_empty();
    let lane = whole && version.as_str() == head.version && call.params.name == head.name;
    if !lane {
        return None;
    }
    let tasks = meta
        .client_capabilities()
        .is_some_and(|c| c.supports_tasks());
    let mut params = call.params;
    // What the host declared travels with its call (see `told_by`).
    params.meta = Some(meta.clone());
    Some(Call {
        id,
        request: params,
        progress: meta.get_progress_token(),
        tasks,
        forward: Vec::new(),
        version,
    })
}

/// The gateway's answer to `call`, as rmcp would send it: the result
/// alone as one JSON body; an event stream when progress comes first.
async fn answer(call: Call, gateway: &Gateway, keep_alive: Option<Duration>) -> Answer {
    let Call {
        id,
        request,
        progress,
        tasks,
        forward,
        version,
    } = call;
    let (to, mut progressed) = mpsc::channel(PROGRESS_WAITING);
    let host = progress.map(|token| (ProgressTo::Stream(to), token));
    let session = gateway.session();
    // Owned, so that an event stream can carry it on after this returns.
    let mut result = Box::pin(async move {
        // An upstream's own requests meanwhile are refused, saying why.
        let _in_call = stateless(&session, &request.name);
        let response = session
            .call_tool_as(request, host, forward, false, std::future::pending())
            .await;
        let era = HostEra::of(Some(&version), &session.inner.info);
        message_of(response.map(|r| era.convert(r)), id, tasks)
    });
    // A progress notification is sent before the answer it precedes, so
    // when both are there the progress is first; one sent in the very poll
    // that finished the call is in the channel already, and goes first too.
    let (first, mut done) = tokio::select! {
        biased;
        Some(p) = progressed.recv() => (p, None),
        message = &mut result => match progressed.try_recv() {
            Ok(p) => (p, Some(message)),
            Err(_) => return json_answer(message),
        },
    };
    let (events, stream) = mpsc::channel::<Bytes>(PROGRESS_WAITING);
    tokio::spawn(async move {
        let mut first = Some(first);
        loop {
            let next = match (first.take(), &done) {
                (Some(p), _) => Some(p),
                // The call has ended: what it sent before, then its answer.
                (None, Some(message)) => match progressed.try_recv() {
                    Ok(p) => Some(p),
                    Err(_) => {
                        let _ = events.send(event(message)).await;
                        return;
                    }
                },
                (None, None) => tokio::select! {
                    biased;
                    p = progressed.recv() => p,
                    message = &mut result => {
                        done = Some(message);
                        None
                    }
                    // The client is gone: dropping the call cancels it upstream.
                    () = events.closed() => return,
                    // rmcp's keep-alive, an empty comment after its time of silence.
                    () = silence(keep_alive) => {
                        if events.send(Bytes::from_static(b":\n\n")).await.is_err() {
                            return;
                        }
                        None
                    }
                },
            };
            if let Some(p) = next {
                let note = ServerJsonRpcMessage::notification(ServerNotification::from(
                    ProgressNotification::new(p),
                ));
                if events.send(event(&note)).await.is_err() {
                    return;
                }
            }
        }
    });
    event_stream(stream)
}

/// The call of `tool` in flight to its upstream, from a host that cannot
/// be sent requests (a 2026-07-28 upstream asks it through input-required
/// results, which reach it).
fn stateless(session: &Gateway, tool: &str) -> Option<crate::serve::upstream::asking::InCall> {
    let asking = session.inner.surfaces.upstreams().asking();
    (session.upstream_of(tool)).map(|alias| asking.enter(&alias, None))
}

/// Silence on an event stream before a keep-alive comment (rmcp's
/// setting; none when it has none).
async fn silence(keep_alive: Option<Duration>) {
    match keep_alive {
        Some(after) => tokio::time::sleep(after).await,
        None => std::future::pending().await,
    }
}

/// Progress notifications of one call that may wait for the client.
const PROGRESS_WAITING: usize = 16;

/// The host's message for a call's outcome, with rmcp's handler guard:
/// no task to a client that did not declare it can read one.
fn message_of(
    response: Result<CallToolResponse, McpError>,
    id: RequestId,
    tasks: bool,
) -> ServerJsonRpcMessage {
    let result = response.and_then(|response| match response {
        CallToolResponse::Task(_) if !tasks => Err(McpError::missing_required_client_capability(
            ClientCapabilities::builder().enable_tasks().build(),
        )),
        response => Ok(ServerResult::from(response)),
    });
    match result {
        Ok(result) => ServerJsonRpcMessage::response(result, id),
        Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
    }
}

/// One server-sent event of `message` (rmcp's framing: `data:` and the
/// JSON on one line, no event id without an event store).
fn event(message: &ServerJsonRpcMessage) -> Bytes {
    let json = serde_json::to_string(message).unwrap_or_default();
    Bytes::from(format!("data: {json}\n\n"))
}

/// An event stream answer of the events `stream` gives, as rmcp heads one.
fn event_stream(stream: mpsc::Receiver<Bytes>) -> Answer {
    let mut answer = hyper::Response::new(BoxBody::new(Events(stream)));
    let headers = answer.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    answer
}

/// A body of the events a channel gives, ended when its sender is.
struct Events(mpsc::Receiver<Bytes>);

impl hyper::body::Body for Events {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0
            .poll_recv(cx)
            .map(|event| event.map(|e| Ok(Frame::data(e))))
    }
}

/// The HTTP status rmcp gives a stateless answer (its body well formed).
fn status_of(message: &ServerJsonRpcMessage) -> StatusCode {
    let ServerJsonRpcMessage::Error(error) = message else {
        return StatusCode::OK;
    };
    match error.error.code {
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
        | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        | ErrorCode::HEADER_MISMATCH => StatusCode::BAD_REQUEST,
        ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}

/// `message` as one JSON body, with the status rmcp gives it.
fn json_answer(message: ServerJsonRpcMessage) -> Answer {
    let status = status_of(&message);
    let json = match serde_json::to_vec(&message) {
        Ok(json) => json,
        Err(e) => {
            return body(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("serialize json response: {e}"),
                "text/plain; charset=utf-8",
            );
        }
    };
    let mut answer = hyper::Response::new(
        Full::new(Bytes::from(json))
            .map_err(|never| match never {})
            .boxed(),
    );
    *answer.status_mut() = status;
    answer
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    answer
}
