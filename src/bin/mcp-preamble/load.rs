//! Getting snapshots: reading files, connecting to a config's servers.

use std::path::{Path, PathBuf};

use mcp_preamble::ServerSnapshot;
use mcp_preamble::connect::{
    ConnectOptions, Connection, DiscoverCache, Handshake, connect_all_with, now_ms,
};
use mcp_preamble::files::{McpConfig, load_server_file};
use mcp_preamble::settings::ClientIdentity;

use crate::args::Connect;
use crate::emit::emit_err;
use crate::error::CliError;
use crate::progress::Progress;
use crate::source::{Origin, Source};

/// With neither files nor a config there is nothing to do.
pub fn require_input(files: &[PathBuf], connect: &Connect) -> Result<(), CliError> {
    if files.is_empty() && connect.config.is_none() {
        return Err(CliError::NoInput);
    }
    Ok(())
}

/// Reads a capture or snapshot file; a server without an alias takes the
/// file's stem.
pub fn load_file(path: &Path) -> mcp_preamble::Result<ServerSnapshot> {
    let mut s = load_server_file(path)?;
    if s.alias.is_none() {
        s.alias = file_alias(path);
    }
    Ok(s)
}

/// Reads `files`, then connects to the servers of `--config` (if given):
/// the snapshots that came, and one source per server (failed ones too).
pub async fn load_inputs(files: &[PathBuf], connect: &Connect) -> Result<Gathered, CliError> {
    require_input(files, connect)?;
    let mut snapshots = Vec::new();
    let mut sources = Vec::new();
    for file in files {
        match load_file(file) {
            Ok(s) => snapshots.push(s),
            Err(e) => {
                emit_err(&format!("mcp-preamble: {}: {e}", file.display()));
                let alias = file_alias(file).unwrap_or_default();
                sources.push(Source::failed(alias, Origin::File, e.to_string()));
            }
        }
    }
    let mut gathered = Gathered::default();
    if let Some(path) = &connect.config {
        gathered = gather(&McpConfig::from_path(path)?, connect).await;
    }
    snapshots.append(&mut gathered.snapshots);
    sources.append(&mut gathered.sources);
    gathered.snapshots = snapshots;
    gathered.sources = sources;
    Ok(gathered)
}

/// [`load_file`], and for a capture that holds both handshakes, the other
/// era's snapshot after it (under the same alias), for `MCP015`.
pub fn load_file_eras(path: &Path) -> mcp_preamble::Result<Vec<ServerSnapshot>> {
    let (first, others) = mcp_preamble::files::load_server_eras(path)?;
    Ok(std::iter::once(first).chain(others).collect())
}

pub fn file_alias(path: &Path) -> Option<String> {
    path.file_stem().map(|s| s.to_string_lossy().into_owned())
}

/// What [`gather`] got from a config's servers.
#[derive(Default)]
pub struct Gathered {
    /// From the servers that answered or were fresh in the cache.
    pub snapshots: Vec<ServerSnapshot>,
    /// One per server, failed ones included.
    pub sources: Vec<Source>,
    /// Still open: close them once done.
    pub live: Vec<Connection<ClientIdentity>>,
}

impl Gathered {
    pub async fn close(&mut self) {
        for c in self.live.drain(..) {
            c.close().await;
        }
    }
}

/// Connects to every entry at once; failures come back as sources with `ok: false`.
pub async fn gather(config: &McpConfig, opts: &Connect) -> Gathered {
    gather_with(config, opts, &opts.handshake, true).await
}

/// [`gather`] in this handshake; `use_cache: false` connects to every
/// server live (a later connect of `lint --connects`, `--eras`).
pub async fn gather_with(
    config: &McpConfig,
    opts: &Connect,
    handshake: &Handshake,
    use_cache: bool,
) -> Gathered {
    let cache = opts
        .cache_dir
        .as_ref()
        .filter(|_| use_cache)
        .map(DiscoverCache::new);
    let progress = Progress::new(&config.servers);
    let mut done = Vec::new();
    // The entries to start, and their index in `config`.
    let mut todo = McpConfig {
        origin: config.origin.clone(),
        servers: Vec::new(),
    };
    let mut index = Vec::new();
    for (i, entry) in config.servers.iter().cloned().enumerate() {
        if let Some(snapshot) = cache.as_ref().and_then(|c| c.load(&entry, now_ms())) {
            progress.set(i, "from cache");
            done.push((i, entry, Ok(Err(snapshot))));
            continue;
        }
        index.push(i);
        todo.servers.push(entry);
    }
    // Who we say we are: the policy file's `[client]`, the flags over it.
    let client = opts.client_settings();
    let options = ConnectOptions::new()
        .handshake(handshake.clone())
        .timeout(opts.timeout)
        .client(client.client_config());
    let mut each = connect_all_with(&todo, &options, |_| client.handler());
    while let Some((j, r)) = each.next().await {
        let i = index[j];
        match &r {
            Ok(c) => progress.set(i, &format!("ok in {} ms", c.elapsed.as_millis())),
            Err(f) => progress.set(i, &format!("failed: {}", f.error)),
        }
        done.push((i, todo.servers[j].clone(), r.map(Ok)));
    }
    progress.finish();
    done.sort_by_key(|(i, _, _)| *i);
    let (mut snapshots, mut sources, mut live) = (Vec::new(), Vec::new(), Vec::new());
    for (_, entry, result) in done {
        match result {
            Ok(Ok(connection)) => {
                if let Some(c) = &cache
                    && let Err(e) = c.store(&entry, &connection.snapshot, now_ms())
                {
                    emit_err(&format!("mcp-preamble: cache: {e}"));
                }
                snapshots.push(connection.snapshot.clone());
                let elapsed_ms = connection.elapsed.as_millis() as u64;
                sources.push(Source::ok(&entry.alias, Origin::Live, elapsed_ms));
                live.push(connection);
            }
            Ok(Err(cached)) => {
                snapshots.push(cached);
                sources.push(Source::ok(&entry.alias, Origin::Cache, 0));
            }
            Err(failure) => sources.push(Source {
                stderr: tail_lines(&failure.stderr, 5),
                elapsed_ms: failure.elapsed.as_millis() as u64,
                ..Source::failed(entry.alias.clone(), Origin::Live, failure.error.to_string())
            }),
        }
    }
    Gathered {
        snapshots,
        sources,
        live,
    }
}

fn tail_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
