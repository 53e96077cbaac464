//! The fuzz targets' bodies, one module each: `fuzz_targets/<name>.rs` hands
//! libFuzzer's input to `run`, and the root crate's `tests/fuzz/main.rs`
//! replays the committed corpus through the same functions on stable Rust.
//! Paths name this crate's items as `crate::…`: the replay test includes
//! this library as a module and glob-imports it at its root.

pub mod budgets;
pub mod compose;
#[cfg(feature = "serve")]
pub mod event_stream;
pub mod links;
pub mod lint;
pub mod section;
#[cfg(feature = "serve")]
pub mod serve_host;
#[cfg(feature = "serve")]
pub mod serve_names;
#[cfg(feature = "serve")]
pub mod serve_upstream;
pub mod template;
pub mod wire;
#[cfg(feature = "serve")]
pub mod wrap_relay;
