//! The crate's shape, read from its sources: layers, gateway floors, import loops, function length,
//! and the host table written once. Both scans read Rust through one lexer (`lexer.rs`).
//!
//! One test binary (issue 49): each module was a test crate of its own; tests/README.md
//! says what each covers.

mod hosts;
mod layers;
mod lexer;
