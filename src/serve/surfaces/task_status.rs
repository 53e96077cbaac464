//! Task status through the gateway (the Tasks extension,
//! `io.modelcontextprotocol/tasks`): a host's `subscriptions/listen` whose
//! filter names `taskIds` (ids the gateway handed out, sealed to their
//! upstream) becomes a `subscriptions/listen` of each upstream for its own
//! ids, and each `notifications/tasks` an upstream sends for one of them
//! reaches every host listening to it, the task id sealed again.
//!
//! rmcp 3.11's `SubscriptionFilter` has no `taskIds` (its server drops
//! them, its client cannot send them): over HTTP the front reads them from
//! the request's body ([`task_ids`]) and hands them on in the request's
//! extensions ([`ListenTasks`]); upstream, the request is sent raw
//! (`Listen::Tasks`). The acknowledgement rmcp sends the host
//! names no task ids for that reason.
//!
//! Statuses a host has not been sent yet are kept once per task (the
//! latest), so an upstream that floods costs a slow host one pending
//! status per task it listens to.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::model::TaskStatusNotificationParams;
use tokio::sync::oneshot;

use crate::serve::surfaces::mailbox::Mailbox;
use crate::support::lock;

/// The most task ids one `subscriptions/listen` may name.
pub(crate) const MAX_TASKS: usize = 256;

/// The `taskIds` of a host's `subscriptions/listen`, as the front read them.
#[derive(Clone, Debug, Default)]
pub(crate) struct ListenTasks(pub(crate) Vec<String>);

/// The `taskIds` of a `subscriptions/listen` body, when it names some.
pub(crate) fn task_ids(body: &[u8]) -> Option<Vec<String>> {
    #[derive(serde::Deserialize)]
    struct Listen {
        params: Params,
    }
    #[derive(serde::Deserialize)]
    struct Params {
        notifications: Filter,
    }
    #[derive(serde::Deserialize)]
    struct Filter {
        #[serde(rename = "taskIds")]
        task_ids: Option<Vec<String>>,
    }
    let listen: Listen = serde_json::from_slice(body).ok()?;
    (listen.params.notifications.task_ids).filter(|ids| !ids.is_empty())
}

/// One host's statuses not sent yet, by task.
pub(in crate::serve) type Statuses = Mailbox<TaskStatusNotificationParams>;

/// One host's interest in one task: its listen, the id it knows, its statuses.
struct Watcher {
    host: u64,
    sealed: String,
    statuses: Arc<Statuses>,
}

/// Which hosts listen to which task, by (upstream, the upstream's id).
#[derive(Default)]
pub(crate) struct TaskWatch {
    watchers: Mutex<BTreeMap<(String, String), Vec<Watcher>>>,
    next: AtomicU64,
}

impl TaskWatch {
    /// A status the upstream `alias` sent: to each host listening to it,
    /// under the id that host knows (dropped when none listens).
    pub(in crate::serve) fn updated(&self, alias: &str, status: &TaskStatusNotificationParams) {
        let key = (alias.to_string(), status.task.task.task_id.clone());
        let watchers = lock(&self.watchers);
        let Some(watching) = watchers.get(&key) else {
            tracing::debug!(upstream = %alias, "a task status nobody listens to: dropped");
            return;
        };
        for watcher in watching {
            let mut status = status.clone();
            status.task.task.task_id = watcher.sealed.clone();
            // Its `_meta` named the upstream's subscription, not the host's.
            status.meta = None;
            watcher
                .statuses
                .push(status.task.task.task_id.clone(), status);
        }
    }

    /// A host listening to `tasks` ((upstream, its id) -> the sealed id);
    /// it stops when the [`Watching`] is dropped.
    pub(in crate::serve) fn watch(
        self: &Arc<TaskWatch>,
        tasks: &BTreeMap<(String, String), String>,
    ) -> Watching {
        let host = self.next.fetch_add(1, Ordering::Relaxed);
        let statuses = Arc::new(Statuses::default());
        let mut watchers = lock(&self.watchers);
        for (key, sealed) in tasks {
            watchers.entry(key.clone()).or_default().push(Watcher {
                host,
                sealed: sealed.clone(),
                statuses: statuses.clone(),
            });
        }
        Watching {
            watch: self.clone(),
            host,
            statuses,
            stops: Vec::new(),
        }
    }

    fn forget(&self, host: u64) {
        let mut watchers = lock(&self.watchers);
        watchers.retain(|_, watching| {
            watching.retain(|w| w.host != host);
            !watching.is_empty()
        });
    }
}

/// A host's listen to tasks: its statuses; the upstreams' listens end
/// (their stops dropped) and the host is forgotten when it is dropped.
pub(in crate::serve) struct Watching {
    watch: Arc<TaskWatch>,
    host: u64,
    pub(in crate::serve) statuses: Arc<Statuses>,
    pub(in crate::serve) stops: Vec<oneshot::Sender<()>>,
}

impl Drop for Watching {
    fn drop(&mut self) {
        self.watch.forget(self.host);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(id: &str, text: &str) -> TaskStatusNotificationParams {
        let stamp = "2026-01-01T00:00:00Z";
        let status = serde_json::json!({"taskId": id, "status": "working", "statusMessage": text,
            "createdAt": stamp, "lastUpdatedAt": stamp, "ttlMs": null});
        serde_json::from_value(status).unwrap()
    }

    #[test]
    fn a_status_reaches_the_hosts_of_its_task_under_their_id_and_the_latest_only() {
        let watch = Arc::new(TaskWatch::default());
        let key = |a: &str, id: &str| (a.to_string(), id.to_string());
        let one = watch.watch(&BTreeMap::from([(key("a", "t1"), "a.x.t1".to_string())]));
        let two = watch.watch(&BTreeMap::from([(key("b", "t1"), "b.y.t1".to_string())]));
        watch.updated("a", &status("t1", "first"));
        watch.updated("a", &status("t1", "second"));
        watch.updated("a", &status("t2", "nobody's"));
        let got = one.statuses.peek();
        assert_eq!(got.len(), 1);
        let sent = &got["a.x.t1"];
        assert_eq!(sent.task.task.task_id, "a.x.t1");
        assert_eq!(sent.task.task.status_message.as_deref(), Some("second"));
        assert!(two.statuses.peek().is_empty(), "b's t1 is another task");
        drop(one);
        watch.updated("a", &status("t1", "after"));
        assert_eq!(lock(&watch.watchers).len(), 1, "only b's task is watched");
    }

    #[cfg(feature = "serve-http")]
    #[test]
    fn the_task_ids_of_a_listen_are_read_from_its_body() {
        assert_eq!(
            task_ids(br#"{"params": {"notifications": {"taskIds": ["s1"]}}}"#),
            Some(vec!["s1".to_string()])
        );
        for body in [&br#"{"params": {"notifications": {}}}"#[..], b"{", b"[]"] {
            assert_eq!(task_ids(body), None);
        }
    }
}
