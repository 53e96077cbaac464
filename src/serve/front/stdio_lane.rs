//! The stdio lane: a host's `tools/call` over stdio handled without
//! rmcp's service loop. rmcp's loop takes each request, spawns its
//! handler, then passes the answer back through a channel to the loop and
//! from there to a task that writes it: four hand-offs between tasks per
//! call, most of what a forwarded call cost the gateway over stdio
//! (benches/serve.rs).
//!
//! Here the line is taken before rmcp reads it, handed to the same
//! handler rmcp calls (`Service::handle_request`, so every check and
//! every conversion is rmcp's own), and the answer is written by the task
//! that made it, under the one lock rmcp's own writes take
//! (`connect/pipe.rs`).
//! What the handler sends the host meanwhile (progress, log messages, its
//! requests) goes through rmcp and is written before the answer, as rmcp
//! writes it: rmcp's `Peer` waits until a notification is written.
//!
//! Only a line rmcp would read as a `tools/call` request enters, and only
//! after the handshake (the host's `Peer` is known). A host's
//! `notifications/cancelled` for a lane call cancels it, as rmcp's loop
//! does, and its answer is not sent.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use rmcp::model::{
    CallToolRequest, CallToolRequestMethod, CallToolRequestParams, ClientRequest, Extensions,
    GetExtensions, GetMeta, JsonRpcVersion2_0, RequestId, RequestMetaObject, ServerJsonRpcMessage,
};
use rmcp::service::{Peer, RequestContext, RoleServer, Service};
use tokio::io::AsyncWrite;
use tokio_util::sync::CancellationToken;

use crate::connect::pipe::{contains, write_line};
use crate::serve::gateway::Gateway;
use crate::support::lock;

/// The host's stdout.
type Out = Box<dyn AsyncWrite + Send + Unpin>;

/// The lane of one stdio host.
pub(crate) struct Lane {
    gateway: Gateway,
    /// Set once the handshake is done.
    peer: OnceLock<Peer<RoleServer>>,
    /// The calls in flight, by the host's request id.
    calls: Mutex<HashMap<RequestId, CancellationToken>>,
    out: Arc<tokio::sync::Mutex<Out>>,
    /// Cancelled when the host's input ends: every call in flight ends.
    closed: CancellationToken,
}

impl Lane {
    /// A lane for `gateway` writing to `out` (shared with rmcp's writer,
    /// `connect/pipe.rs`'s `SharedWriter`).
    pub(crate) fn new(gateway: Gateway, out: Arc<tokio::sync::Mutex<Out>>) -> Arc<Lane> {
        Arc::new(Lane {
            gateway,
            peer: OnceLock::new(),
            calls: Mutex::default(),
            out,
            closed: CancellationToken::new(),
        })
    }

    /// Opens the lane: the handshake is done and `peer` is the host.
    pub(crate) fn open(&self, peer: Peer<RoleServer>) {
        let _ = self.peer.set(peer);
    }

    /// The host's input ended.
    pub(crate) fn close(&self) {
        self.closed.cancel();
    }

    /// Takes `line` (one line of the host's, without its newline) when it
    /// is a `tools/call` request: `true` when taken, `false` leaves it to
    /// rmcp. A cancellation of a lane call cancels it (and is left to rmcp,
    /// which finds nothing to cancel).
    pub(crate) fn offer(self: &Arc<Self>, line: &[u8]) -> bool {
        let Some(peer) = self.peer.get() else {
            return false;
        };
        if contains(line, b"\"notifications/cancelled\"") {
            self.cancel(line);
            return false;
        }
        if !contains(line, b"\"tools/call\"") {
            return false;
        }
        let Some((id, mut request)) = call_of(line) else {
            return false;
        };
        let call = self.closed.child_token();
        lock(&self.calls).insert(id.clone(), call.clone());
        // As rmcp's loop builds it: `_meta` and extensions moved out of the request.
        let mut meta = RequestMetaObject::new();
        std::mem::swap(&mut meta, request.get_meta_mut());
        let mut extensions = Extensions::new();
        std::mem::swap(&mut extensions, request.extensions_mut());
        let mut context = RequestContext::new(id.clone(), peer.clone());
        context.ct = call.child_token();
        context.meta = meta;
        context.extensions = extensions;
        let lane = self.clone();
        tokio::spawn(async move { lane.answer(id, request, context, call).await });
        true
    }

    /// Handles the call and writes its answer, unless it was cancelled.
    async fn answer(
        &self,
        id: RequestId,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
        call: CancellationToken,
    ) {
        // Boxed: rmcp's handler future is as large as its largest method's
        // (kilobytes), and a spawned task's future is moved several times
        // on its way to the runtime; a small task moves little.
        let result = Box::pin(self.gateway.handle_request(request, context)).await;
        lock(&self.calls).remove(&id);
        if call.is_cancelled() {
            return;
        }
        let message = match result {
            Ok(result) => ServerJsonRpcMessage::response(result, id),
            Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
        };
        let Ok(mut line) = serde_json::to_vec(&message) else {
            return;
        };
        line.push(b'\n');
        if let Err(e) = write_line(&self.out, &line).await {
            tracing::error!("writing an answer to the host failed: {e}");
        }
    }

    /// Cancels the lane call a host's `notifications/cancelled` names.
    fn cancel(&self, line: &[u8]) {
        #[derive(serde::Deserialize)]
        struct Cancelled {
            params: Params,
        }
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Params {
            request_id: RequestId,
        }
        let Ok(cancelled) = serde_json::from_slice::<Cancelled>(line) else {
            return;
        };
        if let Some(call) = lock(&self.calls).remove(&cancelled.params.request_id) {
            call.cancel();
        }
    }
}

/// `line` read as a `tools/call` request, as rmcp reads one, else `None`
/// (the HTTP lane reads a body so too).
/// Read as this one request: rmcp tries its message and request types in
/// turn, through a buffered copy (most of what reading cost it).
pub(super) fn call_of(line: &[u8]) -> Option<(RequestId, ClientRequest)> {
    #[derive(serde::Deserialize)]
    struct Call {
        #[serde(rename = "jsonrpc")]
        _jsonrpc: JsonRpcVersion2_0,
        id: RequestId,
        #[serde(rename = "method")]
        _method: CallToolRequestMethod,
        params: CallToolRequestParams,
    }
    let Call { id, mut params, .. } = serde_json::from_slice::<Call>(line).ok()?;
    // rmcp keeps `params._meta` in the request's extensions, not its params.
    let meta = params.meta.take();
    let mut request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    if let Some(meta) = meta {
        request.extensions_mut().insert(meta);
    }
    Some((id, request))
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage};

    use super::*;

    /// `line` as rmcp reads it, when it reads a `tools/call` request.
    fn by_rmcp(line: &str) -> Option<(RequestId, ClientRequest)> {
        match serde_json::from_str::<ClientJsonRpcMessage>(line).ok()? {
            JsonRpcMessage::Request(r)
                if matches!(r.request, ClientRequest::CallToolRequest(_)) =>
            {
                Some((r.id, r.request))
            }
            _ => None,
        }
    }

    #[test]
    fn a_call_reads_here_as_rmcp_reads_it_and_nothing_else_is_a_call() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a__b"}}"#,
            r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"t","arguments":{"k":[1,{"z":null}]}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","requestState":"s","inputResponses":{"a":{"action":"cancel"}}},"extra":1}"#,
            r#"{"id":4,"params":{"name":"t"},"method":"tools/call","jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"1.0","id":5,"method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"name":"tools/call"}}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"t","arguments":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":9,"result":{"method":"tools/call"}}"#,
        ] {
            // The request as sent, and where its `_meta` is kept.
            let json = |read: Option<(RequestId, ClientRequest)>| {
                read.map(|(id, r)| {
                    let meta = serde_json::to_value(r.get_meta()).unwrap();
                    let ClientRequest::CallToolRequest(call) = &r else {
                        unreachable!("read as a call")
                    };
                    let params = serde_json::to_value(&call.params).unwrap();
                    (serde_json::to_value((id, &r)).unwrap(), meta, params)
                })
            };
            assert_eq!(
                json(call_of(line.as_bytes())),
                json(by_rmcp(line)),
                "{line}"
            );
        }
        assert!(
            call_of(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}"#)
                .is_some()
        );
    }
}
