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
