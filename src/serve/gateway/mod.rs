//! [`Gateway`]: the hub's section and its servers' tools, served to a host
//! as one MCP server (rmcp's server side).

use crate::support::lock;

pub(crate) mod call;
pub(crate) mod era;
pub(crate) mod fit;
mod handler;
pub(crate) mod metrics;
pub(crate) mod names;
mod rounds;
pub(crate) mod rpc;
mod serving;
pub(crate) mod tasks;
pub(crate) mod view;

#[cfg(test)]
mod name_tests;
#[cfg(test)]
mod tests;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ServerCapabilities,
};
use tokio::sync::watch;

use crate::assemble::Assembler;
use crate::config::McpConfig;
use crate::connect::{ConnectFailure, ConnectOptions, LiveServer};
use crate::error::Result;
use crate::hub::Hub;
use crate::serve::gateway::call::{read_instructions, response, upstream_request};
use crate::serve::gateway::fit::ServeAs;
use crate::serve::gateway::metrics::{Metrics, Outcome};
use crate::serve::gateway::names::{GatewayNames, Naming, served_scheme};
use crate::serve::gateway::view::View;
use crate::serve::surfaces::Surfaces;
use crate::serve::surfaces::lists::{merged, not_served};
use crate::serve::surfaces::notify::LIST_CHANGED_EVERY;
use crate::serve::upstream::Forward;
use crate::serve::upstream::progress::HostProgress;
use crate::serve::upstream::sealed::Seal;
use crate::serve::upstream::send::{Outbound, Subject, Upstreams, capabilities, told_by};

/// How often the gateway looks at the hub for changes no revision tells
/// of (a tool's schema, say, which the section does not show).
const POLL: Duration = Duration::from_millis(500);

pub(in crate::serve) struct Inner {
    pub(in crate::serve) hub: Hub,
    pub(in crate::serve) host: ServeAs,
    pub(in crate::serve) info: Implementation,
    /// The live upstreams (the one way out to them), the prompts,
    /// resources and skills served from them, and the changes told.
    pub(in crate::serve) surfaces: Surfaces,
    pub(in crate::serve) view: Mutex<Arc<View>>,
    /// Calls, errors, latency and restarts (`/metrics`).
    pub(in crate::serve) metrics: Metrics,
}

/// An MCP server in front of a [`Hub`]: `instructions` are the hub's
/// section (fitted with [`ServeAs`] when the hub's assembler was,
/// [`ServeAs::fit`]), `tools/list` is every upstream tool under its
/// exposed name ([`GatewayNames`]), and `tools/call` goes to the upstream
/// [`LiveServer`] that owns the tool. Cheap to clone: clones share
/// everything (one per HTTP session).
///
/// Tools are served as the hub's assembly exposed them, so the gateway
/// makes the hub name tools with its [`scheme`](crate::serve::scheme) (as
/// [`prepare`](crate::serve::prepare) does) when it does not already.
///
/// Faults stay with their upstream: a call to a server that is restarting,
/// gone, or that ends during the call fails with a JSON-RPC error naming
/// it, and the other servers' calls go on. Each change of the tools or the
/// instructions is told to every connected host with one
/// `notifications/tools/list_changed` (through `subscriptions/listen` for
/// 2026-07-28 clients), at most one per 250 ms: changes within that time
/// are told together when it ends.
#[derive(Clone)]
pub struct Gateway {
    pub(in crate::serve) inner: Arc<Inner>,
    /// The view this session's host was last given `instructions` from
    /// (one per HTTP session, [`Gateway::session`]).
    read: Arc<Mutex<Option<Arc<View>>>>,
    /// The log level this session's host set (`logging/setLevel`), told
    /// 2026-07-28 upstreams with each of its requests.
    #[allow(deprecated)] // rmcp marks logging deprecated (SEP-2577); hosts still use it.
    level: Arc<Mutex<Option<rmcp::model::LoggingLevel>>>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("host", &self.inner.host)
            .finish_non_exhaustive()
    }
}

impl Gateway {
    /// A gateway serving `host` the section of `assembler`, fitted to the
    /// host ([`prepare`](crate::serve::prepare)); add its upstreams with
    /// [`Gateway::add`] or [`Gateway::start_all`]. [`Gateway::builder`]
    /// sets the name the host's config gives it and a call timeout.
    pub fn new(assembler: Assembler, host: ServeAs) -> Result<Gateway> {
        Gateway::builder(assembler, host).build()
    }

    /// A [`GatewayBuilder`] for `host` over `assembler`.
    pub fn builder(assembler: Assembler, host: ServeAs) -> GatewayBuilder {
        GatewayBuilder {
            assembler,
            host,
            name: crate::serve::DEFAULT_NAME.to_string(),
            call_timeout: None,
            naming: Naming::default(),
            seal: None,
        }
    }

    /// `timeouts`: a call's, and the one set for every request; `seal`:
    /// the secret of its seals ([`GatewayBuilder::seal_key`]).
    fn build(
        hub: Hub,
        host: ServeAs,
        timeouts: (Option<Duration>, Option<Duration>),
        seal: Option<Seal>,
    ) -> Gateway {
        crate::serve::gateway::metrics::started_at();
        name_tools(&hub);
        let view = View::of(&hub, host);
        let mut upstreams = Upstreams::new(hub.clone(), timeouts.0, timeouts.1);
        if let Some(seal) = seal {
            upstreams.seal_with(seal);
        }
        let upstreams = Arc::new(upstreams);
        let surfaces = Surfaces::new(hub.clone(), upstreams);
        let gateway = Gateway {
            read: Arc::default(),
            level: Arc::default(),
            inner: Arc::new(Inner {
                hub,
                host,
                info: Implementation::new("mcp-preamble", env!("CARGO_PKG_VERSION")),
                surfaces,
                view: Mutex::new(Arc::new(view)),
                metrics: Metrics::default(),
            }),
        };
        gateway.follow();
        gateway.follow_restarts();
        gateway
    }

    /// Serves `live`'s tools from now on (it must be a server of this
    /// gateway's hub); one under the same alias is replaced (and closed).
    /// Its progress notifications reach hosts when it was connected with
    /// [`Gateway::connect_options`].
    pub fn add(&self, live: LiveServer) {
        self.joined(live);
        self.refresh();
    }

    /// `logging/setLevel` sent to every 2025-era upstream that declares
    /// `logging` (one that refuses it is logged, and the others still get
    /// it); a 2026-07-28 one has no such method: the level is kept for this
    /// session and told with each of its requests (`_meta`).
    #[allow(deprecated)]
    async fn set_level_everywhere(&self, params: rmcp::model::SetLevelRequestParams) {
        *lock(&self.level) = Some(params.level);
        let upstreams = self.inner.surfaces.upstreams();
        let legacy = (upstreams.with(|c| c.logging.is_some()).into_iter())
            .filter(|alias| !upstreams.is_modern(alias));
        for alias in legacy {
            let request = rmcp::model::ClientRequest::SetLevelRequest(
                rmcp::model::SetLevelRequest::new(params.clone()),
            );
            let out = Outbound::method(&alias, "logging/setLevel", request);
            if let Err(e) = upstreams.send(out, std::future::pending()).await {
                tracing::info!(upstream = %alias, "logging/setLevel not taken: {}", e.message);
            }
        }
    }

    /// Connects one upstream as the hub would, on a handler that relays
    /// its own requests (sampling, elicitation, roots, log messages) to the
    /// host whose call it answers.
    async fn connect_one(
        &self,
        entry: &crate::config::ServerEntry,
        options: &ConnectOptions,
    ) -> std::result::Result<LiveServer, ConnectFailure> {
        let upstreams = self.inner.surfaces.upstreams();
        let make = upstreams.handler_for(&entry.alias, options.client_config().clone());
        upstreams.told().started(&entry.alias, options);
        self.inner.hub.connect_making(entry, options, make).await
    }

    /// Holds `live` as the upstream of its alias.
    fn joined(&self, live: LiveServer) {
        let caps = capabilities(&live.peer());
        self.inner.surfaces.catalog().joined(&caps);
        let alias = live.alias().to_string();
        self.inner.surfaces.upstreams().join(live);
        self.inner.surfaces.read_ahead(&alias, &caps);
    }

    /// `options` with which a server's progress notifications reach the
    /// host whose call they belong to ([`Hub::connect`] a server with
    /// them, then [`Gateway::add`] it); [`Gateway::connect_all`] uses them.
    pub fn connect_options(&self, options: &ConnectOptions) -> ConnectOptions {
        let upstreams = self.inner.surfaces.upstreams();
        let tap = (self.inner.surfaces.catalog())
            .tap(upstreams.relays().tap(), upstreams.asking().clone());
        options.clone().tap_progress(tap)
    }

    /// Starts every server of `config` in the hub ([`Hub::connect_all`]:
    /// supervised with `options`' [`Restart`](crate::connect::Restart)) and
    /// serves their tools. A server that fails is left out and returned;
    /// the others are served.
    pub async fn connect_all(
        &self,
        config: &McpConfig,
        options: &ConnectOptions,
    ) -> Vec<ConnectFailure> {
        let options = self.connect_options(options);
        let permits = Arc::new(tokio::sync::Semaphore::new(options.concurrency_limit()));
        let tasks: Vec<_> = (config.servers.iter().cloned())
            .map(|entry| {
                let (gateway, options, permits) = (self.clone(), options.clone(), permits.clone());
                tokio::spawn(async move {
                    let _permit = permits.acquire().await;
                    gateway.connect_one(&entry, &options).await
                })
            })
            .collect();
        let mut failed = Vec::new();
        for task in tasks {
            match task.await {
                Ok(Ok(live)) => self.joined(live),
                Ok(Err(failure)) => failed.push(failure),
                Err(e) => tracing::warn!("an upstream's start ended early: {e}"),
            }
        }
        self.refresh();
        failed
    }

    /// Starts every server of `config` in the background (at most
    /// [`ConnectOptions::concurrency`] at a time, each supervised as with
    /// [`Gateway::connect_all`]) and returns at once: the gateway serves
    /// from now on, each server joins as it connects (hosts hear of it
    /// through `list_changed`; its instructions are readable through the
    /// reader tool), and a call to a server still starting waits for it (at
    /// most the call timeout). A server the hub already holds (a snapshot
    /// of an earlier run, [`Hub::upsert`]) is served from that snapshot
    /// until it connects, then refreshed (one `list_changed` if what hosts
    /// see differs); if it fails to start it is removed. Each failure is
    /// sent on the returned channel, which closes once every server has
    /// connected or failed. Call within a tokio runtime.
    pub fn start_all(
        &self,
        config: &McpConfig,
        options: &ConnectOptions,
    ) -> tokio::sync::mpsc::UnboundedReceiver<ConnectFailure> {
        let options = self.connect_options(options);
        let (failures, received) = tokio::sync::mpsc::unbounded_channel();
        let permits = Arc::new(tokio::sync::Semaphore::new(options.concurrency_limit()));
        let aliases = config.servers.iter().map(|e| e.alias.clone());
        self.inner.surfaces.upstreams().starting().begin(aliases);
        for entry in config.servers.iter().cloned() {
            let (gateway, failures) = (self.clone(), failures.clone());
            let (options, permits) = (options.clone(), permits.clone());
            tokio::spawn(async move {
                let _permit = permits.acquire().await;
                let hub = &gateway.inner.hub;
                match gateway.connect_one(&entry, &options).await {
                    Ok(live) => gateway.add(live),
                    Err(failure) => {
                        // A snapshot of an earlier run is not served for a server that is not there.
                        if hub.snapshot(&entry.alias).is_some() {
                            let _ = hub.remove(&entry.alias);
                        }
                        let _ = failures.send(failure);
                    }
                }
                gateway
                    .inner
                    .surfaces
                    .upstreams()
                    .starting()
                    .settle(&entry.alias);
            });
        }
        received
    }

    /// The hub this gateway serves.
    pub fn hub(&self) -> &Hub {
        &self.inner.hub
    }

    /// The instructions served now.
    pub fn instructions(&self) -> String {
        self.view().instructions.clone()
    }

    /// The names the upstream tools are exposed under now.
    pub fn tool_names(&self) -> GatewayNames {
        self.view().names.clone()
    }

    /// The upstream tools not served now because another upstream's tool
    /// has their name and names are never prefixed ([`Prefix::Never`](crate::serve::Prefix::Never)):
    /// at start a reason to refuse to serve (`serve --prefix never` exits),
    /// later logged as an error per change.
    pub fn refused_names(&self) -> Vec<view::RefusedName> {
        self.view().refused.clone()
    }

    /// The process id of the upstream `alias` now (stdio servers this
    /// gateway started; a restarted one has a new id).
    pub fn process_id(&self, alias: &str) -> Option<u32> {
        self.inner.surfaces.upstreams().process_id(alias)
    }

    /// A receiver that wakes once per change told to hosts.
    pub fn subscribe_changes(&self) -> watch::Receiver<u64> {
        self.inner.surfaces.subscribe_changes()
    }

    /// Stops serving the upstream `alias` (a config reload removed or
    /// changed it): its connection is closed (a stdio server stops) and its
    /// tools leave (one `list_changed`). The other upstreams, and the
    /// hosts' sessions, go on.
    pub async fn remove(&self, alias: &str) {
        match self.inner.surfaces.upstreams().take(alias) {
            Some(live) => live.close().await,
            // Served from a snapshot of an earlier run, or never connected.
            None => {
                if self.inner.hub.snapshot(alias).is_some() {
                    let _ = self.inner.hub.remove(alias);
                }
            }
        }
        self.refresh();
    }

    /// Closes every upstream connection (stdio servers stop).
    pub async fn close(&self) {
        let all = self.inner.surfaces.upstreams().take_all();
        for (_, live) in all {
            live.close().await;
        }
    }

    /// The gateway for a new session: everything shared but what its host
    /// has read.
    #[cfg(feature = "serve-http")]
    pub(crate) fn session(&self) -> Gateway {
        Gateway {
            inner: self.inner.clone(),
            read: Arc::default(),
            level: Arc::default(),
        }
    }

    /// The current view, made again first when the hub's section moved.
    pub(crate) fn view(&self) -> Arc<View> {
        let view = lock(&self.inner.view).clone();
        if !Arc::ptr_eq(&view.section, &self.inner.hub.section()) {
            self.refresh();
            return lock(&self.inner.view).clone();
        }
        view
    }

    /// Makes the view again from the hub's section, when that is a new
    /// one; tells hosts when what they see changed. Returns whether it did.
    pub(crate) fn refresh(&self) -> bool {
        name_tools(&self.inner.hub);
        // The view is made from the section alone: the same one, the same view.
        if Arc::ptr_eq(&lock(&self.inner.view).section, &self.inner.hub.section()) {
            return false;
        }
        let next = View::of(&self.inner.hub, self.inner.host);
        let mut view = lock(&self.inner.view);
        let changed = view.stamp != next.stamp;
        *view = Arc::new(next);
        drop(view);
        if changed {
            tracing::debug!("tools or instructions changed: list_changed");
            self.inner.surfaces.tools_changed();
        }
        changed
    }

    /// Watches the hub (revisions, state changes, and a slow poll for what
    /// neither tells) while the gateway lives.
    fn follow(&self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        let mut sections = self.inner.hub.subscribe();
        let mut states = self.inner.hub.subscribe_states();
        let mut pending = self.inner.hub.subscribe_pending();
        runtime.spawn(async move {
            loop {
                tokio::select! {
                    _ = sections.changed() => {}
                    _ = states.recv() => {}
                    _ = pending.changed() => {}
                    _ = tokio::time::sleep(POLL) => {}
                }
                let Some(inner) = weak.upgrade() else { return };
                let (read, level) = (Arc::default(), Arc::default());
                Gateway { inner, read, level }.refresh();
                // A flood of upstream changes makes a view per period;
                // what arrives meanwhile is taken in by the next one.
                tokio::time::sleep(LIST_CHANGED_EVERY).await;
            }
        });
    }

    /// Tells the catalog of each upstream restarted while the gateway
    /// lives (its subscriptions are made again, hosts hear its lists may
    /// have changed).
    fn follow_restarts(&self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        let mut states = self.inner.hub.subscribe_states();
        runtime.spawn(async move {
            loop {
                let change = match states.recv().await {
                    Ok(change) => change,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(_) => return,
                };
                if change.reason != crate::hub::StateReason::Restarted {
                    continue;
                }
                let Some(inner) = weak.upgrade() else { return };
                inner.metrics.restarted(&change.alias);
                let gateway = Gateway {
                    inner,
                    read: Arc::default(),
                    level: Arc::default(),
                };
                gateway.surfaces().upstream_back(&change.alias).await;
            }
        });
    }

    /// What the surfaces (prompts, resources, skills, subscriptions) serve from.
    pub(in crate::serve) fn surfaces(&self) -> &Surfaces {
        &self.inner.surfaces
    }

    /// What every upstream that may serve them has (all of them while
    /// some are still starting, so a host asks for what a late one brings).
    fn upstream_capabilities(&self) -> ServerCapabilities {
        let each = self.inner.surfaces.upstreams().capabilities();
        merged(
            each.into_iter(),
            self.inner.surfaces.upstreams().starting().any(),
        )
    }

    /// Method not found for a request of `method` when no upstream has
    /// what it needs (the capability is not advertised then).
    fn serving(&self, method: &str, has: fn(&ServerCapabilities) -> bool) -> Result<(), McpError> {
        match has(&self.upstream_capabilities()) {
            true => Ok(()),
            false => Err(not_served(method)),
        }
    }

    /// A `tools/call` of the host: to the reader, refused, or forwarded to
    /// its upstream (progress to `host` when it has a token; `forward`, the
    /// host's headers a direct post carries; `cancelled` cancels the
    /// upstream request; `asked`: the gateway asks a 2025-era host the
    /// upstream's input requests itself, see `told_by`).
    pub(crate) async fn call_tool_as(
        &self,
        params: CallToolRequestParams,
        host: HostProgress,
        forward: Forward,
        asked: bool,
        cancelled: impl Future<Output = ()>,
    ) -> Result<CallToolResponse, McpError> {
        let mut view = self.view();
        if view.names.upstream(&params.name).is_none() && params.name != view.names.reader() {
            // A tool added a moment ago: look once more.
            self.refresh();
            view = self.view();
        }
        if params.name == view.names.reader() {
            return read_instructions(&view.full, params.arguments.as_ref()).map(|text| {
                CallToolResponse::Complete(CallToolResult::success(vec![ContentBlock::text(text)]))
            });
        }
        if let Some((alias, tool)) = view.hidden.get(params.name.as_ref()) {
            let why = format!(
                "tool {:?} is not served: the operator's policy hides {tool:?} of upstream {alias:?}",
                params.name.as_ref()
            );
            tracing::info!(upstream = %alias, tool = %tool, "call refused: {why}");
            let data = serde_json::json!({"upstream": alias, "hidden": true});
            return Err(McpError::invalid_params(why, Some(data)));
        }
        let Some((alias, tool)) = view.names.upstream(&params.name) else {
            let why = format!("unknown tool {:?}", params.name.as_ref());
            tracing::info!("call refused: {why}");
            return Err(McpError::invalid_params(why, None));
        };
        let direct = !view.param_headers.contains(params.name.as_ref()); // no argument in a header
        let forward = call::undeclared(forward, view.param_declared.get(params.name.as_ref()));
        let tool = tool.to_string();
        let alias = alias.to_string();
        drop(view);
        let upstreams = self.inner.surfaces.upstreams();
        let mut params = params;
        params.request_state = upstreams
            .seal()
            .opened_state(&alias, params.request_state)?;
        let out = Outbound {
            alias: &alias,
            subject: Subject::Tool(&tool),
            told: told_by(params.meta.as_ref(), asked),
            log_level: params.meta.as_ref().and_then(|m| m.log_level()),
            asks: asked,
            request: upstream_request(&tool, params),
            progress: host,
            name_errors: false,
            direct,
            forward,
        };
        let started = std::time::Instant::now();
        let answer = (upstreams.send(out, cancelled).await)
            .and_then(|answer| response(&alias, &tool, answer))
            .map(|answer| call::sealed(upstreams.seal(), &alias, answer));
        let outcome = match &answer {
            Ok(CallToolResponse::Complete(r)) if r.is_error == Some(true) => Outcome::ToolError,
            Ok(_) => Outcome::Ok,
            Err(_) => Outcome::Error,
        };
        (self.inner.metrics).called(&alias, &tool, started.elapsed(), outcome);
        answer
    }

    /// The upstream serving the tool the host knows as `name`, if any.
    #[cfg(feature = "serve-http")]
    pub(in crate::serve) fn upstream_of(&self, name: &str) -> Option<String> {
        let view = self.view();
        view.names
            .upstream(name)
            .map(|(alias, _)| alias.to_string())
    }

    /// The gateway's metrics in the Prometheus text format (0.0.4), as
    /// `/metrics` serves them with `serve --listen` (which adds its
    /// sessions and requests in flight): forwarded calls, errors and a
    /// latency histogram per upstream and tool (label values escaped and
    /// capped: [`MAX_TOOLS`](super::MAX_TOOLS),
    /// [`MAX_SERIES`](super::MAX_SERIES), [`MAX_LABEL`](super::MAX_LABEL)),
    /// upstream restarts and states, each server's tokens in the section,
    /// and the servers whose changed text waits for a review.
    pub fn metrics_text(&self) -> String {
        let starting = self.unready_upstreams().len();
        let text =
            crate::serve::gateway::metrics::text(&self.inner.hub, &self.inner.metrics, starting);
        // serve-http hook: the calls posted without rmcp's client.
        #[cfg(feature = "serve-http")]
        let text = {
            let mut text = text;
            use std::fmt::Write as _;
            let name = "mcp_preamble_upstream_direct_calls_total";
            let help = "Forwarded calls posted straight to a stateless HTTP upstream, not through rmcp's client.";
            crate::serve::gateway::metrics::head(&mut text, name, "counter", help);
            for (alias, answered) in self.inner.surfaces.upstreams().direct_answered() {
                let alias = crate::serve::gateway::metrics::label(&alias);
                let _ = writeln!(text, "{name}{{upstream=\"{alias}\"}} {answered}");
            }
            text
        };
        text
    }

    /// The upstreams still starting that have no snapshot to serve from
    /// (a host sees none of their tools yet): while there are any, the
    /// gateway is not ready (`/readyz`).
    pub fn unready_upstreams(&self) -> Vec<String> {
        let hub = &self.inner.hub;
        let starting = self.inner.surfaces.upstreams().starting().aliases();
        (starting.into_iter())
            .filter(|a| hub.snapshot(a).is_none())
            .collect()
    }
}

/// How a [`Gateway`] is made: the assembler it serves from, fitted to its
/// host when built, so no gateway serves an unfitted section.
#[derive(Debug)]
pub struct GatewayBuilder {
    assembler: Assembler,
    host: ServeAs,
    name: String,
    call_timeout: Option<Duration>,
    naming: Naming,
    /// Never printed (its `Debug` shows no key).
    seal: Option<Seal>,
}

impl GatewayBuilder {
    /// The secret the task ids and `requestState` values handed to hosts
    /// are sealed with (to the upstream that issued them): gateways given
    /// the same secret open each other's, so a host's `tasks/get` may
    /// reach any replica, and a restarted gateway still knows its ids.
    /// Unless set, a random one per gateway.
    pub fn seal_key(mut self, secret: &[u8]) -> GatewayBuilder {
        self.seal = Some(Seal::from_key(secret));
        self
    }

    /// How served names are made (`serve --prefix`, `--separator`):
    /// [`Naming::default`], `{alias}__{name}`, unless set.
    pub fn naming(mut self, naming: Naming) -> GatewayBuilder {
        self.naming = naming;
        self
    }

    /// The key the host's config gives the gateway (`serve --name`;
    /// [`DEFAULT_NAME`](crate::serve::DEFAULT_NAME) unless set): the
    /// section names tools as that host shows them.
    pub fn name(mut self, name: &str) -> GatewayBuilder {
        self.name = name.to_string();
        self
    }

    /// A forwarded `tools/call` that takes longer than `timeout` fails
    /// (the upstream is told to cancel it), and any other request to an
    /// upstream too. Unless set, a call may take
    /// [`DEFAULT_CALL_TIMEOUT`](crate::serve::DEFAULT_CALL_TIMEOUT) and
    /// another request 30 s; `Duration::ZERO` lets calls take as long as
    /// they take (and other requests 30 s).
    pub fn call_timeout(mut self, timeout: Duration) -> GatewayBuilder {
        self.call_timeout = Some(timeout);
        self
    }

    /// The gateway, over a hub of the assembler fitted to the host
    /// ([`prepare_named`](crate::serve::prepare_named)); an error when the
    /// gateway's own text cannot fit the host's cut.
    pub fn build(self) -> Result<Gateway> {
        let assembler =
            crate::serve::prepare_naming(self.assembler, self.host, &self.name, &self.naming)?;
        let call_timeout = match self.call_timeout {
            None => Some(crate::serve::upstream::send::DEFAULT_CALL_TIMEOUT),
            Some(t) if t.is_zero() => None,
            Some(t) => Some(t),
        };
        Ok(Gateway::build(
            Hub::new(assembler),
            self.host,
            (call_timeout, self.call_timeout.filter(|t| !t.is_zero())),
            self.seal,
        ))
    }
}

/// Makes `hub` name tools as the gateway serves them ([`scheme`]): the
/// names come from its assembly, and a reload may have set another scheme.
fn name_tools(hub: &Hub) {
    if let Err(e) = hub.name_tools(&served_scheme(hub), &[crate::serve::gateway::view::READER]) {
        tracing::warn!(error = %e, "the section could not name tools as the gateway serves them");
    }
}
