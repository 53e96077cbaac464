//! The upstreams: the live connections, the one send every request to an
//! upstream leaves through, the direct HTTP post it may choose, progress
//! relays and the wait for an upstream still starting.

pub(crate) mod call;
#[cfg(feature = "serve-http")]
pub(crate) mod direct;
pub(crate) mod events;
pub(crate) mod progress;
pub(crate) mod send;
pub(crate) mod start;
