//! `serve_upstream`: see `mcp_preamble_fuzz::targets::serve_upstream` (fuzz/src/targets/serve_upstream.rs) for the
//! input and the oracles. The body lives in the library so that the root
//! crate's `tests/fuzz/main.rs` replays the committed corpus on stable Rust.
#![no_main]

libfuzzer_sys::fuzz_target!(init: mcp_preamble_fuzz::warm_up(), |input: mcp_preamble_fuzz::targets::serve_upstream::UpstreamInput| {
    mcp_preamble_fuzz::targets::serve_upstream::run(input);
});
