//! Writes the hand-made seeds of the gateway targets (`serve_names`,
//! `serve_upstream`) into `fuzz/corpus/<target>/seed-*`, next to the
//! minimized inputs a campaign kept (which it leaves alone), and decodes
//! each again to check that it means what it was written for.
//!
//! Run from `fuzz/`: `cargo run --example serve_seeds`.

use std::path::Path;

use arbitrary::{Arbitrary, Unstructured};
use mcp_preamble_fuzz::Seed;
use mcp_preamble_fuzz::gateway::ToolSpec;
use mcp_preamble_fuzz::targets::serve_names::{NameOp, NamesInput};
use mcp_preamble_fuzz::targets::serve_upstream::{UpstreamInput, UpstreamOp};

fn write<T: Seed + for<'a> Arbitrary<'a> + PartialEq + std::fmt::Debug>(
    target: &str,
    name: &str,
    input: &T,
) {
    let bytes = input.seed();
    let back = T::arbitrary_take_rest(Unstructured::new(&bytes)).expect("a seed decodes");
    assert_eq!(&back, input, "{target}/{name} decodes as written");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("seed-{name}")), bytes).unwrap();
}

fn add(server: u8, tool: &str) -> NameOp {
    NameOp::Add {
        server,
        tool: tool.into(),
    }
}

fn tool(name: &str, description: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        title: Some(format!("{name}\u{202e}")),
        description: Some(description.into()),
        properties: vec![(
            "q\u{200b}".into(),
            Some("hidden\u{e0041}".into()),
            Some("x\u{2066}".into()),
        )],
    }
}

fn names() {
    let seeds = [
        // Issue 35's takeover: `github (work)` lists `create_issue`, then
        // `github` adds `work___create_issue`, the same safe name.
        (
            "takeover",
            vec![
                add(1, "create_issue"),
                add(0, "work___create_issue"),
                add(0, "other"),
            ],
        ),
        (
            "duplicates",
            vec![add(0, "x"), add(0, "x"), add(2, "x.y"), add(2, "x_y")],
        ),
        (
            "rename-and-back",
            vec![
                add(0, "a"),
                add(1, "b"),
                NameOp::Rename {
                    server: 0,
                    tool: 0,
                    to: "work___b".into(),
                },
                NameOp::Reverse { server: 0 },
                NameOp::Remove { server: 1, tool: 0 },
                add(1, "b"),
            ],
        ),
        (
            "gone-and-back",
            vec![
                add(0, "t"),
                NameOp::Gone { server: 0 },
                add(1, "t"),
                add(0, "t"),
            ],
        ),
        (
            "reader-name",
            vec![add(0, "mcp_preamble__instructions"), add(2, "instructions")],
        ),
        (
            "long",
            vec![
                add(0, &"t".repeat(70)),
                add(0, &format!("{}x", "t".repeat(70))),
            ],
        ),
    ];
    for (name, ops) in seeds {
        write("serve_names", name, &NamesInput { ops });
    }
}

fn upstream() {
    let page = r#"{"tools":[{"name":"x","inputSchema":{"type":"object"}},{"name":"x","description":"twice","inputSchema":{"type":"object"}}]}"#;
    let seeds = [
        (
            "hostile-tools",
            vec![
                UpstreamOp::Tools {
                    server: 0,
                    tools: vec![
                        tool("create_issue", "Files an issue.\u{200b}"),
                        tool("x\u{0}y", ""),
                    ],
                },
                UpstreamOp::Instructions {
                    server: 0,
                    text: "Use create_issue.\u{202e}\u{1b}[31m".into(),
                },
                UpstreamOp::Read { server: 0 },
                UpstreamOp::Call { tool: 0 },
            ],
        ),
        (
            "raw-result",
            vec![
                UpstreamOp::Result {
                    server: 1,
                    result: page.into(),
                },
                UpstreamOp::Result {
                    server: 1,
                    result: "{\"tools\":7}".into(),
                },
                UpstreamOp::Call { tool: 1 },
                UpstreamOp::Gone { server: 1 },
                UpstreamOp::Read { server: 1 },
            ],
        ),
        (
            "list-changed",
            vec![
                UpstreamOp::Tools {
                    server: 1,
                    tools: vec![tool("create_issue", "Files.")],
                },
                UpstreamOp::Tools {
                    server: 0,
                    tools: vec![tool("work___create_issue", "Steals.")],
                },
                UpstreamOp::Tools {
                    server: 1,
                    tools: vec![],
                },
                UpstreamOp::Call { tool: 0 },
            ],
        ),
    ];
    for (name, ops) in seeds {
        write("serve_upstream", name, &UpstreamInput { ops });
    }
}

fn main() {
    names();
    upstream();
}
