//! The upstreams: the live connections, the one send every request to an
//! upstream leaves through, the direct HTTP post it may choose, progress
//! relays and the wait for an upstream still starting.

pub(crate) mod asking;
#[cfg(feature = "serve-http")]
pub(crate) mod direct;
pub(crate) mod events;
mod fault;
pub(crate) mod listen;
pub(crate) mod piped;
pub(crate) mod progress;
pub(crate) mod sealed;
pub(crate) mod send;
pub(crate) mod start;
pub(crate) mod told;

/// The longest a message may be, either way, by default (64 MiB): a
/// `resources/read` answer can carry a large blob, and a line past the cap
/// ends the relay instead of growing a buffer.
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;

/// The host's `Mcp-Param-*` headers (name, value) that the called tool
/// does not declare: an intermediary passes on the ones it does not know
/// (SEP-2243). The direct post writes them; through rmcp's client they
/// ride in the request's extensions (`connect/forward.rs`). A declared
/// one is rmcp's to write from the arguments (the body they agree with).
pub(crate) type Forward = Vec<(String, String)>;
