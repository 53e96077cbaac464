//! Live servers through rmcp, the official Rust MCP SDK (feature `rmcp`).
//!
//! - [`connect`] starts one configured server (stdio; Streamable HTTP with
//!   the `http` feature) with a chosen handshake and a timeout, and reports
//!   a failure with the tail of the server's stderr; [`connect_all`] starts
//!   every server of a config, a few at a time. Both take [`ConnectOptions`]:
//!   the handshake, the timeout, the client identity and capabilities
//!   sent, and (for `Hub::connect`) a [`Restart`] policy. A stdio server
//!   starts with only [`INHERITED_ENV`] from the host plus its entry's `env`.
//! - [`snapshot_of`] turns any connected rmcp client into a [`ServerSnapshot`].
//! - [`HubHandler`] wraps your rmcp client handler so that a
//!   [`Hub`](crate::hub::Hub) can follow a client you own
//!   ([`Hub::attach`](crate::hub::Hub::attach)); `Hub::connect` starts a
//!   server and follows it as a [`LiveServer`].
//! - Each stdio server leads a process group of its own, ended whole when
//!   its connection ends; [`end_servers`] ends every one still running, for
//!   a host's SIGTERM or Ctrl-C handler.
//!
//! rmcp types appear in this API; use the rmcp this crate re-exports
//! ([`crate::rmcp`]) so that they match.
//!
//! [`ServerSnapshot`]: crate::ServerSnapshot

mod all;
mod cache;
mod child;
pub(crate) mod follow;
mod follower;
#[cfg(feature = "http")]
pub(crate) mod forward;
mod group;
mod handler;
mod handshake;
mod lifecycle;
mod options;
pub(crate) mod pipe;
#[cfg(feature = "http")]
mod pool;
mod probe;
mod skills;
mod snapshot;
mod stderr;
#[cfg(feature = "http")]
mod subscriptions;
mod tap;
mod transport;

pub use all::{ConnectAll, ConnectResult, connect_all, connect_all_with};
pub use cache::{DiscoverCache, now_ms};
pub use follow::{Attachment, LiveServer};
pub use group::end_servers;
pub use handler::HubHandler;
pub use handshake::{Handshake, client_config};
pub use options::{ConnectOptions, Restart};
pub use snapshot::snapshot_of;
#[cfg(feature = "http")]
pub use subscriptions::MAX_SUBSCRIPTION_EVENT;
#[cfg(feature = "serve")]
pub(crate) use tap::ProgressTap;
pub use transport::{ConnectFailure, Connection, INHERITED_ENV, StderrTail, connect, connect_with};
#[cfg(feature = "serve")]
pub(crate) use {
    child::EXIT_WAIT,
    group::{Group, own_group},
};

#[cfg(feature = "serve")]
pub(crate) use lifecycle::plain;
#[cfg(feature = "serve")]
pub(crate) use lifecycle::{Cause, exited, started};

use crate::error::{Error, ErrorKind};

/// A connection's error; rmcp's texts lose the Rust types they name.
fn connect_error(detail: impl Into<String>) -> Error {
    Error::new(ErrorKind::Connect, lifecycle::plain(&detail.into()))
}
