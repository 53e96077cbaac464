//! [`Hub::connect`]: a connected server whose block follows its changes.

use std::future::Future;
use std::time::Duration;

use rmcp::model::{ClientConfig, ProtocolVersion, ServerNotification, SubscriptionFilter};
use rmcp::service::{
    Peer, RoleClient, RunningService, RunningServiceCancellationToken, Subscription,
};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::cache::DiscoverCache;
use super::options::ConnectOptions;
use super::snapshot::{discover_hints, discover_meta, list_tools, tools_from_rmcp};
use super::transport::{ConnectFailure, connect_with};
use crate::config::ServerEntry;
use crate::hub::Hub;
use crate::limits::Limits;
use crate::model::{Era, Instructions, ServerSnapshot};

/// The first pause before listening again after a subscription ended.
const FIRST_PAUSE: Duration = Duration::from_secs(1);
/// The pause doubles on each failed listen, up to this.
const MAX_PAUSE: Duration = Duration::from_secs(60);

/// The rmcp client handler the hub connects with: it forwards
/// `notifications/tools/list_changed` (2025 era) to the server's watcher.
#[derive(Debug, Clone)]
pub struct HubHandler {
    config: ClientConfig,
    changed: mpsc::UnboundedSender<()>,
}

impl rmcp::ClientHandler for HubHandler {
    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }

    async fn on_tool_list_changed(&self, _context: rmcp::service::NotificationContext<RoleClient>) {
        let _ = self.changed.send(());
    }
}

/// A server the [`Hub`] keeps up to date; see [`Hub::connect`].
pub struct LiveServer {
    alias: String,
    snapshot: ServerSnapshot,
    cancel: Option<RunningServiceCancellationToken>,
    task: tokio::task::JoinHandle<()>,
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

    /// The snapshot read when it connected.
    pub fn snapshot(&self) -> &ServerSnapshot {
        &self.snapshot
    }

    /// Closes the connection; the server leaves the section.
    pub async fn close(mut self) {
        if let Some(c) = self.cancel.take() {
            c.cancel();
        }
        let _ = (&mut self.task).await;
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "rmcp")))]
impl Hub {
    /// Connects to a configured server and keeps its block current:
    ///
    /// - tools are read again on `notifications/tools/list_changed`: through
    ///   the client handler in the 2025 era, through a `subscriptions/listen`
    ///   subscription with a tools-list-changed filter in the 2026-07-28 era
    ///   (opened again, with a growing pause, if it ends);
    /// - when the discover result has a positive `ttlMs`, the handshake is
    ///   asked again after it expires (instructions have no change
    ///   notification: that is the only way to see new ones);
    /// - when the connection ends, the server leaves the section.
    pub async fn connect(
        &self,
        entry: &ServerEntry,
        options: &ConnectOptions,
    ) -> std::result::Result<LiveServer, ConnectFailure> {
        let (tx, rx) = mpsc::unbounded_channel();
        let handler = HubHandler {
            config: options.client_config().clone(),
            changed: tx,
        };
        let connection = connect_with(entry, options, handler).await?;
        let alias = entry.alias.clone();
        let snapshot = connection.snapshot.clone();
        let owner = self.new_owner();
        if let Err(error) = self.upsert_as(Some(owner), alias.clone(), snapshot.clone()) {
            return Err(ConnectFailure {
                alias,
                error,
                stderr: connection.stderr.text(),
                elapsed: connection.elapsed,
            });
        }
        let client = connection.client;
        let cancel = client.cancellation_token();
        let follower = Follower {
            hub: self.clone(),
            owner,
            alias: alias.clone(),
            peer: client.peer().clone(),
            changed: rx,
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
        let task = tokio::spawn(follower.run(client, modern));
        Ok(LiveServer {
            alias,
            snapshot,
            cancel: Some(cancel),
            task,
        })
    }
}

/// What woke the follower.
enum Event {
    /// The connection ended.
    Closed,
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

/// The task behind a [`LiveServer`]: it applies the server's changes to its
/// hub entry, as long as it still owns that entry.
struct Follower {
    hub: Hub,
    owner: u64,
    alias: String,
    peer: Peer<RoleClient>,
    /// Tools list changes seen by [`HubHandler`] (2025 era).
    changed: mpsc::UnboundedReceiver<()>,
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
    async fn run(mut self, client: RunningService<RoleClient, HubHandler>, modern: bool) {
        if modern {
            self.subscription = self.peer.listen(self.filter.clone()).await.ok();
            // Catch a change made between the first tools/list and the subscription.
            self.refresh_tools().await;
        }
        self.next_handshake = after_ms(self.ttl);
        let mut done = Box::pin(client.waiting());
        loop {
            match self.next_event(&mut done).await {
                Event::Closed => break,
                Event::ToolsChanged => self.refresh_tools().await,
                Event::Ignored => {}
                Event::StreamEnded => self.on_stream_end(),
                Event::RelistenDue => self.on_relisten_due().await,
                Event::TtlExpired => self.on_ttl_expired().await,
            }
        }
        let _ = self.hub.remove_as(Some(self.owner), &self.alias);
    }

    /// Waits for the next thing to act on.
    async fn next_event(&mut self, done: &mut (impl Future + Unpin)) -> Event {
        tokio::select! {
            _ = done => Event::Closed,
            Some(()) = self.changed.recv() => Event::ToolsChanged,
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
