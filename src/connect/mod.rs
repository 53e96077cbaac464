//! Live servers through rmcp, the official Rust MCP SDK (feature `rmcp`).
//!
//! [`snapshot_of`] turns any connected rmcp client into a [`ServerSnapshot`];
//! [`connect`] starts one configured server (stdio; Streamable HTTP with the
//! `http` feature) with the [`ConnectOptions`] you give (handshake, timeout,
//! client identity), and reports a failure with the tail of the server's
//! stderr; [`connect_all`] starts every server of a config at once.
//!
//! [`ServerSnapshot`]: crate::ServerSnapshot

mod all;
mod cache;
mod follow;
mod handshake;
mod options;
mod probe;
mod snapshot;
mod transport;

pub use all::{ConnectAll, ConnectResult, connect_all, connect_all_with};
pub use cache::{DiscoverCache, now_ms};
pub use follow::{HubHandler, LiveServer};
pub use handshake::{Handshake, client_config};
pub use options::ConnectOptions;
pub use snapshot::snapshot_of;
pub use transport::{ConnectFailure, Connection, StderrTail, connect, connect_with};

use crate::error::{Error, ErrorKind};

fn connect_error(detail: impl Into<String>) -> Error {
    Error::new(ErrorKind::Connect, detail)
}
