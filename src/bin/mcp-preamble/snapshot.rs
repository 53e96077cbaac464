//! `mcp-preamble snapshot`.

use std::hash::{BuildHasher as _, Hasher as _};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use mcp_preamble::connect::now_ms;
use mcp_preamble::files::{McpConfig, SnapshotFile};
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
        match write_file(&a.out, &file, &(text + "\n"), a.force) {
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

/// Writes `target` in `dir` whole or not at all: a fresh temporary file in
/// `dir`, then moved into place. Never writes through a symlink at
/// `target`; replaces what is there only with `force` (a symlink is then
/// replaced itself, its target untouched).
pub fn write_file(dir: &Path, target: &Path, text: &str, force: bool) -> std::io::Result<Written> {
    match std::fs::symlink_metadata(target) {
        Ok(_) if !force => return Ok(Written::Exists),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let (tmp, mut file) = temp_file(dir, target)?;
    let written = file
        .write_all(text.as_bytes())
        .and_then(|()| file.sync_all());
    drop(file);
    let placed = written.and_then(|()| place(&tmp, target, force));
    if !matches!(placed, Ok(Placed::Renamed)) {
        let _ = std::fs::remove_file(&tmp);
    }
    placed.map(|p| match p {
        Placed::Exists => Written::Exists,
        Placed::Renamed | Placed::Linked => Written::Yes,
    })
}

enum Placed {
    Renamed,
    Linked,
    Exists,
}

fn place(tmp: &Path, target: &Path, force: bool) -> std::io::Result<Placed> {
    if !force {
        // A hard link fails if the name was taken since the check: no window
        // in which a file or symlink planted meanwhile could be replaced.
        match std::fs::hard_link(tmp, target) {
            Ok(()) => return Ok(Placed::Linked),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(Placed::Exists),
            // A filesystem without hard links: check again, then rename.
            Err(_) if std::fs::symlink_metadata(target).is_ok() => return Ok(Placed::Exists),
            Err(_) => {}
        }
    }
    // rename replaces a symlink at `target` itself, never what it points to.
    std::fs::rename(tmp, target).map(|()| Placed::Renamed)
}

/// A new file in `dir` under an unpredictable name (`create_new`: an
/// existing file or symlink of that name is an error, never opened).
fn temp_file(dir: &Path, target: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut last = None;
    for attempt in 0u32..16 {
        // RandomState is seeded from the OS's randomness.
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        h.write_u32(attempt);
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        let tmp = dir.join(format!(".{name}.{:016x}.tmp", h.finish()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no temporary file name")))
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
