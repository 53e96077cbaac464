//! What the gateway serves besides tools: prompts, resources, skills,
//! subscriptions and the notifications that tell hosts of changes. They
//! are [`Surfaces`]' methods, over what the gateway hands them: the hub,
//! the upstreams (every request to one leaves through their one send) and
//! the catalog; `impl Gateway` lives in `gateway/` only.

use std::sync::Arc;

use tokio::sync::watch;

use crate::hub::Hub;
use crate::serve::surfaces::catalog::Catalog;
use crate::serve::upstream::send::Upstreams;

pub(crate) mod catalog;
pub(crate) mod known;
pub(crate) mod lists;
pub(crate) mod mailbox;
pub(crate) mod notify;
pub(crate) mod prompt_names;
pub(crate) mod prompts;
pub(crate) mod resource_owners;
pub(crate) mod resources;
pub(crate) mod skills;
pub(crate) mod subscribe;
pub(crate) mod subscriptions;
pub(crate) mod task_status;
pub(crate) mod uri;

/// What the surfaces serve from: the hub, the live upstreams, the
/// upstreams' prompts and resources, and the changes told to hosts.
pub(crate) struct Surfaces {
    hub: Hub,
    upstreams: Arc<Upstreams>,
    catalog: Arc<Catalog>,
    /// Bumped once per change of the tools or the instructions a host
    /// should hear of (`list_changed`).
    tools_changed: watch::Sender<u64>,
}

impl Surfaces {
    pub(crate) fn new(hub: Hub, upstreams: Arc<Upstreams>) -> Surfaces {
        Surfaces {
            hub,
            upstreams,
            catalog: Arc::default(),
            tools_changed: watch::channel(0).0,
        }
    }

    pub(crate) fn hub(&self) -> &Hub {
        &self.hub
    }

    pub(crate) fn upstreams(&self) -> &Arc<Upstreams> {
        &self.upstreams
    }

    pub(crate) fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    /// A receiver that wakes once per change of the tools or instructions.
    pub(crate) fn subscribe_changes(&self) -> watch::Receiver<u64> {
        self.tools_changed.subscribe()
    }

    /// Tells every host the tools or the instructions changed.
    pub(crate) fn tools_changed(&self) {
        self.tools_changed.send_modify(|n| *n += 1);
    }

    /// Waits until the upstreams still starting settled, at most the call
    /// timeout, or `until` when it comes first (a list does not wait for a
    /// hung server: the ones that join later are told by `list_changed`).
    pub(crate) async fn wait_starting(&self, until: Option<tokio::time::Instant>) {
        let mut limit = self.upstreams.call_timeout();
        if let Some(until) = until {
            let left = until.saturating_duration_since(tokio::time::Instant::now());
            limit = Some(limit.map_or(left, |l| l.min(left)));
        }
        self.upstreams.starting().wait_all(limit).await;
    }
}
