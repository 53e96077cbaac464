//! `template`: see `mcp_preamble_fuzz::targets::template` (fuzz/src/targets/template.rs) for the
//! input and the oracles. The body lives in the library so that the root
//! crate's `tests/fuzz/main.rs` replays the committed corpus on stable Rust.
#![no_main]

libfuzzer_sys::fuzz_target!(init: mcp_preamble_fuzz::warm_up(), |data: &[u8]| {
    mcp_preamble_fuzz::targets::template::run(data);
});
