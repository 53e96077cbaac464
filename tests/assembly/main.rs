//! The section itself: budgets and the trimming ladder, deferred tools, templates and their golden
//! files, limits, de-duplication and reuse, token counting, tracing events, the policy file.
//!
//! One test binary (issue 49): each module was a test crate of its own; tests/README.md
//! says what each covers.

#[path = "../common/mod.rs"]
mod common;

mod budget;
mod deferred;
mod fragments;
mod limits;
mod policy;
mod reuse;
mod shortening;
mod takeover;
mod templates;
mod tokens;
mod tracing_events;
