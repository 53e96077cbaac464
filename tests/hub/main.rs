//! Live servers and the hub: connecting over rmcp in both eras, slow starts, a host's own client,
//! the hub's revisions, cache signals and state events.
//!
//! One test binary (issue 49): each module was a test crate of its own; tests/README.md
//! says what each covers.

#[path = "../common/mod.rs"]
mod common;

mod attach;
mod cache;
mod events;
mod hub;
mod hub_live;
mod live;
mod slow_start;
