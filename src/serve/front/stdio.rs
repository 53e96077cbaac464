//! This process's stdin and stdout as the gateways serve a host on them.
//!
//! tokio's own stdin and stdout read and write on its blocking thread
//! pool: every message crosses to another thread and back, about 100 µs
//! of each forwarded call (benches/serve.rs). When they are pipes, as a
//! host that starts the gateway makes them, they are read and written
//! here as non-blocking pipes on the runtime's own poller instead.
//!
//! The gateway reads its host through rmcp's line transport, with one
//! addition ([`host_transport`]): the `taskIds` of a `subscriptions/listen`,
//! which rmcp's filter drops while parsing, are read from the line and
//! handed on in the request's extensions, as the HTTP front does.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use rmcp::RoleServer;
use rmcp::model::{ClientRequest, GetExtensions, JsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::serve::surfaces::task_status::{ListenTasks, task_ids};
use crate::support::lock;

/// The host's side: stdin to read, stdout to write.
pub(crate) type HostIo = (
    Box<dyn AsyncRead + Send + Unpin>,
    Box<dyn AsyncWrite + Send + Unpin>,
);

/// stdin and stdout, each as a non-blocking pipe when it is one (and,
/// for stdout, when stderr is not the same pipe: the log writes to it
/// blocking), else as tokio's.
pub(crate) fn host_io() -> HostIo {
    #[cfg(unix)]
    {
        let input: Box<dyn AsyncRead + Send + Unpin> = match pipes::reader() {
            Some(pipe) => Box::new(pipe),
            None => Box::new(tokio::io::stdin()),
        };
        let output: Box<dyn AsyncWrite + Send + Unpin> = match pipes::writer() {
            Some(pipe) => Box::new(pipe),
            None => Box::new(tokio::io::stdout()),
        };
        (input, output)
    }
    #[cfg(not(unix))]
    {
        (Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout()))
    }
}

#[cfg(unix)]
mod pipes {
    use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
    use std::os::unix::fs::MetadataExt;

    use tokio::net::unix::pipe::{Receiver, Sender};

    /// A duplicate of `fd` (the same open pipe; its flags are shared).
    fn duplicate(fd: BorrowedFd<'_>) -> Option<OwnedFd> {
        fd.try_clone_to_owned().ok()
    }

    /// The device and inode `fd` is open on.
    fn identity(fd: BorrowedFd<'_>) -> Option<(u64, u64)> {
        let meta = std::fs::File::from(duplicate(fd)?).metadata().ok()?;
        Some((meta.dev(), meta.ino()))
    }

    /// stdin, when it is a pipe (tokio checks: a FIFO open for reading).
    pub(in crate::serve) fn reader() -> Option<Receiver> {
        Receiver::from_owned_fd(duplicate(std::io::stdin().as_fd())?).ok()
    }

    /// stdout, when it is a pipe that stderr does not share.
    pub(in crate::serve) fn writer() -> Option<Sender> {
        let out = std::io::stdout();
        let err = std::io::stderr();
        let shared = match (identity(out.as_fd()), identity(err.as_fd())) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        if shared {
            return None;
        }
        Sender::from_owned_fd(duplicate(out.as_fd())?).ok()
    }
}

/// The longest line whose `taskIds` are looked for: a listen names at
/// most 256 ids; a longer line is left to rmcp whole.
const MAX_LISTEN_LINE: usize = 1 << 20;

/// The most listens whose task ids wait for rmcp to parse their line.
const MAX_WAITING: usize = 64;

/// The task ids of the listens read so far and not yet parsed by rmcp:
/// (the request's id as JSON, its ids), in the order of the lines.
type Found = Arc<Mutex<VecDeque<(serde_json::Value, Vec<String>)>>>;

/// The host's stdin and stdout as rmcp's transport, the task ids of each
/// `subscriptions/listen` in its request's extensions ([`ListenTasks`]).
pub(crate) fn host_transport() -> impl Transport<RoleServer> {
    let (read, write) = host_io();
    let found = Found::default();
    let read = Lines {
        inner: read,
        line: Vec::new(),
        found: found.clone(),
    };
    HostTransport {
        inner: AsyncRwTransport::new_server(read, write),
        found,
    }
}

/// A reader that passes its bytes on and looks at each line once: a line
/// that names `taskIds` of a `subscriptions/listen` leaves them in `found`.
struct Lines {
    inner: Box<dyn AsyncRead + Send + Unpin>,
    /// The line read so far (while it is short enough to be a listen).
    line: Vec<u8>,
    found: Found,
}

impl Lines {
    fn saw(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|b| *b == b'\n') {
            self.keep(&rest[..end]);
            self.ended();
            rest = &rest[end + 1..];
        }
        self.keep(rest);
    }

    fn keep(&mut self, bytes: &[u8]) {
        if self.line.len() <= MAX_LISTEN_LINE {
            self.line.extend_from_slice(bytes);
        }
    }

    fn ended(&mut self) {
        let line = std::mem::take(&mut self.line);
        if line.len() > MAX_LISTEN_LINE || !contains(&line, b"\"taskIds\"") {
            return;
        }
        #[derive(serde::Deserialize)]
        struct Listen {
            id: serde_json::Value,
            method: String,
        }
        let Ok(listen) = serde_json::from_slice::<Listen>(&line) else {
            return;
        };
        if let (true, Some(ids)) = (listen.method == "subscriptions/listen", task_ids(&line)) {
            let mut found = lock(&self.found);
            // One rmcp did not take as a listen (a bad one) is not kept long.
            if found.len() == MAX_WAITING {
                found.pop_front();
            }
            found.push_back((listen.id, ids));
        }
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

impl AsyncRead for Lines {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            self.saw(&buf.filled()[before..]);
        }
        polled
    }
}

/// rmcp's line transport, a listen's task ids put in its extensions.
struct HostTransport {
    inner: AsyncRwTransport<RoleServer, Lines, Box<dyn AsyncWrite + Send + Unpin>>,
    found: Found,
}

impl Transport<RoleServer> for HostTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        let mut message = self.inner.receive().await?;
        if let JsonRpcMessage::Request(request) = &mut message
            && matches!(
                request.request,
                ClientRequest::SubscriptionsListenRequest(_)
            )
        {
            let id = serde_json::to_value(&request.id).unwrap_or_default();
            // The first line with this id: the reader may be lines ahead.
            let mut found = lock(&self.found);
            if let Some(at) = found.iter().position(|(seen, _)| *seen == id)
                && let Some((_, ids)) = found.remove(at)
            {
                request.request.extensions_mut().insert(ListenTasks(ids));
            }
        }
        Some(message)
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listens_task_ids_are_found_across_reads_and_no_other_lines() {
        let found = Found::default();
        let mut lines = Lines {
            inner: Box::new(tokio::io::empty()),
            line: Vec::new(),
            found: found.clone(),
        };
        // Another method naming `taskIds`, a listen in three reads, an overlong line.
        lines.saw(br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"taskIds"}}"#);
        lines.saw(b"\n");
        let listen = br#"{"jsonrpc":"2.0","id":4,"method":"subscriptions/listen","params":{"notifications":{"taskIds":["a.x.t1"]}}}"#;
        let (head, tail) = listen.split_at(30);
        lines.saw(head);
        lines.saw(tail);
        lines.saw(b"\n");
        lines.saw(&vec![b' '; MAX_LISTEN_LINE + 10]);
        lines.saw(b"\"taskIds\"\n");
        let got: Vec<_> = lock(&found).iter().cloned().collect();
        assert_eq!(got, [(serde_json::json!(4), vec!["a.x.t1".to_string()])]);
    }
}
