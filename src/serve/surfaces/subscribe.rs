//! A host's resource subscriptions, served: `resources/subscribe` and
//! `resources/unsubscribe` of a 2025 session, the URIs of a 2026-07-28
//! `subscriptions/listen`, and an upstream's subscriptions made again
//! after its restart. What is held is `subscriptions.rs`'.

use rmcp::ErrorData as McpError;
use rmcp::service::{Peer, RoleServer};

use crate::serve::surfaces::Surfaces;
use crate::serve::surfaces::subscriptions::{MAX_PER_HOST, end, subscribe_upstream};

impl Surfaces {
    /// `resources/subscribe` of a 2025 session.
    pub(in crate::serve) async fn subscribe_session(
        &self,
        peer: &Peer<RoleServer>,
        uri: &str,
    ) -> Result<(), McpError> {
        let subs = &self.catalog().subscriptions;
        let Some(host) = subs.session(peer, true) else {
            return Err(McpError::invalid_request(
                "subscribe after initialize",
                None,
            ));
        };
        self.subscribe_host(host, uri).await
    }

    /// `resources/unsubscribe` of a 2025 session.
    pub(in crate::serve) async fn unsubscribe_session(&self, peer: &Peer<RoleServer>, uri: &str) {
        let subs = &self.catalog().subscriptions;
        if let Some(host) = subs.session(peer, false)
            && let Some(ending) = subs.remove(host, uri)
        {
            end(ending).await;
        }
    }

    /// Subscribes `host` to `uri`, and the gateway to its owner when it is
    /// the first host.
    pub(in crate::serve) async fn subscribe_host(
        &self,
        host: u64,
        uri: &str,
    ) -> Result<(), McpError> {
        let alias = self.resource_owner(uri).await?;
        let subs = &self.catalog().subscriptions;
        if subs.count(host) >= MAX_PER_HOST {
            return Err(McpError::invalid_request(
                format!("at most {MAX_PER_HOST} resource subscriptions per session"),
                None,
            ));
        }
        if !subs.add(host, uri, &alias) {
            return Ok(());
        }
        let subscribed = subscribe_upstream(self.upstreams(), &alias, uri).await;
        match subscribed {
            Ok(upstream) => {
                subs.set_upstream(uri, upstream);
                Ok(())
            }
            Err(e) => {
                subs.remove(host, uri);
                tracing::warn!(upstream = %alias, "resources/subscribe failed: {}", e.message);
                Err(e)
            }
        }
    }

    /// The upstream `alias` was restarted: the subscriptions its old
    /// process had are made again with the new one, and hosts hear that
    /// its prompts and resources may have changed.
    pub(in crate::serve) async fn upstream_back(&self, alias: &str) {
        // Looked up, not waited for: a restart that failed already is no call to log.
        let Some(capabilities) = self.upstreams().capabilities_of(alias) else {
            return;
        };
        self.catalog().joined(&capabilities);
        let subs = &self.catalog().subscriptions;
        for uri in subs.owned_by(alias) {
            match subscribe_upstream(self.upstreams(), alias, &uri).await {
                Ok(upstream) => subs.set_upstream(&uri, upstream),
                Err(e) => {
                    tracing::warn!(upstream = %alias, "resources/subscribe again failed: {}", e.message)
                }
            }
        }
    }

    /// Ends every subscription of `host` (a 2026-07-28 subscription that ended).
    pub(in crate::serve) async fn forget_host(&self, host: u64) {
        for ending in self.catalog().subscriptions.forget(host) {
            end(ending).await;
        }
    }
}
