//! Resource subscriptions, both ways: a host subscribes to a URI
//! (`resources/subscribe` in a 2025 session, a `subscriptions/listen`
//! filter's `resourceSubscriptions` in a 2026-07-28 one), the gateway
//! subscribes once to the upstream that owns it (the same two ways, by the
//! upstream's era), and each `notifications/resources/updated` the owner
//! sends for it goes to every host subscribed to it (an update of a URI
//! from an upstream that does not own it goes nowhere). The last host to
//! leave a URI ends the upstream's subscription.
//!
//! Updates a host has not been sent yet are kept once per URI, so an
//! upstream that sends thousands costs a slow host at most one pending
//! update per URI it subscribed to.

// rmcp marks resources/subscribe legacy-only (2026-07-28 uses subscriptions/listen); 2025 peers still use it.
#![allow(deprecated)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ClientRequest, InitializeRequestParams, ResourceUpdatedNotificationParam, SubscribeRequest,
    SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequest, UnsubscribeRequestParams,
};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::oneshot;

use crate::serve::surfaces::lists::fault;
use crate::serve::surfaces::mailbox::Mailbox;
use crate::serve::upstream::listen::Listen;
use crate::serve::upstream::send::{Outbound, Upstreams};
use crate::support::lock;

/// The most URIs one host (a 2025 session, a 2026-07-28 subscription)
/// may subscribe to: a template makes as many URIs as a host likes, and
/// each first subscription is one at the upstream.
pub(in crate::serve) const MAX_PER_HOST: usize = 1024;

/// One host's updates not sent yet, by URI.
pub(in crate::serve) type Pending = Mailbox<()>;

/// A host that subscribed: a 2025 session (known by its `initialize`
/// params, one object per session) or one 2026-07-28 subscription.
struct Host {
    id: u64,
    session: Option<Arc<InitializeRequestParams>>,
    pending: Arc<Pending>,
}

/// How the gateway is subscribed to a URI at its upstream.
pub(in crate::serve) enum Subscription {
    /// `resources/subscribe` of a 2025 upstream: (alias, URI), ended with
    /// `resources/unsubscribe` through the same way out.
    Legacy(Arc<Upstreams>, String, String),
    /// A `subscriptions/listen` of the upstream, ended when this is dropped.
    Listen(#[allow(dead_code)] oneshot::Sender<()>),
}

struct Uri {
    owner: String,
    hosts: BTreeSet<u64>,
    upstream: Option<Subscription>,
}

#[derive(Default)]
struct State {
    uris: BTreeMap<String, Uri>,
    hosts: Vec<Host>,
    next: u64,
}

/// Every host's subscriptions, and the gateway's at the upstreams.
#[derive(Default)]
pub(crate) struct Subscriptions {
    state: Arc<Mutex<State>>,
}

impl Subscriptions {
    /// An update the upstream `alias` sent for `uri`.
    pub(in crate::serve) fn updated(&self, alias: &str, uri: &str) {
        let state = lock(&self.state);
        let Some(sub) = state.uris.get(uri).filter(|s| s.owner == alias) else {
            tracing::debug!(upstream = %alias, uri = %uri, "resource update nobody subscribed to: dropped");
            return;
        };
        for host in state.hosts.iter().filter(|h| sub.hosts.contains(&h.id)) {
            host.pending.push(uri.to_string(), ());
        }
    }

    /// The host of a 2025 session; made (with its sender) on its first
    /// subscription when `make`.
    pub(in crate::serve) fn session(&self, peer: &Peer<RoleServer>, make: bool) -> Option<u64> {
        let info = peer.peer_info()?;
        let mut state = lock(&self.state);
        let mine = |h: &&Host| h.session.as_ref().is_some_and(|s| Arc::ptr_eq(s, &info));
        if let Some(h) = state.hosts.iter().find(mine) {
            return Some(h.id);
        }
        if !make {
            return None;
        }
        let (id, pending) = state.add_host(Some(info));
        drop(state);
        let (peer, state) = (peer.clone(), Arc::downgrade(&self.state));
        tokio::spawn(async move {
            'sending: loop {
                for uri in pending.next().await.into_keys() {
                    let update = ResourceUpdatedNotificationParam::new(uri);
                    if peer.notify_resource_updated(update).await.is_err() {
                        break 'sending;
                    }
                }
            }
            // The session is gone: so are its subscriptions.
            let Some(state) = state.upgrade() else { return };
            let endings = lock(&state).forget(id);
            for ending in endings {
                end(ending).await;
            }
        });
        Some(id)
    }

    /// The URIs subscribed to at the upstream `alias`.
    pub(in crate::serve) fn owned_by(&self, alias: &str) -> Vec<String> {
        let state = lock(&self.state);
        (state.uris.iter())
            .filter(|(_, s)| s.owner == alias)
            .map(|(u, _)| u.clone())
            .collect()
    }

    /// How many URIs `host` is subscribed to.
    pub(in crate::serve) fn count(&self, host: u64) -> usize {
        let state = lock(&self.state);
        state
            .uris
            .values()
            .filter(|s| s.hosts.contains(&host))
            .count()
    }

    /// A new host for one 2026-07-28 subscription.
    pub(in crate::serve) fn listener(&self) -> (u64, Arc<Pending>) {
        lock(&self.state).add_host(None)
    }

    /// Adds `host` to `uri` owned by `owner`; whether it is the first.
    pub(in crate::serve) fn add(&self, host: u64, uri: &str, owner: &str) -> bool {
        let mut state = lock(&self.state);
        let sub = state.uris.entry(uri.to_string()).or_insert_with(|| Uri {
            owner: owner.to_string(),
            hosts: BTreeSet::new(),
            upstream: None,
        });
        sub.hosts.insert(host);
        sub.hosts.len() == 1 && sub.upstream.is_none()
    }

    pub(in crate::serve) fn set_upstream(&self, uri: &str, upstream: Subscription) {
        if let Some(sub) = lock(&self.state).uris.get_mut(uri) {
            sub.upstream = Some(upstream);
        }
    }

    /// Takes `host` off `uri`; the upstream subscription to end when it was the last.
    pub(in crate::serve) fn remove(
        &self,
        host: u64,
        uri: &str,
    ) -> Option<(String, Option<Subscription>)> {
        lock(&self.state).remove(host, uri)
    }

    /// Takes `host` off everything; the upstream subscriptions to end.
    pub(in crate::serve) fn forget(&self, host: u64) -> Vec<(String, Option<Subscription>)> {
        lock(&self.state).forget(host)
    }
}

impl State {
    fn remove(&mut self, host: u64, uri: &str) -> Option<(String, Option<Subscription>)> {
        let sub = self.uris.get_mut(uri)?;
        sub.hosts.remove(&host);
        if !sub.hosts.is_empty() {
            return None;
        }
        let sub = self.uris.remove(uri)?;
        Some((uri.to_string(), sub.upstream))
    }

    fn forget(&mut self, host: u64) -> Vec<(String, Option<Subscription>)> {
        self.hosts.retain(|h| h.id != host);
        let uris: Vec<String> = (self.uris.iter())
            .filter(|(_, s)| s.hosts.contains(&host))
            .map(|(u, _)| u.clone())
            .collect();
        uris.iter().filter_map(|u| self.remove(host, u)).collect()
    }

    fn add_host(&mut self, session: Option<Arc<InitializeRequestParams>>) -> (u64, Arc<Pending>) {
        self.next += 1;
        let pending = Arc::new(Pending::default());
        self.hosts.push(Host {
            id: self.next,
            session,
            pending: pending.clone(),
        });
        (self.next, pending)
    }
}

pub(in crate::serve) async fn subscribe_upstream(
    upstreams: &Arc<Upstreams>,
    alias: &str,
    uri: &str,
) -> Result<Subscription, McpError> {
    let failed = |e: McpError| {
        let why = format!("refused the subscription to {uri:?}: {}", e.message);
        fault(alias, why)
    };
    if !upstreams.is_modern(alias) {
        let request = ClientRequest::SubscribeRequest(SubscribeRequest::new(
            SubscribeRequestParams::new(uri),
        ));
        let out = Outbound::method(alias, "resources/subscribe", request);
        upstreams
            .send(out, std::future::pending())
            .await
            .map_err(failed)?;
        let (alias, uri) = (alias.to_string(), uri.to_string());
        return Ok(Subscription::Legacy(upstreams.clone(), alias, uri));
    }
    let filter = SubscriptionFilter::builder()
        .resource_subscriptions([uri])
        .build();
    let (stop, stopped) = oneshot::channel();
    upstreams
        .listen(alias, Listen::Filter(filter), stopped)
        .await
        .map_err(failed)?;
    Ok(Subscription::Listen(stop))
}

/// Ends the gateway's subscription at an upstream.
pub(in crate::serve) async fn end((uri, upstream): (String, Option<Subscription>)) {
    if let Some(Subscription::Legacy(upstreams, alias, uri)) = upstream {
        let request = ClientRequest::UnsubscribeRequest(UnsubscribeRequest::new(
            UnsubscribeRequestParams::new(uri),
        ));
        let out = Outbound::method(&alias, "resources/unsubscribe", request);
        let _ = upstreams.send(out, std::future::pending()).await;
    } else {
        tracing::debug!(uri = %uri, "subscription ended");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_update_reaches_the_subscribed_hosts_of_its_owner_only() {
        let subs = Subscriptions::default();
        let (one, first) = subs.listener();
        let (two, second) = subs.listener();
        let guide = "book://a/guide";
        assert!(
            subs.add(one, guide, "a"),
            "the first host subscribes upstream"
        );
        assert!(!subs.add(two, guide, "a"), "the second does not");
        // Another upstream's update of a's URI goes nowhere.
        subs.updated("b", guide);
        assert!(first.peek().is_empty() && second.peek().is_empty());
        // The owner's reach both hosts, once per URI however many came.
        subs.updated("a", guide);
        subs.updated("a", guide);
        subs.updated("a", "book://a/other");
        let want = BTreeMap::from([(guide.to_string(), ())]);
        assert_eq!(first.peek(), want);
        assert_eq!(second.peek(), want);
        // The last host to leave ends the upstream's subscription.
        assert!(subs.remove(one, guide).is_none());
        assert_eq!(subs.forget(two).len(), 1);
        subs.updated("a", guide);
        assert!(subs.forget(one).is_empty());
    }
}
