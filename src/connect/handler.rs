//! [`HubHandler`]: the host's rmcp client handler, plus what the hub needs to hear.

// rmcp marks sampling, roots and logging deprecated (SEP-2577); servers still send them.
#![allow(deprecated)]

use rmcp::model::{
    CancelledNotificationParam, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    CustomNotification, CustomRequest, CustomResult, ElicitRequestParams, ElicitResult,
    ListRootsResult, LoggingMessageNotificationParam, ProgressNotificationParam,
    ResourceUpdatedNotificationParam, SubscriptionsAcknowledgedNotificationParams,
    TaskStatusNotificationParams,
};
use rmcp::service::{MaybeSendFuture, NotificationContext, RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData};
use tokio::sync::watch;

/// An rmcp client handler that wraps yours for [`Hub::attach`]: every
/// request and notification goes to your handler (sampling, roots,
/// elicitation, logging…) and its [`get_info`](ClientHandler::get_info) is
/// the identity sent; in addition, `notifications/tools/list_changed` tells
/// the hub to read the server's tools again.
///
/// Serve your client with it (`HubHandler::new(mine).serve(transport)`, or
/// [`connect_with`](super::connect_with)), then attach the client to a hub.
/// Reach your handler again with [`HubHandler::inner`]
/// (`client.service().inner()`).
///
/// [`Hub::attach`]: crate::hub::Hub::attach
#[derive(Debug)]
pub struct HubHandler<H = ClientConfig> {
    inner: H,
    tools_changed: watch::Sender<()>,
}

impl<H: ClientHandler> HubHandler<H> {
    /// Wraps your handler.
    pub fn new(inner: H) -> HubHandler<H> {
        HubHandler {
            inner,
            tools_changed: watch::Sender::new(()),
        }
    }

    /// Your handler.
    pub fn inner(&self) -> &H {
        &self.inner
    }

    /// Tells of each tools-list change; fails once the handler is gone.
    pub(super) fn tools_changed(&self) -> watch::Receiver<()> {
        self.tools_changed.subscribe()
    }
}

// Every method forwards to the host's handler; only the tools change is also seen here.
impl<H: ClientHandler> ClientHandler for HubHandler<H> {
    fn ping(
        &self,
        context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        self.inner.ping(context)
    }

    fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<CreateMessageResult, ErrorData>> + MaybeSendFuture + '_ {
        self.inner.create_message(params, context)
    }

    fn list_roots(
        &self,
        context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<ListRootsResult, ErrorData>> + MaybeSendFuture + '_ {
        self.inner.list_roots(context)
    }

    fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<ElicitResult, ErrorData>> + MaybeSendFuture + '_ {
        self.inner.create_elicitation(request, context)
    }

    fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<CustomResult, ErrorData>> + MaybeSendFuture + '_ {
        self.inner.on_custom_request(request, context)
    }

    fn on_cancelled(
        &self,
        params: CancelledNotificationParam,
        context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.inner.on_cancelled(params, context)
    }

    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.inner.on_progress(params, context)
    }

    fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.inner.on_logging_message(params, context)
    }

    fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.inner.on_resource_updated(params, context)
    }

    fn on_resource_list_changed(
        &self,
        context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.inner.on_resource_list_changed(context)
    }

    fn on_tool_list_changed(
        &self,
        context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.tools_changed.send_replace(());
        self.inner.on_tool_list_changed(context)
    }

    fn on_prompt_list_changed(
        &self,
        context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.inner.on_prompt_list_changed(context)
    }

    fn on_subscriptions_acknowledged(
        &self,
        params: SubscriptionsAcknowledgedNotificationParams,
        context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.inner.on_subscriptions_acknowledged(params, context)
    }

    fn on_task_status(
        &self,
        params: TaskStatusNotificationParams,
        context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.inner.on_task_status(params, context)
    }

    fn on_custom_notification(
        &self,
        notification: CustomNotification,
        context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.inner.on_custom_notification(notification, context)
    }

    fn get_info(&self) -> ClientConfig {
        self.inner.get_info()
    }
}
