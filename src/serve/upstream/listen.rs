//! The subscriptions the gateway holds open at an upstream
//! (`subscriptions/listen`): opened through the one send's wait, deadline
//! and error wording, then held until no host listens.

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CancelledNotificationParam, ClientCapabilities, ClientRequest, SubscriptionFilter,
};
use rmcp::service::{Peer, RoleClient};
use serde_json::json;

use crate::serve::upstream::fault::{Fault, Subject};
use crate::serve::upstream::send::{Upstreams, sleep};

impl Upstreams {
    /// Subscribes to `what` at `alias` (`subscriptions/listen`, opened
    /// within the deadline of a request); what it sends reaches the
    /// gateway through the connection's tap until `stop` fires, then the
    /// subscription is cancelled.
    pub(crate) async fn listen(
        &self,
        alias: &str,
        what: Listen,
        stop: tokio::sync::oneshot::Receiver<()>,
    ) -> Result<(), McpError> {
        let fault = Fault {
            alias,
            subject: Subject::Method("subscriptions/listen"),
            name_errors: false,
        };
        let peer = self.ready(&fault).await?;
        let deadline = self.deadline(fault.subject);
        let opened = async {
            match what {
                Listen::Filter(filter) => peer.listen(filter).await.map(Held::Filter),
                Listen::Tasks(ids) => {
                    let params = json!({"notifications": {"taskIds": ids}});
                    let listen =
                        rmcp::model::CustomRequest::new("subscriptions/listen", Some(params));
                    // Asked with the extension declared: without it an upstream must refuse.
                    let told = ClientCapabilities::builder().enable_tasks().build();
                    let options = self.options(alias, Some(&told), None);
                    let request = ClientRequest::CustomRequest(listen);
                    let handle = peer.send_request_with_option(request, options).await?;
                    Ok(Held::Raw(peer.clone(), handle))
                }
            }
        };
        let held = tokio::select! {
            opened = opened => opened.map_err(|e| fault.failed(e))?,
            () = sleep(deadline) => return Err(fault.late(deadline)),
        };
        tokio::spawn(held.until(stop, alias.to_string()));
        Ok(())
    }
}

/// What a `subscriptions/listen` of an upstream asks for.
pub(crate) enum Listen {
    /// A filter rmcp's client knows (resource subscriptions, list changes).
    Filter(SubscriptionFilter),
    /// The status of these tasks (the Tasks extension), sent raw: rmcp's
    /// filter has no `taskIds`.
    Tasks(Vec<String>),
}

/// An upstream's subscription the gateway holds open.
enum Held {
    Filter(rmcp::service::Subscription),
    Raw(Peer<RoleClient>, rmcp::service::RequestHandle<RoleClient>),
}

impl Held {
    /// Holds it until `stop`, then cancels it; its stream is drained (what
    /// it carries was read by the connection's tap) so it never fills.
    async fn until(self, mut stop: tokio::sync::oneshot::Receiver<()>, alias: String) {
        match self {
            Held::Filter(mut subscription) => {
                loop {
                    tokio::select! {
                        _ = &mut stop => break,
                        next = subscription.next() => if !matches!(next, Ok(Some(_))) { return },
                    }
                }
                let _ = subscription.cancel().await;
            }
            Held::Raw(peer, handle) => {
                let id = handle.id.clone();
                tokio::select! {
                    _ = stop => {
                        let why = CancelledNotificationParam::new(Some(id), Some("no host listens".into()));
                        let _ = peer.notify_cancelled(why).await;
                    }
                    answer = handle.await_response() => if let Err(e) = answer {
                        tracing::warn!(upstream = %alias, "subscriptions/listen of tasks ended: {e}");
                    },
                }
            }
        }
    }
}
