//! `wrap --url`: a Streamable HTTP upstream behind the same line relay.
//! Each line the relay sends upstream is one POST (in order: the next is
//! sent once the last one's answer has begun); a JSON answer or each
//! event of an event stream comes back as one line. The session
//! (`Mcp-Session-Id`) and the negotiated protocol version go on every
//! later request; a GET stream carries what the server sends unasked, and
//! the session is deleted when the host goes. Every body is read within
//! the relay's message cap, and the GET stream's events within the
//! gateway's subscription cap ([`MAX_SUBSCRIPTION_EVENT`]: a notification
//! or a server's request is not a result); an event over it ends that
//! stream, which is not opened again. A request's event stream that closes before
//! its answer is resumed (`GET` with `Last-Event-ID`, as the transport
//! spec says) at most [`RESUMPTIONS`] times; then the host gets an error
//! for it instead of waiting forever.

use std::sync::{Arc, Mutex};

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncWrite};
use tokio::sync::mpsc;

use super::lines::{Line, next_line};
use super::relay::write_lines;
use crate::connect::MAX_SUBSCRIPTION_EVENT;
use crate::serve::upstream::events::{EventReader, TooLong};
use crate::support::lock;

const SESSION: &str = "mcp-session-id";

/// How many times a request's stream that closed before its answer is
/// resumed before the request fails.
const RESUMPTIONS: usize = 2;

/// The pause before each resumption.
const RESUME_PAUSE: std::time::Duration = std::time::Duration::from_millis(500);

/// What reading one answer found.
#[derive(Default)]
struct Read {
    /// The request's answer was among its messages.
    answered: bool,
    /// The last event id of an event stream (where a resumption starts).
    last_id: Option<String>,
}
const VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";

struct HttpPeer {
    client: reqwest::Client,
    url: String,
    session: Mutex<Option<String>>,
    version: Mutex<Option<String>>,
    out: mpsc::Sender<Vec<u8>>,
    max: usize,
}

/// Relays lines from `from_relay` to the server at `url` and its answers
/// into `to_relay`, until `from_relay` ends.
pub(crate) async fn bridge<R, W>(url: String, max: usize, mut from_relay: R, to_relay: W)
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out, queue) = mpsc::channel(64);
    let writer = tokio::spawn(write_lines(to_relay, queue));
    let up = Arc::new(HttpPeer {
        client: reqwest::Client::new(),
        url,
        session: Mutex::new(None),
        version: Mutex::new(None),
        out,
        max,
    });
    let mut listening = false;
    while let Ok(Line::Message(line)) = next_line(&mut from_relay, max).await {
        let Ok(Value::Object(message)) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        let message = Value::Object(message);
        up.post(&message, line).await;
        // Once the session is live, what the server sends unasked comes on a GET stream.
        if !listening && message["method"] == "notifications/initialized" {
            listening = true;
            let up = up.clone();
            tokio::spawn(async move { up.listen().await });
        }
    }
    up.close().await;
    drop(up);
    writer.abort();
}

impl HttpPeer {
    fn headers(&self, message: &Value) -> HeaderMap {
        let mut headers = HeaderMap::new();
        let mut put = |name: &'static str, value: &str| {
            if let Ok(v) = value.parse() {
                headers.insert(name, v);
            }
        };
        put("accept", "application/json, text/event-stream");
        put("content-type", "application/json");
        if let Some(session) = lock(&self.session).as_deref() {
            put(SESSION, session);
        }
        let claimed = message["params"]["_meta"][VERSION_META].as_str();
        if let Some(version) = claimed
            .map(str::to_string)
            .or_else(|| lock(&self.version).clone())
        {
            put("mcp-protocol-version", &version);
        }
        if let Some(method) = message["method"].as_str() {
            put("mcp-method", method);
            let name = message["params"]["name"].as_str();
            if let Some(name) = name.filter(|_| method == "tools/call") {
                put("mcp-name", name);
            }
        }
        headers
    }

    /// One message POSTed; its answer read in a task of its own.
    async fn post(self: &Arc<Self>, message: &Value, line: Vec<u8>) {
        let id = message
            .get("id")
            .filter(|_| message.get("method").is_some())
            .cloned();
        let sent = (self.client.post(&self.url))
            .headers(self.headers(message))
            .body(line)
            .send()
            .await;
        let answer = match sent {
            Ok(answer) => answer,
            Err(e) => {
                return self
                    .fail(id, &format!("cannot reach the upstream: {e}"))
                    .await;
            }
        };
        if let Some(session) = answer.headers().get(SESSION).and_then(|v| v.to_str().ok()) {
            *lock(&self.session) = Some(session.to_string());
        }
        let status = answer.status();
        if status.as_u16() == 202 {
            return;
        }
        if !status.is_success() {
            let why = format!("the upstream answered HTTP {status}");
            return self.fail(id, &why).await;
        }
        let up = self.clone();
        tokio::spawn(async move { up.answered(answer, id).await });
    }

    /// The messages of `answer` sent on; when it is the event stream of
    /// request `id` and closes before the answer, resumed, and failed
    /// after [`RESUMPTIONS`].
    async fn answered(&self, answer: reqwest::Response, id: Option<Value>) {
        let mut read = self.read(answer, id.as_ref(), self.max).await;
        let Some(id) = id else { return };
        let mut tries = 0;
        while !read.answered {
            let Some(last) = read.last_id.take().filter(|_| tries < RESUMPTIONS) else {
                let why = format!(
                    "the upstream closed its event stream before answering (resumed {tries} times)"
                );
                return self.fail(Some(id), &why).await;
            };
            tries += 1;
            tokio::time::sleep(RESUME_PAUSE).await;
            read = match self.resume(&last).await {
                Some(answer) => self.read(answer, Some(&id), self.max).await,
                None => Read::default(),
            };
            // A resumed stream without events of its own resumes from the same place.
            read.last_id = read.last_id.or(Some(last));
        }
    }

    /// A `GET` resuming the stream after event `last`, when it is answered.
    async fn resume(&self, last: &str) -> Option<reqwest::Response> {
        let mut headers = self.headers(&Value::Null);
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        headers.remove(CONTENT_TYPE);
        headers.remove("mcp-method");
        if let Ok(last) = HeaderValue::from_str(last) {
            headers.insert("last-event-id", last);
        }
        let answer = self.client.get(&self.url).headers(headers).send().await;
        match answer {
            Ok(answer) if answer.status().is_success() => Some(answer),
            Ok(answer) => {
                tracing::info!(
                    status = answer.status().as_u16(),
                    "the upstream refused to resume a stream"
                );
                None
            }
            Err(e) => {
                tracing::info!("resuming a stream failed: {e}");
                None
            }
        }
    }

    /// A JSON-RPC error for the request `id` (none for a notification or
    /// an answer), logged either way.
    async fn fail(&self, id: Option<Value>, why: &str) {
        let why = crate::redact::printed(why).into_owned();
        tracing::warn!("{why}");
        if let Some(id) = id {
            let error =
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": why}});
            let _ = self.out.send(error.to_string().into_bytes()).await;
        }
    }

    /// The server's stream of messages it sends unasked (none when it has none).
    async fn listen(self: Arc<Self>) {
        let mut headers = self.headers(&Value::Null);
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        headers.remove(CONTENT_TYPE);
        headers.remove("mcp-method");
        let answer = self.client.get(&self.url).headers(headers).send().await;
        if let Some(answer) = answer.ok().filter(|a| a.status().is_success()) {
            let cap = self.max.min(MAX_SUBSCRIPTION_EVENT);
            self.read(answer, None, cap).await;
        }
    }

    async fn close(&self) {
        let session = lock(&self.session).clone();
        if let Some(session) = session {
            let _ = self
                .client
                .delete(&self.url)
                .header(SESSION, session)
                .send()
                .await;
        }
    }

    /// Each message of an answer (a JSON body, or an event stream whose
    /// events are held to `max`) as a line; whether the answer to `id` was
    /// among them.
    async fn read(&self, mut answer: reqwest::Response, id: Option<&Value>, max: usize) -> Read {
        let stream = (answer.headers().get(CONTENT_TYPE))
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/event-stream"));
        let mut events = EventReader::new(max);
        let mut buf: Vec<u8> = Vec::new();
        let mut read = Read::default();
        loop {
            let chunk = match answer.chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                Err(e) => {
                    tracing::warn!("reading the upstream's answer failed: {e}");
                    read.last_id = events.last_id().map(str::to_string);
                    return read;
                }
            };
            if !stream {
                buf.extend_from_slice(&chunk);
                if buf.len() > self.max {
                    self.too_long(self.max);
                    return read;
                }
                continue;
            }
            events.push(&chunk);
            while let Some(event) = events.next_event() {
                match event {
                    Ok(data) => read.answered |= self.messages(&data, id).await,
                    Err(TooLong) => {
                        self.too_long(max);
                        return read;
                    }
                }
            }
        }
        read.last_id = events.last_id().map(str::to_string);
        let last = match stream {
            true => events.finish(),
            false => Some(buf),
        };
        if let Some(data) = last {
            read.answered |= self.messages(&data, id).await;
        }
        read
    }

    fn too_long(&self, max: usize) {
        tracing::error!("the upstream sent a message over {max} bytes; dropped");
    }

    /// A body of one message or a batch, each sent on as one line (as
    /// sent when it is one line); the negotiated protocol version noted.
    /// Whether one of them answers `id`.
    async fn messages(&self, body: &[u8], id: Option<&Value>) -> bool {
        let trimmed = body.trim_ascii();
        if trimmed.is_empty() {
            return false;
        }
        let messages = match serde_json::from_slice::<Value>(trimmed) {
            Ok(Value::Array(batch)) => batch,
            Ok(one) => vec![one],
            Err(_) => {
                tracing::warn!("the upstream sent a body that is not JSON (dropped)");
                return false;
            }
        };
        let whole = messages.len() == 1 && !trimmed.contains(&b'\n');
        let answers =
            |m: &Value| m.get("method").is_none() && id.is_some_and(|id| m.get("id") == Some(id));
        let answered = messages.iter().any(answers);
        for m in messages {
            if let Some(version) = m["result"]["protocolVersion"].as_str() {
                *lock(&self.version) = Some(version.to_string());
            }
            let line = if whole {
                trimmed.to_vec()
            } else {
                m.to_string().into_bytes()
            };
            let _ = self.out.send(line).await;
        }
        answered
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read as _, Write as _};

    use super::*;

    const NOTICE: &str = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;

    /// A server on 127.0.0.1 whose every answer is an event stream: a
    /// notification just over the subscription cap, then a short one.
    fn server() -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let data = "x".repeat(MAX_SUBSCRIPTION_EVENT);
        let big = json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": data}});
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut head = Vec::new();
                let mut byte = [0u8];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                    head.push(byte[0]);
                }
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                     connection: close\r\n\r\ndata: {big}\n\ndata: {NOTICE}\n\n"
                );
                let _ = stream.write_all(answer.as_bytes());
            }
        });
        url
    }

    /// Issue 54: the GET stream's events are held to the subscription cap
    /// (the event over it ends the stream: nothing of it, or after it, is
    /// relayed); an answer's stream keeps the relay's message cap.
    #[tokio::test]
    async fn the_get_stream_is_held_to_the_subscription_cap_and_answers_are_not() {
        let url = server();
        let (out, mut lines) = mpsc::channel(8);
        let up = Arc::new(HttpPeer {
            client: reqwest::Client::new(),
            url: url.clone(),
            session: Mutex::new(Some("s".to_string())),
            version: Mutex::new(None),
            out,
            max: crate::serve::upstream::MAX_MESSAGE_BYTES,
        });
        up.clone().listen().await;
        assert!(
            lines.try_recv().is_err(),
            "the GET stream relayed its events"
        );
        let answer = up.client.get(&url).send().await.unwrap();
        up.read(answer, None, up.max).await;
        let big = lines.try_recv().unwrap();
        assert!(big.len() > MAX_SUBSCRIPTION_EVENT, "{}", big.len());
        assert_eq!(lines.try_recv().unwrap(), NOTICE.as_bytes());
    }
}
