//! Live servers through rmcp, the official Rust MCP SDK (feature `rmcp`).
//!
//! [`snapshot_of`] turns any connected rmcp client into a [`ServerSnapshot`];
//! [`connect`] starts one configured server (stdio or Streamable HTTP) with
//! a chosen handshake and a timeout, and reports failures with the tail of
//! the server's stderr.
//!
//! [`ServerSnapshot`]: crate::ServerSnapshot

mod cache;
mod follow;
mod handshake;
mod snapshot;
mod transport;

pub use cache::{DiscoverCache, now_ms};
pub use follow::{HubHandler, LiveServer};
pub use handshake::{Handshake, client_config};
pub use snapshot::snapshot_of;
pub use transport::{ConnectFailure, Connection, StderrTail, connect, connect_with};

use crate::error::{Error, ErrorKind};

fn connect_error(detail: impl Into<String>) -> Error {
    Error::new(ErrorKind::Connect, detail)
}
