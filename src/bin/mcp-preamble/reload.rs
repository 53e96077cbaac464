//! Reloading a running `serve` gateway. The policy and the lock are read
//! again when either file changes (or the shared state's pins do); on
//! SIGHUP (and, with `--watch-config`, when it changes) the server config
//! too: an upstream added is started, one removed is stopped, one whose
//! entry changed is restarted, and the others are left alone (their
//! processes and the hosts' sessions go on). A file that does not load
//! leaves the gateway as it was, and the log says why. Only the files
//! named at start are read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use mcp_preamble::Assembler;
use mcp_preamble::connect::{ConnectFailure, ConnectOptions};
use mcp_preamble::files::{McpConfig, ServerEntry};
use mcp_preamble::hub::Hub;
use mcp_preamble::pin::Lock;
use mcp_preamble::serve::{Gateway, Naming, ServeAs};
use mcp_preamble::settings::Settings;

use crate::review::LockSource;

/// How often the watched files are looked at.
const WATCH: Duration = Duration::from_millis(300);

/// The policy file's settings (the defaults without one).
pub(crate) fn settings(policy: Option<&Path>) -> Result<Settings, mcp_preamble::Error> {
    match policy {
        Some(path) => Settings::from_path(path),
        None => Ok(Settings::new()),
    }
}

/// The policy's assembler with the lock, fitted to the host.
fn assembler(
    settings: &Settings,
    lock: Option<Lock>,
    (host, name, naming): (ServeAs, &str, &Naming),
) -> Result<Assembler, mcp_preamble::Error> {
    let mut a = Assembler::from_settings(settings)?;
    if let Some(lock) = lock {
        a = a.lock(lock);
    }
    mcp_preamble::serve::prepare_naming(a, host, name, naming)
}

/// Told of the upstreams a config reload starts: their aliases, and the
/// failures of those that do not start.
pub(crate) type OnStart =
    Arc<dyn Fn(Vec<String>, tokio::sync::mpsc::UnboundedReceiver<ConnectFailure>) + Send + Sync>;

/// The server config a gateway runs, and how to start a server of it.
pub(crate) struct Servers {
    pub(crate) path: PathBuf,
    pub(crate) running: McpConfig,
    pub(crate) options: ConnectOptions,
    pub(crate) gateway: Gateway,
    /// Re-read when the file changes, not only on SIGHUP.
    pub(crate) watch: bool,
    pub(crate) on_start: OnStart,
}

impl Servers {
    /// Reads the config again and applies what changed; a file that does
    /// not read keeps the running one.
    async fn reload(&mut self) {
        let next = match McpConfig::from_path(&self.path) {
            Ok(next) => next,
            Err(e) => {
                return tracing::warn!(
                    "config reload refused: {e}; the upstreams of the config read before are served"
                );
            }
        };
        let change = Change::between(&self.running, &next);
        if change.is_empty() {
            tracing::info!("reloaded the config: no upstream changed");
            self.running = next;
            return;
        }
        for alias in change.removed.iter().chain(&change.restarted) {
            self.gateway.remove(alias).await;
        }
        let starting: Vec<ServerEntry> = (next.servers.iter())
            .filter(|e| change.added.contains(&e.alias) || change.restarted.contains(&e.alias))
            .cloned()
            .collect();
        if !starting.is_empty() {
            let start = McpConfig {
                origin: next.origin.clone(),
                servers: starting,
            };
            let aliases = start.servers.iter().map(|e| e.alias.clone()).collect();
            (self.on_start)(aliases, self.gateway.start_all(&start, &self.options));
        }
        tracing::info!(
            added = ?change.added,
            removed = ?change.removed,
            restarted = ?change.restarted,
            "reloaded the config"
        );
        self.running = next;
    }

    fn stamp(&self) -> Option<(SystemTime, u64)> {
        stamp(&self.path).filter(|_| self.watch)
    }
}

/// What a config reload changes, by alias.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Change {
    pub(crate) added: Vec<String>,
    pub(crate) removed: Vec<String>,
    /// In both, reached another way (command, arguments, environment, URL…).
    pub(crate) restarted: Vec<String>,
}

impl Change {
    pub(crate) fn between(running: &McpConfig, next: &McpConfig) -> Change {
        let by_alias = |c: &McpConfig| -> BTreeMap<String, ServerEntry> {
            c.servers
                .iter()
                .map(|e| (e.alias.clone(), e.clone()))
                .collect()
        };
        let (was, now) = (by_alias(running), by_alias(next));
        let mut change = Change::default();
        for (alias, entry) in &now {
            match was.get(alias) {
                None => change.added.push(alias.clone()),
                Some(before) if before != entry => change.restarted.push(alias.clone()),
                Some(_) => {}
            }
        }
        change.removed = was
            .keys()
            .filter(|a| !now.contains_key(*a))
            .cloned()
            .collect();
        change
    }

    fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.restarted.is_empty()
    }
}

/// Reloads the policy and the lock into the hub when a file changes, the
/// shared state's pins change, or on SIGHUP; the server config on SIGHUP
/// (or when it changes, with `--watch-config`).
pub(crate) struct Reload {
    pub(crate) policy: Option<PathBuf>,
    pub(crate) lock: LockSource,
    pub(crate) host: ServeAs,
    pub(crate) name: String,
    pub(crate) naming: Naming,
    pub(crate) servers: Servers,
}

impl Reload {
    pub(crate) async fn run(mut self, hub: Hub) {
        let mut seen = self.stamps();
        let mut config_seen = self.servers.stamp();
        let mut hangup = hangups();
        loop {
            let (signalled, hung_up) = tokio::select! {
                _ = tokio::time::sleep(WATCH) => (false, false),
                _ = next_hangup(&mut hangup) => (true, true),
                _ = self.lock.changed() => (true, false),
            };
            let config_now = self.servers.stamp();
            if hung_up || config_now != config_seen {
                config_seen = config_now;
                self.servers.reload().await;
            }
            let now = self.stamps();
            if now == seen && !signalled {
                continue;
            }
            seen = now;
            match self.load() {
                Ok(assembler) => match hub.reconfigure(assembler) {
                    Ok(revision) => tracing::info!(revision, "reloaded the policy and the lock"),
                    Err(e) => tracing::warn!(error = %e, "reload refused; serving as before"),
                },
                Err(e) => tracing::warn!(error = %e, "reload failed; serving as before"),
            }
        }
    }

    fn load(&self) -> Result<Assembler, mcp_preamble::Error> {
        let settings = settings(self.policy.as_deref())?;
        assembler(
            &settings,
            self.lock.current()?,
            (self.host, &self.name, &self.naming),
        )
    }

    /// Each file's modification time and length (`None` when unreadable).
    fn stamps(&self) -> Vec<Option<(SystemTime, u64)>> {
        [self.policy.as_deref(), self.lock.path()]
            .into_iter()
            .flatten()
            .map(stamp)
            .collect()
    }
}

/// A file's modification time and length (`None` when unreadable).
fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

#[cfg(unix)]
type Hangups = Option<tokio::signal::unix::Signal>;
#[cfg(not(unix))]
type Hangups = ();

#[cfg(unix)]
fn hangups() -> Hangups {
    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok()
}
#[cfg(not(unix))]
fn hangups() -> Hangups {}

#[cfg(unix)]
async fn next_hangup(h: &mut Hangups) {
    match h {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending().await,
    }
}
#[cfg(not(unix))]
async fn next_hangup(_: &mut Hangups) {
    std::future::pending().await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(servers: &[(&str, &str)]) -> McpConfig {
        McpConfig {
            origin: "mcp.json".into(),
            servers: (servers.iter())
                .map(|(alias, command)| ServerEntry::stdio(*alias, *command, ["x"]))
                .collect(),
        }
    }

    #[test]
    fn a_change_names_what_was_added_removed_and_restarted() {
        let was = config(&[("a", "node"), ("b", "node"), ("c", "node")]);
        let now = config(&[("a", "node"), ("c", "python3"), ("d", "node")]);
        let change = Change::between(&was, &now);
        assert_eq!(change.added, ["d"]);
        assert_eq!(change.removed, ["b"]);
        assert_eq!(change.restarted, ["c"]);
        assert!(Change::between(&was, &was).is_empty());
    }
}
