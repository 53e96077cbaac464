//! The calls a drain cuts: at shutdown, a request still in flight when the
//! drain time is over gets a JSON-RPC error for its id before its stream
//! closes (or as its answer, when none had begun), so no host waits on a
//! call this process will not finish. A host's SDK that resumes the cut
//! stream elsewhere is refused at once (`crate::serve::front::sessions`).
//!
//! The id is read from the request's own bytes, which [`Teed`] keeps as
//! rmcp (or the fast lane) reads them: shared, not copied, and parsed only
//! when a cut comes.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::support::lock;

/// The JSON-RPC error code of a call the drain cut (the implementation's
/// own range; `data.reason` says `"shutdown"`).
pub(in crate::serve) const CUT_BY_SHUTDOWN: i64 = -32001;

/// The signal that the drain time is over, and that time.
#[derive(Clone)]
pub(in crate::serve) struct Cut {
    tx: Arc<watch::Sender<bool>>,
    pub(in crate::serve) drain: Duration,
}

impl Cut {
    pub(in crate::serve) fn new(drain: Duration) -> Cut {
        Cut {
            tx: Arc::new(watch::channel(false).0),
            drain,
        }
    }

    /// Every request still in flight ends with its error now.
    pub(in crate::serve) fn now(&self) {
        let _ = self.tx.send(true);
    }

    /// Returns once the cut came.
    pub(in crate::serve) fn wait(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut rx = self.tx.subscribe();
        async move {
            let _ = rx.wait_for(|cut| *cut).await;
        }
    }
}

/// The bytes of one request body as they were read (shared, not copied).
#[derive(Clone, Default)]
pub(in crate::serve) struct Seen(Arc<Mutex<Vec<Bytes>>>);

impl Seen {
    /// The id of the JSON-RPC request the body held, read whole; `None`
    /// for a notification, an answer or a body that does not read.
    fn id(&self) -> Option<Value> {
        let chunks = lock(&self.0);
        let bytes: Vec<u8> = chunks.iter().flat_map(|c| c.iter().copied()).collect();
        #[derive(serde::Deserialize)]
        struct Head {
            id: Option<Value>,
            method: Option<serde::de::IgnoredAny>,
        }
        let head: Head = serde_json::from_slice(&bytes).ok()?;
        head.method.and(head.id).filter(|id| !id.is_null())
    }

    /// The error a cut request gets, as JSON text, when it has an id.
    pub(in crate::serve) fn error(&self, drain: Duration) -> Option<String> {
        let id = self.id()?;
        let message = format!(
            "the gateway shut down before the call ended (its drain time, {} s, was over); \
             it may have run in part: send it again",
            drain.as_secs_f64()
        );
        let error = json!({"jsonrpc": "2.0", "id": id, "error": {
            "code": CUT_BY_SHUTDOWN, "message": message, "data": {"reason": "shutdown"}}});
        Some(error.to_string())
    }
}

/// An inbound body whose data is kept in a [`Seen`] as it is read.
pub(in crate::serve) struct Teed {
    inner: Incoming,
    seen: Seen,
}

impl Teed {
    pub(in crate::serve) fn new(inner: Incoming) -> (Teed, Seen) {
        let seen = Seen::default();
        let teed = Teed {
            inner,
            seen: seen.clone(),
        };
        (teed, seen)
    }
}

impl Body for Teed {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled
            && let Some(data) = frame.data_ref()
        {
            lock(&self.seen.0).push(data.clone());
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

type Waiting = Mutex<Pin<Box<dyn Future<Output = ()> + Send>>>;

/// An event-stream answer that ends with its request's error when the cut
/// comes before its own end.
pub(in crate::serve) struct Cuttable {
    body: BoxBody<Bytes, Infallible>,
    /// The cut, while it can still end the stream (in a mutex: a body is
    /// `Sync`, a future need not be).
    cut: Option<Waiting>,
    seen: Seen,
    drain: Duration,
}

impl Cuttable {
    pub(in crate::serve) fn new(
        body: BoxBody<Bytes, Infallible>,
        cut: &Cut,
        seen: Seen,
    ) -> Cuttable {
        Cuttable {
            body,
            cut: Some(Mutex::new(Box::pin(cut.wait()))),
            seen,
            drain: cut.drain,
        }
    }
}

impl Body for Cuttable {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        if polled.is_ready() {
            // Its own frame or its end: a stream that ended needs no error.
            if matches!(polled, Poll::Ready(None)) {
                self.cut = None;
            }
            return polled;
        }
        let came = match &self.cut {
            Some(waiting) => lock(waiting).as_mut().poll(cx).is_ready(),
            None => return Poll::Ready(None),
        };
        if !came {
            return Poll::Pending;
        }
        self.cut = None;
        // The stream ends after this event (or now, for a request without an id).
        let error = self.seen.error(self.drain);
        self.body = BoxBody::new(http_body_util::Empty::new());
        Poll::Ready(error.map(|e| {
            Ok(Frame::data(Bytes::from(format!(
                "event: message\ndata: {e}\n\n"
            ))))
        }))
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream() && self.cut.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}
