//! The upstreams' prompts and resources, served beside their tools: what
//! the gateway holds of them between requests (the names it gave, where
//! each URI goes, who subscribed to what), and the changes upstreams tell
//! of (and the task statuses they push).
//!
//! Nothing of it is assembled: a host's `prompts/list` or `resources/list`
//! asks every connected upstream that has them (`ask`), and what comes
//! back is sanitized the way tool text is before a host sees it.

use std::any::Any;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{ServerCapabilities, ServerNotification};
use tokio::sync::watch;

use crate::connect::ProgressTap;
use crate::serve::surfaces::prompt_names::Prompts;
use crate::serve::surfaces::resource_owners::Resources;
use crate::serve::surfaces::subscriptions::Subscriptions;
use crate::serve::surfaces::task_status::TaskWatch;
use crate::serve::upstream::asking::Asking;
use crate::support::lock;

/// What the gateway holds of the upstreams' prompts and resources.
#[derive(Default)]
pub(crate) struct Catalog {
    pub(in crate::serve) prompts: Mutex<Prompts>,
    pub(in crate::serve) resources: Mutex<Resources>,
    pub(in crate::serve) subscriptions: Subscriptions,
    /// Which hosts listen to which upstream's task.
    pub(in crate::serve) tasks: Arc<TaskWatch>,
    /// Each upstream's last lists, for the hosts' lists that cannot wait.
    pub(in crate::serve) known: Known,
    /// Bumped once per upstream change of its prompts a host should hear of.
    pub(in crate::serve) prompts_changed: watch::Sender<u64>,
    /// The same, for resources and resource templates.
    pub(in crate::serve) resources_changed: watch::Sender<u64>,
}

impl Catalog {
    /// `tap`, also showing this catalog the upstreams' changes, and
    /// `asking` their log messages as they are read (an answer read after
    /// them waits for their relay: `Asking::logs_before`).
    pub(crate) fn tap(self: &Arc<Catalog>, tap: ProgressTap, asking: Arc<Asking>) -> ProgressTap {
        let catalog = Arc::downgrade(self);
        tap.with_changes(move |alias, notification| {
            if let ServerNotification::LoggingMessageNotification(_) = notification {
                return asking.log_read(alias);
            }
            if let Some(catalog) = catalog.upgrade() {
                catalog.see(alias, notification);
            }
        })
    }

    /// One notification of the upstream `alias` (on its connection's
    /// reading task: nothing here waits).
    fn see(&self, alias: &str, notification: &ServerNotification) {
        match notification {
            ServerNotification::ResourceUpdatedNotification(n) => {
                self.subscriptions.updated(alias, &n.params.uri)
            }
            ServerNotification::ResourceListChangedNotification(_) => {
                tracing::debug!(upstream = %alias, "resources changed: list_changed");
                self.resources_changed.send_modify(|n| *n += 1);
            }
            ServerNotification::PromptListChangedNotification(_) => {
                tracing::debug!(upstream = %alias, "prompts changed: list_changed");
                self.prompts_changed.send_modify(|n| *n += 1);
            }
            ServerNotification::TaskStatusNotification(n) => self.tasks.updated(alias, &n.params),
            _ => {}
        }
    }

    /// Tells hosts both lists may have changed (an upstream joined).
    pub(in crate::serve) fn joined(&self, caps: &ServerCapabilities) {
        if caps.prompts.is_some() {
            self.prompts_changed.send_modify(|n| *n += 1);
        }
        if caps.resources.is_some() {
            self.resources_changed.send_modify(|n| *n += 1);
        }
    }

    pub(in crate::serve) fn with_prompts<T>(&self, f: impl FnOnce(&mut Prompts) -> T) -> T {
        f(&mut lock(&self.prompts))
    }

    pub(in crate::serve) fn with_resources<T>(&self, f: impl FnOnce(&mut Resources) -> T) -> T {
        f(&mut lock(&self.resources))
    }
}

/// The last list of each kind each upstream answered.
#[derive(Default)]
pub(crate) struct Known(Mutex<BTreeMap<Key, Arc<dyn Any + Send + Sync>>>);

/// A list's method and the upstream's alias.
type Key = (&'static str, String);

impl Known {
    /// The last `method` list `alias` answered.
    pub(in crate::serve) fn get<T: Clone + 'static>(
        &self,
        method: &'static str,
        alias: &str,
    ) -> Option<Vec<T>> {
        let known = lock(&self.0).get(&(method, alias.to_string())).cloned()?;
        known.downcast_ref::<Vec<T>>().cloned()
    }

    /// Keeps `items` as `alias`'s `method` list; whether it differs from
    /// the one known before.
    pub(in crate::serve) fn put<T: PartialEq + Send + Sync + 'static>(
        &self,
        method: &'static str,
        alias: &str,
        items: Vec<T>,
    ) -> bool {
        let mut known = lock(&self.0);
        let key = (method, alias.to_string());
        let same = known
            .get(&key)
            .and_then(|k| k.downcast_ref::<Vec<T>>())
            .is_some_and(|k| *k == items);
        known.insert(key, Arc::new(items));
        !same
    }
}
