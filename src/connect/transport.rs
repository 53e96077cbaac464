//! Starting a configured server (stdio or Streamable HTTP) and reading it.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::ClientConfig;
use rmcp::service::{ClientServiceExt, RoleClient, RunningService};
#[cfg(feature = "http")]
use rmcp::transport::StreamableHttpClientTransport;
#[cfg(feature = "http")]
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::io::AsyncReadExt;

use super::child::{ChildTransport, Process};
use super::connect_error;
use super::handshake::Handshake;
use super::lifecycle::Cause;
use super::options::ConnectOptions;
use super::snapshot::snapshot_of;
use super::stderr::StderrLines;
use crate::config::{ServerEntry, ServerTransport};
use crate::error::{Error, ErrorKind, Result};
use crate::model::ServerSnapshot;

/// The last bytes a stdio server wrote to stderr ([`StderrTail::KEEP`] at
/// most), kept up to date while the server runs. Its `Debug` shows the
/// length, not the bytes (see [`StderrTail::text`]).
#[derive(Clone, Default)]
pub struct StderrTail(Arc<Mutex<VecDeque<u8>>>);

impl std::fmt::Debug for StderrTail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let len = crate::support::lock(&self.0).len();
        f.debug_struct("StderrTail").field("bytes", &len).finish()
    }
}

impl StderrTail {
    /// How many bytes are kept: the newest.
    pub const KEEP: usize = 2048;

    fn push(&self, bytes: &[u8]) {
        let mut buf = crate::support::lock(&self.0);
        buf.extend(bytes);
        let over = buf.len().saturating_sub(Self::KEEP);
        buf.drain(..over);
    }

    /// The tail as text (lossy UTF-8, trimmed).
    pub fn text(&self) -> String {
        let buf = crate::support::lock(&self.0);
        let bytes: Vec<u8> = buf.iter().copied().collect();
        String::from_utf8_lossy(&bytes).trim().to_string()
    }
}

/// A server connected by [`connect`]: its snapshot, and the live client.
///
/// Dropping it closes the connection (and stops a stdio server) in the
/// background, as dropping rmcp's `RunningService` does; [`Connection::close`]
/// waits for that.
#[non_exhaustive]
pub struct Connection<H: rmcp::ClientHandler = ClientConfig> {
    /// What the server sent, with the entry's alias set.
    pub snapshot: ServerSnapshot,
    /// Time from start to a complete snapshot.
    pub elapsed: Duration,
    /// The server's stderr so far and from now on (stdio servers).
    pub stderr: StderrTail,
    /// The rmcp client: call the server's tools with it (it dereferences to
    /// its [`Peer`](rmcp::Peer)).
    pub client: RunningService<RoleClient, H>,
    /// The id of the server's process (stdio servers; `None` over HTTP).
    pub process_id: Option<u32>,
    pub(super) process: Option<Process>,
}

impl<H: rmcp::ClientHandler> std::fmt::Debug for Connection<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("snapshot", &self.snapshot)
            .field("elapsed", &self.elapsed)
            .field("process_id", &self.process_id)
            .finish_non_exhaustive()
    }
}

impl<H: rmcp::ClientHandler> Connection<H> {
    /// Closes the connection (and stops a stdio server: its stdin is
    /// closed, and it is killed if it has not exited 2 s later), and waits
    /// until it is closed. A hub following the client
    /// ([`Hub::attach`](crate::hub::Hub::attach)) removes its block at once,
    /// as it does when the connection is dropped.
    pub async fn close(self) {
        let _ = self.client.cancel().await;
    }

    /// How the server's process ended, once it has (stdio servers).
    pub fn exit_status(&self) -> Option<std::process::ExitStatus> {
        self.process.as_ref().and_then(Process::exit_status)
    }
}

/// A failed connection: which server, the error, and the server's stderr tail.
///
/// Its `Display` is `server "<alias>": <error>`, plus the last line the
/// server wrote to stderr when there is one.
#[derive(Debug)]
#[non_exhaustive]
pub struct ConnectFailure {
    /// The alias of the config entry.
    pub alias: String,
    /// What went wrong ([`ErrorKind::Connect`], or [`ErrorKind::Timeout`]).
    pub error: Error,
    /// The last lines the server wrote to stderr, if any.
    pub stderr: String,
    /// Time until the failure.
    pub elapsed: Duration,
}

impl std::fmt::Display for ConnectFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "server {:?}: {}", self.alias, self.error)?;
        if let Some(line) = self.stderr.lines().rev().find(|l| !l.trim().is_empty()) {
            write!(f, " (stderr: {})", line.trim())?;
        }
        Ok(())
    }
}

impl std::error::Error for ConnectFailure {
    // The error's own text is in this one's; its cause is the next link.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.error)
    }
}

/// Connects to one configured server, reads its snapshot, and keeps the
/// client running. The handshake and every `tools/list` page must arrive
/// within the options' timeout. The client identifies itself with
/// [`ConnectOptions::client_config`].
pub async fn connect(
    entry: &ServerEntry,
    options: &ConnectOptions,
) -> std::result::Result<Connection, ConnectFailure> {
    connect_with(entry, options, options.client_config().clone()).await
}

/// [`connect`] with your own rmcp client handler: it receives the server's
/// requests (sampling, roots, elicitation) and notifications, and its
/// [`get_info`](rmcp::ClientHandler::get_info) is the identity sent.
pub async fn connect_with<H: rmcp::ClientHandler>(
    entry: &ServerEntry,
    options: &ConnectOptions,
    handler: H,
) -> std::result::Result<Connection<H>, ConnectFailure> {
    let tail = StderrTail::default();
    connect_keeping(entry, options, handler, tail, Cause::Start).await
}

/// [`connect_with`], adding the server's stderr to `stderr` (a restarted
/// server keeps its tail).
pub(super) async fn connect_keeping<H: rmcp::ClientHandler>(
    entry: &ServerEntry,
    options: &ConnectOptions,
    handler: H,
    stderr: StderrTail,
    cause: Cause,
) -> std::result::Result<Connection<H>, ConnectFailure> {
    let started = Instant::now();
    let timeout = options.timeout;
    let fail = |error: Error, stderr: &StderrTail| ConnectFailure {
        alias: entry.alias.clone(),
        error,
        stderr: stderr.text(),
        elapsed: started.elapsed(),
    };
    let work = async {
        let (client, process) = start(entry, options, handler, (&stderr, cause)).await?;
        let mut snapshot = snapshot_of(&client).await?;
        snapshot.alias = Some(entry.alias.clone());
        Ok::<_, Error>((snapshot, client, process))
    };
    let span = tracing::debug_span!("connect", alias = %entry.alias, state = tracing::field::Empty);
    let result =
        tracing::Instrument::instrument(tokio::time::timeout(timeout, work), span.clone()).await;
    // `state`: connected, or the kind of failure (error texts may quote secrets).
    let state = match &result {
        Ok(Ok(_)) => "connected".to_owned(),
        Ok(Err(e)) => format!("{:?}", e.kind()),
        Err(_) => format!("{:?}", ErrorKind::Timeout),
    };
    span.record("state", state.as_str());
    tracing::debug!(parent: &span, alias = %entry.alias, state, elapsed_ms = started.elapsed().as_millis() as u64, "connect finished");
    match result {
        Ok(Ok((snapshot, client, process))) => {
            super::lifecycle::connected(&entry.alias, &snapshot, started.elapsed());
            Ok(Connection {
                snapshot,
                elapsed: started.elapsed(),
                stderr,
                client,
                process_id: process.as_ref().and_then(|p| p.id),
                process,
            })
        }
        Ok(Err(e)) => {
            // Give the stderr reader a moment to catch the server's last words.
            tokio::time::sleep(Duration::from_millis(50)).await;
            Err(fail(e, &stderr))
        }
        Err(_) => Err(fail(
            Error::new(
                ErrorKind::Timeout,
                format!("no complete answer within {} ms", timeout.as_millis()),
            ),
            &stderr,
        )),
    }
}

/// Starts the server of `entry` (or opens its endpoint) and runs the handshake.
async fn start<H: rmcp::ClientHandler>(
    entry: &ServerEntry,
    options: &ConnectOptions,
    handler: H,
    (stderr, cause): (&StderrTail, Cause),
) -> Result<(RunningService<RoleClient, H>, Option<Process>)> {
    let handshake = &options.handshake;
    let failed =
        |e: rmcp::service::ClientInitializeError| connect_error(format!("handshake failed: {e}"));
    match &entry.transport {
        ServerTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let stderr = (stderr, entry.alias.as_str(), cause);
            let transport = spawn_stdio(command, args, env, cwd.as_deref(), stderr)?
                .tapped(options.progress_tap(&entry.alias));
            let process = Some(transport.process());
            let own = handler.get_info().protocol_version;
            let client = if let Some(version) = handshake.initialize_only(&own) {
                super::probe::legacy(handler, transport, version).await?
            } else if *handshake == Handshake::Auto {
                super::probe::auto(handler, transport, options.probe()).await?
            } else {
                handler
                    .serve_with_lifecycle(transport, handshake.lifecycle())
                    .await
                    .map_err(failed)?
            };
            Ok((client, process))
        }
        #[cfg(feature = "http")]
        ServerTransport::Http { url, headers } => {
            let transport = super::tap::Tapped {
                inner: StreamableHttpClientTransport::with_client(
                    super::subscriptions::HttpClient::new(super::pool::client(), &entry.alias),
                    http_config(url, headers)?,
                ),
                tap: options.progress_tap(&entry.alias),
            };
            let own = handler.get_info().protocol_version;
            let client = if let Some(version) = handshake.initialize_only(&own) {
                super::probe::legacy(handler, transport, version).await?
            } else if *handshake == Handshake::Auto {
                // No probe time over HTTP: a server that takes the request is up.
                super::probe::discover_first(handler, transport).await?
            } else {
                handler
                    .serve_with_lifecycle(transport, handshake.lifecycle())
                    .await
                    .map_err(failed)?
            };
            Ok((client, None))
        }
        #[cfg(not(feature = "http"))]
        ServerTransport::Http { .. } => Err(connect_error(
            "streamable http needs mcp-preamble's \"http\" feature",
        )),
    }
}

/// The variables a spawned server inherits from the host, when set, as
/// the official MCP SDKs pass them (TypeScript's
/// `getDefaultEnvironment`, Python's `get_default_environment`): enough to
/// find programs and a home directory, and no secrets of the host's. The
/// entry's own `env` comes on top.
#[cfg(not(windows))]
pub const INHERITED_ENV: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// The variables a spawned server inherits from the host, when set, as
/// the official MCP SDKs pass them on Windows; the entry's own `env` comes on top.
#[cfg(windows)]
pub const INHERITED_ENV: &[&str] = &[
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PATHEXT",
    "PROCESSOR_ARCHITECTURE",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "USERNAME",
    "USERPROFILE",
    "PROGRAMFILES",
];

/// The environment a stdio server starts with: [`INHERITED_ENV`] from
/// `host` (the host's variables), then the entry's `env`.
pub(super) fn server_env(
    host: impl Fn(&str) -> Option<std::ffi::OsString>,
    env: &BTreeMap<String, String>,
) -> BTreeMap<std::ffi::OsString, std::ffi::OsString> {
    let mut out: BTreeMap<std::ffi::OsString, std::ffi::OsString> = INHERITED_ENV
        .iter()
        .filter_map(|name| Some(((*name).into(), host(name)?)))
        .collect();
    out.extend(env.iter().map(|(k, v)| (k.into(), v.into())));
    out
}

/// Spawns a stdio server; its stderr is kept in `stderr` as it arrives,
/// and logged line by line under `alias`.
fn spawn_stdio(
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    cwd: Option<&Path>,
    (stderr, alias, cause): (&StderrTail, &str, Cause),
) -> Result<ChildTransport> {
    if let Some(dir) = cwd
        && !dir.is_dir()
    {
        return Err(connect_error(format!(
            "cannot start {command:?}: the working directory {:?} does not exist",
            dir.display().to_string()
        )));
    }
    let mut cmd = tokio::process::Command::new(command);
    super::group::own_group(&mut cmd)
        .args(args)
        .env_clear()
        .envs(server_env(|name| std::env::var_os(name), env))
        .kill_on_drop(true)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| connect_error(format!("cannot start {command:?}: {e}")))?;
    let child_stderr = child.stderr.take();
    let transport = ChildTransport::new(child)
        .map_err(|e| connect_error(format!("cannot start {command:?}: {e}")))?;
    let pid = transport.process().id;
    super::lifecycle::started(alias, pid, command, args, cause);
    if let Some(mut pipe) = child_stderr {
        let tail = stderr.clone();
        let mut log = StderrLines::new(alias);
        tokio::spawn(async move {
            let mut buf = [0u8; 1024];
            while let Ok(n) = pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                tail.push(&buf[..n]);
                log.feed(&buf[..n], tokio::time::Instant::now());
            }
            log.finish(tokio::time::Instant::now());
        });
    }
    Ok(transport)
}

/// The Streamable HTTP settings for `url`, sending `headers`.
#[cfg(feature = "http")]
fn http_config(
    url: &str,
    headers: &BTreeMap<String, String>,
) -> Result<StreamableHttpClientTransportConfig> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    for (name, value) in headers {
        let (Ok(n), Ok(v)) = (
            http::HeaderName::from_bytes(name.as_bytes()),
            http::HeaderValue::from_str(value),
        ) else {
            return Err(connect_error(format!("header {name:?} is not valid")));
        };
        config.custom_headers.insert(n, v);
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_tail_debug_shows_the_length_not_the_bytes() {
        let tail = StderrTail::default();
        tail.push(b"secret=hunter2\n");
        assert_eq!(format!("{tail:?}"), "StderrTail { bytes: 15 }");
        assert_eq!(tail.text(), "secret=hunter2");
    }

    #[test]
    fn servers_inherit_only_the_short_list() {
        let host = |name: &str| match name {
            "PATH" => Some("/bin".into()),
            "HOME" => Some("/home/u".into()),
            _ => Some("leak".into()),
        };
        let env = server_env(host, &BTreeMap::from([("PATH".into(), "/mine".into())]));
        assert_eq!(env.len(), INHERITED_ENV.len());
        // The entry's own value wins.
        assert_eq!(env[std::ffi::OsStr::new("PATH")], "/mine");
        assert!(!env.contains_key(std::ffi::OsStr::new("GITHUB_TOKEN")));
        let none = server_env(|_| None, &BTreeMap::new());
        assert!(none.is_empty());
    }
}
