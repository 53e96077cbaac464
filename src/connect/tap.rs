//! [`ProgressTap`]: a server's `notifications/progress`, seen as the
//! transport reads them (in the order the server sent them, and before the
//! answer they precede), for a gateway that relays them.

use std::sync::Arc;

use rmcp::model::{JsonRpcMessage, ProgressNotificationParam, ServerNotification};
use rmcp::service::{RoleClient, RxJsonRpcMessage};
#[cfg(feature = "http")]
use rmcp::{service::TxJsonRpcMessage, transport::Transport};

/// Called with the server's alias and each progress notification it sends.
///
/// rmcp hands notifications to the client handler on tasks of their own,
/// which may run out of order and after the answer to the call: a relay
/// needs them here instead. The function runs on the connection's reading
/// task, so it must not block.
///
/// A gateway also sees here the notifications it routes to hosts (a
/// resource updated, a prompt or resource list changed, a task's status:
/// [`ProgressTap::with_changes`]).
#[derive(Clone)]
pub(crate) struct ProgressTap(Arc<TapFn>, Option<Arc<ChangeFn>>);

type TapFn = dyn Fn(&str, &ProgressNotificationParam) + Send + Sync;
type ChangeFn = dyn Fn(&str, &ServerNotification) + Send + Sync;

impl std::fmt::Debug for ProgressTap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressTap")
    }
}

impl ProgressTap {
    #[cfg(feature = "serve")]
    pub(crate) fn new(
        f: impl Fn(&str, &ProgressNotificationParam) + Send + Sync + 'static,
    ) -> Self {
        ProgressTap(Arc::new(f), None)
    }

    /// Shows `f` each `notifications/resources/updated`,
    /// `notifications/resources/list_changed`,
    /// `notifications/prompts/list_changed` and `notifications/tasks` too.
    #[cfg(feature = "serve")]
    pub(crate) fn with_changes(
        mut self,
        f: impl Fn(&str, &ServerNotification) + Send + Sync + 'static,
    ) -> Self {
        self.1 = Some(Arc::new(f));
        self
    }

    /// The tap of one server's connection.
    pub(super) fn bind(&self, alias: &str) -> BoundTap {
        BoundTap {
            alias: alias.into(),
            tap: self.clone(),
        }
    }
}

/// A [`ProgressTap`] for the connection of one server.
#[derive(Clone, Debug)]
pub(super) struct BoundTap {
    alias: Arc<str>,
    tap: ProgressTap,
}

impl BoundTap {
    /// Shows `message` to the tap when it is a progress notification (or
    /// a change the tap asked for).
    pub(super) fn see(&self, message: &RxJsonRpcMessage<RoleClient>) {
        let JsonRpcMessage::Notification(n) = message else {
            return;
        };
        match &n.notification {
            ServerNotification::ProgressNotification(p) => (self.tap.0)(&self.alias, &p.params),
            change @ (ServerNotification::ResourceUpdatedNotification(_)
            | ServerNotification::ResourceListChangedNotification(_)
            | ServerNotification::PromptListChangedNotification(_)
            | ServerNotification::LoggingMessageNotification(_)
            | ServerNotification::TaskStatusNotification(_)) => {
                if let Some(f) = &self.tap.1 {
                    f(&self.alias, change);
                }
            }
            _ => {}
        }
    }
}

/// A transport whose incoming messages pass a [`BoundTap`] first.
#[cfg(feature = "http")]
pub(super) struct Tapped<T> {
    pub(super) inner: T,
    pub(super) tap: Option<BoundTap>,
}

#[cfg(feature = "http")]
impl<T: Transport<RoleClient>> Transport<RoleClient> for Tapped<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await;
        if let (Some(tap), Some(m)) = (&self.tap, &message) {
            tap.see(m);
        }
        message
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
