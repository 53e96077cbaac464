#![allow(dead_code)]

use std::path::{Path, PathBuf};

use mcp_preamble::{Capture, ServerSnapshot};

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
        if dir
            .join("node_modules/@modelcontextprotocol/server")
            .is_dir()
        {
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
pub fn node_entry(alias: &str, script: &str, env: &[(&str, &str)]) -> mcp_preamble::ServerEntry {
    ensure_npm();
    mcp_preamble::ServerEntry {
        alias: alias.into(),
        transport: mcp_preamble::ServerTransport::Stdio {
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
