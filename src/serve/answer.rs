//! The gateway's own HTTP answers (feature `serve-http`): refusals and
//! documents made before MCP sees a request.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;
use hyper::header::{CONNECTION, CONTENT_TYPE, HeaderValue};
use hyper::{Response, StatusCode};

pub(super) type Answer = Response<BoxBody<Bytes, Infallible>>;

/// `text` with `status`, and the connection closed after it.
pub(super) fn plain(status: StatusCode, text: &'static str) -> Answer {
    let mut answer = Response::new(
        http_body_util::Full::new(Bytes::from_static(text.as_bytes()))
            .map_err(|never| match never {})
            .boxed(),
    );
    *answer.status_mut() = status;
    answer.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    answer
        .headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    answer
}

/// A JSON document (`200`).
#[cfg(feature = "serve-auth")]
pub(super) fn json(body: String) -> Answer {
    let mut answer = Response::new(
        http_body_util::Full::new(Bytes::from(body))
            .map_err(|never| match never {})
            .boxed(),
    );
    answer
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    answer
}
