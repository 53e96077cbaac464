//! The line relay between a host and one upstream: every message passes
//! as sent, both ways (server-to-client requests and their answers too),
//! except the handshake answer (its instructions), `tools/list` answers
//! (reshaped) and calls to tools the policy hides (refused here).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

use super::lines::{Line, next_line};
use super::reader::Reader;
use super::shape::Shaper;
use crate::model::{Era, ServerSnapshot};
use crate::support::lock;

/// The longest the wrapper waits for one of its own `tools/list` pages
/// while the host waits for its handshake answer.
const LIST_TIMEOUT: Duration = Duration::from_secs(10);

/// Host requests in flight whose answers are reshaped, at most: past it,
/// a `tools/list` is refused rather than passed unshaped.
const MAX_ASKED: usize = 4096;

/// A host request whose answer the wrapper changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Asked {
    Handshake(Era),
    ToolsList,
}

#[derive(Default)]
struct State {
    asked: HashMap<String, Asked>,
    mine: HashMap<String, oneshot::Sender<Value>>,
    next: u64,
    /// The upstream's handshake (no tools): what each page is read with.
    base: Option<ServerSnapshot>,
    /// The key the policy knows the server by, once known.
    key: Option<String>,
    /// The wrapper sent `notifications/initialized` itself.
    initialized: bool,
    /// The `_meta` of a 2026-07-28 host's `server/discover`, which every
    /// later request on the connection must carry.
    envelope: Option<Value>,
    /// The reader tool, when the host did not read the instructions whole.
    reader: Option<Reader>,
}

/// How a relay ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ended {
    /// The host closed its side.
    Host,
    /// The upstream closed its side.
    Upstream,
}

/// A relay's shared half: the shaper, what is in flight, and the two
/// outgoing queues (each drained by one writer task, so lines never mix).
pub(crate) struct Relay {
    shaper: Shaper,
    state: Mutex<State>,
    to_host: mpsc::Sender<Vec<u8>>,
    to_upstream: mpsc::Sender<Vec<u8>>,
    /// Ids of the wrapper's own requests: `mcp-preamble-<random>-<n>`,
    /// strings a host's ids do not collide with.
    prefix: String,
    pub(crate) max_line: usize,
}

/// The canonical key of a JSON-RPC id.
fn key(id: &Value) -> String {
    id.to_string()
}

impl Relay {
    pub(crate) fn new(
        shaper: Shaper,
        max_line: usize,
        to_host: mpsc::Sender<Vec<u8>>,
        to_upstream: mpsc::Sender<Vec<u8>>,
    ) -> Relay {
        let random = crate::support::hash::fnv1a64(
            format!("{:?}{}", std::time::SystemTime::now(), std::process::id()).as_bytes(),
        );
        Relay {
            shaper,
            state: Mutex::default(),
            to_host,
            to_upstream,
            prefix: format!("mcp-preamble-{random:016x}-"),
            max_line,
        }
    }

    async fn host(&self, line: Vec<u8>) {
        let _ = self.to_host.send(line).await;
    }

    async fn upstream(&self, line: Vec<u8>) {
        let _ = self.to_upstream.send(line).await;
    }

    /// Relays the host's messages until it closes its side or sends a
    /// line over the cap.
    pub(crate) async fn relay_host<R: AsyncBufRead + Unpin>(&self, mut reader: R) -> Ended {
        loop {
            match next_line(&mut reader, self.max_line).await {
                Ok(Line::Message(line)) => self.host_message(line).await,
                Ok(Line::End) => return Ended::Host,
                Ok(Line::TooLong) => {
                    tracing::error!(
                        "the host sent a message over {} bytes; stopping",
                        self.max_line
                    );
                    return Ended::Host;
                }
                Err(e) => {
                    tracing::error!("reading the host failed: {e}; stopping");
                    return Ended::Host;
                }
            }
        }
    }

    /// Relays the upstream's messages until it closes its side or sends
    /// a line over the cap.
    pub(crate) async fn relay_upstream<R: AsyncBufRead + Unpin>(
        self: &Arc<Self>,
        mut reader: R,
    ) -> Ended {
        loop {
            match next_line(&mut reader, self.max_line).await {
                Ok(Line::Message(line)) => self.upstream_message(line).await,
                Ok(Line::End) => return Ended::Upstream,
                Ok(Line::TooLong) => {
                    tracing::error!(
                        "the upstream sent a message over {} bytes; stopping",
                        self.max_line
                    );
                    return Ended::Upstream;
                }
                Err(e) => {
                    tracing::error!("reading the upstream failed: {e}; stopping");
                    return Ended::Upstream;
                }
            }
        }
    }

    async fn host_message(&self, line: Vec<u8>) {
        match serde_json::from_slice::<Value>(&line) {
            Ok(Value::Object(message)) => self.host_one(message, line).await,
            // A batch (2025-03-26): each message on its own, so that none
            // passes unjudged (the answers come back one by one).
            Ok(Value::Array(batch)) if !batch.is_empty() => {
                for message in batch {
                    let line = message.to_string().into_bytes();
                    match message {
                        Value::Object(message) => self.host_one(message, line).await,
                        _ => self.upstream(line).await,
                    }
                }
            }
            // Not ours to judge: the upstream answers it as it would.
            _ => self.upstream(line).await,
        }
    }

    async fn host_one(&self, message: Map<String, Value>, line: Vec<u8>) {
        let method = message.get("method").and_then(Value::as_str);
        let Some(id) = message.get("id") else {
            if method == Some("notifications/initialized") && lock(&self.state).initialized {
                // The upstream had it from the wrapper already.
                return;
            }
            return self.upstream(line).await;
        };
        let asked = match method {
            Some("initialize") => Some(Asked::Handshake(Era::Legacy)),
            Some("server/discover") => {
                let meta = message.get("params").and_then(|p| p.get("_meta"));
                lock(&self.state).envelope = meta.cloned();
                Some(Asked::Handshake(Era::Modern))
            }
            Some("tools/list") => Some(Asked::ToolsList),
            Some("tools/call") => return self.call(&message, id, line).await,
            _ => None,
        };
        if let Some(asked) = asked {
            let full = {
                let mut state = lock(&self.state);
                let full = state.asked.len() >= MAX_ASKED;
                if !full {
                    state.asked.insert(key(id), asked);
                }
                full
            };
            if full {
                let why = "too many requests in flight; try again";
                return self.host(error(id, -32603, why, None)).await;
            }
        }
        self.upstream(line).await
    }

    /// A `tools/call`: refused when the policy hides the tool, else passed on.
    async fn call(&self, message: &Map<String, Value>, id: &Value, line: Vec<u8>) {
        let name = (message.get("params"))
            .and_then(|p| p.get("name"))
            .and_then(Value::as_str);
        let reader = lock(&self.state).reader.clone();
        if let Some(reader) = reader.filter(|_| name == Some(crate::serve::READER)) {
            return self.host(reader.answer(id)).await;
        }
        let key = lock(&self.state).key.clone();
        let key = key.or_else(|| self.shaper.alias.clone());
        let hidden = name.filter(|n| key.as_ref().is_some_and(|k| self.shaper.hides(k, n)));
        let Some(name) = hidden else {
            return self.upstream(line).await;
        };
        let why = format!("tool {name:?} is not served: the operator's policy hides it");
        tracing::info!(tool = %name, "call refused: {why}");
        let data = json!({"hidden": true, "tool": name});
        self.host(error(id, -32602, &why, Some(data))).await
    }

    async fn upstream_message(self: &Arc<Self>, line: Vec<u8>) {
        match serde_json::from_slice::<Value>(&line) {
            Ok(Value::Object(message)) => self.upstream_one(message, line).await,
            // A batch (2025-03-26): each message on its own, reshaped as one.
            Ok(Value::Array(batch)) if batch.iter().all(Value::is_object) => {
                for message in batch {
                    let line = message.to_string().into_bytes();
                    if let Value::Object(message) = message {
                        self.upstream_one(message, line).await;
                    }
                }
            }
            _ => {
                // A host's SDK would choke on it; the log tells instead.
                let shown = String::from_utf8_lossy(&line[..line.len().min(200)]).into_owned();
                tracing::warn!(
                    "the upstream wrote a line that is not a JSON-RPC message (dropped): {}",
                    crate::text::terminal_safe(&shown)
                );
            }
        }
    }

    async fn upstream_one(self: &Arc<Self>, message: Map<String, Value>, line: Vec<u8>) {
        let response = !message.contains_key("method");
        if !response && (message.contains_key("result") || message.contains_key("error")) {
            // Neither request nor answer: a host's SDK could take it for either.
            tracing::warn!("the upstream sent a request that carries a result (dropped)");
            return;
        }
        let id = message.get("id").filter(|_| response).map(key);
        let Some(id) = id else {
            return self.host(line).await;
        };
        let mine = lock(&self.state).mine.remove(&id);
        if let Some(waiting) = mine {
            let _ = waiting.send(Value::Object(message));
            return;
        }
        let asked = lock(&self.state).asked.remove(&id);
        match asked {
            Some(Asked::Handshake(era)) => {
                // Its own task: listing the tools needs this loop to run.
                let relay = self.clone();
                tokio::spawn(async move { relay.handshake(era, message, line).await });
            }
            Some(Asked::ToolsList) => self.tools_page(message, line).await,
            None => self.unasked(message, line).await,
        }
    }

    /// An answer to no request whose answer the wrapper reshapes (a second
    /// answer under one id, or a host that reused an id): as sent, but a
    /// result with tools or instructions is held to the same rules, so no
    /// answer carries them past the policy and the sanitizer.
    async fn unasked(&self, mut message: Map<String, Value>, line: Vec<u8>) {
        let Some(Value::Object(result)) = message.get_mut("result") else {
            return self.host(line).await;
        };
        // Instructions first: an answer with tools too keeps none of them.
        let stripped = result.remove("instructions").is_some();
        if result.get("tools").is_some_and(Value::is_array) {
            let line = if stripped { to_line(&message) } else { line };
            return self.tools_page(message, line).await;
        }
        if stripped {
            return self.host(to_line(&message)).await;
        }
        self.host(line).await
    }

    /// A host's `tools/list` answered: reshaped by the policy; instructions
    /// in it go (only the handshake's are served, fitted and sanitized).
    async fn tools_page(&self, mut message: Map<String, Value>, line: Vec<u8>) {
        let Some(Value::Object(result)) = message.get_mut("result") else {
            return self.host(line).await;
        };
        let stripped = result.remove("instructions").is_some();
        let (base, reader) = {
            let state = lock(&self.state);
            (state.base.clone(), state.reader.clone())
        };
        let base = base.unwrap_or_else(|| ServerSnapshot::new("upstream"));
        let shaped = self.shaper.page(&base, result);
        let listed = reader.is_some_and(|r| r.append(result));
        match shaped.map(|changed| changed || listed) {
            Ok(changed) => {
                if changed || stripped {
                    return self.host(to_line(&message)).await;
                }
                self.host(line).await
            }
            Err(e) => {
                tracing::warn!("the upstream's tools/list answer does not read: {e}");
                let id = message.get("id").cloned().unwrap_or(Value::Null);
                let why = format!("the upstream's tools/list answer does not read: {e}");
                self.host(error(&id, -32603, &why, None)).await
            }
        }
    }

    /// The upstream answered the host's handshake: list its tools (after
    /// `notifications/initialized`, which the wrapper sends itself in the
    /// 2025 era), then answer the host with the instructions replaced.
    async fn handshake(&self, era: Era, mut message: Map<String, Value>, line: Vec<u8>) {
        let read = match era {
            Era::Legacy => ServerSnapshot::from_initialize(&Value::Object(message.clone())),
            _ => ServerSnapshot::from_discover(&Value::Object(message.clone())),
        };
        let base = match read {
            Ok(base) => base,
            Err(e) => {
                // An error answer goes to the host as sent; a result that does
                // not read goes without its instructions, never unsanitized.
                tracing::warn!("the upstream's handshake answer: {e}");
                let Some(Value::Object(result)) = message.get_mut("result") else {
                    return self.host(line).await;
                };
                if result.remove("instructions").is_none() {
                    return self.host(line).await;
                }
                return self.host(to_line(&message)).await;
            }
        };
        lock(&self.state).key = Some(self.shaper.key_of(&base));
        if era == Era::Legacy {
            lock(&self.state).initialized = true;
            let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            self.upstream(to_line(initialized.as_object().unwrap_or(&Map::new())))
                .await;
        }
        let mut snapshot = base.clone();
        if has_tools(&message) {
            self.list_tools(&mut snapshot).await;
        }
        lock(&self.state).base = Some(base);
        let served = match self.shaper.instructions(snapshot) {
            Ok((text, reader)) => {
                lock(&self.state).reader = reader;
                text
            }
            Err(e) => {
                tracing::warn!("the instructions are not served: {e}");
                None
            }
        };
        let Some(Value::Object(result)) = message.get_mut("result") else {
            return self.host(line).await;
        };
        let before = result.get("instructions").cloned();
        match served {
            Some(text) => result.insert("instructions".into(), Value::String(text)),
            None => result.remove("instructions"),
        };
        if result.get("instructions") == before.as_ref() {
            return self.host(line).await;
        }
        self.host(to_line(&message)).await
    }

    /// Every `tools/list` page into `snapshot`, under the wrapper's own
    /// ids, within the limits' page count; a failure is logged and ends
    /// the listing (the instructions are then de-duplicated against fewer
    /// tools).
    async fn list_tools(&self, snapshot: &mut ServerSnapshot) {
        let pages = self.shaper.assembler.limits_ref().max_tool_pages();
        let mut cursor: Option<String> = None;
        for _ in 0..pages {
            let mut params = Map::new();
            if let Some(c) = cursor.take() {
                params.insert("cursor".into(), Value::String(c));
            }
            if let Some(meta) = lock(&self.state).envelope.clone() {
                params.insert("_meta".into(), meta);
            }
            let page = match self.ask("tools/list", Value::Object(params)).await {
                Some(page) => page,
                None => return,
            };
            match snapshot.push_tools_page(&page) {
                Ok(Some(next)) => cursor = Some(next),
                Ok(None) => return,
                Err(e) => {
                    tracing::warn!("listing the upstream's tools failed: {e}");
                    return;
                }
            }
        }
    }

    /// Sends a request of the wrapper's own and waits for its answer.
    async fn ask(&self, method: &str, params: Value) -> Option<Value> {
        let (answer, answered) = oneshot::channel();
        let id = {
            let mut state = lock(&self.state);
            state.next += 1;
            let id = format!("{}{}", self.prefix, state.next);
            state.mine.insert(key(&Value::String(id.clone())), answer);
            id
        };
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.upstream(to_line(request.as_object().unwrap_or(&Map::new())))
            .await;
        match tokio::time::timeout(LIST_TIMEOUT, answered).await {
            Ok(Ok(answer)) => Some(answer),
            _ => {
                lock(&self.state).mine.remove(&key(&Value::String(id)));
                tracing::warn!(
                    "the upstream did not answer {method} within {} s",
                    LIST_TIMEOUT.as_secs()
                );
                None
            }
        }
    }
}

/// Whether a handshake answer says the server has tools.
fn has_tools(message: &Map<String, Value>) -> bool {
    (message.get("result"))
        .and_then(|r| r.get("capabilities"))
        .is_some_and(|c| c.get("tools").is_some())
}

fn to_line(message: &Map<String, Value>) -> Vec<u8> {
    serde_json::to_vec(message).unwrap_or_default()
}

/// A JSON-RPC error answer to `id`.
fn error(id: &Value, code: i64, message: &str, data: Option<Value>) -> Vec<u8> {
    let mut error = json!({"code": code, "message": message});
    if let (Some(data), Some(e)) = (data, error.as_object_mut()) {
        e.insert("data".into(), data);
    }
    let answer = json!({"jsonrpc": "2.0", "id": id, "error": error});
    serde_json::to_vec(&answer).unwrap_or_default()
}

/// Writes each queued line to `out`, one message a line, until the queue
/// closes or `out` fails.
pub(crate) async fn write_lines<W: AsyncWrite + Unpin>(
    mut out: W,
    mut queue: mpsc::Receiver<Vec<u8>>,
) {
    while let Some(mut line) = queue.recv().await {
        line.push(b'\n');
        if out.write_all(&line).await.is_err() || out.flush().await.is_err() {
            return;
        }
    }
}
