//! `mcp-preamble snapshot`.

use std::path::Path;
use std::process::ExitCode;

use mcp_preamble::connect::now_ms;
use mcp_preamble::files::{FileWriter, InTheWay, McpConfig, SnapshotFile};
use mcp_preamble::settings::PolicyFile;

use crate::args::SnapshotArgs;
use crate::emit::{emit_err, emit_line};
use crate::error::CliError;
use crate::load::gather;

/// Exit 1 when a server failed or a file was skipped or not written.
pub async fn snapshot(mut a: SnapshotArgs) -> Result<ExitCode, CliError> {
    let Some(path) = &a.connect.config else {
        return Err(CliError::NoConfig);
    };
    let config = McpConfig::from_path(path)?;
    let policy = a.policy.as_deref().map(PolicyFile::from_path).transpose()?;
    if let Some(policy) = &policy {
        a.connect.client = policy.client.clone();
    }
    std::fs::create_dir_all(&a.out).map_err(|e| CliError::OutDir(a.out.clone(), e))?;
    let mut gathered = gather(&config, &a.connect).await;
    gathered.close().await;
    let mut failed = false;
    let mut used = std::collections::HashSet::new();
    if let Some(policy) = &policy {
        let known: Vec<String> = config.servers.iter().map(|s| s.alias.clone()).collect();
        crate::lint::warn_unknown_aliases(policy, &known);
    }
    for s in &gathered.snapshots {
        let alias = s.alias.clone().unwrap_or_default();
        if policy.as_ref().is_some_and(|p| p.excludes(s)) {
            emit_line(&format!(
                "{alias}: excluded by the policy file, not written"
            ));
            continue;
        }
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
        match write_file(&file, &(text + "\n"), a.force) {
            Ok(Written::Yes) => emit_line(&format!("{alias}: wrote {}", file.display())),
            Ok(Written::Exists) => {
                failed = true;
                emit_err(&format!("skipped {}: exists (use --force)", file.display()));
            }
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

pub enum Written {
    Yes,
    /// Something (a file, a symlink, anything) has the name, and no `--force`.
    Exists,
}

/// Writes `target` whole or not at all through the one file writer
/// (`FileWriter`): never through a symlink at `target`; replaces what is there
/// only with `force` (a symlink is then replaced itself, its target
/// untouched; a file keeps its mode).
pub fn write_file(target: &Path, text: &str, force: bool) -> std::io::Result<Written> {
    let writer = FileWriter::new(target);
    let writer = if force { writer.replace() } else { writer };
    match writer.write(text.as_bytes()) {
        Ok(_) => Ok(Written::Yes),
        Err(e) if e.get_ref().is_some_and(|i| i.is::<InTheWay>()) => Ok(Written::Exists),
        Err(e) => Err(e),
    }
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
