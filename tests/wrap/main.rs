//! `mcp-preamble wrap` and `install`: the relay in front of a real server, host configs edited in
//! place.
//!
//! One test binary (issue 49): each module was a test crate of its own; tests/README.md
//! says what each covers.

#[path = "../common/mod.rs"]
mod common;

mod caps;
mod install;
mod wrap;
