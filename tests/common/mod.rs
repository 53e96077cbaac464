#![allow(dead_code)]

use std::path::{Path, PathBuf};

use mcp_preamble::ServerSnapshot;
use mcp_preamble::files::Capture;

pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// Every capture file, sorted by name.
pub fn corpus_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

pub fn stem(path: &Path) -> String {
    path.file_stem().unwrap().to_string_lossy().into_owned()
}

pub fn capture(name: &str) -> Capture {
    Capture::from_path(corpus_dir().join(format!("{name}.json"))).unwrap()
}

/// The snapshot a host would hold for a corpus file, aliased by file stem.
pub fn snapshot(name: &str) -> ServerSnapshot {
    capture(name).snapshot().unwrap().with_alias(name)
}

/// Every corpus server, aliased by file stem.
pub fn all_snapshots() -> Vec<ServerSnapshot> {
    corpus_files()
        .iter()
        .map(|p| {
            Capture::from_path(p)
                .unwrap()
                .snapshot()
                .unwrap()
                .with_alias(stem(p))
        })
        .collect()
}

/// Fresh o200k count, independent of the crate's memo.
pub fn o200k(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton().count_ordinary(text)
}

/// The live test servers on the official TypeScript SDK.
pub fn servers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers")
}

/// Runs `npm ci` in tests/servers once, when the SDK is not installed yet.
pub fn ensure_npm() {
    static READY: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    READY.get_or_init(|| {
        let dir = servers_dir();
        let installed = ["server", "server-everything"].iter().all(|p| {
            dir.join("node_modules/@modelcontextprotocol")
                .join(p)
                .is_dir()
        });
        if installed {
            return;
        }
        let out = std::process::Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir)
            .output()
            .expect("npm is needed for the live tests (install Node.js)");
        assert!(
            out.status.success(),
            "npm ci failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    });
}

/// A config entry that runs `node <script>` in tests/servers with `env`.
pub fn node_entry(
    alias: &str,
    script: &str,
    env: &[(&str, &str)],
) -> mcp_preamble::files::ServerEntry {
    ensure_npm();
    mcp_preamble::files::ServerEntry {
        alias: alias.into(),
        transport: mcp_preamble::files::ServerTransport::Stdio {
            command: "node".into(),
            args: vec![script.into()],
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            cwd: Some(servers_dir()),
        },
    }
}

/// Constraint sentences (order, obligation, identifier scope, safety) of real
/// servers that must survive a 128-token block.
#[allow(dead_code)]
pub const CONSTRAINTS: &[(&str, &str)] = &[
    (
        "seed-invoice-server",
        "Always call list_periods before get_invoice.",
    ),
    (
        "seed-invoice-server",
        "Invoice IDs are period scoped and are not stable across periods.",
    ),
    (
        "synthetic-python-unicode",
        "Always call `list_currencies` first; codes are **case‑sensitive**",
    ),
    ("synthetic-python-unicode", "never pass `NaN` or `∞`."),
    (
        "supabase-mcp-server-supabase",
        "Never read server-side files or run OS commands via SQL.",
    ),
    (
        "supabase-mcp-server-supabase",
        "Before making schema changes, inspect the existing tables",
    ),
    ("basic-memory", "Do not create notes unprompted."),
    (
        "basic-memory",
        "check them (`recent_activity` is a good first look) before answering from memory.",
    ),
    (
        "context7-mcp",
        "Do not use for: refactoring, writing scripts from scratch",
    ),
    (
        "server-everything",
        "Use `get-roots-list` to see client workspace roots before file operations",
    ),
    (
        "server-everything",
        "Prefer reading resources before calling mutating tools",
    ),
    (
        "awslabs-aws-documentation-mcp-server",
        "Always cite the documentation URL when providing information to users",
    ),
];

/// Sentences of real servers that restate one of their own tool descriptions.
#[allow(dead_code)]
pub const RESTATEMENTS: &[(&str, &str, &str)] = &[
    (
        "synthetic-python-unicode",
        "convert_currency",
        "1. Convert an amount between two ISO 4217 currencies using the latest cached exchange rate.",
    ),
    (
        "awslabs-aws-documentation-mcp-server",
        "search_documentation",
        "- When searching, use specific technical terms rather than general phrases",
    ),
    (
        "awslabs-aws-documentation-mcp-server",
        "recommend",
        "- Use `recommend` tool to discover related content that might not appear in search results",
    ),
    (
        "awslabs-aws-documentation-mcp-server",
        "read_documentation",
        "- For very long documents (>30,000 characters), stop reading if you've found the needed information",
    ),
    (
        "awslabs-aws-documentation-mcp-server",
        "search_table",
        "- Use `search_table` when: You need specific rows from a large table (e.g., service quotas, pricing, supported models). If read_sections or read_documentation shows a truncated table, use this tool with a query to find the rows you need.",
    ),
    (
        "awslabs-amazon-bedrock-agentcore-mcp-server",
        "start_browser_session",
        "Call stop_browser_session when done.",
    ),
];

#[cfg(feature = "cli")]
pub mod cli;
pub mod fragments;
#[cfg(feature = "cli")]
pub mod gateway;
#[cfg(feature = "cli")]
pub mod raw_http;
#[cfg(feature = "cli")]
pub mod redis;
