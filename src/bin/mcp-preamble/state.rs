//! `serve`'s state directory: one per config (`--state-dir`, by default a
//! folder named after the config in the user's cache directory), where the
//! running gateway keeps what it tells of its upstreams (`status.json`,
//! read by `serve --status`) and their last snapshots (`servers.json`,
//! served at once when it starts again).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use mcp_preamble::ServerSnapshot;
use mcp_preamble::files::SnapshotFile;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::CliError;

/// The user's cache directory: `$XDG_CACHE_HOME`, else `~/.cache`
/// (`~/Library/Caches` on macOS, `%LOCALAPPDATA%` on Windows).
fn cache_root() -> Option<PathBuf> {
    let var = |name| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if cfg!(windows) {
        return var("LOCALAPPDATA");
    }
    if let Some(dir) = var("XDG_CACHE_HOME") {
        return Some(dir);
    }
    let home = var("HOME")?;
    Some(if cfg!(target_os = "macos") {
        home.join("Library/Caches")
    } else {
        home.join(".cache")
    })
}

/// The state directory of the gateway serving `config`: `dir` when given,
/// else `<cache>/mcp-preamble/serve/<config's name>-<12 hex of the SHA-256
/// of its absolute path>` (two configs never share one).
pub fn state_dir(dir: Option<&Path>, config: &Path) -> Result<PathBuf, CliError> {
    if let Some(dir) = dir {
        return Ok(dir.to_path_buf());
    }
    let absolute = std::fs::canonicalize(config).unwrap_or_else(|_| config.to_path_buf());
    let digest = Sha256::digest(absolute.display().to_string().as_bytes());
    let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    let stem = config
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let root = cache_root().ok_or_else(|| {
        CliError::State("no cache directory (HOME is not set): give --state-dir DIR".into())
    })?;
    Ok(root
        .join("mcp-preamble/serve")
        .join(format!("{stem}-{hex}")))
}

/// What `status.json` holds: the gateway and each upstream as it last told.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Status {
    /// `1`.
    pub format: u32,
    /// The gateway's process id.
    pub pid: u32,
    /// `stdio` or the `http://…/mcp` address.
    pub on: String,
    /// Seconds since the Unix epoch of the last change.
    pub updated: u64,
    /// Whether the gateway stopped (it says so on its way out).
    pub stopped: bool,
    pub upstreams: BTreeMap<String, Upstream>,
}

/// One upstream's state as the gateway last told it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Upstream {
    /// `starting`, `connected`, `reconnecting`, `gone`, or `not_started`.
    pub state: String,
    /// Why: the hub's reason (`restarted`, `gave_up`…), or the error that
    /// kept it from starting.
    pub why: String,
    /// Its process id (stdio servers, while running).
    pub pid: Option<u32>,
    /// Restarts since the gateway started.
    pub restarts: u32,
    /// How it last ended (`exited with status 1`, `signal: 9 (SIGKILL)`).
    pub last_exit: Option<String>,
}

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Status {
    const FILE: &str = "status.json";

    /// Writes `dir/status.json` whole (a temporary file renamed over it).
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        let json = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        write_whole(dir, Self::FILE, &(json + "\n"))
    }

    /// Reads `dir/status.json`.
    pub fn read(dir: &Path) -> Result<Status, CliError> {
        let path = dir.join(Self::FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            CliError::State(format!(
                "no gateway status in {} ({e}): has `serve` run with this config (and --state-dir)?",
                dir.display()
            ))
        })?;
        serde_json::from_str(&text)
            .map_err(|e| CliError::State(format!("{} does not read: {e}", path.display())))
    }

    /// The status as `serve --status` prints it: the gateway, then one
    /// line per upstream.
    pub fn render(&self, now: u64) -> String {
        let ago = now.saturating_sub(self.updated);
        let run = if self.stopped { "stopped" } else { "serving" };
        let mut out = format!(
            "gateway (pid {}) {run} on {}; last change {ago} s ago\n",
            self.pid, self.on
        );
        let width = self
            .upstreams
            .keys()
            .map(|a| a.chars().count())
            .max()
            .unwrap_or(0);
        for (alias, u) in &self.upstreams {
            let mut line = format!("{alias:width$}  {}", u.state);
            if !u.why.is_empty() {
                line.push_str(&format!(" ({})", u.why));
            }
            if let Some(pid) = u.pid {
                line.push_str(&format!(", pid {pid}"));
            }
            line.push_str(&format!(", {} restarts", u.restarts));
            if let Some(exit) = &u.last_exit {
                line.push_str(&format!(", last ended: {exit}"));
            }
            out.push_str(&line);
            out.push('\n');
        }
        out
    }
}

/// The servers' last snapshots (`servers.json`): what a gateway serves at
/// once when it starts again, before its servers answer.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Known {
    /// `1`.
    format: u32,
    /// By alias, each a snapshot file (`mcp_preamble_snapshot`).
    servers: BTreeMap<String, serde_json::Value>,
}

const KNOWN: &str = "servers.json";

/// The last snapshots in `dir` of the servers of `aliases` (no file, an
/// unreadable one or a server's unreadable entry: left out, logged).
pub fn known_servers(dir: &Path, aliases: &[String]) -> BTreeMap<String, ServerSnapshot> {
    let path = dir.join(KNOWN);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return BTreeMap::new();
    };
    let known: Known = match serde_json::from_str(&text) {
        Ok(k) => k,
        Err(e) => {
            tracing::warn!(
                "{} does not read ({e}); every server is started afresh",
                path.display()
            );
            return BTreeMap::new();
        }
    };
    let mut out = BTreeMap::new();
    for (alias, file) in known.servers {
        if !aliases.contains(&alias) {
            continue;
        }
        match SnapshotFile::from_json(&file.to_string()) {
            Ok(f) => {
                out.insert(alias, f.snapshot);
            }
            Err(e) => tracing::warn!(upstream = %alias, "its last snapshot does not read: {e}"),
        }
    }
    out
}

/// Writes `snapshots` as the servers' last snapshots in `dir`, whole.
pub fn save_known(dir: &Path, snapshots: BTreeMap<String, ServerSnapshot>) -> std::io::Result<()> {
    let now_ms = now().saturating_mul(1000);
    let servers = snapshots
        .into_iter()
        .map(|(alias, s)| {
            let file = serde_json::to_value(SnapshotFile::new(s, now_ms)).unwrap_or_default();
            (alias, file)
        })
        .collect();
    let json =
        serde_json::to_string(&Known { format: 1, servers }).map_err(std::io::Error::other)?;
    write_whole(dir, KNOWN, &json)
}

/// The file that keeps the last lock a gateway loaded from a shared state
/// (`--state`): served at its next start when Redis does not answer then.
const SHARED_LOCK: &str = "shared-state.lock";

/// Keeps `lock` as the last one loaded from the shared state (written as
/// every lock file is: [`mcp_preamble::pin::Lock::save`]).
pub fn save_shared_lock(dir: &Path, lock: &mcp_preamble::pin::Lock) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    lock.save(dir.join(SHARED_LOCK)).map_err(|e| e.to_string())
}

/// The last lock kept by [`save_shared_lock`], when there is one that reads.
pub fn shared_lock(dir: &Path) -> Option<mcp_preamble::pin::Lock> {
    mcp_preamble::pin::Lock::from_path(dir.join(SHARED_LOCK)).ok()
}

/// Writes `dir/name` whole through the one file writer: an unpredictable
/// temporary file, created exclusively, renamed over it (never through a
/// symlink planted at either name).
fn write_whole(dir: &Path, name: &str, text: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    // Rewritten often (the status at every upstream's change): not synced.
    mcp_preamble::files::FileWriter::new(dir.join(name))
        .replace()
        .unsynced()
        .write(text.as_bytes())
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_configs_never_share_a_state_dir_and_a_given_one_wins() {
        let a = state_dir(None, Path::new("/nowhere/a/mcp.json")).unwrap();
        let b = state_dir(None, Path::new("/nowhere/b/mcp.json")).unwrap();
        assert_ne!(a, b);
        assert!(a.ends_with(a.file_name().unwrap()));
        assert!(a.file_name().unwrap().to_string_lossy().starts_with("mcp-"));
        let given = state_dir(Some(Path::new("/x/y")), Path::new("mcp.json")).unwrap();
        assert_eq!(given, Path::new("/x/y"));
    }

    #[test]
    fn last_snapshots_come_back_for_the_configs_servers_only() {
        let dir = std::env::temp_dir().join(format!("mcp-preamble-known-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let a = ServerSnapshot::new("a-server").with_instructions("Call a first.");
        let b = ServerSnapshot::new("b-server");
        let all = BTreeMap::from([("a".to_string(), a), ("b".to_string(), b)]);
        save_known(&dir, all).unwrap();
        let back = known_servers(&dir, &["a".to_string(), "c".to_string()]);
        assert_eq!(back.keys().collect::<Vec<_>>(), ["a"]);
        assert_eq!(back["a"].instructions.raw(), Some("Call a first."));
        std::fs::write(dir.join(KNOWN), "{not json").unwrap();
        assert!(known_servers(&dir, &["a".to_string()]).is_empty());
        assert!(known_servers(&dir.join("none"), &["a".to_string()]).is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn state_files_are_never_written_through_a_planted_link() {
        let dir = std::env::temp_dir().join(format!("mcp-preamble-slink-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, "keep me").unwrap();
        // The temporary name main used (`NAME.PID.tmp`) and the file itself.
        let tmp = dir.join(format!("{KNOWN}.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, &tmp).unwrap();
        std::os::unix::fs::symlink(&victim, dir.join(Status::FILE)).unwrap();
        let a = ServerSnapshot::new("a-server");
        save_known(&dir, BTreeMap::from([("a".to_string(), a)])).unwrap();
        Status::default().write(&dir).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        assert_eq!(known_servers(&dir, &["a".to_string()]).len(), 1);
        let status = std::fs::symlink_metadata(dir.join(Status::FILE)).unwrap();
        assert!(status.is_file());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_status_renders_one_line_per_upstream() {
        let mut s = Status {
            format: 1,
            pid: 7,
            on: "stdio".into(),
            updated: 100,
            ..Status::default()
        };
        s.upstreams.insert(
            "billing".into(),
            Upstream {
                state: "connected".into(),
                why: "restarted".into(),
                pid: Some(42),
                restarts: 1,
                last_exit: Some("signal: 9 (SIGKILL)".into()),
            },
        );
        assert_eq!(
            s.render(103),
            "gateway (pid 7) serving on stdio; last change 3 s ago\n\
             billing  connected (restarted), pid 42, 1 restarts, last ended: signal: 9 (SIGKILL)\n"
        );
    }
}
