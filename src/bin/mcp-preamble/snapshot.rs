//! `mcp-preamble snapshot`.

use std::process::ExitCode;

use mcp_preamble::connect::now_ms;
use mcp_preamble::{McpConfig, SnapshotFile};

use crate::CliError;
use crate::args::SnapshotArgs;
use crate::emit::{emit, emit_err};
use crate::load::gather;

pub async fn snapshot(a: SnapshotArgs) -> Result<ExitCode, CliError> {
    let Some(path) = &a.connect.config else {
        return Err(CliError::NoConfig);
    };
    let config = McpConfig::from_path(path)?;
    std::fs::create_dir_all(&a.out).map_err(|e| CliError::OutDir(a.out.clone(), e))?;
    let mut gathered = gather(&config, &a.connect).await;
    gathered.close().await;
    let mut failed = false;
    let mut used = std::collections::HashSet::new();
    for s in &gathered.snapshots {
        let alias = s.alias.clone().unwrap_or_default();
        // Two aliases can make the same file name ("a b", "a_b"): never overwrite.
        let base = file_name(&alias);
        let mut stem = base.clone();
        let mut n = 2;
        while !used.insert(stem.clone()) {
            stem = format!("{base}-{n}");
            n += 1;
        }
        let file = a.out.join(format!("{stem}.json"));
        let text = SnapshotFile::new(s.clone(), now_ms()).to_json();
        match std::fs::write(&file, text + "\n") {
            Ok(()) => emit(&format!("{alias}: wrote {}\n", file.display())),
            Err(e) => {
                failed = true;
                emit_err(&format!("mcp-preamble: {}: {e}", file.display()));
            }
        }
    }
    for f in gathered.sources.iter().filter(|c| !c.ok) {
        failed = true;
        emit_err(&format!(
            "{}: {}",
            f.alias,
            f.error.as_deref().unwrap_or("failed")
        ));
        for line in f.stderr.lines() {
            emit_err(&format!("    stderr: {line}"));
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// An alias made safe as a file name.
fn file_name(alias: &str) -> String {
    let s: String = alias
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with('.') {
        format!("server{s}")
    } else {
        s
    }
}
