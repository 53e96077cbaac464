//! The `section` and `links` targets' inputs as the markdown sections they
//! assemble, for the differential check of `fuzz/differential/check.py`
//! (which reads them with cmark-gfm, C cmark, markdown-it, mistune and
//! commonmark.py). A directory whose name ends in `links` holds `links`
//! inputs.
//!
//! ```text
//! cargo run --release --example sections -- corpus/section corpus-work/section > sections.json
//! ```
//!
//! Prints a JSON list: per input that decodes and assembles, its file name,
//! the section with the host's text appended, and the shown names of the
//! included servers, in section order. Inputs are decoded exactly as the
//! target decodes them (`arbitrary`, with the same flags).

use std::path::Path;

use arbitrary::{Arbitrary, Unstructured};
use mcp_preamble::{Assembler, Order, Template};
use mcp_preamble_fuzz::SectionInput;
use mcp_preamble_fuzz::targets::links::LinksInput;

/// What a host appends right after the section (as tests/text/renderers.rs does).
const HOST: &str = "Host text after the section.\n";

fn section(input: &SectionInput) -> Option<(String, Vec<String>)> {
    let servers = input.servers_within_bounds()?;
    let flags = input.flags;
    let assembly = Assembler::new()
        .tool_descriptions(flags & 1 != 0)
        .order(if flags & 2 != 0 {
            Order::Insertion
        } else {
            Order::Name
        })
        .dedup(flags & 4 == 0)
        .dedup_across_servers(flags & 8 != 0)
        .list_tool_only_servers(flags & 16 == 0)
        .template(Template::markdown())
        .assemble(&servers)
        .ok()?;
    let names: Vec<String> = assembly
        .servers()
        .iter()
        .filter(|s| s.included)
        .map(|s| s.name.clone())
        .collect();
    if names.is_empty() {
        return None;
    }
    Some((format!("{}{HOST}", assembly.text()), names))
}

/// A `links` input's section and shown names.
fn links_section(bytes: &[u8]) -> Option<(String, Vec<String>)> {
    let input = LinksInput::arbitrary_take_rest(Unstructured::new(bytes)).ok()?;
    let assembly = input.assemble()?;
    let names = assembly
        .servers()
        .iter()
        .filter(|s| s.included)
        .map(|s| s.name.clone())
        .collect();
    Some((format!("{}{HOST}", assembly.text()), names))
}

fn main() {
    let mut out = Vec::new();
    for dir in std::env::args().skip(1) {
        let Ok(entries) = std::fs::read_dir(Path::new(&dir)) else {
            eprintln!("sections: cannot read {dir}");
            continue;
        };
        let mut files: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        for path in files {
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            let made = if dir.trim_end_matches('/').ends_with("links") {
                links_section(&bytes)
            } else {
                SectionInput::arbitrary_take_rest(Unstructured::new(&bytes))
                    .ok()
                    .and_then(|input| section(&input))
            };
            if let Some((doc, names)) = made {
                out.push(serde_json::json!({
                    "input": path.display().to_string(),
                    "doc": doc,
                    "names": names,
                }));
            }
        }
    }
    println!("{}", serde_json::Value::Array(out));
}
