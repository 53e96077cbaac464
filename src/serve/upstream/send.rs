//! The one way out: every request the gateway sends an upstream leaves
//! through [`Upstreams::send`] (and a subscription through
//! [`Upstreams::listen`]). It owns the wait for an upstream still
//! starting, the deadline, the host's cancellation (the upstream is told
//! with `notifications/cancelled`), progress for the host, the choice of
//! the direct HTTP post or rmcp's client, and the wording of every error,
//! so a `tools/call`, a `prompts/get` and a `skills/get` to a hung
//! upstream end alike.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CancelledNotificationParam, ClientCapabilities, ClientConfig, ClientRequest,
    ProgressNotificationParam, RequestId, RequestMetaObject, ServerCapabilities, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient};
// rmcp marks logging deprecated (SEP-2577); hosts and servers still use it.
#[allow(deprecated)]
use rmcp::model::LoggingLevel;

use crate::connect::LiveServer;
use crate::hub::{Hub, ServerState};
use crate::serve::upstream::Forward;
use crate::serve::upstream::asking::{Asking, UpstreamHandler};
use crate::serve::upstream::fault::Fault;
pub(crate) use crate::serve::upstream::fault::{Subject, unexpected_result};
use crate::serve::upstream::piped;
use crate::serve::upstream::progress::{HostProgress, Relay, Relays, relay_to};
use crate::serve::upstream::sealed::Seal;
use crate::serve::upstream::start::Starting;
use crate::serve::upstream::told::{Askable, Told};
use crate::support::lock;

/// How long a request other than a `tools/call` may take when no call
/// timeout is set.
pub(crate) const ASK_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a forwarded `tools/call` may take unless the gateway was told
/// otherwise (`serve --call-timeout`): no call waits on an upstream
/// forever (a hung one, or one whose event stream closed mid-call and
/// never resumes).
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(300);

/// One request for one upstream.
pub(crate) struct Outbound<'a> {
    pub(crate) alias: &'a str,
    pub(crate) subject: Subject<'a>,
    pub(crate) request: ClientRequest,
    /// Where the upstream's progress for it goes (a host's token).
    pub(crate) progress: HostProgress,
    /// Whether the upstream's own errors come back named and as one line
    /// (`upstream "A": …`, its data dropped) rather than as sent.
    pub(crate) name_errors: bool,
    /// Whether it may be posted directly (a `tools/call` whose arguments
    /// stay in its body).
    #[cfg_attr(not(feature = "serve-http"), allow(dead_code))]
    pub(crate) direct: bool,
    /// Headers of the host's request carried on to an HTTP upstream
    /// ([`Forward`](crate::serve::upstream::Forward)).
    #[cfg_attr(not(feature = "serve-http"), allow(dead_code))]
    pub(crate) forward: Forward,
    /// What the calling host declared, told a 2026-07-28 upstream in this
    /// request's `_meta` instead of the connection's own capabilities.
    pub(crate) told: Option<ClientCapabilities>,
    /// The log level the host asked for (its `_meta`'s at 2026-07-28, its
    /// `logging/setLevel` before), told a 2026-07-28 upstream in this
    /// request's `_meta`: without one it sends no log messages for it.
    #[allow(deprecated)]
    pub(crate) log_level: Option<LoggingLevel>,
    /// Whether the host can be sent the upstream's requests (a 2025-era
    /// host in a session): a 2025-era upstream's call then goes over a
    /// connection told what it declared ([`told`](super::told)).
    pub(crate) asks: bool,
}

impl<'a> Outbound<'a> {
    /// A request of `method` to `alias`, no progress, through rmcp.
    pub(crate) fn method(alias: &'a str, method: &'a str, request: ClientRequest) -> Self {
        Outbound {
            alias,
            subject: Subject::Method(method),
            request,
            progress: None,
            name_errors: false,
            direct: false,
            forward: Vec::new(),
            told: None,
            log_level: None,
            asks: false,
        }
    }

    /// The same, telling a 2026-07-28 upstream what the host of `meta`
    /// declared ([`told_by`]; `asked`: the gateway asks a 2025 host for
    /// the input) and the log level it asked for.
    pub(crate) fn telling(self, meta: Option<&RequestMetaObject>, asked: bool) -> Self {
        Outbound {
            told: told_by(meta, asked),
            log_level: meta.and_then(RequestMetaObject::log_level),
            asks: asked,
            ..self
        }
    }

    /// The same, the upstream's own errors named ([`Outbound::name_errors`]).
    pub(crate) fn naming_errors(self) -> Self {
        Outbound {
            name_errors: true,
            ..self
        }
    }
}

/// The host's request `_meta` as the gateway reads it: what it declared
/// (per request at 2026-07-28, at `initialize` before) and its version.
pub(crate) fn host_meta(
    meta: &RequestMetaObject,
    declared: Option<ClientCapabilities>,
    version: Option<rmcp::model::ProtocolVersion>,
) -> RequestMetaObject {
    let mut host = meta.clone();
    if let Some(declared) = declared {
        host.set_client_capabilities(declared);
    }
    if let Some(version) = version {
        host.set_protocol_version(version);
    }
    host
}

/// What a 2026-07-28 upstream is told of the host whose request `meta`
/// is ([`host_meta`]): the tasks extension when it declared it, and
/// sampling, elicitation and roots when it declared them and can be asked
/// for input: a 2026-07-28 host gets the input-required result, a 2025
/// host is `asked` by the gateway (`asking::fulfil`, a session's
/// `tools/call`). `None` without a host: the connection's own capabilities.
pub(crate) fn told_by(meta: Option<&RequestMetaObject>, asked: bool) -> Option<ClientCapabilities> {
    let meta = meta?;
    let declared = meta.client_capabilities()?;
    let mut told = match declared.supports_tasks() {
        true => ClientCapabilities::builder().enable_tasks().build(),
        false => ClientCapabilities::default(),
    };
    let modern = (meta.protocol_version())
        .is_some_and(|v| v.as_str() >= rmcp::model::ProtocolVersion::V_2026_07_28.as_str());
    if modern || asked {
        #[allow(deprecated)]
        {
            told.sampling = declared.sampling;
            told.roots = declared.roots;
        }
        told.elicitation = declared.elicitation;
    }
    Some(told)
}

/// The live upstreams of a gateway, by alias, and what a request to one
/// needs: their states (the hub's), the ones still starting, the progress
/// relays, the direct paths, the call timeout.
pub(crate) struct Upstreams {
    hub: Hub,
    live: Mutex<BTreeMap<String, LiveServer>>,
    starting: Starting,
    relays: Arc<Relays>,
    /// The host sessions the upstreams' own requests go to.
    asking: Arc<Asking>,
    /// 2025-era upstreams' connections told what a host declared.
    told: Told,
    call_timeout: Option<Duration>,
    /// The seal on the task ids and request states hosts get.
    seal: Seal,
    /// Set for every request (`None`: [`ASK_TIMEOUT`] for those but calls).
    every_timeout: Option<Duration>,
    /// By alias: the upstreams whose calls are posted without rmcp.
    #[cfg(feature = "serve-http")]
    direct: Mutex<BTreeMap<String, Arc<crate::serve::upstream::direct::Direct>>>,
}

impl Upstreams {
    pub(crate) fn new(
        hub: Hub,
        call_timeout: Option<Duration>,
        every_timeout: Option<Duration>,
    ) -> Upstreams {
        Upstreams {
            hub,
            live: Mutex::default(),
            starting: Starting::default(),
            relays: Arc::default(),
            asking: Arc::default(),
            told: Told::default(),
            call_timeout,
            seal: Seal::default(),
            every_timeout,
            #[cfg(feature = "serve-http")]
            direct: Mutex::default(),
        }
    }

    /// Holds `live` as the upstream of its alias (replacing one).
    pub(crate) fn join(&self, live: LiveServer) {
        let alias = live.alias().to_string();
        // serve-http hook: its calls posted directly when it takes them.
        #[cfg(feature = "serve-http")]
        {
            let mut direct = lock(&self.direct);
            match crate::serve::upstream::direct::Direct::of(&live) {
                Some(d) => direct.insert(alias.clone(), Arc::new(d)),
                None => direct.remove(&alias),
            };
        }
        self.told.replaced(&alias);
        lock(&self.live).insert(alias, live);
    }

    /// The upstream of `alias`, taken out (to be closed).
    pub(crate) fn take(&self, alias: &str) -> Option<LiveServer> {
        #[cfg(feature = "serve-http")]
        lock(&self.direct).remove(alias);
        self.told.close(alias);
        lock(&self.live).remove(alias)
    }

    /// Every upstream, taken out (to be closed).
    pub(crate) fn take_all(&self) -> BTreeMap<String, LiveServer> {
        self.told.close_all();
        std::mem::take(&mut *lock(&self.live))
    }

    /// How the upstreams were started (another told set is opened so).
    pub(crate) fn told(&self) -> &Told {
        &self.told
    }

    pub(crate) fn starting(&self) -> &Starting {
        &self.starting
    }

    pub(crate) fn relays(&self) -> &Arc<Relays> {
        &self.relays
    }

    pub(crate) fn asking(&self) -> &Arc<Asking> {
        &self.asking
    }

    /// How the gateway connects `alias`: a handler that relays its own
    /// requests to hosts, and tells it the client `config`.
    pub(crate) fn handler_for(
        &self,
        alias: &str,
        config: ClientConfig,
    ) -> crate::connect::follow::MakeHandler<UpstreamHandler> {
        let handler = UpstreamHandler {
            alias: alias.to_string(),
            config,
            asking: self.asking.clone(),
        };
        Arc::new(move || handler.clone())
    }

    pub(crate) fn seal(&self) -> &Seal {
        &self.seal
    }

    /// Seals with `seal` (a key shared by replicas).
    pub(crate) fn seal_with(&mut self, seal: Seal) {
        self.seal = seal;
    }

    pub(crate) fn call_timeout(&self) -> Option<Duration> {
        self.call_timeout
    }

    /// Whether `alias` is an upstream held now.
    pub(crate) fn holds(&self, alias: &str) -> bool {
        lock(&self.live).contains_key(alias)
    }

    pub(crate) fn process_id(&self, alias: &str) -> Option<u32> {
        lock(&self.live).get(alias)?.process_id()
    }

    /// The capabilities of every upstream held.
    pub(crate) fn capabilities(&self) -> Vec<ServerCapabilities> {
        lock(&self.live)
            .values()
            .map(|l| capabilities(&l.peer()))
            .collect()
    }

    /// The capabilities of `alias` when it is connected.
    pub(crate) fn capabilities_of(&self, alias: &str) -> Option<ServerCapabilities> {
        self.connected_peer(alias).map(|p| capabilities(&p))
    }

    /// The connected upstreams whose capabilities `wanted` takes, by alias.
    pub(crate) fn with(&self, wanted: fn(&ServerCapabilities) -> bool) -> Vec<String> {
        let live = lock(&self.live);
        (live.iter())
            .filter(|(a, _)| self.hub.state(a) == ServerState::Connected)
            .filter(|(_, l)| wanted(&capabilities(&l.peer())))
            .map(|(a, _)| a.clone())
            .collect()
    }

    /// Whether `alias` speaks 2026-07-28 or later (subscriptions are
    /// `subscriptions/listen` there).
    pub(crate) fn is_modern(&self, alias: &str) -> bool {
        self.connected_peer(alias).is_some_and(|p| {
            p.peer_info()
                .is_some_and(|i| i.protocol_version.as_str() >= "2026-07-28")
        })
    }

    /// The calls each direct path answered, by alias.
    #[cfg(feature = "serve-http")]
    pub(crate) fn direct_answered(&self) -> Vec<(String, u64)> {
        let direct = lock(&self.direct);
        direct
            .iter()
            .map(|(a, d)| (a.clone(), d.answered()))
            .collect()
    }

    fn connected_peer(&self, alias: &str) -> Option<Peer<RoleClient>> {
        let peer = lock(&self.live).get(alias).map(|l| l.peer())?;
        (self.hub.state(alias) == ServerState::Connected).then_some(peer)
    }

    /// How long `subject` may take.
    pub(super) fn deadline(&self, subject: Subject<'_>) -> Option<Duration> {
        match subject {
            Subject::Tool(_) => self.call_timeout,
            Subject::Method(_) => Some(self.every_timeout.unwrap_or(ASK_TIMEOUT)),
        }
    }

    /// The connection to `out.alias` when it can take a request (one
    /// still starting is waited for, at most the call timeout).
    pub(super) async fn ready(&self, fault: &Fault<'_>) -> Result<Peer<RoleClient>, McpError> {
        let alias = fault.alias;
        let peer_of = || lock(&self.live).get(alias).map(|l| l.peer());
        let mut peer = peer_of();
        if peer.is_none() && self.starting.is_starting(alias) {
            self.starting.wait(alias, self.call_timeout).await;
            peer = peer_of();
        }
        match (self.hub.state(alias), peer) {
            (ServerState::Connected, Some(peer)) => Ok(peer),
            (ServerState::Reconnecting, _) => Err(fault.unavailable(
                ServerState::Reconnecting,
                "is restarting; try again shortly",
            )),
            (state, _) => Err(fault.unavailable(state, "is not connected")),
        }
    }

    /// Sends `out`; its result, or the error the host gets (the
    /// upstream's own as sent, or one naming the upstream). `cancelled`
    /// (the host's) and the deadline end it, and the upstream is told.
    pub(crate) async fn send(
        &self,
        out: Outbound<'_>,
        cancelled: impl Future<Output = ()>,
    ) -> Result<ServerResult, McpError> {
        let fault = Fault {
            alias: out.alias,
            subject: out.subject,
            name_errors: out.name_errors,
        };
        let peer = self.ready(&fault).await?;
        let deadline = self.deadline(out.subject);
        let stop = async {
            tokio::select! {
                biased;
                () = cancelled => fault.cancelled(),
                () = sleep(deadline) => fault.late(deadline),
            }
        };
        tokio::pin!(stop);
        // serve-http hook: a stateless HTTP upstream's call posted directly.
        #[cfg(feature = "serve-http")]
        let out = match self.post_directly(out, &fault, stop.as_mut()).await {
            Ok(answered) => return answered,
            Err(declined) => declined,
        };
        #[cfg(feature = "serve-http")]
        let mut out = forwarding(out);
        #[cfg(not(feature = "serve-http"))]
        let mut out = out;
        // A 2025-era upstream's call goes over a connection told what its host declared.
        let other = self.told_connection(&out, &fault).await?;
        let other = other.as_deref().and_then(|slot| slot.get()?.as_ref().ok());
        let peer = other.map_or(peer, LiveServer::peer);
        let (progress, alias) = (std::mem::take(&mut out.progress), out.alias);
        let (id, token, mut answer) = self.sent(out, (&peer, other), &fault).await?;
        // Opened with no wait after the request was queued: the upstream
        // would have to answer within that instant for its first
        // notification to find no relay (and be dropped, never misrouted).
        let mut relay = (progress.as_ref()).map(|_| self.relays.open(alias, token));
        // Dropped before the answer (cancelled, late): the upstream is told to cancel.
        let abandoned = Abandoned(Some((peer, id)));
        // In this order: a cancel or the deadline even while progress
        // floods in, and progress before the answer it preceded.
        let answer = loop {
            tokio::select! {
                biased;
                stopped = &mut stop => return Err(stopped),
                Some(p) = next(&mut relay) => Box::pin(relay_to(&progress, p)).await,
                answer = &mut answer => break answer,
            }
        };
        abandoned.disarm();
        // Its log messages read before it reach the host first.
        self.asking.logs_before(alias).await;
        // What the upstream sent before its answer (all read before it)
        // goes to the host first; nothing sent after.
        let before = relay.as_mut().map(Relay::received).unwrap_or_default();
        drop(relay);
        for p in before {
            Box::pin(relay_to(&progress, p)).await;
        }
        answer.map_err(|e| fault.failed(e))
    }

    /// Writes `out` (a stdio upstream's call whole to its pipe, `piped.rs`;
    /// every other request through rmcp's client): its id, its progress
    /// token and its answer on the way.
    async fn sent<'a>(
        &self,
        out: Outbound<'a>,
        (peer, other): (&Peer<RoleClient>, Option<&LiveServer>),
        fault: &Fault<'_>,
    ) -> Result<(RequestId, rmcp::model::ProgressToken, Answer<'a>), McpError> {
        let (alias, told, level) = (out.alias, out.told, out.log_level);
        let piped = match other {
            Some(other) => piped_on(other, out.subject, out.request, (told.as_ref(), level)),
            None => self.piped(alias, out.subject, out.request, (told.as_ref(), level)),
        };
        match piped {
            Ok((pipe, written)) => {
                let (id, token) = (written.id(), written.token());
                Ok((id, token, Box::pin(piped::ask(pipe, written))))
            }
            Err(request) => {
                let options = self.options(alias, told.as_ref(), level);
                let handle = Box::pin(peer.send_request_with_option(*request, options))
                    .await
                    .map_err(|e| fault.failed(e))?;
                let (id, token) = (handle.id.clone(), handle.progress_token.clone());
                Ok((id, token, Box::pin(handle.await_response())))
            }
        }
    }

    /// A `tools/call` to a stdio upstream, ready to be written whole to its
    /// pipe; else the request, for rmcp.
    #[allow(deprecated)] // rmcp marks logging deprecated (SEP-2577)
    fn piped(
        &self,
        alias: &str,
        subject: Subject<'_>,
        request: ClientRequest,
        (told, level): (Option<&ClientCapabilities>, Option<LoggingLevel>),
    ) -> Result<(crate::connect::pipe::Pipe, piped::Written), Box<ClientRequest>> {
        match lock(&self.live).get(alias) {
            Some(live) => piped_on(live, subject, request, (told, level)),
            None => Err(Box::new(request)),
        }
    }

    /// The connection to `alias` told what the host of `out` declared, when
    /// it is a 2025-era upstream's `tools/call` and its shared connection
    /// was told otherwise ([`told`](super::told)); `None`: the shared one.
    async fn told_connection(
        &self,
        out: &Outbound<'_>,
        fault: &Fault<'_>,
    ) -> Result<Option<super::told::Slot>, McpError> {
        if !matches!(out.subject, Subject::Tool(_)) || self.is_modern(out.alias) {
            return Ok(None);
        }
        let reached = lock(&self.live).get(out.alias).and_then(|l| {
            let (transport, config) = l.reached();
            let same = Askable::told_by(out.told.as_ref(), out.asks, &config.capabilities);
            (!same).then(|| (out.alias, transport.clone(), config.clone()))
        });
        let Some(reached) = reached else {
            return Ok(None);
        };
        let wanted = Askable::of(out.told.as_ref(), out.asks);
        let handler = |alias: &str, config| self.handler_for(alias, config);
        // Boxed, as every rare await here: a future is as large as its
        // largest await, and every call's future is moved as it is made.
        let connection = Box::pin(self.told.connection(reached, &wanted, handler));
        (connection.await).map_err(|e| {
            fault.logged(fault.error(format!(
                "upstream {:?} could not be connected told what this host declared: {e}",
                fault.alias
            )))
        })
    }

    /// A 2026-07-28 upstream is told per request what the host declared
    /// and the log level it asked for (a 2025 one was told the gateway's
    /// capabilities at its handshake, and `logging/setLevel`).
    #[allow(deprecated)]
    pub(super) fn options(
        &self,
        alias: &str,
        told: Option<&ClientCapabilities>,
        level: Option<LoggingLevel>,
    ) -> PeerRequestOptions {
        let mut options = PeerRequestOptions::no_options();
        if (told.is_none() && level.is_none()) || !self.is_modern(alias) {
            return options;
        }
        let mut meta = RequestMetaObject::new();
        if let Some(told) = told {
            meta.set_client_capabilities(told.clone());
        }
        if let Some(level) = level {
            meta.set_log_level(level);
        }
        options.meta = Some(meta);
        options
    }

    /// The call posted directly when the upstream takes it (`stop` ends
    /// it with its error); else the request, for rmcp.
    #[cfg(feature = "serve-http")]
    async fn post_directly<'a>(
        &self,
        out: Outbound<'a>,
        fault: &Fault<'_>,
        stop: std::pin::Pin<&mut impl Future<Output = McpError>>,
    ) -> Result<Result<ServerResult, McpError>, Outbound<'a>> {
        use crate::serve::upstream::direct::Posted;
        let direct = match (out.direct, out.subject) {
            (true, Subject::Tool(tool)) => lock(&self.direct)
                .get(out.alias)
                .cloned()
                .map(|d| (d, tool)),
            _ => None,
        };
        let Some((direct, tool)) = direct else {
            return Err(out);
        };
        let posted = tokio::select! {
            biased;
            stopped = stop => return Ok(Err(stopped)),
            posted = Box::pin(direct.call(tool, out.request, &out.progress, &out.forward, (out.told.as_ref(), out.log_level))) => posted,
        };
        match posted {
            Posted::Answered(answer) => Ok((*answer).map_err(|e| fault.failed(e))),
            Posted::Cut => Ok(Err(fault.cut())),
            Posted::Declined(request) => Err(Outbound {
                request: *request,
                ..out
            }),
        }
    }
}

/// A `tools/call` to `live` when it is a stdio upstream, ready to be
/// written whole to its pipe; else the request, for rmcp.
#[allow(deprecated)] // rmcp marks logging deprecated (SEP-2577)
fn piped_on(
    live: &LiveServer,
    subject: Subject<'_>,
    request: ClientRequest,
    (told, level): (Option<&ClientCapabilities>, Option<LoggingLevel>),
) -> Result<(crate::connect::pipe::Pipe, piped::Written), Box<ClientRequest>> {
    let pipe = match subject {
        Subject::Tool(_) => live.pipe(),
        _ => None,
    };
    let Some(pipe) = pipe else {
        return Err(Box::new(request));
    };
    let version = live.peer().peer_info().map(|i| i.protocol_version.clone());
    let Some(version) = version else {
        return Err(Box::new(request));
    };
    let client = live.reached().1;
    piped::written(&pipe, request, (&version, client), told, level).map(|w| (pipe, w))
}

/// `out` with its [`Forward`] headers in its request's extensions, where
/// an HTTP upstream's connection writes them (`connect/forward.rs`).
#[cfg(feature = "serve-http")]
fn forwarding(mut out: Outbound<'_>) -> Outbound<'_> {
    use rmcp::model::GetExtensions;
    if !out.forward.is_empty() {
        let headers = crate::connect::forward::ParamHeaders(std::mem::take(&mut out.forward));
        out.request.extensions_mut().insert(headers);
    }
    out
}

/// The capabilities an upstream declared.
pub(crate) fn capabilities(peer: &Peer<RoleClient>) -> ServerCapabilities {
    peer.peer_info()
        .map(|i| i.capabilities.clone())
        .unwrap_or_default()
}

/// An upstream's answer on its way.
type Answer<'a> = std::pin::Pin<
    Box<dyn Future<Output = Result<ServerResult, rmcp::service::ServiceError>> + Send + 'a>,
>;

pub(super) async fn sleep(deadline: Option<Duration>) {
    match deadline {
        Some(t) => tokio::time::sleep(t).await,
        None => std::future::pending().await,
    }
}

/// The next notification of a relay; never, without one.
async fn next(relay: &mut Option<Relay>) -> Option<ProgressNotificationParam> {
    match relay {
        Some(r) => r.next().await,
        None => std::future::pending().await,
    }
}

/// Tells the upstream to cancel a request abandoned before its answer.
struct Abandoned(Option<(Peer<RoleClient>, RequestId)>);

impl Abandoned {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        let Some((peer, id)) = self.0.take() else {
            return;
        };
        let why =
            CancelledNotificationParam::new(Some(id), Some("the host no longer waits".into()));
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = peer.notify_cancelled(why).await;
            });
        }
    }
}
