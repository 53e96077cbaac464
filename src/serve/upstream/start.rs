//! Upstreams a gateway is still starting: the host is served before they
//! connect ([`Gateway::start_all`](crate::serve::gateway::Gateway::start_all)), each joins
//! when it does, and a call to one waits for it.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::watch;

use crate::support::lock;

/// The aliases being started, and a wake-up each time one settles
/// (connected or failed).
pub(crate) struct Starting {
    aliases: Mutex<BTreeSet<String>>,
    settled: watch::Sender<u64>,
}

impl Default for Starting {
    fn default() -> Starting {
        Starting {
            aliases: Mutex::default(),
            settled: watch::Sender::new(0),
        }
    }
}

impl Starting {
    pub(crate) fn begin(&self, aliases: impl IntoIterator<Item = String>) {
        lock(&self.aliases).extend(aliases);
    }

    pub(crate) fn settle(&self, alias: &str) {
        lock(&self.aliases).remove(alias);
        self.settled.send_modify(|n| *n += 1);
    }

    pub(crate) fn is_starting(&self, alias: &str) -> bool {
        lock(&self.aliases).contains(alias)
    }

    /// The upstreams still starting.
    pub(crate) fn aliases(&self) -> Vec<String> {
        lock(&self.aliases).iter().cloned().collect()
    }

    /// Whether any upstream is still starting.
    pub(crate) fn any(&self) -> bool {
        !lock(&self.aliases).is_empty()
    }

    /// Waits until every upstream starting now settled, at most `limit`.
    pub(crate) async fn wait_all(&self, limit: Option<Duration>) {
        let now: Vec<String> = lock(&self.aliases).iter().cloned().collect();
        let all = async {
            for alias in &now {
                self.wait(alias, None).await;
            }
        };
        match limit {
            Some(limit) => {
                let _ = tokio::time::timeout(limit, all).await;
            }
            None => all.await,
        }
    }

    /// Waits until `alias` settled, at most `limit` (no limit: until it
    /// settles, which its connection's own timeout bounds).
    pub(crate) async fn wait(&self, alias: &str, limit: Option<Duration>) {
        // Subscribed before looking, so a settle in between is not missed.
        let mut settled = self.settled.subscribe();
        let until = async {
            while self.is_starting(alias) {
                if settled.changed().await.is_err() {
                    return;
                }
            }
        };
        match limit {
            Some(limit) => {
                let _ = tokio::time::timeout(limit, until).await;
            }
            None => until.await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test(start_paused = true)]
    async fn a_wait_ends_when_its_alias_settles_or_at_its_limit() {
        let starting = Arc::new(Starting::default());
        starting.begin(["slow".to_string(), "hung".to_string()]);
        let s = starting.clone();
        let waiter = tokio::spawn(async move { s.wait("slow", None).await });
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert!(!waiter.is_finished());
        starting.settle("slow");
        waiter.await.unwrap();
        assert!(!starting.is_starting("slow"));
        let before = tokio::time::Instant::now();
        starting.wait("hung", Some(Duration::from_secs(2))).await;
        assert_eq!(before.elapsed(), Duration::from_secs(2));
        assert!(starting.is_starting("hung"));
        // Not starting: no wait at all.
        starting.wait("fast", None).await;
    }
}
