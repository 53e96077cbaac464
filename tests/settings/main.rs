//! The operator's settings, pins and the report: settings, the lock and drift, typed diagnostics,
//! skills, tool names and rules, the `testing` kit.
//!
//! One test binary (issue 49): each module was a test crate of its own; tests/README.md
//! says what each covers.

#[path = "../common/mod.rs"]
mod common;

mod diagnostics;
mod pins;
mod settings;
mod skills;
mod testing_kit;
mod tool_names;
mod tool_rules;
