//! What an upstream asks its client, relayed to a host: `sampling/createMessage`,
//! `elicitation/create` (form, in every SEP-1034 / SEP-1330 shape, and URL mode)
//! and `roots/list` go to the host session whose `tools/call` the upstream is
//! answering (the latest one in flight to that upstream whose host declared the
//! capability), and the host's answer goes back as the host sent it; the
//! upstream's `notifications/message` go to the host of its latest call in
//! flight. A 2025-era upstream's call goes over a connection told what the
//! calling host declared (`told.rs`; a 2026-07-28 one is told per
//! request, `send::told_by`); a request of a
//! capability they were not told, that the calling host did not declare, or
//! made with no call in flight or during a stateless one, is refused with
//! method not found (-32601), naming why. What a 2026-07-28 upstream asks
//! in an input-required result is asked of a 2025-era host the same way
//! ([`fulfil`]).

// rmcp marks sampling, roots and logging deprecated (SEP-2577); servers still send them.
#![allow(deprecated)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientCapabilities, ClientConfig, ClientResult, CreateMessageRequestParams,
    CreateMessageResult, ElicitRequest, ElicitRequestParams, ElicitResult, ErrorCode, InputRequest,
    InputRequests, InputResponses, ListRootsResult, LoggingMessageNotificationParam, ServerRequest,
};
use rmcp::service::{
    NotificationContext, Peer, RequestContext, RoleClient, RoleServer, ServiceError,
};
use rmcp::{ClientHandler, ErrorData};

use crate::support::lock;

/// The calls in flight to one upstream: an id and the host session (none
/// for a stateless call, whose host cannot be sent requests), latest last.
type InFlight = Vec<(u64, Option<Peer<RoleServer>>)>;

/// How long an answer waits for the relay of the log messages its
/// upstream sent before it.
const LOGS_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// The host sessions with calls in flight, by upstream alias.
#[derive(Debug, Default)]
pub(crate) struct Asking {
    calls: Mutex<BTreeMap<String, InFlight>>,
    next: AtomicU64,
    /// By alias: the log messages read from its connection, and those
    /// relayed since (rmcp hands each to the handler on a task of its own,
    /// so an answer read after one could reach the host before it).
    logs: Mutex<BTreeMap<String, (u64, u64)>>,
    relayed: tokio::sync::Notify,
}

/// A call in flight to an upstream from one host session; leaves when dropped.
pub(crate) struct InCall {
    asking: Arc<Asking>,
    alias: String,
    id: u64,
}

impl Drop for InCall {
    fn drop(&mut self) {
        let mut calls = lock(&self.asking.calls);
        if let Some(held) = calls.get_mut(&self.alias) {
            held.retain(|(id, _)| *id != self.id);
            if held.is_empty() {
                calls.remove(&self.alias);
            }
        }
    }
}

impl Asking {
    /// `host`'s call to `alias` is in flight until the guard drops.
    pub(crate) fn enter(self: &Arc<Self>, alias: &str, host: Option<Peer<RoleServer>>) -> InCall {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        (lock(&self.calls).entry(alias.to_string()).or_default()).push((id, host));
        InCall {
            asking: self.clone(),
            alias: alias.to_string(),
            id,
        }
    }

    /// The host of the latest call to `alias` in flight, if `declared`
    /// takes what it declared; `Err` says why there is none.
    fn host(
        &self,
        (alias, told): (&str, &ClientCapabilities),
        what: &str,
        declared: fn(&ClientCapabilities) -> bool,
    ) -> Result<Peer<RoleServer>, ErrorData> {
        if !declared(told) {
            return Err(refused(format!(
                "{what} refused: upstream {alias:?} was not told it may ask"
            )));
        }
        let calls = lock(&self.calls);
        let Some((_, latest)) = calls.get(alias).and_then(|c| c.last()) else {
            return Err(refused(format!(
                "{what} refused: upstream {alias:?} has no host call in flight to ask"
            )));
        };
        let Some(latest) = latest else {
            return Err(refused(format!(
                "{what} refused: the call to upstream {alias:?} is a stateless request, whose host cannot be sent requests"
            )));
        };
        match latest
            .peer_info()
            .is_some_and(|i| declared(&i.capabilities))
        {
            true => Ok(latest.clone()),
            false => Err(refused(format!(
                "{what} refused: the host calling upstream {alias:?} did not declare it"
            ))),
        }
    }

    /// A log message of `alias` was read (on its connection's reading
    /// task, in order with its answers).
    pub(crate) fn log_read(&self, alias: &str) {
        lock(&self.logs).entry(alias.to_string()).or_default().0 += 1;
    }

    /// A log message of `alias` was relayed (or had no host).
    fn log_relayed(&self, alias: &str) {
        lock(&self.logs).entry(alias.to_string()).or_default().1 += 1;
        self.relayed.notify_waiters();
    }

    /// Waits until the log messages `alias` sent before now are relayed
    /// (at most [`LOGS_WAIT`]; those still not are given up on).
    pub(crate) async fn logs_before(&self, alias: &str) {
        let target = match lock(&self.logs).get(alias) {
            Some(&(read, relayed)) if read > relayed => read,
            _ => return,
        };
        let done = || lock(&self.logs).get(alias).is_none_or(|c| c.1 >= target);
        let wait = async {
            loop {
                let relayed = self.relayed.notified();
                if done() {
                    return;
                }
                relayed.await;
            }
        };
        if tokio::time::timeout(LOGS_WAIT, wait).await.is_err()
            && let Some(c) = lock(&self.logs).get_mut(alias)
        {
            c.1 = c.1.max(target);
        }
    }

    fn latest(&self, alias: &str) -> Option<Peer<RoleServer>> {
        lock(&self.calls).get(alias)?.last()?.1.clone()
    }
}

fn refused(why: String) -> ErrorData {
    tracing::debug!("{why}");
    ErrorData::new(ErrorCode::METHOD_NOT_FOUND, why, None)
}

/// The host's error as it sent it; any other failure as an internal error.
fn answered<T>(answer: Result<T, ServiceError>) -> Result<T, ErrorData> {
    answer.map_err(|e| match e {
        ServiceError::McpError(e) => e,
        other => ErrorData::internal_error(format!("the host did not answer: {other}"), None),
    })
}

/// The answers of a 2025-era host to what a 2026-07-28 upstream asked in
/// an input-required result (`inputRequests`), each asked of the host as
/// the request it knows (`sampling/createMessage`, `elicitation/create`,
/// `roots/list`), under the upstream's keys, for the retry's
/// `inputResponses`. One of a capability the host did not declare is
/// refused (-32601) and nothing is asked.
pub(crate) async fn fulfil(
    host: &Peer<RoleServer>,
    alias: &str,
    requests: InputRequests,
) -> Result<InputResponses, ErrorData> {
    let declared = (host.peer_info()).map(|i| i.capabilities.clone());
    let declared = declared.unwrap_or_default();
    let mut asked = Vec::with_capacity(requests.len());
    for (key, request) in requests {
        let (what, has, request) = match request {
            InputRequest::CreateMessage(r) => (
                "sampling",
                declared.sampling.is_some(),
                ServerRequest::CreateMessageRequest(r),
            ),
            InputRequest::Elicitation(r) => (
                "elicitation",
                declared.elicitation.is_some(),
                ServerRequest::ElicitRequest(r),
            ),
            InputRequest::ListRoots(r) => (
                "roots/list",
                declared.roots.is_some(),
                ServerRequest::ListRootsRequest(r),
            ),
            _ => {
                return Err(refused(format!(
                    "an input request of upstream {alias:?} the gateway does not know"
                )));
            }
        };
        if !has {
            return Err(refused(format!(
                "{what} refused: the host calling upstream {alias:?} did not declare it"
            )));
        }
        asked.push((key, request));
    }
    let mut responses = InputResponses::new();
    for (key, request) in asked {
        let answer: ClientResult = answered(host.send_request(request).await)?;
        let answer = serde_json::to_value(answer)
            .map_err(|e| ErrorData::internal_error(format!("the host's answer: {e}"), None))?;
        responses.insert(key, answer);
    }
    Ok(responses)
}

/// The client handler of one upstream connection of the gateway.
#[derive(Debug, Clone)]
pub(crate) struct UpstreamHandler {
    pub(crate) alias: String,
    pub(crate) config: ClientConfig,
    pub(crate) asking: Arc<Asking>,
}

impl UpstreamHandler {
    fn told(&self) -> (&str, &ClientCapabilities) {
        (&self.alias, &self.config.capabilities)
    }
}

impl ClientHandler for UpstreamHandler {
    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let host = (self.asking).host(self.told(), "sampling", |c| c.sampling.is_some())?;
        answered(host.create_message(params).await)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let host = (self.asking).host(self.told(), "elicitation", |c| c.elicitation.is_some())?;
        // rmcp's typed helper needs its `elicitation` feature; the request is the same.
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(request));
        match answered(host.send_request(request).await)? {
            ClientResult::ElicitResult(result) => Ok(result),
            _ => Err(ErrorData::internal_error(
                "the host answered elicitation/create with another result",
                None,
            )),
        }
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let host = (self.asking).host(self.told(), "roots/list", |c| c.roots.is_some())?;
        answered(host.list_roots().await)
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(host) = self.asking.latest(&self.alias) {
            let _ = host.notify_logging_message(params).await;
        }
        self.asking.log_relayed(&self.alias);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stateless_call_in_flight_is_not_asked_and_says_why() {
        let asking = Arc::new(Asking::default());
        let told = ClientCapabilities::builder().enable_sampling().build();
        let ask = |a: &Asking| a.host(("up", &told), "sampling", |c| c.sampling.is_some());
        let none = ask(&asking).unwrap_err();
        assert!(
            none.message.contains("no host call in flight"),
            "{}",
            none.message
        );
        let call = asking.enter("up", None);
        let e = ask(&asking).unwrap_err();
        assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
        assert_eq!(
            e.message,
            "sampling refused: the call to upstream \"up\" is a stateless request, whose host cannot be sent requests"
        );
        assert!(asking.latest("up").is_none());
        drop(call);
        assert!(lock(&asking.calls).is_empty());
    }
}
