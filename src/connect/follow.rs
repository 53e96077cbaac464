//! [`Hub::attach`] and [`Hub::connect`]: a connected server whose block
//! follows its changes.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ProtocolVersion, ServerNotification, SubscriptionFilter};
use rmcp::service::{
    Peer, RoleClient, RunningService, RunningServiceCancellationToken, Subscription,
};
use tokio::sync::{Notify, watch};
use tokio::time::Instant;

use super::all::connect_all_with;
use super::cache::DiscoverCache;
use super::handler::HubHandler;
use super::options::ConnectOptions;
use super::snapshot::{discover_hints, discover_meta, list_tools, snapshot_of, tools_from_rmcp};
use super::transport::{ConnectFailure, Connection, StderrTail, connect_with};
use crate::config::{McpConfig, ServerEntry};
use crate::error::Result;
use crate::hub::Hub;
use crate::limits::Limits;
use crate::model::{Era, Instructions, ServerSnapshot};

/// The first pause before listening again after a subscription ended.
const FIRST_PAUSE: Duration = Duration::from_secs(1);
/// The pause doubles on each failed listen, up to this.
const MAX_PAUSE: Duration = Duration::from_secs(60);
/// How often an attached client is checked for a closed connection (rmcp
/// gives a borrower no signal for it).
const CLOSE_POLL: Duration = Duration::from_millis(250);

/// Resolves when the connection is gone.
type Closed = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A server [`Hub::connect`] started and keeps current. It owns the
/// connection: call the server's tools through [`LiveServer::peer`].
///
/// Dropping it closes the connection (stopping a stdio server) and removes
/// the server's block at once; [`LiveServer::close`] also waits until the
/// connection is closed.
#[must_use = "dropping a LiveServer closes its connection and removes its block"]
pub struct LiveServer {
    alias: String,
    snapshot: ServerSnapshot,
    peer: Peer<RoleClient>,
    stderr: StderrTail,
    hub: Hub,
    owner: u64,
    cancel: Option<RunningServiceCancellationToken>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl std::fmt::Debug for LiveServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveServer")
            .field("alias", &self.alias)
            .finish_non_exhaustive()
    }
}

impl LiveServer {
    /// The alias the server has in the hub.
    pub fn alias(&self) -> &str {
        &self.alias
    }

    /// The snapshot read when it connected (the hub holds the current one).
    pub fn snapshot(&self) -> &ServerSnapshot {
        &self.snapshot
    }

    /// The rmcp peer of the connection the hub follows: call tools with it
    /// (`live.peer().call_tool(…)`).
    pub fn peer(&self) -> &Peer<RoleClient> {
        &self.peer
    }

    /// What a stdio server wrote to stderr lately (bounded, kept current).
    pub fn stderr(&self) -> &StderrTail {
        &self.stderr
    }

    /// Closes the connection, waits until it is closed, and removes the
    /// server's block.
    pub async fn close(mut self) {
        if let Some(c) = self.cancel.take() {
            c.cancel();
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        // The follower saw the connection end and started a grace period:
        // the host closed it on purpose, so the block goes now.
        let _ = self.hub.remove_as(Some(self.owner), &self.alias);
    }
}

impl Drop for LiveServer {
    fn drop(&mut self) {
        if let Some(c) = self.cancel.take() {
            c.cancel();
            let _ = self.hub.remove_as(Some(self.owner), &self.alias);
        }
    }
}

/// A client of yours that a [`Hub`] follows; see [`Hub::attach`].
///
/// Dropping it changes nothing: the hub follows the client until its
/// connection closes. [`Attachment::detach`] stops following sooner.
pub struct Attachment {
    alias: String,
    snapshot: ServerSnapshot,
    stop: Arc<Notify>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for Attachment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Attachment")
            .field("alias", &self.alias)
            .finish_non_exhaustive()
    }
}

impl Attachment {
    /// The alias the server has in the hub.
    pub fn alias(&self) -> &str {
        &self.alias
    }

    /// The snapshot read when it was attached.
    pub fn snapshot(&self) -> &ServerSnapshot {
        &self.snapshot
    }

    /// Stops following and removes the server's block; the client stays
    /// connected.
    pub async fn detach(self) {
        self.stop.notify_one();
        let _ = self.task.await;
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "rmcp")))]
impl Hub {
    /// Follows a client you own: reads its server's snapshot into the hub
    /// under `alias`, then keeps the block current while you keep using
    /// the client (calling tools, answering sampling or elicitation with
    /// your own handler):
    ///
    /// - tools are read again on `notifications/tools/list_changed`:
    ///   through the [`HubHandler`] in the 2025 era, through a
    ///   `subscriptions/listen` subscription with a tools-list-changed filter
    ///   in the 2026-07-28 era (opened again, with a growing pause, if it ends);
    /// - when the discover result has a positive `ttlMs`, `server/discover`
    ///   is asked again after it expires (instructions have no change
    ///   notification: that is the only way to see new ones);
    /// - when the connection closes, the server leaves the section (seen
    ///   within a quarter of a second).
    ///
    /// The client must run on a [`HubHandler`] wrapping your handler, so
    /// the hub hears the tools list change. Another client attached later
    /// under the same alias replaces this one; this one then changes nothing.
    ///
    /// ```no_run
    /// # async fn run() -> anyhow::Result<()> {
    /// use mcp_preamble::Assembler;
    /// use mcp_preamble::connect::HubHandler;
    /// use mcp_preamble::hub::Hub;
    /// use mcp_preamble::rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
    /// use mcp_preamble::rmcp::transport::TokioChildProcess;
    /// use mcp_preamble::rmcp::ServiceExt;
    ///
    /// let hub = Hub::new(Assembler::new());
    /// let me = ClientConfig::new(ClientCapabilities::default(), Implementation::new("my-host", "1.0.0"));
    /// let mut command = tokio::process::Command::new("npx");
    /// command.args(["-y", "@modelcontextprotocol/server-everything"]);
    /// let client = HubHandler::new(me).serve(TokioChildProcess::new(command)?).await?;
    /// let _following = hub.attach("everything", &client).await?;
    /// let answer = client.call_tool(CallToolRequestParams::new("echo")).await?;
    /// # Ok(()) }
    /// ```
    pub async fn attach<H: rmcp::ClientHandler>(
        &self,
        alias: impl Into<String>,
        client: &RunningService<RoleClient, HubHandler<H>>,
    ) -> Result<Attachment> {
        let alias = alias.into();
        let changed = client.service().tools_changed();
        let snapshot = snapshot_of(client).await?;
        let peer = client.peer().clone();
        let closed = Box::pin(transport_closed(peer.clone()));
        let (_, stop, task) = self.follow(&alias, &snapshot, peer, changed, closed)?;
        Ok(Attachment {
            alias,
            snapshot,
            stop,
            task,
        })
    }

    /// Starts a configured server (see [`connect_with`]) and follows it as
    /// [`Hub::attach`] does; the returned [`LiveServer`] owns the
    /// connection. The client identifies itself with
    /// [`ConnectOptions::client_config`].
    pub async fn connect(
        &self,
        entry: &ServerEntry,
        options: &ConnectOptions,
    ) -> std::result::Result<LiveServer, ConnectFailure> {
        self.connect_with(entry, options, options.client_config().clone())
            .await
    }

    /// [`Hub::connect`] with your own rmcp client handler (wrapped in a
    /// [`HubHandler`]): it answers the server's requests, and its
    /// [`get_info`](rmcp::ClientHandler::get_info) is the identity sent.
    pub async fn connect_with<H: rmcp::ClientHandler>(
        &self,
        entry: &ServerEntry,
        options: &ConnectOptions,
        handler: H,
    ) -> std::result::Result<LiveServer, ConnectFailure> {
        let connection = connect_with(entry, options, HubHandler::new(handler)).await?;
        self.follow_connection(&entry.alias, connection)
    }

    /// [`Hub::connect`] for every server of `config` at once; results in
    /// config order. A server that fails does not hold up the others.
    pub async fn connect_all(
        &self,
        config: &McpConfig,
        options: &ConnectOptions,
    ) -> Vec<std::result::Result<LiveServer, ConnectFailure>> {
        let client = options.client_config().clone();
        let results = connect_all_with(config, options, |_| HubHandler::new(client.clone())).await;
        config
            .servers
            .iter()
            .zip(results)
            .map(|(entry, r)| r.and_then(|c| self.follow_connection(&entry.alias, c)))
            .collect()
    }

    fn follow_connection<H: rmcp::ClientHandler>(
        &self,
        alias: &str,
        connection: Connection<HubHandler<H>>,
    ) -> std::result::Result<LiveServer, ConnectFailure> {
        let Connection {
            snapshot,
            elapsed,
            stderr,
            client,
            ..
        } = connection;
        let changed = client.service().tools_changed();
        let peer = client.peer().clone();
        let cancel = client.cancellation_token();
        let closed = Box::pin(async move {
            let _ = client.waiting().await;
        });
        match self.follow(alias, &snapshot, peer.clone(), changed, closed) {
            Ok((owner, _, task)) => Ok(LiveServer {
                alias: alias.to_string(),
                snapshot,
                peer,
                stderr,
                hub: self.clone(),
                owner,
                cancel: Some(cancel),
                task: Some(task),
            }),
            Err(error) => Err(ConnectFailure {
                alias: alias.to_string(),
                error,
                stderr: stderr.text(),
                elapsed,
            }),
        }
    }

    /// Puts `snapshot` in the hub under a new owner and starts its follower.
    fn follow(
        &self,
        alias: &str,
        snapshot: &ServerSnapshot,
        peer: Peer<RoleClient>,
        changed: watch::Receiver<()>,
        closed: Closed,
    ) -> Result<(u64, Arc<Notify>, tokio::task::JoinHandle<()>)> {
        let owner = self.new_owner();
        self.upsert_as(Some(owner), alias.to_string(), snapshot.clone())?;
        let stop = Arc::new(Notify::new());
        let follower = Follower {
            hub: self.clone(),
            owner,
            alias: alias.to_string(),
            peer,
            changed,
            stop: stop.clone(),
            filter: SubscriptionFilter::builder().tools_list_changed().build(),
            subscription: None,
            relisten: None,
            pause: FIRST_PAUSE,
            ttl: snapshot
                .cache
                .as_ref()
                .and_then(|c| c.ttl_ms)
                .filter(|t| *t > 0),
            next_handshake: None,
        };
        let modern = snapshot.era == Era::Modern;
        Ok((owner, stop, tokio::spawn(follower.run(closed, modern))))
    }
}

/// Resolves once `peer`'s connection has ended.
async fn transport_closed(peer: Peer<RoleClient>) {
    let mut tick = tokio::time::interval(CLOSE_POLL);
    while !peer.is_transport_closed() {
        tick.tick().await;
    }
}

/// What woke the follower.
enum Event {
    /// The connection ended.
    Closed,
    /// [`Attachment::detach`].
    Detached,
    /// `notifications/tools/list_changed`, from the handler or the subscription.
    ToolsChanged,
    /// Another notification on the subscription.
    Ignored,
    /// The subscription ended.
    StreamEnded,
    /// The pause after an ended subscription is over.
    RelistenDue,
    /// The discover result's `ttlMs` ran out.
    TtlExpired,
}

/// The task behind a [`LiveServer`] or an [`Attachment`]: it applies the server's changes to its
/// hub entry, as long as it still owns that entry.
struct Follower {
    hub: Hub,
    owner: u64,
    alias: String,
    peer: Peer<RoleClient>,
    /// Tools list changes seen by [`HubHandler`] (2025 era); an error once
    /// the handler is gone.
    changed: watch::Receiver<()>,
    stop: Arc<Notify>,
    filter: SubscriptionFilter,
    /// The `subscriptions/listen` stream (2026-07-28 era), while open.
    subscription: Option<Subscription>,
    /// When to listen again, after a subscription ended.
    relisten: Option<Instant>,
    pause: Duration,
    /// The first discover result's positive `ttlMs`.
    ttl: Option<u64>,
    next_handshake: Option<Instant>,
}

impl Follower {
    async fn run(mut self, mut closed: Closed, modern: bool) {
        if modern {
            self.subscription = self.peer.listen(self.filter.clone()).await.ok();
            // Catch a change made between the first tools/list and the subscription.
            self.refresh_tools().await;
        }
        self.next_handshake = after_ms(self.ttl);
        let ended_on_its_own = loop {
            match self.next_event(&mut closed).await {
                Event::Closed => break true,
                Event::Detached => break false,
                Event::ToolsChanged => self.refresh_tools().await,
                Event::Ignored => {}
                Event::StreamEnded => self.on_stream_end(),
                Event::RelistenDue => self.on_relisten_due().await,
                Event::TtlExpired => self.on_ttl_expired().await,
            }
        };
        // A server that went away keeps its block for the hub's grace period
        // (a quick reconnect with the same snapshot changes nothing); one the
        // host let go of leaves at once.
        let _ = if ended_on_its_own {
            self.hub.disconnected_as(Some(self.owner), &self.alias)
        } else {
            self.hub.remove_as(Some(self.owner), &self.alias)
        };
    }

    /// Waits for the next thing to act on.
    async fn next_event(&mut self, closed: &mut Closed) -> Event {
        tokio::select! {
            _ = closed => Event::Closed,
            _ = self.stop.notified() => Event::Detached,
            changed = self.changed.changed() => match changed {
                Ok(()) => Event::ToolsChanged,
                Err(_) => Event::Closed,
            },
            n = next_notification(&mut self.subscription) => match n {
                Some(ServerNotification::ToolListChangedNotification(_)) => Event::ToolsChanged,
                Some(_) => Event::Ignored,
                None => Event::StreamEnded,
            },
            _ = sleep_until(self.relisten) => Event::RelistenDue,
            _ = sleep_until(self.next_handshake) => Event::TtlExpired,
        }
    }

    fn on_stream_end(&mut self) {
        self.subscription = None;
        self.relisten = Some(Instant::now() + self.pause);
    }

    /// Listens again; after a failure, waits twice as long before the next try.
    async fn on_relisten_due(&mut self) {
        self.subscription = self.peer.listen(self.filter.clone()).await.ok();
        if self.subscription.is_some() {
            self.relisten = None;
            self.pause = FIRST_PAUSE;
            // Changes made while no subscription was open were not announced.
            self.refresh_tools().await;
        } else {
            self.pause = (self.pause * 2).min(MAX_PAUSE);
            self.relisten = Some(Instant::now() + self.pause);
        }
    }

    async fn on_ttl_expired(&mut self) {
        // On a failed re-handshake, try again after the same ttl.
        let ttl = self.handshake_again().await.or(self.ttl);
        self.next_handshake = after_ms(ttl);
    }

    async fn refresh_tools(&self) {
        if let Ok(list) = list_tools(&self.peer, &Limits::default()).await
            && let Ok(tools) = tools_from_rmcp(&list.tools)
        {
            let _ = self
                .hub
                .update_tools_as(Some(self.owner), &self.alias, tools);
        }
    }

    /// Asks `server/discover` again and takes its instructions; returns the next ttlMs.
    async fn handshake_again(&self) -> Option<u64> {
        let meta = discover_meta(ProtocolVersion::V_2026_07_28);
        let found = self.peer.discover(meta).await.ok()?;
        let instructions = Instructions::from_raw(found.instructions.as_deref());
        self.hub
            .update_handshake_as(
                self.owner,
                &self.alias,
                instructions,
                Some(discover_hints(&found)),
            )
            .ok()?;
        Some(found.ttl_ms).filter(|t| *t > 0)
    }
}

/// When a wait of `ms` ends. A server's `ttlMs` is held to half a second at
/// least (no busy re-handshakes) and a day at most (no overflowing `Instant`).
fn after_ms(ms: Option<u64>) -> Option<Instant> {
    let ms = ms?.clamp(500, DiscoverCache::MAX_TTL_MS);
    Some(Instant::now() + Duration::from_millis(ms))
}

async fn next_notification(subscription: &mut Option<Subscription>) -> Option<ServerNotification> {
    match subscription {
        Some(s) => s.next().await.ok().flatten(),
        None => std::future::pending().await,
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
