//! [`DiscoverCache`]: `server/discover` results kept on disk while fresh.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::config::{ServerEntry, ServerTransport};
use crate::error::{Error, ErrorKind, Result};
use crate::model::{Era, ServerSnapshot};
use crate::support::write::FileWriter;
use crate::support::{canonical, hash};

/// A directory of `server/discover` results, reused while their `ttlMs` says
/// they are fresh, so a preview need not start the server again.
///
/// Only results of the 2026-07-28 era with a positive `ttlMs` are stored
/// (`ttlMs: 0` means "do not cache"). An entry is keyed by the whole config
/// entry (alias, command, arguments, environment, directory, URL, headers),
/// so results never cross between entries with different credentials; that
/// is how `cacheScope: "private"` is honoured (and `"public"` results are
/// treated no more widely). The tools list read on the same connection is
/// stored with it and reused with it; its own hints stay in
/// [`ServerSnapshot::tools_cache`]. Files are written owner-only on Unix.
#[derive(Debug, Clone)]
pub struct DiscoverCache {
    dir: PathBuf,
}

impl DiscoverCache {
    /// A cache in `dir` (created when first written).
    pub fn new(dir: impl Into<PathBuf>) -> DiscoverCache {
        DiscoverCache { dir: dir.into() }
    }

    /// The longest a discover result is reused, whatever `ttlMs` it sent.
    pub const MAX_TTL_MS: u64 = 24 * 60 * 60 * 1000;

    fn path(&self, entry: &ServerEntry) -> PathBuf {
        self.dir.join(format!("{}.json", key(entry)))
    }

    /// The stored snapshot of `entry`, when it is still fresh at `now_ms`.
    pub fn load(&self, entry: &ServerEntry, now_ms: u64) -> Option<ServerSnapshot> {
        let text = crate::error::read_file(&self.path(entry)).ok()?;
        let file = crate::wire::SnapshotFile::from_json(&text).ok()?;
        // A server cannot pin its answer in the cache for longer than a day.
        let ttl = file.snapshot.cache.as_ref()?.ttl_ms?.min(Self::MAX_TTL_MS);
        let fresh = file.snapshot.era == Era::Modern
            && ttl > 0
            && now_ms < file.captured_ms.saturating_add(ttl);
        fresh.then_some(file.snapshot)
    }

    /// Stores `snapshot` of `entry` taken at `now_ms`, when its hints allow
    /// caching; returns whether it was stored.
    pub fn store(
        &self,
        entry: &ServerEntry,
        snapshot: &ServerSnapshot,
        now_ms: u64,
    ) -> Result<bool> {
        let ttl = snapshot.cache.as_ref().and_then(|c| c.ttl_ms).unwrap_or(0);
        if snapshot.era != Era::Modern || ttl == 0 {
            return Ok(false);
        }
        let io =
            |e: std::io::Error| Error::new(ErrorKind::Io, format!("{}: {e}", self.dir.display()));
        std::fs::create_dir_all(&self.dir).map_err(io)?;
        let path = self.path(entry);
        let text = crate::wire::SnapshotFile::new(snapshot.clone(), now_ms).to_json();
        // Owner-only, never through a link planted at the path.
        FileWriter::new(&path)
            .replace()
            .mode(0o600)
            .write(text.as_bytes())
            .map_err(io)?;
        Ok(true)
    }
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The file name stem of `entry`: FNV-1a 64 of its canonical JSON, in hex.
/// Both are fixed formats, so a key outlives Rust and serde_json releases.
fn key(entry: &ServerEntry) -> String {
    format!("{:016x}", hash::fnv1a64(canonical_entry(entry).as_bytes()))
}

/// The entry in its config-file shape, as JSON with every object's keys
/// sorted (byte order) and no spaces.
fn canonical_entry(entry: &ServerEntry) -> String {
    let value = match &entry.transport {
        ServerTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => json!({
            "alias": entry.alias,
            "type": "stdio",
            "command": command,
            "args": args,
            "env": env,
            "cwd": cwd.as_deref().map(path_value),
        }),
        ServerTransport::Http { url, headers } => json!({
            "alias": entry.alias,
            "type": "http",
            "url": url,
            "headers": headers,
        }),
    };
    canonical::to_string(&value)
}

/// A path as text, or as its bytes when it is not UTF-8 (so no two differ
/// only in what a lossy conversion would replace).
fn path_value(path: &Path) -> Value {
    match path.to_str() {
        Some(text) => Value::from(text),
        None => Value::from(path.as_os_str().as_encoded_bytes().to_vec()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::McpConfig;

    fn entry(json: &str) -> ServerEntry {
        let config = McpConfig::from_json(json, "test.json").unwrap();
        config.servers.into_iter().next().unwrap()
    }

    #[cfg(unix)]
    #[test]
    fn a_link_planted_at_a_cache_file_is_never_written_through() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("mcp-preamble-cache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, "keep me").unwrap();
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
        let cache = DiscoverCache::new(&dir);
        let e = entry(r#"{"mcpServers": {"a": {"command": "x"}}}"#);
        std::os::unix::fs::symlink(&victim, cache.path(&e)).unwrap();
        let mut s = ServerSnapshot::new("a");
        s.era = Era::Modern;
        s.cache = Some(crate::model::CacheHints {
            ttl_ms: Some(60_000),
            cache_scope: None,
        });
        assert!(cache.store(&e, &s, 1).unwrap());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        let meta = std::fs::symlink_metadata(cache.path(&e)).unwrap();
        assert!(meta.is_file());
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert!(cache.load(&e, 2).is_some());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_key_of_a_fixed_entry_is_fixed() {
        // If this fails, the format changed and every cache file is orphaned:
        // only change the expected values on purpose.
        let e = entry(
            r#"{"mcpServers": {"files": {"command": "npx",
                "args": ["-y", "server-filesystem", "/tmp"],
                "env": {"B": "2", "A": "1"}, "cwd": "/srv"}}}"#,
        );
        assert_eq!(
            canonical_entry(&e),
            r#"{"alias":"files","args":["-y","server-filesystem","/tmp"],"command":"npx","cwd":"/srv","env":{"A":"1","B":"2"},"type":"stdio"}"#
        );
        assert_eq!(key(&e), "dc0ac46b373d491b");
        let path = DiscoverCache::new("c").path(&e);
        assert_eq!(path.file_name().unwrap(), "dc0ac46b373d491b.json");
    }

    #[test]
    fn map_order_does_not_change_the_key() {
        let a = entry(r#"{"mcpServers": {"x": {"command": "node", "env": {"A": "1", "B": "2"}}}}"#);
        let b = entry(r#"{"mcpServers": {"x": {"command": "node", "env": {"B": "2", "A": "1"}}}}"#);
        assert_eq!(key(&a), key(&b));
        let a = entry(
            r#"{"servers": {"x": {"type": "http", "url": "http://h/mcp", "headers": {"A": "1", "B": "2"}}}}"#,
        );
        let b = entry(
            r#"{"servers": {"x": {"url": "http://h/mcp", "headers": {"B": "2", "A": "1"}}}}"#,
        );
        assert_eq!(key(&a), key(&b));
    }

    #[test]
    fn every_field_changes_the_key() {
        let base =
            r#"{"mcpServers": {"x": {"command": "node", "args": ["s.mjs"], "env": {"T": "1"}}}}"#;
        let others = [
            r#"{"mcpServers": {"x": {"command": "deno", "args": ["s.mjs"], "env": {"T": "1"}}}}"#,
            r#"{"mcpServers": {"y": {"command": "node", "args": ["s.mjs"], "env": {"T": "1"}}}}"#,
            r#"{"mcpServers": {"x": {"command": "node", "args": ["t.mjs"], "env": {"T": "1"}}}}"#,
            r#"{"mcpServers": {"x": {"command": "node", "args": ["s.mjs"], "env": {"T": "2"}}}}"#,
            r#"{"mcpServers": {"x": {"command": "node", "args": ["s.mjs"], "env": {"T": "1"}, "cwd": "/"}}}"#,
            r#"{"mcpServers": {"x": {"url": "node"}}}"#,
        ];
        let base = key(&entry(base));
        for other in others {
            assert_ne!(key(&entry(other)), base, "{other}");
        }
        let h = |headers: &str| {
            key(&entry(&format!(
                r#"{{"servers": {{"x": {{"url": "http://h/mcp", "headers": {headers}}}}}}}"#
            )))
        };
        assert_ne!(
            h(r#"{"Authorization": "Bearer a"}"#),
            h(r#"{"Authorization": "Bearer b"}"#)
        );
    }
}
