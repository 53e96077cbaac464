//! This process's stdin and stdout as the gateways serve a host on them.
//!
//! tokio's own stdin and stdout read and write on its blocking thread
//! pool: every message crosses to another thread and back, about 100 µs
//! of each forwarded call (benches/serve.rs). When they are pipes, as a
//! host that starts the gateway makes them, they are read and written
//! here as non-blocking pipes on the runtime's own poller instead.
//!
//! The gateway reads its host through rmcp's line transport, with two
//! additions ([`host_transport`]): the `taskIds` of a `subscriptions/listen`,
//! which rmcp's filter drops while parsing, are read from the line and
//! handed on in the request's extensions, as the HTTP front does; and a
//! `tools/call` is taken by the lane (`stdio_lane.rs`) before rmcp reads it.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use rmcp::RoleServer;
use rmcp::model::{ClientRequest, GetExtensions, JsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::connect::pipe::{LineFilter, Lines, SharedWriter};
use crate::serve::front::stdio_lane::Lane;
use crate::serve::gateway::Gateway;
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
/// `subscriptions/listen` in its request's extensions ([`ListenTasks`]),
/// its `tools/call` requests taken by the lane of `gateway` once it is
/// opened ([`Lane::open`]).
pub(crate) fn host_transport(gateway: Gateway) -> (impl Transport<RoleServer>, Arc<Lane>) {
    let (read, write) = host_io();
    let out = Arc::new(tokio::sync::Mutex::new(write));
    let lane = Lane::new(gateway, out.clone());
    let found = Found::default();
    let lines = HostLines {
        found: found.clone(),
        lane: Some(lane.clone()),
    };
    let transport = HostTransport {
        inner: AsyncRwTransport::new_server(
            LineFilter::new(read, lines, MAX_LISTEN_LINE),
            SharedWriter::new(out),
        ),
        found,
    };
    (transport, lane)
}

/// What the gateway looks for in each line of its host's: a line that
/// names `taskIds` of a `subscriptions/listen` leaves them in `found`; a
/// line the lane takes is not passed on to rmcp.
struct HostLines {
    found: Found,
    lane: Option<Arc<Lane>>,
}

impl Lines for HostLines {
    fn take(&mut self, line: &[u8]) -> bool {
        if self.lane.as_ref().is_some_and(|lane| lane.offer(line)) {
            return true;
        }
        self.listened(line);
        false
    }

    fn ended(&mut self) {
        if let Some(lane) = &self.lane {
            lane.close();
        }
    }
}

impl HostLines {
    /// Keeps the task ids of `line` when it is a listen naming some.
    fn listened(&mut self, line: &[u8]) {
        if !contains(line, b"\"taskIds\"") {
            return;
        }
        #[derive(serde::Deserialize)]
        struct Listen {
            id: serde_json::Value,
            method: String,
        }
        let Ok(listen) = serde_json::from_slice::<Listen>(line) else {
            return;
        };
        if let (true, Some(ids)) = (listen.method == "subscriptions/listen", task_ids(line)) {
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

/// The host's stdin as rmcp reads it.
type HostIn = LineFilter<Box<dyn AsyncRead + Send + Unpin>, HostLines>;

/// rmcp's line transport, a listen's task ids put in its extensions.
struct HostTransport {
    inner: AsyncRwTransport<RoleServer, HostIn, SharedWriter<Box<dyn AsyncWrite + Send + Unpin>>>,
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

    fn filter<R>(inner: R) -> LineFilter<R, HostLines> {
        let lines = HostLines {
            found: Found::default(),
            lane: None,
        };
        LineFilter::new(inner, lines, MAX_LISTEN_LINE)
    }

    #[test]
    fn a_listens_task_ids_are_found_across_reads_and_no_other_lines() {
        let mut lines = filter(tokio::io::empty());
        // Another method naming `taskIds`, a listen in three reads, an overlong line.
        let call = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"taskIds"}}"#;
        lines.saw(call);
        lines.saw(b"\n");
        let listen = br#"{"jsonrpc":"2.0","id":4,"method":"subscriptions/listen","params":{"notifications":{"taskIds":["a.x.t1"]}}}"#;
        let (head, tail) = listen.split_at(30);
        lines.saw(head);
        lines.saw(tail);
        lines.saw(b"\n");
        let long = vec![b' '; MAX_LISTEN_LINE + 10];
        lines.saw(&long);
        lines.saw(b"\"taskIds\"\n");
        let got: Vec<_> = lock(&lines.lines.found).iter().cloned().collect();
        assert_eq!(got, [(serde_json::json!(4), vec!["a.x.t1".to_string()])]);
        // Every byte passes on to rmcp, lines whole and in order.
        let sent = [&call[..], b"\n", listen, b"\n", &long, b"\"taskIds\"\n"].concat();
        assert_eq!(lines.passed(), sent);
    }

    #[tokio::test]
    async fn what_rmcp_reads_is_what_the_host_sent_in_any_reads() {
        use tokio::io::AsyncReadExt;
        let sent = b"{\"a\":1}\n\n{\"b\":2}\r\nunfinished".repeat(3000);
        let mut lines = filter(std::io::Cursor::new(sent.clone()));
        let mut read = Vec::new();
        let mut small = [0u8; 7];
        loop {
            let n = lines.read(&mut small).await.unwrap();
            if n == 0 {
                break;
            }
            read.extend_from_slice(&small[..n]);
        }
        assert_eq!(read, sent);
    }
}
