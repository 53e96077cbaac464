//! This process's stdin and stdout as the gateways serve a host on them.
//!
//! tokio's own stdin and stdout read and write on its blocking thread
//! pool: every message crosses to another thread and back, about 100 µs
//! of each forwarded call (benches/serve.rs). When they are pipes, as a
//! host that starts the gateway makes them, they are read and written
//! here as non-blocking pipes on the runtime's own poller instead.

use tokio::io::{AsyncRead, AsyncWrite};

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
