//! [`Hub::connect`](crate::hub::Hub::connect): a connected server whose
//! block follows its changes.

use std::time::Duration;

use rmcp::model::{ClientCapabilities, ClientConfig, ProtocolVersion, RequestMetaObject};
use rmcp::service::RoleClient;

use super::handshake::{Handshake, client_config};
use super::snapshot::{scope_name, tools_from_rmcp};
use super::transport::{ConnectFailure, connect_with};
use crate::config::ServerEntry;
use crate::model::{CacheHints, Era, Instructions, ServerSnapshot};

/// The rmcp client handler the hub connects with: it forwards
/// `notifications/tools/list_changed` (2025 era) to the server's watcher.
#[derive(Debug, Clone)]
pub struct HubHandler {
    config: ClientConfig,
    changed: tokio::sync::mpsc::UnboundedSender<()>,
}

impl rmcp::ClientHandler for HubHandler {
    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }

    async fn on_tool_list_changed(&self, _context: rmcp::service::NotificationContext<RoleClient>) {
        let _ = self.changed.send(());
    }
}

/// A server the [`Hub`](crate::hub::Hub) keeps up to date; see
/// [`Hub::connect`](crate::hub::Hub::connect).
pub struct LiveServer {
    alias: String,
    snapshot: ServerSnapshot,
    cancel: Option<rmcp::service::RunningServiceCancellationToken>,
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

impl crate::hub::Hub {
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
        handshake: &Handshake,
        timeout: Duration,
    ) -> std::result::Result<LiveServer, ConnectFailure> {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let handler = HubHandler {
            config: client_config(),
            changed: tx,
        };
        let connection = connect_with(entry, handshake, timeout, handler).await?;
        let alias = entry.alias.clone();
        let snapshot = connection.snapshot.clone();
        let owner = self.new_owner();
        if let Err(error) = self.upsert_as(Some(owner), alias.clone(), snapshot.clone()) {
            return Err(ConnectFailure {
                error,
                stderr: connection.stderr.text(),
                elapsed: connection.elapsed,
            });
        }
        let client = connection.client;
        let cancel = client.cancellation_token();
        let peer = client.peer().clone();
        let hub = self.clone();
        let watch_alias = alias.clone();
        let modern = snapshot.era == Era::Modern;
        let ttl = snapshot
            .cache
            .as_ref()
            .and_then(|c| c.ttl_ms)
            .filter(|t| *t > 0);
        let task = tokio::spawn(async move {
            let alias = watch_alias;
            let filter = rmcp::model::SubscriptionFilter::builder()
                .tools_list_changed()
                .build();
            let mut subscription = None;
            // When a subscription ends, listen again after a pause that doubles up to a minute.
            let mut relisten: Option<tokio::time::Instant> = None;
            let mut pause = Duration::from_secs(1);
            if modern {
                subscription = peer.listen(filter.clone()).await.ok();
                // Catch a change made between the first tools/list and the subscription.
                refresh_tools(&hub, owner, &alias, &peer).await;
            }
            let mut next_handshake =
                ttl.map(|t| tokio::time::Instant::now() + Duration::from_millis(t));
            let mut done = Box::pin(client.waiting());
            loop {
                tokio::select! {
                    _ = &mut done => break,
                    Some(()) = rx.recv() => refresh_tools(&hub, owner, &alias, &peer).await,
                    n = next_notification(&mut subscription) => match n {
                        Some(rmcp::model::ServerNotification::ToolListChangedNotification(_)) => {
                            refresh_tools(&hub, owner, &alias, &peer).await
                        }
                        Some(_) => {}
                        None => {
                            subscription = None;
                            relisten = Some(tokio::time::Instant::now() + pause);
                        }
                    },
                    _ = sleep_until(relisten) => {
                        subscription = peer.listen(filter.clone()).await.ok();
                        if subscription.is_some() {
                            relisten = None;
                            pause = Duration::from_secs(1);
                            refresh_tools(&hub, owner, &alias, &peer).await;
                        } else {
                            pause = (pause * 2).min(Duration::from_secs(60));
                            relisten = Some(tokio::time::Instant::now() + pause);
                        }
                    }
                    _ = sleep_until(next_handshake) => {
                        // On a failed re-handshake, try again after the same ttl.
                        let ttl = handshake_again(&hub, owner, &alias, &peer).await.or(ttl);
                        next_handshake = ttl
                            .map(|t| tokio::time::Instant::now() + Duration::from_millis(t));
                    }
                }
            }
            let _ = hub.remove_as(Some(owner), &alias);
        });
        Ok(LiveServer {
            alias,
            snapshot,
            cancel: Some(cancel),
            task,
        })
    }
}

async fn next_notification(
    subscription: &mut Option<rmcp::service::Subscription>,
) -> Option<rmcp::model::ServerNotification> {
    match subscription {
        Some(s) => s.next().await.ok().flatten(),
        None => std::future::pending().await,
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

async fn refresh_tools(
    hub: &crate::hub::Hub,
    owner: u64,
    alias: &str,
    peer: &rmcp::service::Peer<RoleClient>,
) {
    if let Ok(items) = peer.list_all_tools().await
        && let Ok(tools) = tools_from_rmcp(&items)
    {
        let _ = hub.update_tools_as(Some(owner), alias, tools);
    }
}

/// Asks `server/discover` again and takes its instructions; returns the next ttlMs.
async fn handshake_again(
    hub: &crate::hub::Hub,
    owner: u64,
    alias: &str,
    peer: &rmcp::service::Peer<RoleClient>,
) -> Option<u64> {
    let meta = RequestMetaObject::with_client_context(
        ProtocolVersion::V_2026_07_28,
        client_config().client_info,
        ClientCapabilities::default(),
    );
    let found = peer.discover(meta).await.ok()?;
    let cache = Some(CacheHints {
        ttl_ms: Some(found.ttl_ms),
        cache_scope: Some(scope_name(&found.cache_scope).to_string()),
    });
    let instructions = Instructions::from_raw(found.instructions.as_deref());
    hub.update_handshake_as(owner, alias, instructions, cache)
        .ok()?;
    Some(found.ttl_ms).filter(|t| *t > 0)
}
