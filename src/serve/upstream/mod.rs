//! The upstreams: the live connections, the one send every request to an
//! upstream leaves through, the direct HTTP post it may choose, progress
//! relays and the wait for an upstream still starting.

pub(crate) mod asking;
#[cfg(feature = "serve-http")]
pub(crate) mod direct;
pub(crate) mod events;
pub(crate) mod progress;
pub(crate) mod sealed;
pub(crate) mod send;
pub(crate) mod start;

/// The longest a message may be, either way, by default (64 MiB): a
/// `resources/read` answer can carry a large blob, and a line past the cap
/// ends the relay instead of growing a buffer.
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;

/// The host's `Mcp-Param-*` headers (name, value), written on a direct
/// post of its call: the direct path takes only tools that declare no
/// header, so every one of them is a header the gateway does not know,
/// which an intermediary passes on (SEP-2243). rmcp's client writes its
/// own headers only.
pub(crate) type Forward = Vec<(String, String)>;
