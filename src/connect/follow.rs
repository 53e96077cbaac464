//! [`Hub::attach`] and [`Hub::connect`]: a connected server whose block
//! follows its changes.

use crate::support::lock;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::ClientConfig;
use rmcp::service::{
    Peer, QuitReason, RoleClient, RunningService, RunningServiceCancellationToken,
};
use tokio::sync::Notify;
use tokio::time::Instant;

use super::all::connect_all_with;
use super::follower::{Closed, Ending, Follower, attachment_closed};
use super::handler::HubHandler;
use super::lifecycle;
use super::lifecycle::Cause;
use super::options::{ConnectOptions, Restart};
use super::snapshot::snapshot_of;
use super::transport::{ConnectFailure, Connection, StderrTail, connect_keeping, connect_with};
use crate::config::{McpConfig, ServerEntry, ServerTransport};
use crate::error::Result;
use crate::hub::{Hub, StateReason, Why};
use crate::model::{Era, ServerSnapshot};

/// The connection a [`LiveServer`] is on now (a supervised server gets a
/// new one when it is restarted).
struct Link {
    peer: Peer<RoleClient>,
    owner: u64,
    process_id: Option<u32>,
    /// A stdio server's pipes, as a call written whole takes them.
    pipe: Option<super::pipe::Pipe>,
    cancel: Option<RunningServiceCancellationToken>,
    /// The host closed or dropped the [`LiveServer`]: no more restarts.
    closed: bool,
}

/// A server [`Hub::connect`] started and keeps current. It owns the
/// connection: call the server's tools through [`LiveServer::peer`].
///
/// Dropping it closes the connection (stopping a stdio server) and removes
/// the server's block at once; [`LiveServer::close`] also waits until the
/// connection is closed. A connection that ends without the host (the
/// server exits) keeps the block for the hub's grace period, and is
/// restarted within it when the options ask ([`ConnectOptions::restart`]).
#[must_use = "dropping a LiveServer closes its connection and removes its block"]
pub struct LiveServer {
    alias: String,
    snapshot: ServerSnapshot,
    /// How it was reached, and as whom (the gateway's direct calls and pipes).
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    reached: (ServerTransport, ClientConfig),
    link: Arc<Mutex<Link>>,
    stderr: StderrTail,
    hub: Hub,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl std::fmt::Debug for LiveServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveServer")
            .field("alias", &self.alias)
            .field("process_id", &self.process_id())
            .finish_non_exhaustive()
    }
}

impl LiveServer {
    /// The alias the server has in the hub.
    pub fn alias(&self) -> &str {
        &self.alias
    }

    /// Its transport and the client identity it was connected with.
    #[cfg(feature = "serve")]
    pub(crate) fn reached(&self) -> (&ServerTransport, &ClientConfig) {
        (&self.reached.0, &self.reached.1)
    }

    /// The snapshot read when it connected (the hub holds the current one).
    pub fn snapshot(&self) -> &ServerSnapshot {
        &self.snapshot
    }

    /// The rmcp peer of the connection the hub follows now: call tools with
    /// it (`live.peer().call_tool(…)`). After a restart it is the new
    /// connection's, so take it again rather than keeping an old one.
    pub fn peer(&self) -> Peer<RoleClient> {
        lock(&self.link).peer.clone()
    }

    /// The id of the server's process now (stdio servers; `None` over HTTP).
    pub fn process_id(&self) -> Option<u32> {
        lock(&self.link).process_id
    }

    /// The pipes of the connection now, when the server is a stdio one:
    /// a call written whole takes its answer from them.
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub(crate) fn pipe(&self) -> Option<super::pipe::Pipe> {
        lock(&self.link).pipe.clone()
    }

    /// What a stdio server wrote to stderr lately (bounded, kept current,
    /// across restarts).
    pub fn stderr(&self) -> &StderrTail {
        &self.stderr
    }

    /// Closes the connection, waits until it is closed, and removes the
    /// server's block (one revision).
    pub async fn close(mut self) {
        self.let_go();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }

    /// Stops restarts, closes the connection and removes the block at once.
    fn let_go(&mut self) {
        let mut link = lock(&self.link);
        if link.closed {
            return;
        }
        link.closed = true;
        if let Some(c) = link.cancel.take() {
            c.cancel();
        }
        let why = Why::new(StateReason::Closed);
        let _ = self.hub.remove_as(Some(link.owner), &self.alias, why);
    }
}

impl Drop for LiveServer {
    fn drop(&mut self) {
        self.let_go();
    }
}

/// A client of yours that a [`Hub`] follows; see [`Hub::attach`].
///
/// Dropping it changes nothing: the hub follows the client until its
/// connection closes. [`Attachment::detach`] stops following sooner.
pub struct Attachment {
    alias: String,
    snapshot: ServerSnapshot,
    stop: Arc<Notify>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for Attachment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Attachment")
            .field("alias", &self.alias)
            .finish_non_exhaustive()
    }
}

impl Attachment {
    /// The alias the server has in the hub.
    pub fn alias(&self) -> &str {
        &self.alias
    }

    /// The snapshot read when it was attached.
    pub fn snapshot(&self) -> &ServerSnapshot {
        &self.snapshot
    }

    /// Stops following and removes the server's block at once (one
    /// revision); the client stays connected.
    pub async fn detach(self) {
        self.stop.notify_one();
        let _ = self.task.await;
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "rmcp")))]
impl Hub {
    /// Follows a client you own: reads its server's snapshot into the hub
    /// under `alias`, then keeps the block current while you keep using
    /// the client (calling tools, answering sampling or elicitation with
    /// your own handler):
    ///
    /// - tools are read again on `notifications/tools/list_changed`:
    ///   through the [`HubHandler`] in the 2025 era, through a
    ///   `subscriptions/listen` subscription with a tools-list-changed filter
    ///   in the 2026-07-28 era (opened again if it ends, after a pause from
    ///   1 s that doubles, up to 60 s, while each ends within 10 s);
    /// - when the discover result has a positive `ttlMs`, `server/discover`
    ///   is asked again after it expires (instructions have no change
    ///   notification: that is the only way to see new ones);
    /// - when you close or drop the client ([`Connection::close`], rmcp's
    ///   `cancel`), the server leaves the section at once, with one revision;
    /// - when the connection ends without you (the server exits), the block
    ///   stays for the hub's grace period ([`Hub::grace`]; seen within a
    ///   quarter of a second plus half a second), and leaves at once if you
    ///   then drop the client. [`Hub::subscribe_states`] tells of both.
    ///
    /// The client must run on a [`HubHandler`] wrapping your handler, so
    /// the hub hears the tools list change. Another client attached later
    /// under the same alias replaces this one; this one then changes nothing.
    ///
    /// ```no_run
    /// # async fn run() -> anyhow::Result<()> {
    /// use mcp_preamble::Assembler;
    /// use mcp_preamble::connect::HubHandler;
    /// use mcp_preamble::hub::Hub;
    /// use mcp_preamble::rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
    /// use mcp_preamble::rmcp::transport::TokioChildProcess;
    /// use mcp_preamble::rmcp::ServiceExt;
    ///
    /// let hub = Hub::new(Assembler::new());
    /// let me = ClientConfig::new(ClientCapabilities::default(), Implementation::new("my-host", "1.0.0"));
    /// let mut command = tokio::process::Command::new("npx");
    /// command.args(["-y", "@modelcontextprotocol/server-everything"]);
    /// let client = HubHandler::new(me).serve(TokioChildProcess::new(command)?).await?;
    /// let _following = hub.attach("everything", &client).await?;
    /// let answer = client.call_tool(CallToolRequestParams::new("echo")).await?;
    /// # Ok(()) }
    /// ```
    pub async fn attach<H: rmcp::ClientHandler>(
        &self,
        alias: impl Into<String>,
        client: &RunningService<RoleClient, HubHandler<H>>,
    ) -> Result<Attachment> {
        let alias = alias.into();
        let snapshot = snapshot_of(client).await?;
        let owner = self.new_owner();
        let why = Why::new(StateReason::Connected);
        self.upsert_as(Some(owner), alias.clone(), snapshot.clone(), why)?;
        let (stop, task) = self.start_follower(&alias, &snapshot, owner, client);
        Ok(Attachment {
            alias,
            snapshot,
            stop,
            task,
        })
    }

    /// [`Hub::attach`] for many clients at once, publishing one revision
    /// for all of them (six servers attached at start-up give one new
    /// section, not six). Snapshots are read one after another; when one
    /// fails, nothing is attached and its error is returned.
    pub async fn attach_all<'a, H: rmcp::ClientHandler>(
        &self,
        clients: impl IntoIterator<Item = (String, &'a RunningService<RoleClient, HubHandler<H>>)>,
    ) -> Result<Vec<Attachment>> {
        let clients: Vec<_> = clients.into_iter().collect();
        let mut read = Vec::with_capacity(clients.len());
        for (_, client) in &clients {
            read.push(snapshot_of(*client).await?);
        }
        let owners = self.upsert_owned(
            clients
                .iter()
                .zip(&read)
                .map(|((alias, _), snapshot)| (alias.clone(), snapshot.clone()))
                .collect(),
            Why::new(StateReason::Connected),
        )?;
        let mut out = Vec::with_capacity(clients.len());
        for (((alias, client), snapshot), owner) in clients.into_iter().zip(read).zip(owners) {
            let (stop, task) = self.start_follower(&alias, &snapshot, owner, client);
            out.push(Attachment {
                alias,
                snapshot,
                stop,
                task,
            });
        }
        Ok(out)
    }

    /// Starts the follower of an attached client.
    fn start_follower<H: rmcp::ClientHandler>(
        &self,
        alias: &str,
        snapshot: &ServerSnapshot,
        owner: u64,
        client: &RunningService<RoleClient, HubHandler<H>>,
    ) -> (Arc<Notify>, tokio::task::JoinHandle<()>) {
        let changed = client.service().tools_changed();
        let peer = client.peer().clone();
        let closed = Box::pin(attachment_closed(peer.clone(), changed.clone()));
        let follower = Follower::new(self, alias, snapshot, owner, peer, changed);
        let stop = follower.stop.clone();
        let modern = snapshot.era == Era::Modern;
        let task = tokio::spawn(async move {
            let (mut follower, ending) = follower.run(closed, modern).await;
            follower.finish(ending).await;
        });
        (stop, task)
    }

    /// Starts a configured server (see [`connect_with`]) and follows it as
    /// [`Hub::attach`] does; the returned [`LiveServer`] owns the
    /// connection. The client identifies itself with
    /// [`ConnectOptions::client_config`]. With [`ConnectOptions::restart`],
    /// a server that ends on its own is started again within the grace
    /// period.
    pub async fn connect(
        &self,
        entry: &ServerEntry,
        options: &ConnectOptions,
    ) -> std::result::Result<LiveServer, ConnectFailure> {
        let client = options.client_config().clone();
        let connection = connect_with(entry, options, HubHandler::new(client.clone())).await?;
        self.follow_connection(
            entry,
            options,
            connection,
            Some(Arc::new(move || client.clone())),
        )
    }

    /// [`Hub::connect`] with the handler `make` makes, for this connection
    /// and each restart: the gateway's upstreams, whose requests go to hosts.
    #[cfg(feature = "serve")]
    pub(crate) async fn connect_making<H: rmcp::ClientHandler>(
        &self,
        entry: &ServerEntry,
        options: &ConnectOptions,
        make: MakeHandler<H>,
    ) -> std::result::Result<LiveServer, ConnectFailure> {
        let connection = connect_with(entry, options, HubHandler::new(make())).await?;
        self.follow_connection(entry, options, connection, Some(make))
    }

    /// [`Hub::connect`] with your own rmcp client handler (wrapped in a
    /// [`HubHandler`]): it answers the server's requests, and its
    /// [`get_info`](rmcp::ClientHandler::get_info) is the identity sent.
    /// The server is not restarted (the hub cannot make another of your
    /// handler); [`Hub::subscribe_states`] tells when it ends.
    pub async fn connect_with<H: rmcp::ClientHandler>(
        &self,
        entry: &ServerEntry,
        options: &ConnectOptions,
        handler: H,
    ) -> std::result::Result<LiveServer, ConnectFailure> {
        let connection = connect_with(entry, options, HubHandler::new(handler)).await?;
        self.follow_connection(entry, options, connection, None)
    }

    /// [`Hub::connect`] for every server of `config`, at most
    /// [`ConnectOptions::concurrency`] at a time; results in config order.
    /// A server that fails does not hold up the others.
    pub async fn connect_all(
        &self,
        config: &McpConfig,
        options: &ConnectOptions,
    ) -> Vec<std::result::Result<LiveServer, ConnectFailure>> {
        let client = options.client_config().clone();
        let results = connect_all_with(config, options, |_| HubHandler::new(client.clone())).await;
        let make: MakeHandler<ClientConfig> = Arc::new(move || client.clone());
        config
            .servers
            .iter()
            .zip(results)
            .map(|(entry, r)| {
                r.and_then(|c| self.follow_connection(entry, options, c, Some(make.clone())))
            })
            .collect()
    }

    fn follow_connection<H: rmcp::ClientHandler>(
        &self,
        entry: &ServerEntry,
        options: &ConnectOptions,
        connection: Connection<HubHandler<H>>,
        make: Option<MakeHandler<H>>,
    ) -> std::result::Result<LiveServer, ConnectFailure> {
        let alias = entry.alias.clone();
        let stderr = connection.stderr.clone();
        let snapshot = connection.snapshot.clone();
        let owner = self.new_owner();
        let why = Why::new(StateReason::Connected);
        if let Err(error) = self.upsert_as(Some(owner), alias.clone(), snapshot.clone(), why) {
            return Err(ConnectFailure {
                alias,
                error,
                stderr: stderr.text(),
                elapsed: connection.elapsed,
            });
        }
        let (follower, closed, link) = owned_follower(self, &alias, owner, connection);
        let link = Arc::new(Mutex::new(link));
        let supervisor = Supervisor {
            entry: entry.clone(),
            options: options.clone(),
            restart: options.restart.filter(|_| make.is_some()),
            make,
            link: link.clone(),
            stderr: stderr.clone(),
        };
        let task = tokio::spawn(supervisor.run(follower, closed));
        Ok(LiveServer {
            alias,
            snapshot,
            reached: (entry.transport.clone(), options.client_config().clone()),
            link,
            stderr,
            hub: self.clone(),
            task: Some(task),
        })
    }
}

/// Makes the handler of a restarted connection.
pub(crate) type MakeHandler<H> = Arc<dyn Fn() -> H + Send + Sync>;

/// The follower of a connection the hub owns, the future telling how it
/// ended, and the [`Link`] to it.
fn owned_follower<H: rmcp::ClientHandler>(
    hub: &Hub,
    alias: &str,
    owner: u64,
    connection: Connection<HubHandler<H>>,
) -> (Follower, Closed, Link) {
    let Connection {
        snapshot,
        client,
        process_id,
        process,
        ..
    } = connection;
    let changed = client.service().tools_changed();
    let peer = client.peer().clone();
    let cancel = client.cancellation_token();
    let pipe = process.as_ref().map(|p| p.pipe.clone());
    let closed: Closed = Box::pin(async move {
        match client.waiting().await {
            Ok(QuitReason::Cancelled) => Ending::ByHost,
            _ => {
                let status = match &process {
                    Some(p) => p.ended(Duration::from_secs(1)).await,
                    None => None,
                };
                Ending::OnItsOwn(status)
            }
        }
    });
    let follower = Follower::new(hub, alias, &snapshot, owner, peer.clone(), changed);
    let link = Link {
        peer,
        owner,
        process_id,
        pipe,
        cancel: Some(cancel),
        closed: false,
    };
    (follower, closed, link)
}

/// The task behind a [`LiveServer`]: follows the connection and, when it
/// ends on its own, restarts the server if asked.
struct Supervisor<H: rmcp::ClientHandler> {
    entry: ServerEntry,
    options: ConnectOptions,
    restart: Option<Restart>,
    make: Option<MakeHandler<H>>,
    link: Arc<Mutex<Link>>,
    stderr: StderrTail,
}

impl<H: rmcp::ClientHandler> Supervisor<H> {
    async fn run(self, mut follower: Follower, mut closed: Closed) {
        // When each restart within the budget's window was made.
        let mut restarts = std::collections::VecDeque::new();
        loop {
            let modern = follower.modern;
            let (done, ending) = follower.run(closed, modern).await;
            let status = match ending {
                Some(Ending::OnItsOwn(status)) => status,
                // The host let go: LiveServer removed the block already.
                _ => return,
            };
            let hub = done.hub.clone();
            lifecycle::exited(&done.alias, status);
            let why = Why::new(StateReason::ConnectionLost).exit(status);
            let _ = hub.disconnected_as(Some(done.owner), &done.alias, why);
            if self.budget_spent(&mut restarts) {
                // Restarted too often of late: its tools go now, with one revision.
                if let Some(restart) = &self.restart {
                    lifecycle::gave_up(&done.alias, restart);
                }
                let why = Why::new(StateReason::GaveUp).exit(status);
                let _ = hub.remove_as(Some(done.owner), &done.alias, why);
                return;
            }
            let recent = u32::try_from(restarts.len()).unwrap_or(u32::MAX);
            let Some(next) = self.restart_within_grace(&hub, recent).await else {
                return;
            };
            restarts.push_back(Instant::now());
            let alias = done.alias.clone();
            let owner = hub.new_owner();
            let snapshot = next.snapshot.clone();
            let (next_follower, next_closed, new_link) = owned_follower(&hub, &alias, owner, next);
            {
                let mut link = lock(&self.link);
                if link.closed {
                    // Closed by the host while restarting: this connection goes too.
                    if let Some(c) = new_link.cancel {
                        c.cancel();
                    }
                    return;
                }
                // The same snapshot gives the same bytes: no new revision.
                let why = Why::new(StateReason::Restarted);
                if hub.upsert_as(Some(owner), alias, snapshot, why).is_err() {
                    return;
                }
                *link = new_link;
            }
            follower = next_follower;
            closed = next_closed;
        }
    }

    /// Whether the server was restarted [`Restart::restarts`] times within
    /// the budget's window (forgetting restarts older than it); never
    /// without restarts (the grace period decides then).
    fn budget_spent(&self, restarts: &mut std::collections::VecDeque<Instant>) -> bool {
        let Some(restart) = self.restart.filter(|_| self.make.is_some()) else {
            return false;
        };
        let now = Instant::now();
        while restarts
            .front()
            .is_some_and(|at| now.duration_since(*at) > restart.restart_window())
        {
            restarts.pop_front();
        }
        restarts.len() >= usize::try_from(restart.restarts()).unwrap_or(usize::MAX)
    }

    /// Starts the server again with growing, jittered pauses (the backoff
    /// goes on from `recent`, the restarts within the budget's window),
    /// until it connects, the attempts run out, the grace period would
    /// end, or the host closed it.
    async fn restart_within_grace(
        &self,
        hub: &Hub,
        recent: u32,
    ) -> Option<Connection<HubHandler<H>>> {
        let (restart, make) = (self.restart?, self.make.as_ref()?);
        let alias = self.entry.alias.as_str();
        let deadline = Instant::now() + hub.grace_period();
        for (attempt, n) in (recent..recent.saturating_add(restart.max_attempts)).zip(1..) {
            let pause = restart.pause(attempt, jitter());
            if Instant::now() + pause >= deadline {
                lifecycle::not_restarted(alias, "its grace period ends before the next attempt");
                return None;
            }
            if lock(&self.link).closed {
                return None;
            }
            lifecycle::restarting(alias, &restart, recent, n, pause);
            tokio::time::sleep(pause).await;
            if lock(&self.link).closed {
                return None;
            }
            let handler = HubHandler::new(make());
            let tail = self.stderr.clone();
            let again = connect_keeping(&self.entry, &self.options, handler, tail, Cause::Restart);
            match again.await {
                Ok(c) => return Some(c),
                Err(e) => lifecycle::restart_failed(alias, n, restart.max_attempts, &e.error),
            }
        }
        lifecycle::not_restarted(alias, "every attempt failed");
        None
    }
}

/// A number in [0, 1) that differs between calls and processes (the
/// standard library's random hasher keys), for spreading restarts.
fn jitter() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}
