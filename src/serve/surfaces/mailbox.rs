//! What a host has not been sent yet, kept once per key (the latest), so an
//! upstream that floods costs a slow host one pending entry per key: per
//! URI for resource updates, per task for task statuses.

use std::collections::BTreeMap;
use std::sync::Mutex;

use tokio::sync::Notify;

use crate::support::lock;

/// One host's entries not sent yet (the latest per key), and its wake-up.
pub(in crate::serve) struct Mailbox<V> {
    latest: Mutex<BTreeMap<String, V>>,
    wake: Notify,
}

impl<V> Default for Mailbox<V> {
    fn default() -> Self {
        Mailbox {
            latest: Mutex::default(),
            wake: Notify::new(),
        }
    }
}

impl<V> Mailbox<V> {
    /// Waits for entries; those that came since the last call, by key.
    pub(in crate::serve) async fn next(&self) -> BTreeMap<String, V> {
        loop {
            let taken = std::mem::take(&mut *lock(&self.latest));
            if !taken.is_empty() {
                return taken;
            }
            self.wake.notified().await;
        }
    }

    /// Keeps `value` for `key`, in place of one not sent yet.
    pub(in crate::serve) fn push(&self, key: String, value: V) {
        lock(&self.latest).insert(key, value);
        self.wake.notify_one();
    }

    /// What is waiting now, without taking it.
    #[cfg(test)]
    pub(in crate::serve) fn peek(&self) -> BTreeMap<String, V>
    where
        V: Clone,
    {
        lock(&self.latest).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_latest_per_key_waits_and_is_taken_once() {
        let mailbox = Mailbox::default();
        mailbox.push("a".into(), 1);
        mailbox.push("b".into(), 2);
        mailbox.push("a".into(), 3);
        assert_eq!(
            mailbox.next().await,
            BTreeMap::from([("a".into(), 3), ("b".into(), 2)])
        );
        assert!(mailbox.peek().is_empty(), "taken");
        let waiting = mailbox.next();
        mailbox.push("c".into(), 4);
        assert_eq!(waiting.await, BTreeMap::from([("c".into(), 4)]));
    }
}
