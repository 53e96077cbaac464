//! The `mcp-preamble` binary: preview, pins, snapshots, limits, hostile output, secrets, review
//! state in Redis.
//!
//! One test binary (issue 49): each module was a test crate of its own; tests/README.md
//! says what each covers.

#[path = "../common/mod.rs"]
mod common;

mod approve;
mod cli;
mod hostile;
mod limits;
mod pins;
mod secrets;
mod snapshot;
mod state;
