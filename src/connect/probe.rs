//! [`Handshake::Auto`] on stdio, done here rather than by rmcp.
//!
//! rmcp's auto mode waits a fixed 10 s for `server/discover`, then sends
//! `initialize` on the same stream and fails when the late discover answer
//! arrives first (a Python server that takes 10 s to import). Here the probe
//! waits as long as the caller allows, both requests carry string ids that
//! rmcp never uses (so a late answer is dropped as unknown once the client
//! runs), and the era is decided by what actually answered.
//!
//! [`Handshake::Auto`]: super::Handshake::Auto

use std::time::Duration;

use rmcp::model::{
    ClientConfig, ClientJsonRpcMessage, ClientNotification, ClientRequest, ClientResult,
    DiscoverRequest, DiscoverRequestParams, DiscoverResult, InitializeRequest, InitializeResult,
    InitializedNotification, ProtocolVersion, RequestId, RequestMetaObject, ServerJsonRpcMessage,
    ServerPeerInfo, ServerRequest, ServerResult,
};
use rmcp::service::{ClientInitializeError, RoleClient, RunningService, serve_directly};
use rmcp::transport::Transport;
use tokio::time::Instant;

use super::child::ChildTransport;
use super::connect_error;
use crate::error::Result;

const DISCOVER_ID: &str = "mcp-preamble/discover";
const INITIALIZE_ID: &str = "mcp-preamble/initialize";

/// What one of the two handshake requests got back.
enum Answer {
    Discover(Box<DiscoverResult>, ProtocolVersion),
    Initialize(Box<InitializeResult>),
    /// An error, or a result this client cannot use; the text is for the report.
    Failed(String),
}

/// Where the handshake stands.
#[derive(Default)]
struct Probe {
    discover: Option<Answer>,
    initialize: Option<Answer>,
    initialize_sent: bool,
    /// After a usable discover answer while `initialize` is out: how long
    /// `initialize` may still take before the connection goes modern anyway.
    grace: Option<Instant>,
}

/// The next step.
enum Step {
    Modern,
    Legacy,
    SendInitialize,
    /// Read the next message; at `until`, take [`Probe::on_deadline`].
    Wait(Option<Instant>),
    Fail(String),
}

impl Probe {
    fn step(&self, probe_deadline: Instant) -> Step {
        use Answer::*;
        match (&self.discover, &self.initialize) {
            (_, Some(Initialize(_))) => Step::Legacy,
            (Some(Discover(..)), Some(Failed(_))) => Step::Modern,
            (Some(Failed(d)), Some(Failed(i))) => {
                Step::Fail(format!("server/discover: {d}; initialize: {i}"))
            }
            // initialize failed: only discover can still succeed.
            (None, Some(_)) => Step::Wait(None),
            (Some(Discover(..)), None) if !self.initialize_sent => Step::Modern,
            (Some(Discover(..)), None) => Step::Wait(self.grace),
            (Some(_), None) if !self.initialize_sent => Step::SendInitialize,
            (None, None) if !self.initialize_sent => Step::Wait(Some(probe_deadline)),
            _ => Step::Wait(None),
        }
    }

    /// Records a message from the server; returns a ping to answer, if any.
    fn read(&mut self, message: ServerJsonRpcMessage, probe: Duration) -> Option<RequestId> {
        match message {
            ServerJsonRpcMessage::Response(r) if is(&r.id, DISCOVER_ID) => {
                let answer = discover_answer(r.result);
                if matches!(answer, Answer::Discover(..)) && self.initialize_sent {
                    self.grace = Some(Instant::now() + probe);
                }
                self.discover = Some(answer);
            }
            ServerJsonRpcMessage::Response(r) if is(&r.id, INITIALIZE_ID) => {
                self.initialize = Some(match r.result {
                    ServerResult::InitializeResult(init) => Answer::Initialize(Box::new(init)),
                    _ => Answer::Failed("the result is not an initialize result".into()),
                });
            }
            ServerJsonRpcMessage::Error(e) => {
                let text = format!("{} ({})", e.error.message, e.error.code.0);
                match e.id {
                    Some(id) if is(&id, DISCOVER_ID) => self.discover = Some(Answer::Failed(text)),
                    Some(id) if is(&id, INITIALIZE_ID) => {
                        self.initialize = Some(Answer::Failed(text))
                    }
                    // Without an id it can only be placed while one request is out.
                    None if !self.initialize_sent && self.discover.is_none() => {
                        self.discover = Some(Answer::Failed(text))
                    }
                    _ => {}
                }
            }
            // 2026-07-28 has no ping; one before `initialize` is not ours to answer.
            ServerJsonRpcMessage::Request(r)
                if self.initialize_sent && matches!(r.request, ServerRequest::PingRequest(_)) =>
            {
                return Some(r.id);
            }
            _ => {}
        }
        None
    }
}

fn is(id: &RequestId, ours: &str) -> bool {
    matches!(id, RequestId::String(s) if &**s == ours)
}

fn discover_answer(result: ServerResult) -> Answer {
    let ServerResult::DiscoverResult(found) = result else {
        return Answer::Failed("the result is not a server/discover result".into());
    };
    let ours = [ProtocolVersion::V_2026_07_28];
    match rmcp::service::select_protocol_version(&ours, &found.supported_versions) {
        Some(version) => Answer::Discover(Box::new(found), version),
        None => Answer::Failed(format!(
            "no supported version in common ({:?})",
            found.supported_versions
        )),
    }
}

/// Runs the auto handshake on a freshly spawned server and hands the
/// connection to rmcp.
pub(super) async fn auto<H: rmcp::ClientHandler>(
    handler: H,
    mut transport: ChildTransport,
    probe: Duration,
) -> Result<RunningService<RoleClient, H>> {
    let info = handler.get_info();
    send(&mut transport, discover_request(&info), "server/discover").await?;
    let probe_deadline = Instant::now() + probe;
    let mut state = Probe::default();
    loop {
        let until = match state.step(probe_deadline) {
            Step::Modern => {
                let Some(Answer::Discover(found, version)) = state.discover else {
                    unreachable!("modern needs a usable discover answer")
                };
                let peer = ServerPeerInfo::from_discover_result(version, *found);
                return Ok(serve_directly(handler, transport, Some(peer)));
            }
            Step::Legacy => {
                let Some(Answer::Initialize(init)) = state.initialize else {
                    unreachable!("legacy needs an initialize answer")
                };
                let initialized = ClientJsonRpcMessage::notification(
                    ClientNotification::InitializedNotification(InitializedNotification::default()),
                );
                send(&mut transport, initialized, "notifications/initialized").await?;
                return Ok(serve_directly(handler, transport, Some((*init).into())));
            }
            Step::SendInitialize => {
                send(&mut transport, initialize_request(&info), "initialize").await?;
                state.initialize_sent = true;
                continue;
            }
            Step::Fail(why) => return Err(connect_error(format!("handshake failed: {why}"))),
            Step::Wait(until) => until,
        };
        let received = match until {
            Some(at) => tokio::time::timeout_at(at, transport.receive()).await.ok(),
            None => Some(transport.receive().await),
        };
        match received {
            // The probe time is up: ask `initialize` too. Past the grace: go modern.
            None if !state.initialize_sent => {
                send(&mut transport, initialize_request(&info), "initialize").await?;
                state.initialize_sent = true;
            }
            None => state.initialize = Some(Answer::Failed("no answer".into())),
            Some(None) => {
                let waiting = if state.initialize_sent {
                    "initialize"
                } else {
                    "server/discover"
                };
                return Err(connect_error(format!(
                    "handshake failed: the server closed the connection before answering {waiting}"
                )));
            }
            Some(Some(message)) => {
                if let Some(ping) = state.read(message, probe) {
                    let pong = ClientJsonRpcMessage::response(ClientResult::empty(()), ping);
                    send(&mut transport, pong, "ping response").await?;
                }
            }
        }
    }
}

/// [`Handshake::Auto`] where a server that takes a request is up (Streamable
/// HTTP): `server/discover`, then `initialize` on the same transport when
/// the answer is not a usable discover result (an error other than a
/// 2026-07-28 rejection, or a result of another shape, such as `{}`).
///
/// [`Handshake::Auto`]: super::Handshake::Auto
#[cfg(feature = "http")]
pub(super) async fn discover_first<H, T>(
    handler: H,
    mut transport: T,
) -> Result<RunningService<RoleClient, H>>
where
    H: rmcp::ClientHandler,
    T: Transport<RoleClient> + 'static,
{
    let info = handler.get_info();
    send(&mut transport, discover_request(&info), "server/discover").await?;
    loop {
        let Some(message) = transport.receive().await else {
            return Err(connect_error(
                "handshake failed: the server closed the connection before answering server/discover",
            ));
        };
        match message {
            ServerJsonRpcMessage::Response(r) if is(&r.id, DISCOVER_ID) => {
                if let Answer::Discover(found, version) = discover_answer(r.result) {
                    let peer = ServerPeerInfo::from_discover_result(version, *found);
                    return Ok(serve_directly(handler, transport, Some(peer)));
                }
                break;
            }
            ServerJsonRpcMessage::Error(e)
                if e.id.as_ref().is_none_or(|id| is(id, DISCOVER_ID)) =>
            {
                // A 2026-07-28 server refusing this client is no 2025 server.
                let code = e.error.code;
                if code == rmcp::model::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
                    || code == rmcp::model::ErrorCode::HEADER_MISMATCH
                {
                    let message = e.error.message;
                    return Err(connect_error(format!(
                        "handshake failed: server/discover: {message} ({})",
                        code.0
                    )));
                }
                break;
            }
            _ => {}
        }
    }
    legacy(handler, transport, ProtocolVersion::LATEST_WITH_INITIALIZE).await
}

/// The 2025 handshake alone: `initialize` naming `version` (never rmcp's
/// default, 2026-07-28, which has no `initialize`), no `server/discover`;
/// then the connection is handed to rmcp.
pub(super) async fn legacy<H, T>(
    handler: H,
    mut transport: T,
    version: ProtocolVersion,
) -> Result<RunningService<RoleClient, H>>
where
    H: rmcp::ClientHandler,
    T: Transport<RoleClient> + 'static,
{
    let mut info = handler.get_info();
    info.protocol_version = version;
    send(&mut transport, initialize_request(&info), "initialize").await?;
    loop {
        // Errors worded as rmcp's own handshake words them.
        let Some(message) = transport.receive().await else {
            let closed = ClientInitializeError::ConnectionClosed("initialize response".into());
            return Err(connect_error(format!("handshake failed: {closed}")));
        };
        match message {
            ServerJsonRpcMessage::Response(r) if is(&r.id, INITIALIZE_ID) => {
                let ServerResult::InitializeResult(init) = r.result else {
                    return Err(connect_error(
                        "handshake failed: initialize: the result is not an initialize result",
                    ));
                };
                let initialized = ClientJsonRpcMessage::notification(
                    ClientNotification::InitializedNotification(InitializedNotification::default()),
                );
                send(&mut transport, initialized, "notifications/initialized").await?;
                return Ok(serve_directly(handler, transport, Some(init.into())));
            }
            ServerJsonRpcMessage::Error(e)
                if e.id.as_ref().is_none_or(|id| is(id, INITIALIZE_ID)) =>
            {
                let refused = ClientInitializeError::JsonRpcError(e.error);
                return Err(connect_error(format!("handshake failed: {refused}")));
            }
            ServerJsonRpcMessage::Request(r)
                if matches!(r.request, ServerRequest::PingRequest(_)) =>
            {
                let pong = ClientJsonRpcMessage::response(ClientResult::empty(()), r.id);
                send(&mut transport, pong, "ping response").await?;
            }
            // A log line or progress before the answer: not the handshake's.
            _ => {}
        }
    }
}

fn discover_request(info: &ClientConfig) -> ClientJsonRpcMessage {
    let meta = RequestMetaObject::with_client_context(
        ProtocolVersion::V_2026_07_28,
        info.client_info.clone(),
        info.capabilities.clone(),
    );
    let mut discover = DiscoverRequest::new(DiscoverRequestParams::default());
    discover.extensions.insert(meta);
    ClientJsonRpcMessage::request(
        ClientRequest::DiscoverRequest(discover),
        RequestId::String(DISCOVER_ID.into()),
    )
}

fn initialize_request(info: &ClientConfig) -> ClientJsonRpcMessage {
    let mut params = info.clone();
    if !params.protocol_version.has_initialize() {
        params.protocol_version = ProtocolVersion::LATEST_WITH_INITIALIZE;
    }
    ClientJsonRpcMessage::request(
        ClientRequest::InitializeRequest(InitializeRequest::new(params)),
        RequestId::String(INITIALIZE_ID.into()),
    )
}

async fn send<T: Transport<RoleClient>>(
    transport: &mut T,
    message: ClientJsonRpcMessage,
    what: &str,
) -> Result<()> {
    transport.send(message).await.map_err(|e| {
        connect_error(format!("handshake failed: cannot send {what}: {e}")).with_source(e)
    })
}
