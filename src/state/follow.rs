//! Following the shared state from a gateway: the last lock loaded, kept
//! current by pub/sub, and whether Redis answers.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_core::Stream;
use tokio::sync::watch;

use super::{CHANNEL, ENDS, EndedSink, SharedState, TIMEOUT};
use crate::error::{ErrorKind, Result};
use crate::pin::Lock;

/// How long after losing Redis the next attempt is made.
const RETRY: Duration = Duration::from_millis(500);
/// How often the state is reloaded without a message: catches a message
/// missed and a connection that died without closing.
const CHECK: Duration = Duration::from_secs(5);
/// How often the ended sessions are read again without a message: they
/// can be many, and a message is seldom missed.
const ENDED_CHECK: Duration = Duration::from_secs(60);

/// Whether a gateway's shared state is loaded and Redis answers: what a
/// readiness probe reports. Cloned handles share one flag.
#[derive(Debug, Clone, Default)]
pub struct Readiness(Arc<AtomicBool>);

impl Readiness {
    /// True while the last attempt to reach Redis succeeded.
    pub fn is_ready(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    fn set(&self, ready: bool) {
        self.0.store(ready, Ordering::Relaxed);
    }
}

/// A [`SharedState`] followed by a background task: see
/// [`SharedState::follow`]. Dropping it stops the task.
#[derive(Debug)]
pub struct Follower {
    /// The last lock loaded; changes when the stored pins change.
    pub lock: watch::Receiver<Lock>,
    /// Whether Redis answered the last attempt.
    pub ready: Readiness,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Follower {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The task of [`SharedState::follow_ended`]; dropping it stops the task.
#[derive(Debug)]
pub struct EndedFollower(tokio::task::JoinHandle<()>);

impl Drop for EndedFollower {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl SharedState {
    /// Keeps a lock current from this state, starting from `first` (the
    /// lock loaded at start, or the last one known when Redis did not
    /// answer then): a write's published revision makes it reload within
    /// moments. When Redis stops answering, the lock stays as it was, a
    /// warning is logged once and [`Readiness::is_ready`] turns false;
    /// when it answers again that is logged, the task subscribes again,
    /// reloads and turns ready. `ready` says whether `first` came from
    /// Redis. Needs a tokio runtime.
    pub fn follow(self: Arc<Self>, first: Lock, ready: bool) -> Follower {
        let (tx, lock) = watch::channel(first);
        let readiness = Readiness::default();
        readiness.set(ready);
        let task = tokio::spawn(run(self, tx, readiness.clone(), !ready));
        Follower {
            lock,
            ready: readiness,
            task,
        }
    }

    /// Loads the lock into `tx` when it differs from the one there. Pins
    /// that do not load (a bad hand edit) leave it as it was, logged once;
    /// only Redis not answering is an error.
    async fn reload(&self, tx: &watch::Sender<Lock>, bad: &mut Option<String>) -> Result<()> {
        let lock = match self.load_written().await {
            Ok(Some(lock)) => {
                *bad = None;
                lock
            }
            // Never written, or the data is gone (a Redis without
            // persistence restarted): the pins held are kept until a
            // `pin` writes again, rather than every server turning new.
            Ok(None) if tx.borrow().keys().next().is_some() => {
                let why = "the shared review state holds no pins (was its data lost?)".to_string();
                if bad.as_ref() != Some(&why) {
                    tracing::warn!(state = %self.shown, "{why}; serving the last reviewed state until pins are written");
                    *bad = Some(why);
                }
                return Ok(());
            }
            Ok(None) => Lock::new(),
            Err(e) if e.kind() == ErrorKind::Connect => return Err(e),
            Err(e) => {
                let why = e.to_string();
                if bad.as_ref() != Some(&why) {
                    tracing::warn!(error = %why, "the shared review state does not load; serving the last reviewed state");
                    *bad = Some(why);
                }
                return Ok(());
            }
        };
        tx.send_if_modified(|old| {
            let changed = *old != lock;
            if changed {
                *old = lock;
            }
            changed
        });
        Ok(())
    }

    /// One subscription: subscribes, loads, then reloads on each message
    /// and every [`CHECK`]; returns why it ended.
    async fn session(
        &self,
        tx: &watch::Sender<Lock>,
        ready: &Readiness,
        down: &mut bool,
    ) -> String {
        let mut messages = match self.subscribe(CHANNEL).await {
            Ok(messages) => messages,
            Err(why) => return why,
        };
        let mut bad = None;
        // Subscribed first, then loaded: no write falls in between.
        if let Err(e) = self.reload(tx, &mut bad).await {
            return e.detail().to_string();
        }
        ready.set(true);
        if std::mem::take(down) {
            tracing::info!(state = %self.shown, "the shared review state answers again; reloaded");
        }
        loop {
            // A message, or none within CHECK: reloaded either way.
            if let Err(why) = next(&mut messages, CHECK).await {
                return why;
            }
            if let Err(e) = self.reload(tx, &mut bad).await {
                return e.detail().to_string();
            }
        }
    }

    /// Subscribed to `channel`: its messages, or why not.
    async fn subscribe(&self, channel: &str) -> std::result::Result<Messages, String> {
        let subscribed = tokio::time::timeout(TIMEOUT, async {
            let mut pubsub = self.pubsub().await?;
            pubsub.subscribe(channel).await?;
            Ok::<_, redis::RedisError>(pubsub)
        })
        .await;
        match subscribed {
            Ok(Ok(pubsub)) => Ok(Box::pin(pubsub.into_on_message())),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("no answer".to_string()),
        }
    }
}

/// A subscription's messages.
type Messages = std::pin::Pin<Box<dyn Stream<Item = redis::Msg> + Send>>;

/// The next message, `Ok(None)` when none came `within`; `Err` says why
/// the subscription ended.
async fn next(
    messages: &mut Messages,
    within: Duration,
) -> std::result::Result<Option<redis::Msg>, String> {
    let message = tokio::time::timeout(
        within,
        std::future::poll_fn(|cx| messages.as_mut().poll_next(cx)),
    )
    .await;
    match message {
        Ok(None) => Err("the connection closed".to_string()),
        Ok(Some(message)) => Ok(Some(message)),
        Err(_) => Ok(None),
    }
}

impl SharedState {
    /// Tells `sink` every session ended through this state
    /// ([`SharedState::end_session`]):
    /// those recorded at start, then each as it is published, until the
    /// [`EndedFollower`] returned is dropped. While Redis
    /// does not answer it tries again (the lock's follower logs that);
    /// once back, and every minute, it reads them all again, so a
    /// message missed meanwhile is caught. Needs a tokio runtime.
    pub fn follow_ended(self: Arc<Self>, sink: EndedSink) -> EndedFollower {
        EndedFollower(tokio::spawn(async move {
            loop {
                let _why = self.ended_session(&sink).await;
                tokio::time::sleep(RETRY).await;
            }
        }))
    }

    /// One subscription to the ended sessions; returns why it ended.
    async fn ended_session(&self, sink: &EndedSink) -> String {
        let mut messages = match self.subscribe(ENDS).await {
            Ok(messages) => messages,
            Err(why) => return why,
        };
        loop {
            // Subscribed first, then read: none is missed in between.
            match self.ended_sessions().await {
                Ok(ended) => ended.iter().for_each(|(sid, exp)| sink(sid, *exp)),
                Err(e) => return e.detail().to_string(),
            }
            loop {
                let message = match next(&mut messages, ENDED_CHECK).await {
                    Ok(Some(message)) => message,
                    Ok(None) => break,
                    Err(why) => return why,
                };
                let text: String = message.get_payload().unwrap_or_default();
                if let Some((exp, sid)) = text.split_once(' ')
                    && let Ok(exp) = exp.parse()
                {
                    sink(sid, exp);
                }
            }
        }
    }
}

async fn run(state: Arc<SharedState>, tx: watch::Sender<Lock>, ready: Readiness, mut down: bool) {
    if down {
        tracing::warn!(state = %state.shown, "the shared review state does not answer; serving the last reviewed state until it does");
    }
    loop {
        let why = state.session(&tx, &ready, &mut down).await;
        ready.set(false);
        if !down {
            down = true;
            tracing::warn!(state = %state.shown, "the shared review state does not answer ({why}); serving the last reviewed state until it does");
        }
        tokio::time::sleep(RETRY).await;
    }
}
