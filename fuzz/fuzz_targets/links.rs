//! `links`: see `mcp_preamble_fuzz::targets::links` (fuzz/src/targets/links.rs) for the
//! grammar and the oracles. The body lives in the library so that the root
//! crate's `tests/fuzz/main.rs` replays the committed corpus on stable Rust.
#![no_main]

libfuzzer_sys::fuzz_target!(init: mcp_preamble_fuzz::warm_up(), |input: mcp_preamble_fuzz::targets::links::LinksInput| {
    mcp_preamble_fuzz::targets::links::run(input);
});
