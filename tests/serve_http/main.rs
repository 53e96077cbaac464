//! `mcp-preamble serve --listen`: hostile local clients, authentication and TLS, the official SDK
//! clients, replicas sharing state.
//!
//! One test binary (issue 49): each module was a test crate of its own; tests/README.md
//! says what each covers.

#[path = "../common/mod.rs"]
mod common;

mod auth;
mod clients;
mod conformance;
mod ends;
mod http;
mod replicas;
mod team;
