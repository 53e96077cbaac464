//! A cap on the gateway's live Streamable HTTP sessions: rmcp's
//! [`LocalSessionManager`] keeps every session until it has been idle for
//! its keep-alive, so a client that only sends `initialize` could fill the
//! memory. [`BoundedSessions`] closes the least recently used session when
//! a new one would pass the cap. With tokens, a session belongs to the
//! token that opened it ([`Owner`]): another valid token is told it does
//! not exist (404).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, SessionConfig};
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId,
};

/// Who a request's bearer token says it is (the gate puts it in the
/// request's extensions): `token:` and a digest's first bytes for a token
/// of the tokens file, `sub:` and the subject for an access token. A
/// session opened with one is served to that one only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::serve) struct Owner(pub(in crate::serve) String);

impl Owner {
    /// The owner `req` was admitted as, if the gate checks tokens.
    pub(in crate::serve) fn of<B>(req: &hyper::Request<B>) -> Option<Owner> {
        req.extensions().get::<Owner>().cloned()
    }
}

tokio::task_local! {
    /// Set when rmcp's resumption of a stream failed on this request's task.
    static FAILED_RESUME: std::cell::Cell<bool>;
}

/// `answering` (rmcp answering a `GET` with `Last-Event-ID`), and whether
/// it replayed the stream: `false` when this process could not (rmcp's
/// answer is then an empty stream, which SDKs ask again forever).
pub(in crate::serve) async fn resuming<F: Future>(answering: F) -> (F::Output, bool) {
    let scope = async move {
        let answer = answering.await;
        (answer, !FAILED_RESUME.with(std::cell::Cell::get))
    };
    FAILED_RESUME
        .scope(std::cell::Cell::new(false), scope)
        .await
}

/// [`LocalSessionManager`] with at most `cap` live sessions, each closed
/// after `idle` without a request.
#[derive(Debug)]
pub(in crate::serve) struct BoundedSessions {
    inner: LocalSessionManager,
    cap: usize,
    /// Each live session and when it was last used (a counter, not a
    /// clock: only the order matters).
    used: Mutex<Used>,
}

#[derive(Debug, Default)]
struct Used {
    tick: u64,
    sessions: HashMap<SessionId, u64>,
    /// The owner of each live session opened with a token.
    owners: HashMap<SessionId, Owner>,
}

impl BoundedSessions {
    pub(in crate::serve) fn new(cap: usize, idle: Duration) -> Self {
        let mut inner = LocalSessionManager::default();
        let mut config = SessionConfig::default();
        config.keep_alive = Some(idle);
        inner.session_config = config;
        Self {
            inner,
            cap: cap.max(1),
            used: Mutex::new(Used::default()),
        }
    }

    /// How many sessions are live now.
    pub(in crate::serve) fn live(&self) -> usize {
        self.used().sessions.len()
    }

    /// Binds live session `id` to `owner`, unless it has one already.
    pub(in crate::serve) fn own(&self, id: &str, owner: Owner) {
        let mut used = self.used();
        let id: SessionId = id.into();
        if used.sessions.contains_key(&id) {
            used.owners.entry(id).or_insert(owner);
        }
    }

    /// Whether a request admitted as `owner` may use session `id`: yes
    /// when the session has no owner (no tokens), or is `owner`'s.
    pub(in crate::serve) fn serves(&self, id: &str, owner: Option<&Owner>) -> bool {
        let id: SessionId = id.into();
        match self.used().owners.get(&id) {
            Some(o) => Some(o) == owner,
            None => true,
        }
    }

    /// Closes the least recently used sessions so that one more fits.
    async fn make_room(&self) {
        for id in self.victims() {
            tracing::info!(session = %id, cap = self.cap, "closed the least recently used http session (session cap)");
            let _ = self.inner.close_session(&id).await;
        }
    }

    /// Counts `id` as live, used now.
    fn enter(&self, id: &SessionId) {
        let mut used = self.used();
        used.tick += 1;
        let tick = used.tick;
        used.sessions.insert(id.clone(), tick);
    }

    fn used(&self) -> std::sync::MutexGuard<'_, Used> {
        // A panic elsewhere while holding the lock leaves a usable map.
        self.used.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks `id` as used now, if it is live.
    fn touch(&self, id: &SessionId) {
        let mut used = self.used();
        used.tick += 1;
        let tick = used.tick;
        if let Some(at) = used.sessions.get_mut(id) {
            *at = tick;
        }
    }

    /// The least recently used sessions to close so that one more fits.
    fn victims(&self) -> Vec<SessionId> {
        let mut used = self.used();
        let over = (used.sessions.len() + 1).saturating_sub(self.cap);
        let mut by_age: Vec<(u64, SessionId)> = used
            .sessions
            .iter()
            .map(|(id, at)| (*at, id.clone()))
            .collect();
        by_age.sort();
        let victims: Vec<SessionId> = by_age.into_iter().take(over).map(|(_, id)| id).collect();
        for id in &victims {
            used.sessions.remove(id);
            used.owners.remove(id);
        }
        victims
    }
}

type Inner = LocalSessionManager;
type InnerError = <Inner as SessionManager>::Error;

impl SessionManager for BoundedSessions {
    type Error = InnerError;
    type Transport = <Inner as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.make_room().await;
        let (id, transport) = self.inner.create_session().await?;
        self.enter(&id);
        Ok((id, transport))
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        // A session another replica began (a sealed id): the cap holds it too.
        self.make_room().await;
        let outcome = self.inner.restore_session(id.clone()).await?;
        if matches!(outcome, RestoreOutcome::Restored(_)) {
            tracing::debug!(session = %id, "rebuilt a session from its id");
            self.enter(&id);
        }
        Ok(outcome)
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        {
            let mut used = self.used();
            used.sessions.remove(id);
            used.owners.remove(id);
        }
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        let resumed = self.inner.resume(id, last_event_id).await;
        // rmcp answers a failed resumption with an empty stream; the front
        // refuses it instead (`resuming`).
        if resumed.is_err() {
            let _ = FAILED_RESUME.try_with(|failed| failed.set(true));
        }
        resumed
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}
