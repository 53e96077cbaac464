//! Beside the crate: the examples run, real `tokenizer.json` files against their own JavaScript
//! tokenizer.
//!
//! One test binary (issue 49): each module was a test crate of its own; tests/README.md
//! says what each covers.

#[path = "../common/mod.rs"]
mod common;

mod examples;
mod tokenizers;
