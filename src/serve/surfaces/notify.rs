//! What the gateway tells a host on its own: `list_changed` of the tools
//! (and instructions), the prompts and the resources, each at most once
//! per [`LIST_CHANGED_EVERY`] on the trailing edge, and the
//! `notifications/resources/updated` of the URIs the host subscribed to.
//! A 2025 session gets them as plain notifications; a 2026-07-28 one
//! through its `subscriptions/listen` (what its filter asked for), which
//! also carries the `notifications/tasks` of the tasks it names
//! (`task_status.rs`).

use std::sync::Arc;
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ErrorCode, GetMeta, ServerNotification, SubscriptionFilter, TaskStatusNotification,
    TaskStatusNotificationParams,
};
use rmcp::service::{Peer, RoleServer, SubscriptionContext};
use tokio::sync::watch;

use crate::serve::surfaces::Surfaces;
use crate::serve::surfaces::subscriptions::{MAX_PER_HOST, Pending};
use crate::serve::surfaces::task_status::{MAX_TASKS, Statuses, Watching};
use crate::serve::upstream::listen::Listen;
use crate::serve::upstream::sealed::Kind;

/// The shortest time between two `list_changed` to one host, and between
/// two views made from the hub: an upstream that changes its tools
/// thousands of times a second reaches each host as at most one
/// notification per period, and the last change always reaches it (the
/// host then reads the tools as they are).
pub(crate) const LIST_CHANGED_EVERY: Duration = Duration::from_millis(250);

/// Which list changed.
#[derive(Clone, Copy)]
enum List {
    Tools,
    Prompts,
    Resources,
}

impl Surfaces {
    /// Tells a 2025 session of each list change, paced, while it lasts.
    pub(in crate::serve) fn tell_session(&self, peer: Peer<RoleServer>) {
        let lists = [
            (List::Tools, self.subscribe_changes()),
            (List::Prompts, self.catalog().prompts_changed.subscribe()),
            (
                List::Resources,
                self.catalog().resources_changed.subscribe(),
            ),
        ];
        for (list, changes) in lists {
            let mut changes = Paced::new(changes);
            let peer = peer.clone();
            tokio::spawn(async move {
                while changes.next().await {
                    let sent = match list {
                        List::Tools => peer.notify_tool_list_changed().await,
                        List::Prompts => peer.notify_prompt_list_changed().await,
                        List::Resources => peer.notify_resource_list_changed().await,
                    };
                    if sent.is_err() {
                        return;
                    }
                }
            });
        }
    }

    /// What a 2026-07-28 subscription may have of what it asked for.
    pub(in crate::serve) fn accepted(&self, requested: &SubscriptionFilter) -> SubscriptionFilter {
        let mut accepted = SubscriptionFilter::builder()
            .tools_list_changed()
            .prompts_list_changed()
            .resources_list_changed()
            .build();
        accepted.resource_subscriptions = requested
            .resource_subscriptions
            .as_ref()
            .map(|uris| uris.iter().take(MAX_PER_HOST).cloned().collect());
        accepted
    }

    /// Serves one 2026-07-28 subscription (and the status of the `tasks`
    /// it names) until it is cancelled or the host is gone; the upstream
    /// subscriptions it made end with it.
    pub(in crate::serve) async fn listen_all(
        &self,
        context: SubscriptionContext,
        tasks: Vec<String>,
    ) -> Result<(), McpError> {
        let watching = match tasks.is_empty() {
            true => None,
            false => Some(self.watch_tasks(&context, &tasks).await?),
        };
        let statuses = watching.as_ref().map(|w| &*w.statuses);
        let uris = context.accepted().resource_subscriptions.clone();
        let (host, pending) = match uris.filter(|u| !u.is_empty()) {
            Some(uris) => {
                let (host, pending) = self.catalog().subscriptions.listener();
                for uri in &uris {
                    if let Err(e) = self.subscribe_host(host, uri).await {
                        tracing::debug!(uri = %uri, "subscription not made: {}", e.message);
                    }
                }
                (Some(host), pending)
            }
            None => (None, Arc::new(Pending::default())),
        };
        let result = self.listen_loop(&context, &pending, statuses).await;
        if let Some(host) = host {
            self.forget_host(host).await;
        }
        result
    }

    /// Listens to the tasks `sealed` (ids this gateway handed out) at
    /// their upstreams, for a host that declared the Tasks extension.
    async fn watch_tasks(
        &self,
        context: &SubscriptionContext,
        sealed: &[String],
    ) -> Result<Watching, McpError> {
        let meta = &context.request_context().meta;
        if !(meta.client_capabilities()).is_some_and(|c| c.supports_tasks()) {
            let needs = serde_json::json!({"requiredCapabilities": {"extensions": {
                "io.modelcontextprotocol/tasks": {}}}});
            let missing = "Missing required client capability: io.modelcontextprotocol/tasks";
            return Err(McpError::new(ErrorCode(-32003), missing, Some(needs)));
        }
        if sealed.len() > MAX_TASKS {
            let why = format!("at most {MAX_TASKS} task ids per subscription");
            return Err(McpError::invalid_params(why, None));
        }
        let mut tasks = std::collections::BTreeMap::new();
        for id in sealed {
            tasks.insert(self.upstreams().seal().open(Kind::Task, id)?, id.clone());
        }
        let mut watching = self.catalog().tasks.watch(&tasks);
        let mut by_alias = std::collections::BTreeMap::<&str, Vec<String>>::new();
        for (alias, id) in tasks.keys() {
            by_alias.entry(alias).or_default().push(id.clone());
        }
        for (alias, ids) in by_alias {
            let (stop, stopped) = tokio::sync::oneshot::channel();
            self.upstreams()
                .listen(alias, Listen::Tasks(ids), stopped)
                .await?;
            watching.stops.push(stop);
        }
        Ok(watching)
    }

    async fn listen_loop(
        &self,
        context: &SubscriptionContext,
        pending: &Pending,
        statuses: Option<&Statuses>,
    ) -> Result<(), McpError> {
        let mut tools = Paced::new(self.subscribe_changes());
        let mut prompts = Paced::new(self.catalog().prompts_changed.subscribe());
        let mut resources = Paced::new(self.catalog().resources_changed.subscribe());
        let sink = context.sink();
        let accepts = |wanted: Option<bool>| wanted == Some(true);
        loop {
            let sent = tokio::select! {
                _ = context.cancelled() => return Ok(()),
                changed = tools.next() => changed
                    && (!accepts(sink.accepted().tools_list_changed) || sink.notify_tool_list_changed().await.is_ok()),
                changed = prompts.next() => changed
                    && (!accepts(sink.accepted().prompts_list_changed) || sink.notify_prompt_list_changed().await.is_ok()),
                changed = resources.next() => changed
                    && (!accepts(sink.accepted().resources_list_changed) || sink.notify_resource_list_changed().await.is_ok()),
                uris = pending.next() => {
                    let mut ok = true;
                    for uri in uris.into_keys() {
                        ok &= sink.notify_resource_updated(uri).await.is_ok();
                    }
                    ok
                }
                sent = tell_statuses(context, statuses) => sent,
            };
            if !sent {
                return Ok(());
            }
        }
    }
}

/// Waits for task statuses (never, without tasks) and sends them to the
/// host on its subscription (rmcp's sink refuses `notifications/tasks`:
/// its filter has no task ids); whether they went out.
async fn tell_statuses(context: &SubscriptionContext, statuses: Option<&Statuses>) -> bool {
    let Some(statuses) = statuses else {
        return std::future::pending().await;
    };
    let mut ok = true;
    for status in statuses.next().await.into_values() {
        ok &= tell_status(context, status).await;
    }
    ok
}

async fn tell_status(context: &SubscriptionContext, status: TaskStatusNotificationParams) -> bool {
    let mut note = ServerNotification::TaskStatusNotification(TaskStatusNotification::new(status));
    (note.get_meta_mut()).set_subscription_id(context.sink().id().clone());
    let peer = &context.request_context().peer;
    peer.send_notification(note).await.is_ok()
}

/// One host's `list_changed` of one list: at most one per
/// [`LIST_CHANGED_EVERY`], on the trailing edge (a change within the
/// period is told when it ends, so the last one is never lost).
pub(in crate::serve) struct Paced {
    changes: watch::Receiver<u64>,
    last: Option<tokio::time::Instant>,
    /// A change seen and not told yet (kept when a wait is dropped, so a
    /// `select!` over several lists loses none).
    due: bool,
}

impl Paced {
    pub(in crate::serve) fn new(mut changes: watch::Receiver<u64>) -> Paced {
        changes.borrow_and_update();
        Paced {
            changes,
            last: None,
            due: false,
        }
    }

    /// Waits for the next change to tell; `false` once the gateway is gone.
    pub(in crate::serve) async fn next(&mut self) -> bool {
        if !self.due {
            if self.changes.changed().await.is_err() {
                return false;
            }
            self.due = true;
        }
        if let Some(last) = self.last {
            tokio::time::sleep_until(last + LIST_CHANGED_EVERY).await;
        }
        // Every change until now is in the one notification.
        self.changes.borrow_and_update();
        self.due = false;
        self.last = Some(tokio::time::Instant::now());
        true
    }
}
