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
use rmcp::model::{ClientCapabilities, ClientConfig, ClientRequest, GetExtensions, JsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::connect::pipe::{LineFilter, Lines, SharedWriter, contains};
use crate::error::{Error, ErrorKind, Result};
use crate::serve::front::stdio_lane::Lane;
use crate::serve::gateway::Gateway;
use crate::serve::surfaces::task_status::{ListenTasks, task_ids};
use crate::serve::upstream::MAX_MESSAGE_BYTES;
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

/// A host on this process's stdin and stdout whose first line was read
/// ([`StdioHost::hello`]) before the gateway serves it: a 2025-era
/// upstream hears what its client may be asked once, at its handshake,
/// so the upstreams are started after the host said it
/// ([`StdioHost::told`]), and [`Gateway::serve_stdio_host`] then reads
/// that line again first.
pub struct StdioHost {
    io: HostIo,
    declared: Option<ClientCapabilities>,
}

impl std::fmt::Debug for StdioHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (f.debug_struct("StdioHost"))
            .field("declared", &self.declared)
            .finish_non_exhaustive()
    }
}

impl StdioHost {
    /// Reads the host's first line from stdin (its `initialize`, which
    /// a host sends as soon as it started the gateway). A first line that
    /// is not an `initialize` (a 2026-07-28 host's, which declares per
    /// request) or stdin closed first declares nothing; either way every
    /// byte read is served.
    pub async fn hello() -> Result<StdioHost> {
        Self::hello_on(host_io()).await
    }

    /// [`StdioHost::hello`] on `io` (tests).
    pub(crate) async fn hello_on((mut read, write): HostIo) -> Result<StdioHost> {
        use tokio::io::AsyncReadExt;
        let mut first = Vec::new();
        let mut chunk = vec![0u8; 64 << 10];
        let end = loop {
            if let Some(at) = memchr::memchr(b'\n', &first) {
                break at;
            }
            if first.len() >= MAX_MESSAGE_BYTES {
                break first.len();
            }
            let n = read.read(&mut chunk).await.map_err(|e| {
                Error::new(
                    ErrorKind::Connect,
                    format!("reading the host's first line failed: {e}"),
                )
            })?;
            if n == 0 {
                break first.len();
            }
            first.extend_from_slice(&chunk[..n]);
        };
        let declared = declared_by(&first[..end]);
        let read: Box<dyn AsyncRead + Send + Unpin> =
            Box::new(std::io::Cursor::new(first).chain(read));
        Ok(StdioHost {
            io: (read, write),
            declared,
        })
    }

    /// What the host declared in its `initialize` (`None`: it sent none).
    pub fn declared(&self) -> Option<&ClientCapabilities> {
        self.declared.as_ref()
    }

    /// `config` (how the upstreams are connected) telling them what this
    /// host can be asked and nothing else: `sampling`, `elicitation` and
    /// `roots` as it declared them (none when it sent no `initialize`;
    /// what a 2025-era upstream asks of its client goes to the host whose
    /// call it answers, so it is told what that host declared).
    pub fn told(&self, mut config: ClientConfig) -> ClientConfig {
        let declared = self.declared.clone().unwrap_or_default();
        #[allow(deprecated)]
        {
            config.capabilities.sampling = declared.sampling;
            config.capabilities.roots = declared.roots;
        }
        config.capabilities.elicitation = declared.elicitation;
        config
    }

    pub(crate) fn into_io(self) -> HostIo {
        self.io
    }
}

/// The capabilities of `line` when it is an `initialize` request.
fn declared_by(line: &[u8]) -> Option<ClientCapabilities> {
    #[derive(serde::Deserialize)]
    struct Hello {
        method: String,
        params: Option<Params>,
    }
    #[derive(serde::Deserialize)]
    struct Params {
        capabilities: Option<serde_json::Value>,
    }
    let hello: Hello = serde_json::from_slice(line).ok()?;
    if hello.method != "initialize" {
        return None;
    }
    let declared = hello.params?.capabilities?;
    // A capability it declared in a shape not read here is left untold.
    Some(serde_json::from_value(declared).unwrap_or_default())
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
pub(crate) fn host_transport(
    gateway: Gateway,
    (read, write): HostIo,
) -> (impl Transport<RoleServer>, Arc<Lane>) {
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

    /// A host whose stdin holds `sent`, its first line read.
    async fn hello(sent: &[u8]) -> (StdioHost, Vec<u8>) {
        use tokio::io::AsyncReadExt;
        let read: Box<dyn AsyncRead + Send + Unpin> = Box::new(std::io::Cursor::new(sent.to_vec()));
        let mut host = StdioHost::hello_on((read, Box::new(tokio::io::sink())))
            .await
            .unwrap();
        let mut again = Vec::new();
        host.io.0.read_to_end(&mut again).await.unwrap();
        (host, again)
    }

    #[tokio::test]
    async fn the_hosts_first_line_says_what_upstreams_are_told_and_is_served_again() {
        let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"sampling":{},"roots":{"listChanged":true}},"clientInfo":{"name":"h","version":"1"}}}"#;
        let sent = [
            &init[..],
            b"\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n",
        ]
        .concat();
        let (host, again) = hello(&sent).await;
        assert_eq!(again, sent);
        let given = rmcp::model::ClientCapabilities::builder()
            .enable_elicitation()
            .build();
        let config = ClientConfig::new(given, rmcp::model::Implementation::new("gw", "1"));
        let told = host.told(config).capabilities;
        #[allow(deprecated)]
        {
            assert!(told.sampling.is_some());
            assert_eq!(told.roots.and_then(|r| r.list_changed), Some(true));
        }
        // Given to the gateway but not declared by the host: not told.
        assert!(told.elicitation.is_none());
    }

    #[tokio::test]
    #[allow(deprecated)]
    async fn a_first_line_that_is_no_initialize_declares_nothing() {
        let given = rmcp::model::ClientCapabilities::builder()
            .enable_sampling()
            .build();
        let config = ClientConfig::new(given, rmcp::model::Implementation::new("gw", "1"));
        for sent in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"server/discover"}"#[..],
            b"not json\n",
            b"",
            br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":7}}"#,
        ] {
            let (host, again) = hello(sent).await;
            assert_eq!(again, sent);
            let sampling = host.told(config.clone()).capabilities.sampling;
            assert!(sampling.is_none(), "{}", String::from_utf8_lossy(sent));
        }
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
