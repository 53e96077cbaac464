//! Reading what servers send and keeping it inert: wire ingestion, the real corpus, error types,
//! hidden characters, forgery, raw HTML and other markdown engines.
//!
//! One test binary (issue 49): each module was a test crate of its own; tests/README.md
//! says what each covers.

#[path = "../common/mod.rs"]
mod common;

mod compose;
mod corpus;
mod errors;
mod forgery;
mod hidden;
mod markdown_html;
mod renderers;
mod wire;
