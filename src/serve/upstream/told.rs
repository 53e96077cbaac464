//! What a 2025-era upstream is told of its client. It hears it once, at
//! its handshake, and may then ask that client (`sampling/createMessage`,
//! `elicitation/create`, `roots/list`), which the gateway relays to the
//! host whose call it answers. So a host's call goes over a connection
//! told what that host declared: the shared one when it was told the same
//! (`--capabilities`, or over stdio the host's own `initialize`), else
//! one of the upstream's own for that set, opened at the first such call
//! (with the options the shared one was started with), restarted as it
//! is, and closed with it. At most one per set, and at most [`MAX_TOLD`]
//! per upstream: a host's capabilities are its own to shape, and each set
//! may be one more process; past that its calls take the shared
//! connection, where what it did not declare is still refused
//! (`asking.rs`).

// rmcp marks sampling and roots deprecated (SEP-2577); servers still ask them.
#![allow(deprecated)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{ClientCapabilities, ClientConfig};

use crate::config::{ServerEntry, ServerTransport};
use crate::connect::{ConnectFailure, ConnectOptions, LiveServer};
use crate::hub::Hub;
use crate::support::lock;

/// The most connections of one upstream told other sets than its shared
/// one.
pub(crate) const MAX_TOLD: usize = 8;

/// What may be asked of a client, the part of its capabilities a
/// 2025-era upstream acts on: sampling, elicitation and roots.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Askable(ClientCapabilities);

impl Askable {
    /// The askable part of `declared` (nothing when `asked` is false: a
    /// host that cannot be sent requests).
    pub(crate) fn of(declared: Option<&ClientCapabilities>, asked: bool) -> Askable {
        let mut part = ClientCapabilities::default();
        if let (Some(d), true) = (declared, asked) {
            part.sampling = d.sampling.clone();
            part.elicitation = d.elicitation.clone();
            part.roots = d.roots.clone();
        }
        Askable(part)
    }

    /// Whether a connection told `told` was told this (compared in place:
    /// once per call).
    pub(crate) fn told_by(
        declared: Option<&ClientCapabilities>,
        asked: bool,
        told: &ClientCapabilities,
    ) -> bool {
        match (declared, asked) {
            (Some(d), true) => {
                d.sampling == told.sampling
                    && d.elicitation == told.elicitation
                    && d.roots == told.roots
            }
            _ => told.sampling.is_none() && told.elicitation.is_none() && told.roots.is_none(),
        }
    }

    /// The key of its connection.
    fn key(&self) -> String {
        serde_json::to_string(&self.0).unwrap_or_default()
    }

    /// `config` telling this and nothing else askable.
    fn told(&self, mut config: ClientConfig) -> ClientConfig {
        config.capabilities.sampling = self.0.sampling.clone();
        config.capabilities.elicitation = self.0.elicitation.clone();
        config.capabilities.roots = self.0.roots.clone();
        config
    }
}

/// One connection told one set, once opened (or why it could not be).
pub(crate) type Slot = Arc<tokio::sync::OnceCell<Result<LiveServer, String>>>;

/// The connections of 2025-era upstreams told other sets than their
/// shared one, and how each upstream was started.
#[derive(Default)]
pub(crate) struct Told {
    started: Mutex<BTreeMap<String, ConnectOptions>>,
    /// By alias and [`Askable::key`].
    open: Mutex<BTreeMap<(String, String), Slot>>,
}

/// The gateway's handler for upstream `alias` telling `config`.
type MakeHandler = crate::connect::follow::MakeHandler<super::asking::UpstreamHandler>;

/// Whether `key` has a connection, or its upstream has room for one more.
fn room(open: &BTreeMap<(String, String), Slot>, key: &(String, String)) -> bool {
    open.contains_key(key) || open.keys().filter(|(a, _)| *a == key.0).count() < MAX_TOLD
}

impl Told {
    /// `alias` is started with `options` (another set is opened with them).
    pub(crate) fn started(&self, alias: &str, options: &ConnectOptions) {
        lock(&self.started).insert(alias.to_string(), options.clone());
    }

    /// The connection of upstream `alias` (reached over `transport`) told
    /// `wanted` (its shared one, reached as `config`, was told otherwise),
    /// opened now if it is not yet; `Ok(None)` when the upstream was not
    /// started by the gateway (one [`Gateway::add`]ed: its options are not
    /// known) or has [`MAX_TOLD`] already.
    ///
    /// [`Gateway::add`]: crate::serve::Gateway::add
    pub(crate) async fn connection(
        &self,
        (alias, transport, config): (&str, ServerTransport, ClientConfig),
        wanted: &Askable,
        handler: impl FnOnce(&str, ClientConfig) -> MakeHandler,
    ) -> Result<Option<Slot>, String> {
        let Some(options) = lock(&self.started).get(alias).cloned() else {
            return Ok(None);
        };
        let key = (alias.to_string(), wanted.key());
        let slot = {
            let mut open = lock(&self.open);
            if !room(&open, &key) {
                tracing::warn!(upstream = %alias, told = %key.1, "{MAX_TOLD} connections told other capabilities are open: this host's call takes the shared one");
                return Ok(None);
            }
            open.entry(key.clone()).or_default().clone()
        };
        let opened = slot.get_or_init(|| async {
            let config = wanted.told(config);
            let options = options.client(config.clone());
            let entry = ServerEntry {
                alias: alias.to_string(),
                transport,
            };
            tracing::info!(upstream = %alias, told = %wanted.key(), "opening a connection told what a host declared");
            // A hub of its own: its tools and instructions are the shared one's.
            let hub = Hub::new(crate::assemble::Assembler::default());
            hub.connect_making(&entry, &options, handler(alias, config))
                .await
                .map_err(|ConnectFailure { error, .. }| error.to_string())
        });
        if let Err(e) = opened.await {
            let e = e.clone();
            // Not kept: the next such call tries again.
            let mut open = lock(&self.open);
            if open.get(&key).is_some_and(|held| Arc::ptr_eq(held, &slot)) {
                open.remove(&key);
            }
            return Err(e);
        }
        Ok(Some(slot))
    }

    /// Closes the connections of `alias` (its shared one was replaced:
    /// the next such call opens one to the new).
    pub(crate) fn replaced(&self, alias: &str) {
        lock(&self.open).retain(|(a, _), _| a != alias);
    }

    /// Closes the connections of `alias` (its shared one is gone).
    pub(crate) fn close(&self, alias: &str) {
        self.replaced(alias);
        lock(&self.started).remove(alias);
    }

    /// Closes them all.
    pub(crate) fn close_all(&self) {
        lock(&self.open).clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upstream_gets_at_most_max_told_connections_and_keeps_those_it_has() {
        let mut open = BTreeMap::new();
        let key = |a: &str, n: usize| (a.to_string(), format!("{{\"n\":{n}}}"));
        for n in 0..MAX_TOLD {
            assert!(room(&open, &key("a", n)));
            open.insert(key("a", n), Slot::default());
        }
        assert!(!room(&open, &key("a", MAX_TOLD)));
        assert!(room(&open, &key("a", 3)), "one it has is kept");
        assert!(room(&open, &key("b", 0)), "each upstream has its own room");
    }

    #[test]
    fn what_is_told_is_only_what_can_be_asked_of_a_host_that_can_be_asked() {
        let declared = ClientCapabilities::builder()
            .enable_sampling()
            .enable_roots()
            .enable_tasks()
            .build();
        let askable = Askable::of(Some(&declared), true);
        assert!(askable.0.sampling.is_some() && askable.0.roots.is_some());
        assert!(!askable.0.supports_tasks());
        assert!(Askable::told_by(Some(&declared), true, &askable.0));
        // A host that cannot be sent requests (stateless, or 2026-07-28): nothing.
        assert_eq!(Askable::of(Some(&declared), false), Askable::of(None, true));
        assert!(Askable::told_by(
            Some(&declared),
            false,
            &ClientCapabilities::default()
        ));
        assert!(!Askable::told_by(
            Some(&declared),
            true,
            &ClientCapabilities::default()
        ));
    }
}
