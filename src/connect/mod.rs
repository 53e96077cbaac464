//! Live servers through rmcp, the official Rust MCP SDK (feature `rmcp`).
//!
//! [`snapshot_of`] turns any connected rmcp client into a [`ServerSnapshot`];
//! [`connect`] starts one configured server (stdio or Streamable HTTP) with
//! a chosen handshake and a timeout, and reports failures with the tail of
//! the server's stderr.

use std::collections::VecDeque;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CacheScope, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
    RequestMetaObject,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService};
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use tokio::io::AsyncReadExt;

use crate::config::{ServerEntry, ServerTransport};
use crate::error::{Error, ErrorKind, Result};
use crate::model::{CacheHints, Era, Instructions, ServerInfo, ServerSnapshot};

/// Which handshake to use when connecting.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Handshake {
    /// `initialize` only (the 2025 era).
    Legacy,
    /// Try `server/discover` (2026-07-28), fall back to `initialize`.
    #[default]
    Auto,
    /// `server/discover` with this revision only; fails if the server cannot.
    Pinned(String),
}

impl FromStr for Handshake {
    type Err = Error;

    /// `legacy`, `auto`, or a revision date such as `2026-07-28`.
    fn from_str(s: &str) -> Result<Handshake> {
        match s {
            "legacy" => Ok(Handshake::Legacy),
            "auto" => Ok(Handshake::Auto),
            v if v.len() == 10 && v.chars().all(|c| c.is_ascii_digit() || c == '-') => {
                Ok(Handshake::Pinned(v.to_string()))
            }
            other => Err(Error::new(
                ErrorKind::InvalidConfig,
                format!("handshake {other:?} (use legacy, auto, or a revision such as 2026-07-28)"),
            )),
        }
    }
}

impl Handshake {
    fn lifecycle(&self) -> ClientLifecycleMode {
        match self {
            Handshake::Legacy => ClientLifecycleMode::Initialize,
            Handshake::Auto => ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::V_2025_11_25),
            },
            Handshake::Pinned(v) => ClientLifecycleMode::Discover {
                // ProtocolVersion has no public constructor from text; serde has one.
                preferred_versions: serde_json::from_value(serde_json::json!([v]))
                    .unwrap_or_else(|_| vec![ProtocolVersion::V_2026_07_28]),
            },
        }
    }
}

/// The identity mcp-preamble sends in its handshakes.
pub fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("mcp-preamble", env!("CARGO_PKG_VERSION")),
    )
}

fn connect_error(detail: impl Into<String>) -> Error {
    Error::new(ErrorKind::Connect, detail)
}

/// Reads what a connected rmcp client knows about its server: the
/// handshake (era, negotiated version, `serverInfo`, instructions), every
/// `tools/list` page, and, in the 2026-07-28 era, the cache hints of the
/// discover result (asked for again: rmcp keeps the rest of it only).
///
/// An error of `tools/list` is kept in [`ServerSnapshot::tools_error`].
pub async fn snapshot_of<S>(client: &RunningService<RoleClient, S>) -> Result<ServerSnapshot>
where
    S: rmcp::Service<RoleClient>,
{
    let info = client
        .peer_info()
        .ok_or_else(|| connect_error("the client has no handshake result"))?;
    let version = info.protocol_version.to_string();
    let era = if version.as_str() >= "2026-07-28" {
        Era::Modern
    } else {
        Era::Legacy
    };
    let server_info = info
        .server_info
        .as_ref()
        .map(|i| ServerInfo {
            name: i.name.clone(),
            version: i.version.clone(),
            title: i.title.clone(),
        })
        .unwrap_or_default();
    let mut snapshot = ServerSnapshot {
        alias: None,
        server_info,
        instructions: Instructions::from_raw(info.instructions.as_deref()),
        tools: Vec::new(),
        era,
        protocol_version: version.clone(),
        cache: None,
        tools_cache: None,
        tools_error: None,
    };
    if era == Era::Modern {
        let meta = RequestMetaObject::with_client_context(
            info.protocol_version.clone(),
            client_config().client_info,
            ClientCapabilities::default(),
        );
        if let Ok(found) = client.discover(meta).await {
            snapshot.cache = Some(CacheHints {
                ttl_ms: Some(found.ttl_ms),
                cache_scope: Some(scope_name(&found.cache_scope).to_string()),
            });
        }
    }
    match client.list_all_tools_with_cache_hint().await {
        Ok(list) => {
            snapshot.tools = tools_from_rmcp(&list.items)?;
            if list.ttl_ms.is_some() || list.cache_scope.is_some() {
                snapshot.tools_cache = Some(CacheHints {
                    ttl_ms: list.ttl_ms,
                    cache_scope: list.cache_scope.as_ref().map(|s| scope_name(s).to_string()),
                });
            }
        }
        Err(rmcp::ServiceError::McpError(e)) => {
            snapshot.tools_error = Some(crate::error::RpcError {
                method: "tools/list".into(),
                code: i64::from(e.code.0),
                message: e.message.to_string(),
            });
        }
        Err(e) => return Err(connect_error(format!("tools/list failed: {e}"))),
    }
    Ok(snapshot)
}

/// rmcp's tools as this crate's, read the way a `tools/list` page is.
fn tools_from_rmcp(items: &[rmcp::model::Tool]) -> Result<Vec<crate::model::Tool>> {
    let tools = serde_json::to_value(items)
        .map_err(|e| connect_error(format!("tools/list result: {e}")))?;
    let mut scratch = ServerSnapshot::new("");
    scratch.push_tools_page(&serde_json::json!({ "tools": tools }))?;
    Ok(scratch.tools)
}

fn scope_name(scope: &CacheScope) -> &'static str {
    match scope {
        CacheScope::Public => "public",
        CacheScope::Private => "private",
        _ => "unknown",
    }
}

/// The last bytes a server wrote to stderr.
#[derive(Debug, Clone, Default)]
pub struct StderrTail(Arc<Mutex<VecDeque<u8>>>);

impl StderrTail {
    const KEEP: usize = 2048;

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
pub struct Connection<H: rmcp::ClientHandler = ClientConfig> {
    /// What the server sent, with the entry's alias set.
    pub snapshot: ServerSnapshot,
    /// Time from start to a complete snapshot.
    pub elapsed: Duration,
    /// The server's stderr so far (stdio servers).
    pub stderr: StderrTail,
    /// The rmcp client; keep it to stay connected, or call [`Connection::close`].
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
    /// Closes the connection (and stops a stdio server).
    pub async fn close(self) {
        let _ = self.client.cancel().await;
    }
}

/// A failed [`connect`]: the error and the server's stderr tail.
#[derive(Debug)]
pub struct ConnectFailure {
    /// What went wrong ([`ErrorKind::Connect`], or [`ErrorKind::Timeout`]).
    pub error: Error,
    /// The last lines the server wrote to stderr, if any.
    pub stderr: String,
    /// Time until the failure.
    pub elapsed: Duration,
}

/// Connects to one configured server, reads its snapshot, and keeps the
/// client running. The whole handshake and `tools/list` must finish within
/// `timeout`.
pub async fn connect(
    entry: &ServerEntry,
    handshake: &Handshake,
    timeout: Duration,
) -> std::result::Result<Connection, ConnectFailure> {
    connect_with(entry, handshake, timeout, client_config()).await
}

/// [`connect`] with your own rmcp client handler (to receive notifications).
pub async fn connect_with<H: rmcp::ClientHandler>(
    entry: &ServerEntry,
    handshake: &Handshake,
    timeout: Duration,
    handler: H,
) -> std::result::Result<Connection<H>, ConnectFailure> {
    let started = Instant::now();
    let stderr = StderrTail::default();
    let fail = |error: Error, stderr: &StderrTail| ConnectFailure {
        error,
        stderr: stderr.text(),
        elapsed: started.elapsed(),
    };
    let work = async {
        let client = match &entry.transport {
            ServerTransport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
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
                handler
                    .serve_with_lifecycle(transport, handshake.lifecycle())
                    .await
                    .map_err(|e| connect_error(format!("handshake failed: {e}")))?
            }
            ServerTransport::Http { url, headers } => {
                let mut config =
                    rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
                        url.as_str(),
                    );
                for (name, value) in headers {
                    let (Ok(n), Ok(v)) = (
                        http::HeaderName::from_bytes(name.as_bytes()),
                        http::HeaderValue::from_str(value),
                    ) else {
                        return Err(connect_error(format!("header {name:?} is not valid")));
                    };
                    config.custom_headers.insert(n, v);
                }
                let transport = StreamableHttpClientTransport::from_config(config);
                handler
                    .serve_with_lifecycle(transport, handshake.lifecycle())
                    .await
                    .map_err(|e| connect_error(format!("handshake failed: {e}")))?
            }
        };
        let mut snapshot = snapshot_of(&client).await?;
        snapshot.alias = Some(entry.alias.clone());
        Ok::<_, Error>((snapshot, client))
    };
    match tokio::time::timeout(timeout, work).await {
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

/// The rmcp client handler the hub connects with: it forwards
/// `notifications/tools/list_changed` (2025 era) to the server's watcher.
#[derive(Debug, Clone)]
pub struct HubHandler {
    config: ClientConfig,
    changed: tokio::sync::mpsc::UnboundedSender<()>,
}

impl rmcp::ClientHandler for HubHandler {
    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }

    async fn on_tool_list_changed(&self, _context: rmcp::service::NotificationContext<RoleClient>) {
        let _ = self.changed.send(());
    }
}

/// A server the [`Hub`](crate::hub::Hub) keeps up to date; see
/// [`Hub::connect`](crate::hub::Hub::connect).
pub struct LiveServer {
    alias: String,
    snapshot: ServerSnapshot,
    cancel: Option<rmcp::service::RunningServiceCancellationToken>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for LiveServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveServer")
            .field("alias", &self.alias)
            .finish_non_exhaustive()
    }
}

impl LiveServer {
    /// The alias the server has in the hub.
    pub fn alias(&self) -> &str {
        &self.alias
    }

    /// The snapshot read when it connected.
    pub fn snapshot(&self) -> &ServerSnapshot {
        &self.snapshot
    }

    /// Closes the connection; the server leaves the section.
    pub async fn close(mut self) {
        if let Some(c) = self.cancel.take() {
            c.cancel();
        }
        let _ = (&mut self.task).await;
    }
}

impl crate::hub::Hub {
    /// Connects to a configured server and keeps its block current:
    ///
    /// - tools are read again on `notifications/tools/list_changed`: through
    ///   the client handler in the 2025 era, through a `subscriptions/listen`
    ///   subscription with a tools-list-changed filter in the 2026-07-28 era
    ///   (opened again, with a growing pause, if it ends);
    /// - when the discover result has a positive `ttlMs`, the handshake is
    ///   asked again after it expires (instructions have no change
    ///   notification: that is the only way to see new ones);
    /// - when the connection ends, the server leaves the section.
    pub async fn connect(
        &self,
        entry: &ServerEntry,
        handshake: &Handshake,
        timeout: Duration,
    ) -> std::result::Result<LiveServer, ConnectFailure> {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let handler = HubHandler {
            config: client_config(),
            changed: tx,
        };
        let connection = connect_with(entry, handshake, timeout, handler).await?;
        let alias = entry.alias.clone();
        let snapshot = connection.snapshot.clone();
        let owner = self.new_owner();
        if let Err(error) = self.upsert_as(Some(owner), alias.clone(), snapshot.clone()) {
            return Err(ConnectFailure {
                error,
                stderr: connection.stderr.text(),
                elapsed: connection.elapsed,
            });
        }
        let client = connection.client;
        let cancel = client.cancellation_token();
        let peer = client.peer().clone();
        let hub = self.clone();
        let watch_alias = alias.clone();
        let modern = snapshot.era == Era::Modern;
        let ttl = snapshot
            .cache
            .as_ref()
            .and_then(|c| c.ttl_ms)
            .filter(|t| *t > 0);
        let task = tokio::spawn(async move {
            let alias = watch_alias;
            let filter = rmcp::model::SubscriptionFilter::builder()
                .tools_list_changed()
                .build();
            let mut subscription = None;
            // When a subscription ends, listen again after a pause that doubles up to a minute.
            let mut relisten: Option<tokio::time::Instant> = None;
            let mut pause = Duration::from_secs(1);
            if modern {
                subscription = peer.listen(filter.clone()).await.ok();
                // Catch a change made between the first tools/list and the subscription.
                refresh_tools(&hub, owner, &alias, &peer).await;
            }
            let mut next_handshake =
                ttl.map(|t| tokio::time::Instant::now() + Duration::from_millis(t));
            let mut done = Box::pin(client.waiting());
            loop {
                tokio::select! {
                    _ = &mut done => break,
                    Some(()) = rx.recv() => refresh_tools(&hub, owner, &alias, &peer).await,
                    n = next_notification(&mut subscription) => match n {
                        Some(rmcp::model::ServerNotification::ToolListChangedNotification(_)) => {
                            refresh_tools(&hub, owner, &alias, &peer).await
                        }
                        Some(_) => {}
                        None => {
                            subscription = None;
                            relisten = Some(tokio::time::Instant::now() + pause);
                        }
                    },
                    _ = sleep_until(relisten) => {
                        subscription = peer.listen(filter.clone()).await.ok();
                        if subscription.is_some() {
                            relisten = None;
                            pause = Duration::from_secs(1);
                            refresh_tools(&hub, owner, &alias, &peer).await;
                        } else {
                            pause = (pause * 2).min(Duration::from_secs(60));
                            relisten = Some(tokio::time::Instant::now() + pause);
                        }
                    }
                    _ = sleep_until(next_handshake) => {
                        // On a failed re-handshake, try again after the same ttl.
                        let ttl = handshake_again(&hub, owner, &alias, &peer).await.or(ttl);
                        next_handshake = ttl
                            .map(|t| tokio::time::Instant::now() + Duration::from_millis(t));
                    }
                }
            }
            let _ = hub.remove_as(Some(owner), &alias);
        });
        Ok(LiveServer {
            alias,
            snapshot,
            cancel: Some(cancel),
            task,
        })
    }
}

async fn next_notification(
    subscription: &mut Option<rmcp::service::Subscription>,
) -> Option<rmcp::model::ServerNotification> {
    match subscription {
        Some(s) => s.next().await.ok().flatten(),
        None => std::future::pending().await,
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

async fn refresh_tools(
    hub: &crate::hub::Hub,
    owner: u64,
    alias: &str,
    peer: &rmcp::service::Peer<RoleClient>,
) {
    if let Ok(items) = peer.list_all_tools().await
        && let Ok(tools) = tools_from_rmcp(&items)
    {
        let _ = hub.update_tools_as(Some(owner), alias, tools);
    }
}

/// Asks `server/discover` again and takes its instructions; returns the next ttlMs.
async fn handshake_again(
    hub: &crate::hub::Hub,
    owner: u64,
    alias: &str,
    peer: &rmcp::service::Peer<RoleClient>,
) -> Option<u64> {
    let meta = RequestMetaObject::with_client_context(
        ProtocolVersion::V_2026_07_28,
        client_config().client_info,
        ClientCapabilities::default(),
    );
    let found = peer.discover(meta).await.ok()?;
    let cache = Some(CacheHints {
        ttl_ms: Some(found.ttl_ms),
        cache_scope: Some(scope_name(&found.cache_scope).to_string()),
    });
    let instructions = Instructions::from_raw(found.instructions.as_deref());
    hub.update_handshake_as(owner, alias, instructions, cache)
        .ok()?;
    Some(found.ttl_ms).filter(|t| *t > 0)
}
