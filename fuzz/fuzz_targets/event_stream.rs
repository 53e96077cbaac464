//! `event_stream`: see `mcp_preamble_fuzz::targets::event_stream` (fuzz/src/targets/event_stream.rs) for the
//! input and the oracles. The body lives in the library so that the root
//! crate's `tests/fuzz/main.rs` replays the committed corpus on stable Rust.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mcp_preamble_fuzz::targets::event_stream::run(data);
});
