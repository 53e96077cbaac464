//! [`ChildTransport`]: a stdio server's pipes, with its process id and exit
//! status (rmcp's `TokioChildProcess` keeps both to itself).

use std::future::Future;
use std::process::ExitStatus;
use std::time::Duration;

use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::process::{Child, ChildStdout};
use tokio::sync::{oneshot, watch};

use super::group::Group;
use super::pipe::{Answers, LineFilter, MAX_LOOKED_AT, Pipe, SharedWriter, Stdin};
use super::tap::BoundTap;

/// How long a closed server may take to exit after its stdin closed, as
/// the MCP stdio shutdown asks, before its group gets SIGTERM: with
/// [`TERM_WAIT`](super::group::TERM_WAIT) after it, within the second a
/// host gives its own server (the SDKs send SIGTERM 2 s after closing stdin).
pub(crate) const EXIT_WAIT: Duration = Duration::from_millis(400);

/// The process behind a stdio connection: its id, and how it ended.
#[derive(Debug, Clone)]
pub(crate) struct Process {
    pub id: Option<u32>,
    exit: watch::Receiver<Option<ExitStatus>>,
    /// Its pipes as a call written whole takes them.
    pub pipe: Pipe,
}

impl Process {
    /// How it ended, once it has.
    pub fn exit_status(&self) -> Option<ExitStatus> {
        *self.exit.borrow()
    }

    /// Waits (at most `wait`) for the process to end; its status if it did.
    pub async fn ended(&self, wait: Duration) -> Option<ExitStatus> {
        let mut exit = self.exit.clone();
        let ended = tokio::time::timeout(wait, exit.wait_for(Option::is_some)).await;
        ended.ok().and_then(|r| r.ok().and_then(|s| *s))
    }
}

/// A spawned server's stdin and stdout as an rmcp transport. A task waits
/// on the process and records its exit status; dropping the transport
/// ends the process's group, and closing it closes stdin, waits a moment,
/// then ends the group. What the server started and left behind when it
/// ended is ended too.
pub(crate) struct ChildTransport {
    io: AsyncRwTransport<RoleClient, LineFilter<ChildStdout, Answers>, SharedWriter<Stdin>>,
    /// Dropped (or sent) to kill the process.
    kill: Option<oneshot::Sender<()>>,
    process: Process,
    /// Sees the server's progress notifications as they are read.
    tap: Option<BoundTap>,
}

impl ChildTransport {
    /// Takes over `child`, spawned with piped stdin and stdout as the
    /// leader of its own process group.
    pub fn new(mut child: Child) -> std::io::Result<ChildTransport> {
        let missing = |what| std::io::Error::other(format!("the server's {what} is not piped"));
        let stdin = child.stdin.take().ok_or_else(|| missing("stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| missing("stdout"))?;
        let id = child.id();
        let (exit_tx, exit) = watch::channel(None);
        let (kill, killed) = oneshot::channel::<()>();
        let group = Group::of(&child);
        tokio::spawn(async move {
            let status = tokio::select! {
                status = child.wait() => {
                    group.left_behind().await;
                    status
                }
                // Sent or dropped: the connection is over.
                _ = killed => group.end(&mut child).await,
            };
            if let Ok(status) = status {
                exit_tx.send_replace(Some(status));
            }
        });
        let stdin: Stdin = Box::new(stdin);
        let stdin = std::sync::Arc::new(tokio::sync::Mutex::new(stdin));
        let (pipe, answers) = Pipe::new(stdin.clone());
        let stdout = LineFilter::new(stdout, answers, MAX_LOOKED_AT);
        Ok(ChildTransport {
            io: AsyncRwTransport::new_client(stdout, SharedWriter::new(stdin)),
            kill: Some(kill),
            process: Process { id, exit, pipe },
            tap: None,
        })
    }

    /// Shows every message read to `tap` first.
    pub(super) fn tapped(mut self, tap: Option<BoundTap>) -> ChildTransport {
        self.tap = tap;
        self
    }

    pub fn process(&self) -> Process {
        self.process.clone()
    }
}

impl Transport<RoleClient> for ChildTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.io.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.io.receive().await;
        if let (Some(tap), Some(m)) = (&self.tap, &message) {
            tap.see(m);
        }
        message
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Closing stdin asks the server to exit; one that does not is killed.
        // The pipe shares it: closed there, for every writer.
        let closed = self.io.close().await;
        self.process.pipe.close().await;
        self.process.ended(EXIT_WAIT).await;
        self.kill.take();
        closed
    }
}
