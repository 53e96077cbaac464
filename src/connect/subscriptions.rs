//! What an HTTP upstream sends unasked, on its subscription streams (the
//! GET stream of a 2025-era session, a 2026-07-28 `subscriptions/listen`
//! answer): each event held to [`MAX_SUBSCRIPTION_EVENT`].
//!
//! rmcp's reqwest client reads them: it looks at each byte once, before its
//! event parser buffers it, and ends the stream without reconnecting at the
//! first event over the size it is given (`client_side_sse.rs`, rmcp 3.11).
//! The reading stays rmcp's; the size is ours. [`HttpClient`] gives rmcp a
//! smaller size for these streams than for the answers to requests (rmcp's
//! 16 MiB: a result can be large, a notification is not), and logs a
//! stream's failure naming the upstream, which rmcp's own log does not. A
//! GET that resumes a stream (`Last-Event-ID`) keeps rmcp's size: it may
//! carry an answer. Each poll of a subscription stream comes after a yield
//! (`support/pace.rs`): a flood on it reads a chunk at a time, between the
//! other upstreams' turns. It also writes the headers a gateway carries on
//! from its host (`forward.rs`).

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::support::pace::Turns;
use futures_core::Stream;
use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

/// The largest event an HTTP upstream's subscription stream may send (4
/// MiB): a notification, or a request of the upstream's (sampling with an
/// image is the largest). A larger or endless one ends that stream, logged;
/// the upstream's calls go on.
pub const MAX_SUBSCRIPTION_EVENT: usize = 4 << 20;

type Answer<T> = Result<T, StreamableHttpError<reqwest::Error>>;

/// The HTTP client of one upstream's connection: `http`'s requests, its
/// subscription streams held to `cap`.
#[derive(Clone)]
pub(super) struct HttpClient {
    http: reqwest::Client,
    alias: Arc<str>,
    cap: usize,
}

impl HttpClient {
    pub(super) fn new(http: reqwest::Client, alias: &str) -> HttpClient {
        HttpClient::capped(http, alias, MAX_SUBSCRIPTION_EVENT)
    }

    fn capped(http: reqwest::Client, alias: &str, cap: usize) -> HttpClient {
        HttpClient {
            http,
            alias: alias.into(),
            cap,
        }
    }

    /// `stream`, its errors logged under the upstream's name.
    fn logged(&self, stream: BoxedSseResponse) -> BoxedSseResponse {
        Box::pin(Logged {
            inner: stream,
            alias: self.alias.clone(),
            cap: self.cap,
            turns: Turns::default(),
        })
    }

    /// A request sent by `send` with the largest event it may read: `max`,
    /// or when it `opens` a subscription stream the cap, its stream logged.
    async fn held<T: Streamed, F>(
        &self,
        opens: bool,
        max: usize,
        send: impl FnOnce(usize) -> F,
    ) -> Answer<T>
    where
        F: std::future::Future<Output = Answer<T>>,
    {
        match opens {
            true => Ok(send(max.min(self.cap)).await?.logged(self)),
            false => send(max).await,
        }
    }
}

/// An answer that may be an event stream (a GET's, a POST's).
trait Streamed {
    /// The same, its event stream logged by `client`.
    fn logged(self, client: &HttpClient) -> Self;
}

impl Streamed for BoxedSseResponse {
    fn logged(self, client: &HttpClient) -> Self {
        client.logged(self)
    }
}

impl Streamed for StreamableHttpPostResponse {
    fn logged(self, client: &HttpClient) -> Self {
        match self {
            StreamableHttpPostResponse::Sse(stream, session) => {
                StreamableHttpPostResponse::Sse(client.logged(stream), session)
            }
            other => other,
        }
    }
}

/// Whether `message` opens a subscription stream (2026-07-28; sent raw
/// when its filter holds what rmcp's cannot, such as `taskIds`).
fn listens(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, JsonRpcMessage::Request(r) if match &r.request {
        ClientRequest::SubscriptionsListenRequest(_) => true,
        ClientRequest::CustomRequest(c) => c.method == "subscriptions/listen",
        _ => false,
    })
}

impl StreamableHttpClient for HttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Answer<StreamableHttpPostResponse> {
        let limits = StreamableHttpResponseLimits::default();
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Answer<StreamableHttpPostResponse> {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        mut custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Answer<StreamableHttpPostResponse> {
        super::forward::add(&message, &mut custom_headers);
        let opens = listens(&message);
        self.held(opens, limits.max_sse_event_size, |max| {
            let mut limits = limits;
            limits.max_sse_event_size = max;
            self.http.post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Answer<()> {
        self.http
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Answer<BoxedSseResponse> {
        let max = StreamableHttpResponseLimits::default().max_sse_event_size;
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            max,
        )
        .await
    }

    /// A GET without `Last-Event-ID` opens the session's subscription
    /// stream: held to the cap. One with it resumes a stream that broke,
    /// which may be a request's answer: rmcp's size for answers.
    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Answer<BoxedSseResponse> {
        let opens = last_event_id.is_none();
        self.held(opens, max_sse_event_size, |max| {
            self.http.get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max,
            )
        })
        .await
    }
}

/// A subscription stream whose errors are logged (rmcp's log of them
/// names no upstream): an event over the cap, or the connection broken.
/// Each poll waits its turn.
struct Logged {
    inner: BoxedSseResponse,
    alias: Arc<str>,
    cap: usize,
    turns: Turns,
}

impl Stream for Logged {
    type Item = <BoxedSseResponse as Stream>::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.turns.poll_turn(cx).is_pending() {
            return Poll::Pending;
        }
        let item = self.inner.as_mut().poll_next(cx);
        if let Poll::Ready(Some(Err(e))) = &item {
            // The error's text can hold the URL, and so a token in its query.
            let error = crate::redact::printed(&e.to_string()).into_owned();
            tracing::warn!(
                target: "mcp_preamble::upstream",
                upstream = %self.alias,
                "its subscription stream failed (events are held to {} bytes): {error}",
                self.cap
            );
        }
        item
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::net::TcpListener;

    use super::*;
    use crate::connect::pool::tests::read_request;

    /// A server on 127.0.0.1 whose every answer is an event stream: a
    /// short event, then on `/big` an event of 100 KiB and the end, on
    /// `/endless` one `data:` line that never ends (until the client hangs
    /// up). Each request's first line goes to `seen`, and `hung up` when
    /// the client let an endless event go.
    fn server() -> (u16, std::sync::mpsc::Receiver<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (seen, requests) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let (first, _, _) = read_request(&stream);
                let _ = seen.send(first.trim().to_string());
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                            connection: close\r\n\r\n";
                let _ = write!(stream, "{head}data: {NOTICE}\n\n");
                if first.contains("/endless") {
                    let _ = stream.write_all(b"data: ");
                    while stream.write_all(&[b'x'; 16 << 10]).is_ok() {}
                    let _ = seen.send("hung up".to_string());
                } else {
                    let big = "x".repeat(100 << 10);
                    let _ = write!(stream, "data: {big}\n\n");
                }
            }
        });
        (port, requests)
    }

    /// The events of `stream` until it ends: `Ok(bytes of data)` or `Err`.
    async fn events(mut stream: BoxedSseResponse) -> Vec<Result<usize, ()>> {
        let mut out = Vec::new();
        while let Some(item) = std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)).await {
            out.push(item.map(|e| e.data.map_or(0, |d| d.len())).map_err(|_| ()));
        }
        out
    }

    fn message(method: &str, params: serde_json::Value) -> ClientJsonRpcMessage {
        let message =
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        serde_json::from_value(message).unwrap()
    }

    const CAP: usize = 64 << 10;
    const NOTICE: &str = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;
    const SHORT: usize = NOTICE.len();

    /// The session's GET stream and a `subscriptions/listen` answer are held
    /// to the cap (the event over it ends the stream); a resumed stream and
    /// a call's answer keep rmcp's size (the 100 KiB event comes through).
    #[tokio::test]
    async fn subscription_streams_are_held_to_the_cap_and_answers_are_not() {
        let (port, _) = server();
        let client = HttpClient::capped(reqwest::Client::new(), "flood", CAP);
        let uri: Arc<str> = format!("http://127.0.0.1:{port}/big").into();
        let get = |last: Option<&str>| {
            let last = last.map(str::to_string);
            client.get_stream(uri.clone(), Some("s".into()), last, None, HashMap::new())
        };
        assert_eq!(events(get(None).await.unwrap()).await, [Ok(SHORT), Err(())]);
        let resumed = events(get(Some("7")).await.unwrap()).await;
        assert_eq!(resumed, [Ok(SHORT), Ok(100 << 10)]);
        let post = |message| {
            let limits = StreamableHttpResponseLimits::default();
            client.post_message_with_response_limits(
                uri.clone(),
                message,
                None,
                None,
                HashMap::new(),
                limits,
            )
        };
        let listen = message(
            "subscriptions/listen",
            serde_json::json!({"notifications": {"toolsListChanged": true}}),
        );
        let call = message(
            "tools/call",
            serde_json::json!({"name": "t", "arguments": {}}),
        );
        for (message, want) in [
            (listen, [Ok(SHORT), Err(())]),
            (call, [Ok(SHORT), Ok(100 << 10)]),
        ] {
            let StreamableHttpPostResponse::Sse(stream, _) = post(message).await.unwrap() else {
                panic!("not an event stream");
            };
            assert_eq!(events(stream).await, want);
        }
    }

    /// An event that never ends is cut at the cap: the stream ends (an
    /// error, then nothing) and the connection is let go.
    #[tokio::test]
    async fn an_endless_event_ends_the_subscription_stream_at_the_cap() {
        let (port, requests) = server();
        let client = HttpClient::capped(reqwest::Client::new(), "flood", CAP);
        let uri: Arc<str> = format!("http://127.0.0.1:{port}/endless").into();
        let stream = client.get_stream(uri, Some("s".into()), None, None, HashMap::new());
        assert_eq!(events(stream.await.unwrap()).await, [Ok(SHORT), Err(())]);
        // Waited for off the runtime, which closes the connection.
        let told = tokio::task::spawn_blocking(move || {
            let wait = std::time::Duration::from_secs(20);
            [(); 2].map(|_| requests.recv_timeout(wait).unwrap_or_default())
        });
        let [request, end] = told.await.unwrap();
        assert!(request.starts_with("GET /endless"), "{request}");
        assert_eq!(end, "hung up");
    }

    /// A stream whose items are all there at once (errors, as a flood's
    /// chunks are): that many, then its end.
    struct Ready(usize);

    impl Stream for Ready {
        type Item = <BoxedSseResponse as Stream>::Item;

        fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
            let Some(left) = self.0.checked_sub(1) else {
                return Poll::Ready(None);
            };
            self.0 = left;
            let invalid = rmcp::transport::streamable_http_client::SseError::InvalidLine;
            Poll::Ready(Some(Err(invalid)))
        }
    }

    /// Issue 54: however ready a subscription stream's bytes are, another
    /// task runs between two reads of it (the gateway's thread is shared
    /// by every upstream).
    #[tokio::test]
    async fn a_subscription_stream_gives_way_before_each_read() {
        let turns = crate::support::pace::ticker();
        let client = HttpClient::capped(reqwest::Client::new(), "flood", CAP);
        assert_eq!(
            events(client.logged(Box::pin(Ready(10)))).await,
            [Err(()); 10]
        );
        let turns = turns.load(std::sync::atomic::Ordering::Relaxed);
        assert!(turns >= 10, "the other task ran {turns} times in 10 reads");
    }
}
