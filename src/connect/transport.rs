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
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use tokio::io::AsyncReadExt;

use super::connect_error;
use super::handshake::Handshake;
use super::options::ConnectOptions;
use super::snapshot::snapshot_of;
use crate::config::{ServerEntry, ServerTransport};
use crate::error::{Error, ErrorKind, Result};
use crate::model::ServerSnapshot;

/// The last bytes a stdio server wrote to stderr ([`StderrTail::KEEP`] at
/// most), kept up to date while the server runs.
#[derive(Debug, Clone, Default)]
pub struct StderrTail(Arc<Mutex<VecDeque<u8>>>);

impl StderrTail {
    /// How many bytes are kept: the newest.
    pub const KEEP: usize = 2048;

    fn push(&self, bytes: &[u8]) {
        let mut buf = self.0.lock().unwrap_or_else(|p| p.into_inner());
        buf.extend(bytes);
        let over = buf.len().saturating_sub(Self::KEEP);
        buf.drain(..over);
    }

    /// The tail as text (lossy UTF-8, trimmed).
    pub fn text(&self) -> String {
        let buf = self.0.lock().unwrap_or_else(|p| p.into_inner());
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
}

impl<H: rmcp::ClientHandler> std::fmt::Debug for Connection<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("snapshot", &self.snapshot)
            .field("elapsed", &self.elapsed)
            .finish_non_exhaustive()
    }
}

impl<H: rmcp::ClientHandler> Connection<H> {
    /// Closes the connection (and stops a stdio server), and waits until it is closed.
    pub async fn close(self) {
        let _ = self.client.cancel().await;
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
    let started = Instant::now();
    let stderr = StderrTail::default();
    let timeout = options.timeout;
    let fail = |error: Error, stderr: &StderrTail| ConnectFailure {
        alias: entry.alias.clone(),
        error,
        stderr: stderr.text(),
        elapsed: started.elapsed(),
    };
    let work = async {
        let client = start(entry, options, handler, &stderr).await?;
        let mut snapshot = snapshot_of(&client).await?;
        snapshot.alias = Some(entry.alias.clone());
        Ok::<_, Error>((snapshot, client))
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
        Ok(Ok((snapshot, client))) => Ok(Connection {
            snapshot,
            elapsed: started.elapsed(),
            stderr,
            client,
        }),
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
    stderr: &StderrTail,
) -> Result<RunningService<RoleClient, H>> {
    let handshake = &options.handshake;
    let served = match &entry.transport {
        ServerTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let transport = spawn_stdio(command, args, env, cwd.as_deref(), stderr)?;
            if *handshake == Handshake::Auto {
                return super::probe::auto(handler, transport, options.probe()).await;
            }
            handler
                .serve_with_lifecycle(transport, handshake.lifecycle())
                .await
        }
        #[cfg(feature = "http")]
        ServerTransport::Http { url, headers } => {
            // Over HTTP, auto is rmcp's: a server that takes the request is up.
            let transport = StreamableHttpClientTransport::from_config(http_config(url, headers)?);
            handler
                .serve_with_lifecycle(transport, handshake.lifecycle())
                .await
        }
        #[cfg(not(feature = "http"))]
        ServerTransport::Http { .. } => {
            return Err(connect_error(
                "streamable http needs mcp-preamble's \"http\" feature",
            ));
        }
    };
    served.map_err(|e| connect_error(format!("handshake failed: {e}")))
}

/// Spawns a stdio server; its stderr is kept in `stderr` as it arrives.
fn spawn_stdio(
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    cwd: Option<&Path>,
    stderr: &StderrTail,
) -> Result<TokioChildProcess> {
    let cmd = tokio::process::Command::new(command).configure(|c| {
        c.args(args).envs(env).kill_on_drop(true);
        if let Some(dir) = cwd {
            c.current_dir(dir);
        }
    });
    let (transport, child_stderr) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| connect_error(format!("cannot start {command:?}: {e}")))?;
    if let Some(mut pipe) = child_stderr {
        let tail = stderr.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 1024];
            while let Ok(n) = pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                tail.push(&buf[..n]);
            }
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
