//! The lint: each code, host profiles and tool-description rules, drift between snapshots.
//!
//! One test binary (issue 49): each module was a test crate of its own; tests/README.md
//! says what each covers.

#[path = "../common/mod.rs"]
mod common;

mod drift;
mod hosts;
mod labelled;
mod lint;
