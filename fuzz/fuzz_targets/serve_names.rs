//! `serve_names`: see `mcp_preamble_fuzz::targets::serve_names` (fuzz/src/targets/serve_names.rs) for the
//! input and the oracles. The body lives in the library so that the root
//! crate's `tests/fuzz/main.rs` replays the committed corpus on stable Rust.
#![no_main]

libfuzzer_sys::fuzz_target!(init: mcp_preamble_fuzz::warm_up(), |input: mcp_preamble_fuzz::targets::serve_names::NamesInput| {
    mcp_preamble_fuzz::targets::serve_names::run(input);
});
