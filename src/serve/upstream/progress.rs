//! Progress relayed from an upstream's call to the host that made it.
//!
//! The gateway cannot pass the host's `progressToken` on: two hosts (or
//! one host twice) may use the same value, and rmcp gives every upstream
//! request a token of its own anyway (unique on that connection). So each
//! forwarded call that carries a host token opens a [`Relay`] under the
//! upstream's alias and the token rmcp chose; an upstream progress
//! notification goes to the one relay of its (alias, token), with the
//! host's token put back, and is dropped when there is none (an unknown
//! token, a call already answered, or another upstream's token).

use crate::support::lock;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::mpsc;

use crate::connect::ProgressTap;

/// How many notifications of one call may wait for the host; more are
/// dropped (a flooding upstream costs its own progress, not memory).
const BACKLOG: usize = 1024;

type Key = (String, ProgressToken);

enum Slot {
    Open(mpsc::Sender<ProgressNotificationParam>),
    /// Two calls under one key (a restarted upstream counting its tokens
    /// from 0 again while a call of the old connection is still being
    /// answered): neither is relayed rather than one misrouted.
    Ambiguous,
}

/// The calls whose progress is relayed now.
#[derive(Default)]
pub(crate) struct Relays {
    calls: Mutex<HashMap<Key, Slot>>,
}

impl Relays {
    /// The tap that hands the upstreams' progress to these relays.
    pub(crate) fn tap(self: &Arc<Relays>) -> ProgressTap {
        let relays = self.clone();
        ProgressTap::new(move |alias, p| relays.see(alias, p))
    }

    /// Opens the relay of the call `alias` answers under `token`; it
    /// closes when dropped.
    pub(crate) fn open(self: &Arc<Relays>, alias: &str, token: ProgressToken) -> Relay {
        let key = (alias.to_string(), token);
        let (tx, rx) = mpsc::channel(BACKLOG);
        let mut calls = lock(&self.calls);
        match calls.get(&key) {
            None => {
                calls.insert(key.clone(), Slot::Open(tx));
            }
            Some(_) => {
                tracing::warn!(upstream = %alias, "two calls under one progress token: neither is relayed");
                calls.insert(key.clone(), Slot::Ambiguous);
            }
        }
        Relay {
            relays: self.clone(),
            key,
            rx,
        }
    }

    fn see(&self, alias: &str, p: &ProgressNotificationParam) {
        let calls = lock(&self.calls);
        match calls.get(&(alias.to_string(), p.progress_token.clone())) {
            Some(Slot::Open(tx)) => {
                if tx.try_send(p.clone()).is_err() {
                    tracing::debug!(upstream = %alias, "progress backlog full: notification dropped");
                }
            }
            _ => tracing::debug!(
                upstream = %alias,
                token = %p.progress_token.0,
                "progress for no call in flight: dropped"
            ),
        }
    }

    /// How many relays are open (for tests).
    #[cfg(test)]
    pub(crate) fn open_count(&self) -> usize {
        lock(&self.calls).len()
    }
}

/// The progress of one forwarded call, in the order the upstream sent it.
pub(crate) struct Relay {
    relays: Arc<Relays>,
    key: Key,
    rx: mpsc::Receiver<ProgressNotificationParam>,
}

impl Relay {
    /// The next notification (waits).
    pub(crate) async fn next(&mut self) -> Option<ProgressNotificationParam> {
        self.rx.recv().await
    }

    /// The notifications received so far (no wait); none that arrive
    /// meanwhile.
    pub(crate) fn received(&mut self) -> Vec<ProgressNotificationParam> {
        let n = self.rx.len();
        (0..n).map_while(|_| self.rx.try_recv().ok()).collect()
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        lock(&self.relays.calls).remove(&self.key);
    }
}

/// Where the progress of a host's call goes: its session, or the event
/// stream of the HTTP fast lane's answer (`crate::serve::front::lane`).
#[derive(Clone)]
pub(crate) enum ProgressTo {
    Peer(Peer<RoleServer>),
    #[cfg(feature = "serve-http")]
    Stream(tokio::sync::mpsc::Sender<ProgressNotificationParam>),
}

/// The host's end of a call's progress and its token.
pub(crate) type HostProgress = Option<(ProgressTo, ProgressToken)>;

/// Sends `p` to the host under its own token (progress, total and message
/// as the upstream sent them). A host that is gone is not an error of the call.
pub(crate) async fn relay_to(host: &HostProgress, mut p: ProgressNotificationParam) {
    let Some((to, token)) = host else { return };
    p.progress_token = token.clone();
    let sent = match to {
        ProgressTo::Peer(peer) => peer.notify_progress(p).await.map_err(|e| e.to_string()),
        #[cfg(feature = "serve-http")]
        ProgressTo::Stream(stream) => stream.send(p).await.map_err(|e| e.to_string()),
    };
    if let Err(e) = sent {
        tracing::debug!(error = %e, "progress not relayed to the host");
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::NumberOrString;

    use super::*;

    fn note(token: i64, progress: f64) -> ProgressNotificationParam {
        let mut p: ProgressNotificationParam = serde_json::from_value(serde_json::json!(
            {"progressToken": 0, "progress": 0}
        ))
        .unwrap();
        p.progress_token = ProgressToken(NumberOrString::Number(token));
        p.progress = progress;
        p
    }

    #[test]
    fn progress_goes_to_the_call_of_its_upstream_and_token_only() {
        let relays = Arc::new(Relays::default());
        let mut a = relays.open("a", ProgressToken(NumberOrString::Number(3)));
        let mut b = relays.open("b", ProgressToken(NumberOrString::Number(4)));
        relays.see("a", &note(3, 1.0));
        relays.see("b", &note(3, 9.0)); // b was not given 3
        relays.see("a", &note(4, 9.0)); // nor a 4
        relays.see("a", &note(3, 2.0));
        let got: Vec<f64> = a.received().iter().map(|p| p.progress).collect();
        assert_eq!(got, [1.0, 2.0]);
        assert!(a.received().is_empty());
        assert!(b.received().is_empty());
        // Closed: later progress under its key goes nowhere.
        drop(a);
        relays.see("a", &note(3, 3.0));
        assert_eq!(relays.open_count(), 1);
        drop(b);
        assert_eq!(relays.open_count(), 0);
    }

    #[test]
    fn two_calls_under_one_key_get_none_rather_than_each_others() {
        let relays = Arc::new(Relays::default());
        let token = ProgressToken(NumberOrString::Number(0));
        let mut old = relays.open("a", token.clone());
        let mut new = relays.open("a", token);
        relays.see("a", &note(0, 1.0));
        assert!(old.received().is_empty());
        assert!(new.received().is_empty());
    }

    #[test]
    fn a_flood_costs_its_own_progress_only() {
        let relays = Arc::new(Relays::default());
        let mut a = relays.open("a", ProgressToken(NumberOrString::Number(1)));
        for i in 0..BACKLOG + 10 {
            relays.see("a", &note(1, i as f64));
        }
        assert_eq!(a.received().len(), BACKLOG);
    }
}
