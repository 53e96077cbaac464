//! Every inbound byte: stdio, the HTTP listener and its connections, the
//! gate, CORS, TLS, sessions, replicas and authentication.

#[cfg(feature = "serve-auth")]
pub(crate) mod auth;
#[cfg(feature = "serve-http")]
pub(crate) mod cors;
#[cfg(feature = "serve-http")]
pub(crate) mod cut;
#[cfg(feature = "serve-http")]
pub(crate) mod gate;
#[cfg(feature = "serve-http")]
pub(crate) mod headers;
#[cfg(feature = "serve-http")]
pub(crate) mod http;
#[cfg(feature = "serve-http")]
pub(crate) mod lane;
#[cfg(feature = "serve-http")]
pub(crate) mod ops;
#[cfg(feature = "serve-http")]
pub(crate) mod replica;
#[cfg(feature = "serve-http")]
pub(crate) mod reply;
#[cfg(feature = "serve-http")]
pub(crate) mod scrape;
#[cfg(feature = "serve-http")]
pub(crate) mod sessions;
pub(crate) mod stdio;
pub(crate) mod stdio_lane;
#[cfg(feature = "serve-auth")]
pub(crate) mod tls;
#[cfg(feature = "serve-http")]
pub(crate) mod traffic;
