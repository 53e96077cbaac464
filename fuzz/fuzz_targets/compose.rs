//! `compose`: see `mcp_preamble_fuzz::targets::compose` (fuzz/src/targets/compose.rs) for the
//! grammar and the oracle. The body lives in the library so that the root crate's
//! `tests/fuzz/main.rs` replays the committed corpus on stable Rust (pulldown-cmark only);
//! here comrak reads each section too.
#![no_main]

#[path = "../src/comrak_shape.rs"]
mod comrak_shape;

use mcp_preamble_fuzz::targets::compose::{ComposeInput, Reader, run_with};

const COMRAK: [(&str, Reader); 2] = [
    ("comrak", comrak_shape::commonmark),
    ("comrak gfm", comrak_shape::gfm),
];

libfuzzer_sys::fuzz_target!(init: mcp_preamble_fuzz::warm_up(), |input: ComposeInput| {
    run_with(input, &COMRAK);
});
