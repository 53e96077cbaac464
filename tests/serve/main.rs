//! `mcp-preamble serve` over stdio: forwarding, progress and cancel, errors, hostile upstreams, the
//! log, resources and prompts, starting beside slow upstreams, the served tool list.
//!
//! One test binary (issue 49): each module was a test crate of its own; tests/README.md
//! says what each covers.

#[path = "../common/mod.rs"]
mod common;

mod asking;
mod children;
mod errors;
mod forward;
mod hostile;
mod log;
mod naming;
mod resources;
mod serve;
mod start;
mod tasks;
mod tool_list;
