//! [`DiscoverCache`]: `server/discover` results kept on disk while fresh.

use crate::config::ServerEntry;
use crate::error::{Error, ErrorKind, Result};
use crate::model::{Era, ServerSnapshot};

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
    dir: std::path::PathBuf,
}

impl DiscoverCache {
    /// A cache in `dir` (created when first written).
    pub fn new(dir: impl Into<std::path::PathBuf>) -> DiscoverCache {
        DiscoverCache { dir: dir.into() }
    }

    fn path(&self, entry: &ServerEntry) -> std::path::PathBuf {
        // FNV-1a over the entry's full description: stable across runs.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in format!("{}\u{0}{:?}", entry.alias, entry.transport).bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.dir.join(format!("{h:016x}.json"))
    }

    /// The stored snapshot of `entry`, when it is still fresh at `now_ms`.
    pub fn load(&self, entry: &ServerEntry, now_ms: u64) -> Option<ServerSnapshot> {
        let text = std::fs::read_to_string(self.path(entry)).ok()?;
        let file = crate::SnapshotFile::from_json(&text).ok()?;
        let ttl = file.snapshot.cache.as_ref()?.ttl_ms?;
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
        let text = crate::SnapshotFile::new(snapshot.clone(), now_ms).to_json();
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        use std::io::Write as _;
        options
            .open(&path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
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
