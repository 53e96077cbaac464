//! The native module of the `mcp-preamble` npm package: the Rust crate for
//! Node.
//!
//! The JavaScript package around it (`index.js`, `session.js`) holds the
//! public API; this module only moves values across. Reports cross as the
//! crate's own JSON (a public format), so the JavaScript results are
//! exactly what the CLI and the crate report.

mod assembly;
mod config;
mod errors;
mod lint;
mod live;
mod pins;
mod server;

/// The package's version: the crate's (one workspace version).
#[napi_derive::napi]
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
