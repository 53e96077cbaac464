//! Following one connection: the loop that reads a server's
//! notifications, re-lists its tools, refreshes its handshake when its
//! `ttlMs` runs out, and tells the hub how the connection ended.

use std::future::Future;
use std::pin::Pin;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ProtocolVersion, ServerNotification, SubscriptionFilter};
use rmcp::service::{Peer, RoleClient, Subscription};
use tokio::sync::{Notify, watch};
use tokio::time::Instant;

use super::cache::DiscoverCache;
use super::snapshot::{discover_hints, discover_meta, list_tools, tools_from_rmcp};
use crate::hub::{Hub, StateReason, Why};
use crate::limits::Limits;
use crate::model::{Era, Instructions, ServerSnapshot};

/// The first pause before listening again after a subscription ended.
const FIRST_PAUSE: Duration = Duration::from_secs(1);
/// The pause doubles on each failed listen, up to this.
const MAX_PAUSE: Duration = Duration::from_secs(60);
/// A subscription that lasted this long ended the ordinary way (a restart,
/// a proxy's timeout): the next listen waits the first pause again. One
/// that ended sooner (cut at an event over the cap, say) doubles it, so a
/// server cannot have the gateway read a fresh stream every second.
const STEADY: Duration = Duration::from_secs(10);
/// How often an attached client is checked for a closed connection (rmcp
/// gives a borrower no signal for it).
const CLOSE_POLL: Duration = Duration::from_millis(250);

/// How a followed connection ended.
pub(super) enum Ending {
    /// The host closed, dropped or detached it.
    ByHost,
    /// It ended without the host (the server exited, the network dropped);
    /// with the exit status of a process the hub started.
    OnItsOwn(Option<ExitStatus>),
}

/// Resolves when the connection is gone, telling how.
pub(super) type Closed = Pin<Box<dyn Future<Output = Ending> + Send>>;

/// How long after an attached client's transport closed the host has to
/// let go of the client for it to count as closed by the host (rmcp drops
/// it right after closing it).
const HOST_LET_GO: Duration = Duration::from_millis(500);

/// Resolves when an attached client's connection is gone: at once when the
/// host drops its client (closing it), or when the transport closes; then
/// whether the host let go of the client right after tells who ended it.
pub(super) async fn attachment_closed(
    peer: Peer<RoleClient>,
    mut alive: watch::Receiver<()>,
) -> Ending {
    tokio::select! {
        _ = handler_gone(&mut alive) => return Ending::ByHost,
        _ = transport_closed(peer) => {}
    }
    match tokio::time::timeout(HOST_LET_GO, handler_gone(&mut alive)).await {
        Ok(()) => Ending::ByHost,
        Err(_) => Ending::OnItsOwn(None),
    }
}

/// Resolves once the [`HubHandler`] behind `alive` is dropped: the rmcp
/// client is gone (closed, cancelled or dropped by its owner).
async fn handler_gone(alive: &mut watch::Receiver<()>) {
    while alive.changed().await.is_ok() {}
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
    Closed(Ending),
    /// The [`HubHandler`] was dropped (the connection is ending).
    HandlerGone,
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

/// Follows one connection: applies the server's changes to its hub entry,
/// as long as it still owns that entry.
pub(super) struct Follower {
    pub(super) hub: Hub,
    pub(super) owner: u64,
    pub(super) alias: String,
    pub(super) peer: Peer<RoleClient>,
    pub(super) modern: bool,
    /// Tools list changes seen by [`HubHandler`] (2025 era); an error once
    /// the handler is gone.
    pub(super) changed: watch::Receiver<()>,
    /// Whether the handler is still there to tell of changes.
    pub(super) handler_alive: bool,
    pub(super) stop: Arc<Notify>,
    pub(super) filter: SubscriptionFilter,
    /// The `subscriptions/listen` stream (2026-07-28 era), while open.
    pub(super) subscription: Option<Subscription>,
    /// When to listen again, after a subscription ended.
    pub(super) relisten: Option<Instant>,
    pub(super) pause: Duration,
    /// When the open subscription was opened.
    pub(super) listened: Option<Instant>,
    /// The first discover result's positive `ttlMs`.
    pub(super) ttl: Option<u64>,
    pub(super) next_handshake: Option<Instant>,
}

impl Follower {
    pub(super) fn new(
        hub: &Hub,
        alias: &str,
        snapshot: &ServerSnapshot,
        owner: u64,
        peer: Peer<RoleClient>,
        changed: watch::Receiver<()>,
    ) -> Follower {
        let filter = filter_for(&peer);
        Follower {
            hub: hub.clone(),
            owner,
            alias: alias.to_string(),
            peer,
            modern: snapshot.era == Era::Modern,
            changed,
            handler_alive: true,
            stop: Arc::new(Notify::new()),
            filter,
            subscription: None,
            relisten: None,
            pause: FIRST_PAUSE,
            listened: None,
            ttl: snapshot
                .cache
                .as_ref()
                .and_then(|c| c.ttl_ms)
                .filter(|t| *t > 0),
            next_handshake: None,
        }
    }

    /// Follows until the connection ends (how) or the host detaches (`None`).
    pub(super) async fn run(
        mut self,
        mut closed: Closed,
        modern: bool,
    ) -> (Follower, Option<Ending>) {
        if modern {
            self.subscription = self.peer.listen(self.filter.clone()).await.ok();
            self.listened = self.subscription.as_ref().map(|_| Instant::now());
            // Catch a change made between the first tools/list and the subscription.
            self.refresh_tools().await;
        }
        self.next_handshake = after_ms(self.ttl);
        let ending = loop {
            match self.next_event(&mut closed).await {
                Event::Closed(ending) => break Some(ending),
                Event::Detached => break None,
                Event::HandlerGone => self.handler_alive = false,
                Event::ToolsChanged => self.refresh_tools().await,
                Event::Ignored => {}
                Event::StreamEnded => self.on_stream_end(),
                Event::RelistenDue => self.on_relisten_due().await,
                Event::TtlExpired => self.on_ttl_expired().await,
            }
        };
        self.subscription = None;
        (self, ending)
    }

    /// After an attached client's connection ended: a server that went away
    /// keeps its block for the hub's grace period (a quick reconnect with
    /// the same snapshot changes nothing), and leaves at once if the host
    /// then lets go of its client; one the host let go of leaves at once.
    pub(super) async fn finish(&mut self, ending: Option<Ending>) {
        let status = match ending {
            Some(Ending::OnItsOwn(status)) => status,
            _ => {
                let why = Why::new(StateReason::Closed);
                let _ = self.hub.remove_as(Some(self.owner), &self.alias, why);
                return;
            }
        };
        let why = Why::new(StateReason::ConnectionLost).exit(status);
        let _ = self.hub.disconnected_as(Some(self.owner), &self.alias, why);
        let grace = self.hub.grace_period();
        if tokio::time::timeout(grace, handler_gone(&mut self.changed))
            .await
            .is_ok()
        {
            let why = Why::new(StateReason::Closed);
            let _ = self.hub.remove_as(Some(self.owner), &self.alias, why);
        }
    }

    /// Waits for the next thing to act on.
    async fn next_event(&mut self, closed: &mut Closed) -> Event {
        tokio::select! {
            ending = closed => Event::Closed(ending),
            _ = self.stop.notified() => Event::Detached,
            changed = self.changed.changed(), if self.handler_alive => match changed {
                Ok(()) => Event::ToolsChanged,
                Err(_) => Event::HandlerGone,
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
        let lived = self
            .listened
            .take()
            .map_or(Duration::ZERO, |at| at.elapsed());
        let (wait, next) = waits(self.pause, lived);
        self.relisten = Some(Instant::now() + wait);
        self.pause = next;
    }

    /// Listens again; after a failure, waits twice as long before the next try.
    async fn on_relisten_due(&mut self) {
        self.subscription = self.peer.listen(self.filter.clone()).await.ok();
        if self.subscription.is_some() {
            self.relisten = None;
            self.listened = Some(Instant::now());
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

/// The changes a 2026-07-28 subscription asks for: the tools', and the
/// prompts' and resources' lists when the server says it tells of them (a
/// gateway forwards those to its hosts).
fn filter_for(peer: &Peer<RoleClient>) -> SubscriptionFilter {
    let mut filter = SubscriptionFilter::builder().tools_list_changed().build();
    if let Some(info) = peer.peer_info() {
        let caps = &info.capabilities;
        let told = |c: Option<bool>| c == Some(true);
        if told(caps.prompts.as_ref().and_then(|p| p.list_changed)) {
            filter.prompts_list_changed = Some(true);
        }
        if told(caps.resources.as_ref().and_then(|r| r.list_changed)) {
            filter.resources_list_changed = Some(true);
        }
    }
    filter
}

/// The wait before listening again after a subscription that lived
/// `lived` ended, `pause` the current pause; and the pause after it.
fn waits(pause: Duration, lived: Duration) -> (Duration, Duration) {
    let wait = if lived >= STEADY { FIRST_PAUSE } else { pause };
    (wait, (wait * 2).min(MAX_PAUSE))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A subscription cut soon after it opened (an event over the cap)
    /// doubles the wait before the next, up to a minute; one that lasted
    /// brings it back to a second.
    #[test]
    fn a_subscription_that_ends_soon_waits_longer_each_time() {
        let s = Duration::from_secs;
        let soon = Duration::from_millis(5);
        let mut pause = FIRST_PAUSE;
        let mut waited = Vec::new();
        for _ in 0..8 {
            let (wait, next) = waits(pause, soon);
            waited.push(wait.as_secs());
            pause = next;
        }
        assert_eq!(waited, [1, 2, 4, 8, 16, 32, 60, 60]);
        assert_eq!(waits(s(60), STEADY), (s(1), s(2)));
        assert_eq!(waits(s(4), STEADY - soon), (s(4), s(8)));
    }
}
