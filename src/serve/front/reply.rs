//! The HTTP front's own answers (refusals, the operations endpoints):
//! plain text, never an MCP message.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;
use hyper::{Response, StatusCode};

/// An HTTP answer of the gateway.
pub(in crate::serve) type Answer = Response<BoxBody<Bytes, Infallible>>;

/// `text` with `status`, and the connection closed after it.
pub(in crate::serve) fn plain(status: StatusCode, text: &'static str) -> Answer {
    let mut answer = body(status, text.into(), "text/plain; charset=utf-8");
    answer.headers_mut().insert(
        hyper::header::CONNECTION,
        hyper::header::HeaderValue::from_static("close"),
    );
    answer
}

/// `text` of the content type `kind` with `status`.
pub(in crate::serve) fn body(status: StatusCode, text: String, kind: &'static str) -> Answer {
    let mut answer = Response::new(
        http_body_util::Full::new(Bytes::from(text))
            .map_err(|never| match never {})
            .boxed(),
    );
    *answer.status_mut() = status;
    answer.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(kind),
    );
    answer
}

/// A JSON document (`200`).
#[cfg(feature = "serve-auth")]
pub(in crate::serve) fn json(text: String) -> Answer {
    body(StatusCode::OK, text, "application/json")
}

/// `answer` with `guard` held until its body is sent (or dropped, the client
/// gone): the guard's `Drop` is what runs when the answer ends.
pub(in crate::serve) fn until_sent<G: Send + Sync + Unpin + 'static>(
    answer: Answer,
    guard: G,
) -> Answer {
    answer.map(|body| {
        BoxBody::new(Guarded {
            body,
            _guard: guard,
        })
    })
}

/// An answer's body and what must live as long as it.
struct Guarded<G> {
    body: BoxBody<Bytes, Infallible>,
    _guard: G,
}

impl<G: Unpin> hyper::body::Body for Guarded<G> {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}
