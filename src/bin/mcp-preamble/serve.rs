//! `mcp-preamble serve`: the gateway on stdio, its log, and reloading the
//! policy and the lock while it runs.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_preamble::Assembler;
use mcp_preamble::connect::{ConnectOptions, Restart};
use mcp_preamble::files::McpConfig;
use mcp_preamble::hub::{Hub, ServerState, StateChange, StateReason};
use mcp_preamble::pin::Lock;
use mcp_preamble::report::ServerDiagnostic;
use mcp_preamble::serve::{Gateway, Naming, StdioHost};

use crate::listen::{listen, listening_on, serve_http};
use mcp_preamble::settings::Settings;
use mcp_preamble::state::SharedState;

use crate::args::{LOG_DEFAULT, ServeArgs};
use crate::emit::LogLines;
use crate::error::CliError;
use crate::reload::{Reload, Servers, settings};
use crate::review::{self, LockSource, Review};
use crate::state::{self, Status};

/// How upstreams that end on their own are restarted: at most
/// `--restart-max` times within `--restart-window`, with growing pauses;
/// then the gateway gives up on one.
fn restart(a: &ServeArgs) -> Restart {
    Restart::new()
        .max_restarts(a.restart_max)
        .window(a.restart_window)
}

pub async fn serve(mut a: ServeArgs) -> Result<ExitCode, CliError> {
    if a.status {
        return show_status(&a);
    }
    init_log(a.log.as_deref(), a.log_format == "json")?;
    // Refused before any server is started.
    let listening = match a.listen {
        Some(addr) => Some(listen(addr, &a).await?),
        None => None,
    };
    let Some(config_path) = a.connect.config.clone() else {
        return Err(CliError::NoConfig);
    };
    let dir = state::state_dir(a.state_dir.as_deref(), &config_path)
        .inspect_err(|e| tracing::warn!("{e}; `serve --status` will not see this gateway"))
        .ok();
    let config = McpConfig::from_path(&config_path)?;
    let settings = settings(a.policy.as_deref())?;
    a.connect.client = settings.client.clone();
    let review = Review::open(a.lock.as_deref(), a.state.as_deref())?;
    let shared = match &review {
        Review::Shared(state) => Some(state.clone()),
        _ => None,
    };
    // Kept until the gateway stops: it keeps the shared state's lock current.
    let (lock, _follower) = review::follow(review, dir.as_deref()).await;
    let gateway = gateway_of(&settings, lock.current()?, &a)?;
    let first_start = serve_known(&gateway, dir.as_deref(), &config);
    let book = Book::new(
        dir.clone(),
        gateway.clone(),
        listening_on(
            listening.as_ref().map(|l| &l.listener),
            a.tls_cert.is_some(),
        ),
    );
    // From the first connection on: restarts and crashes are logged.
    let states = tokio::spawn(tell_states(gateway.hub().clone(), book.clone()));
    let host = stdio_host(listening.is_none()).await?;
    let options = connect_options(&a, host.as_ref());
    let settling = start(&gateway, &config, (&a, &options), &book, first_start).await;
    refuse_collisions(&gateway, &settling).await?;
    let approve = approve_command(&config_path, &lock, shared.as_deref(), a.policy.as_deref());
    let reload = Reload {
        policy: a.policy.clone(),
        lock,
        host: a.serve_as,
        name: a.name.clone(),
        servers: servers_of(
            &options,
            (config_path, config),
            &gateway,
            &book,
            a.watch_config,
        ),
        naming: naming(&a, &settings)?,
    };
    let tasks = [
        states,
        settling,
        tokio::spawn(keep_snapshots(gateway.hub().clone(), dir.clone())),
        tokio::spawn(reload.run(gateway.hub().clone())),
        tokio::spawn(tell_pending(gateway.hub().clone(), approve, shared.clone())),
        tokio::spawn(tell_limits(gateway.hub().clone())),
    ];
    let served = serve_on(&gateway, (listening, host), shared).await;
    for task in tasks {
        task.abort();
    }
    gateway.close().await;
    // Servers still starting (or left by a crash) are ended too.
    mcp_preamble::connect::end_servers().await;
    book.stopped();
    tracing::info!("stopped serving");
    served?;
    Ok(ExitCode::SUCCESS)
}

/// Serves the servers' snapshots of an earlier run at once (each is
/// refreshed as it connects); whether there were none (a first start).
fn serve_known(gateway: &Gateway, dir: Option<&Path>, config: &McpConfig) -> bool {
    let aliases: Vec<String> = config.servers.iter().map(|e| e.alias.clone()).collect();
    let known = dir.map_or_else(Default::default, |d| state::known_servers(d, &aliases));
    let first_start = known.is_empty();
    // Served at once, refreshed as each server connects.
    if let Err(e) = gateway.hub().upsert_all(known) {
        tracing::warn!("the last snapshots are not served ({e}); the servers are started afresh");
    }
    first_start
}

/// Serves the gateway over HTTP when it listens, else to its stdio host.
async fn serve_on(
    gateway: &Gateway,
    on: (Option<crate::listen::Listening>, Option<StdioHost>),
    shared: Option<Arc<SharedState>>,
) -> Result<(), mcp_preamble::Error> {
    match on {
        (Some(listening), _) => serve_http(gateway, listening, shared).await,
        (None, Some(host)) => gateway.serve_stdio_host(host).await,
        (None, None) => gateway.serve_stdio().await,
    }
}

/// Over stdio, the host whose `initialize` was read: the upstreams are
/// told what it declared (a 2025-era one hears it once, at its handshake).
async fn stdio_host(stdio: bool) -> Result<Option<StdioHost>, CliError> {
    Ok(match stdio {
        true => Some(StdioHost::hello().await?),
        false => None,
    })
}

/// The gateway of `a`: the policy's assembler with the lock, fitted to
/// the host under the gateway's name, with the call timeout.
fn gateway_of(settings: &Settings, lock: Option<Lock>, a: &ServeArgs) -> Result<Gateway, CliError> {
    let mut assembler = Assembler::from_settings(settings)?;
    if let Some(lock) = lock {
        assembler = assembler.lock(lock);
    }
    let mut gateway = Gateway::builder(assembler, a.serve_as)
        .name(&a.name)
        .naming(naming(a, settings)?);
    if let Some(t) = a.call_timeout {
        gateway = gateway.call_timeout(t);
    }
    // Replicas that share a session key open each other's task ids and
    // request states too (an unreadable file is reported by the listener).
    if let Some(file) = &a.session_key_file
        && let Ok(file) = std::fs::File::open(file)
    {
        let mut secret = Vec::new();
        if std::io::Read::read_to_end(&mut std::io::Read::take(file, 64 * 1024), &mut secret)
            .is_ok()
        {
            gateway = gateway.seal_key(&secret);
        }
    }
    Ok(gateway.build()?)
}

/// How served names are made: `--prefix` and `--separator`, else the
/// policy's `[gateway]`, else `always` and `__`.
fn naming(a: &ServeArgs, settings: &Settings) -> Result<Naming, mcp_preamble::Error> {
    let mut chosen = settings.gateway.clone();
    if let Some(prefix) = a.prefix {
        chosen.prefix = Some(prefix.as_str().to_string());
    }
    if let Some(separator) = &a.separator {
        chosen.separator = Some(separator.clone());
    }
    Naming::default().with_settings(&chosen)
}

/// `serve --prefix never` refuses to serve when two upstreams have a
/// tool of one name once the servers have answered (or `--ready-within`
/// passed).
async fn refuse_collisions(
    gateway: &Gateway,
    settling: &tokio::task::JoinHandle<()>,
) -> Result<(), CliError> {
    let refused = gateway.refused_names();
    if refused.is_empty() {
        return Ok(());
    }
    settling.abort();
    gateway.close().await;
    mcp_preamble::connect::end_servers().await;
    let each: Vec<String> = (refused.iter())
        .map(|r| {
            format!(
                "{:?} of {:?} and of {:?}",
                r.name,
                r.alias,
                r.holder.as_deref().unwrap_or("?")
            )
        })
        .collect();
    Err(CliError::Serve(format!(
        "--prefix never: upstreams share tool names ({}); use --prefix on-collision or always",
        each.join(", ")
    )))
}

/// `serve --status`: what the gateway of this config last told.
fn show_status(a: &ServeArgs) -> Result<ExitCode, CliError> {
    let Some(config) = a.connect.config.as_deref() else {
        return Err(CliError::NoConfig);
    };
    let dir = state::state_dir(a.state_dir.as_deref(), config)?;
    let status = Status::read(&dir)?;
    crate::emit::emit(&status.render(state::now()));
    Ok(ExitCode::SUCCESS)
}

/// When this process began (`main` asks first): `--ready-within` counts
/// from here, so the gateway's own start-up (config, tokenizer, state) is
/// inside the wait, not added to it.
pub(crate) fn started() -> std::time::Instant {
    static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    *STARTED.get_or_init(std::time::Instant::now)
}

/// The config `serve` runs, for a reload: the servers it starts are
/// told to the status book and their failures logged as at start.
fn servers_of(
    options: &ConnectOptions,
    (path, running): (PathBuf, McpConfig),
    gateway: &Gateway,
    book: &Book,
    watch: bool,
) -> Servers {
    let told = book.clone();
    Servers {
        path,
        running,
        options: options.clone(),
        gateway: gateway.clone(),
        watch,
        on_start: Arc::new(move |aliases, failures| {
            told.starting(aliases.iter().map(String::as_str));
            tokio::spawn(tell_failures(failures, told.clone()));
        }),
    }
}

/// How the servers of the config are started (and restarted): told the
/// stdio `host`'s capabilities, else `--capabilities` (or `[client]`).
fn connect_options(a: &ServeArgs, host: Option<&StdioHost>) -> ConnectOptions {
    let client = a.connect.client_settings().client_config();
    let client = match host {
        Some(host) => host.told(client),
        None => client,
    };
    ConnectOptions::new()
        .handshake(a.connect.handshake.clone())
        .timeout(a.connect.timeout)
        .client(client)
        .restart(restart(a))
}

/// Starts every server of `config` in the background; on a first start
/// (no snapshot of an earlier run) waits for them until `--ready-within`
/// after the process began. Returns the task that logs each server that fails
/// (left out) until all have settled.
async fn start(
    gateway: &Gateway,
    config: &McpConfig,
    (a, options): (&ServeArgs, &ConnectOptions),
    book: &Book,
    first_start: bool,
) -> tokio::task::JoinHandle<()> {
    book.starting(config.servers.iter().map(|e| e.alias.as_str()));
    let failures = gateway.start_all(config, options);
    let mut settling = tokio::spawn(tell_failures(failures, book.clone()));
    if first_start
        && tokio::time::timeout_at((started() + a.ready_within).into(), &mut settling)
            .await
            .is_err()
    {
        tracing::info!(
            "not every server answered within {} s: serving those that did; the others join when they answer",
            a.ready_within.as_secs_f64()
        );
    }
    book.write();
    tracing::info!(
        servers = gateway.hub().aliases().len(),
        tools = gateway.tool_names().len(),
        revision = gateway.hub().revision(),
        "serving on {}",
        book.on()
    );
    settling
}

/// Logs each server that failed to start (its tools are not served; the
/// others are), until every server has settled.
async fn tell_failures(
    mut failures: tokio::sync::mpsc::UnboundedReceiver<mcp_preamble::connect::ConnectFailure>,
    book: Book,
) {
    while let Some(failure) = failures.recv().await {
        tracing::warn!(upstream = %failure.alias, stderr = %failure.stderr, "server not started: {}", failure.error);
        book.not_started(&failure.alias, &failure.error.to_string());
        book.write();
    }
    book.settled();
    tracing::info!("every server has answered or failed");
}

/// Keeps the servers' last snapshots in the state directory, for the next
/// start (written whenever the section changes).
async fn keep_snapshots(hub: Hub, dir: Option<PathBuf>) {
    let Some(dir) = dir else { return };
    let mut sections = hub.subscribe();
    let mut written = None;
    loop {
        let snapshots: std::collections::BTreeMap<String, mcp_preamble::ServerSnapshot> =
            (hub.aliases().into_iter())
                .filter(|a| hub.state(a) == ServerState::Connected)
                .filter_map(|a| Some((a.clone(), hub.snapshot(&a)?)))
                .collect();
        if written.as_ref() != Some(&snapshots) {
            if let Err(e) = state::save_known(&dir, snapshots.clone()) {
                tracing::warn!(
                    "the servers' snapshots could not be kept in {}: {e}",
                    dir.display()
                );
            }
            written = Some(snapshots);
            // An upstream changing its tools all the time is kept once a second.
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        if sections.changed().await.is_err() {
            return;
        }
    }
}

/// The gateway's status as `serve --status` reads it, kept in the state
/// directory: written at start, at each upstream state change, and at stop.
#[derive(Clone)]
struct Book {
    dir: Option<PathBuf>,
    gateway: Gateway,
    status: Arc<Mutex<Status>>,
}

impl Book {
    fn new(dir: Option<PathBuf>, gateway: Gateway, on: String) -> Book {
        let status = Status {
            format: 1,
            pid: std::process::id(),
            on,
            ..Status::default()
        };
        Book {
            dir,
            gateway,
            status: Arc::new(Mutex::new(status)),
        }
    }

    fn on(&self) -> String {
        self.lock().on.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Status> {
        self.status.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn change(&self, change: &StateChange) {
        {
            let mut status = self.lock();
            let u = status.upstreams.entry(change.alias.clone()).or_default();
            if change.reason == StateReason::Added {
                // Only the last run's snapshots are added: served, not connected yet.
                u.state = "starting".into();
                u.why = "served from the last run's snapshot".into();
            } else {
                u.state = change.state.to_string();
                u.why = change.reason.to_string();
            }
            if change.reason == StateReason::Restarted {
                u.restarts += 1;
            }
            if let Some(exit) = change.exit_status {
                u.last_exit = Some(exit.to_string());
            }
        }
        self.write();
    }

    fn starting<'a>(&self, aliases: impl IntoIterator<Item = &'a str>) {
        let mut status = self.lock();
        for alias in aliases {
            let u = status.upstreams.entry(alias.to_string()).or_default();
            if u.state.is_empty() {
                u.state = "starting".into();
            }
        }
    }

    fn not_started(&self, alias: &str, error: &str) {
        let mut status = self.lock();
        let u = status.upstreams.entry(alias.to_string()).or_default();
        u.state = "not_started".into();
        u.why = error.to_string();
    }

    /// Every server has answered or failed: one served from the last
    /// run's snapshot that did not fail is live now (its state did not
    /// change, so no event said so).
    fn settled(&self) {
        for u in self.lock().upstreams.values_mut() {
            if u.state == "starting" {
                u.state = "connected".into();
                u.why = "connected".into();
            }
        }
        self.write();
    }

    fn stopped(&self) {
        self.lock().stopped = true;
        self.write();
    }

    /// Writes the status with each upstream's process id as it is now.
    fn write(&self) {
        let Some(dir) = &self.dir else { return };
        let mut status = self.lock();
        for (alias, u) in status.upstreams.iter_mut() {
            // A gone server's last process is no longer its.
            u.pid = match u.state.as_str() {
                "connected" => self.gateway.process_id(alias),
                _ => None,
            };
        }
        status.updated = state::now();
        if let Err(e) = status.write(dir) {
            tracing::warn!(
                "the status for `serve --status` could not be written to {}: {e}",
                dir.display()
            );
        }
    }
}

/// The command that approves a held change, as a shell runs it (the
/// alias goes last): the same config, lock (or shared state, its password
/// not shown) and policy, absolute.
fn approve_command(
    config: &Path,
    lock: &LockSource,
    shared: Option<&SharedState>,
    policy: Option<&Path>,
) -> String {
    let mut words = vec!["mcp-preamble".to_string(), "pin".to_string()];
    let files = [
        ("--config", Some(config)),
        ("--lock", lock.path()),
        ("--policy", policy),
    ];
    for (flag, path) in files {
        let Some(path) = path else { continue };
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        words.push(flag.to_string());
        words.push(shell_word(&path.display().to_string()));
        if flag == "--config"
            && let Some(state) = shared
        {
            words.push("--state".to_string());
            words.push(shell_word(state.shown()));
        }
    }
    words.push("--approve".to_string());
    words.join(" ")
}

/// `word` as one shell word: as it is when it is plain, else single-quoted.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+=:@,".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// Logs each server that changed and awaits review, once per change, with
/// the command that approves it; with a shared state, records it there for
/// reviewers (and takes it off when it is no longer pending here).
async fn tell_pending(hub: Hub, approve: String, shared: Option<Arc<SharedState>>) {
    let mut pending = hub.subscribe_pending();
    let mut told = std::collections::BTreeMap::new();
    let mut recorded = Recorded::default();
    loop {
        let now = pending.borrow_and_update().clone();
        for (alias, pin) in now.iter() {
            if told.get(alias) != Some(pin) {
                // The command last on the line, so that it is copied whole.
                tracing::warn!(
                    "server {alias:?} changed and awaits review ({}; the reviewed text is served); approve it with: {approve} {}",
                    pin.summary(),
                    shell_word(alias)
                );
            }
        }
        told = now.iter().map(|(a, p)| (a.clone(), p.clone())).collect();
        let retry = match &shared {
            Some(state) => !recorded.record(state, &told).await,
            None => false,
        };
        // What Redis did not take is tried again a little later.
        let changed = if retry {
            tokio::time::timeout(Duration::from_secs(2), pending.changed()).await
        } else {
            Ok(pending.changed().await)
        };
        if let Ok(Err(_)) = changed {
            return;
        }
    }
}

/// What this gateway recorded as pending in the shared state.
#[derive(Default)]
struct Recorded(std::collections::BTreeMap<String, mcp_preamble::pin::Pin>);

impl Recorded {
    /// Records `now` in `state`: new and changed pins set, those no longer
    /// pending here taken off. False when Redis did not take all of it;
    /// then everything is recorded again on the next call (Redis may come
    /// back without its data).
    async fn record(
        &mut self,
        state: &SharedState,
        now: &std::collections::BTreeMap<String, mcp_preamble::pin::Pin>,
    ) -> bool {
        let mut all = true;
        for (alias, pin) in now {
            if self.0.get(alias) != Some(pin) {
                match state.set_pending(alias, pin).await {
                    Ok(()) => {
                        self.0.insert(alias.clone(), pin.clone());
                    }
                    Err(_) => all = false,
                }
            }
        }
        let gone: Vec<String> = (self.0.keys())
            .filter(|a| !now.contains_key(*a))
            .cloned()
            .collect();
        for alias in gone {
            match state.clear_pending(&alias).await {
                Ok(()) => {
                    self.0.remove(&alias);
                }
                Err(_) => all = false,
            }
        }
        if !all {
            self.0.retain(|alias, _| !now.contains_key(alias));
        }
        all
    }
}

/// Logs every upstream's state changes: connected, ended on its own (with
/// its exit status) and restarted, and gone (the grace period ended, or
/// the restart budget was spent and the gateway gave up on it). The
/// library logs the events behind them (started, exited, each restart
/// attempt, gave up) under `mcp_preamble::upstream`.
async fn tell_states(hub: Hub, book: Book) {
    use tokio::sync::broadcast::error::RecvError;
    let mut states = hub.subscribe_states();
    loop {
        match states.recv().await {
            Ok(change) => {
                if change.state == ServerState::Connected {
                    tracing::info!(upstream = %change.alias, "{change}");
                } else {
                    tracing::warn!(upstream = %change.alias, "{change}");
                }
                book.change(&change);
            }
            Err(RecvError::Lagged(n)) => tracing::warn!("{n} upstream state changes not logged"),
            Err(RecvError::Closed) => return,
        }
    }
}

/// Logs, once per change, each upstream whose data the gateway cut to its
/// limits (what it sent, what was kept) and each tool rule of the policy
/// that matches none of an upstream's tools (`unmatched_tool_rule`: a typo,
/// or a tool the server lists only to some clients). Off the request path:
/// it reads each new section after it is served.
async fn tell_limits(hub: Hub) {
    let mut sections = hub.subscribe();
    let mut told = std::collections::BTreeMap::new();
    loop {
        let section = sections.borrow_and_update().clone();
        let mut now = std::collections::BTreeMap::new();
        for server in section.assembly().servers() {
            let alias = server.alias.clone().unwrap_or_else(|| server.name.clone());
            let rules: Vec<String> = server
                .notes
                .iter()
                .filter(|n| matches!(n, ServerDiagnostic::UnmatchedToolRule { .. }))
                .map(ToString::to_string)
                .collect();
            let state = (server.limits.clone(), rules);
            if told.get(&alias) != Some(&state) {
                let was = told.get(&alias);
                if was.is_none_or(|(limits, _)| *limits != state.0) {
                    for hit in &state.0 {
                        tracing::warn!(upstream = %alias, "served within the limits: {hit}");
                    }
                }
                if was.is_none_or(|(_, rules)| *rules != state.1) {
                    for rule in &state.1 {
                        tracing::warn!(upstream = %alias, "policy: {rule}");
                    }
                }
            }
            now.insert(alias, state);
        }
        told = now;
        if sections.changed().await.is_err() {
            return;
        }
    }
}

/// rmcp's warning for each error the gateway answers (`response error`,
/// the error as a debug struct): the gateway logs each failed call itself,
/// as a sentence naming the upstream and the tool. Decided per call site
/// (target, level, fields), never per event.
fn rmcps_call_error(m: &tracing::Metadata<'_>) -> bool {
    let fields = m.fields();
    m.target() == "rmcp::service"
        && *m.level() == tracing::Level::WARN
        && fields.field("id").is_some()
        && fields.field("error").is_some()
}

/// The log goes to `file` or stderr, never stdout (stdout is the MCP
/// channel), one line per event made safe by [`LogLines`].
/// `MCP_PREAMBLE_LOG` chooses what is logged, as targets and levels
/// (`debug`, `info,rmcp=debug`); default: [`LOG_DEFAULT`].
pub(crate) fn init_log(file: Option<&Path>, json: bool) -> Result<(), CliError> {
    use tracing_subscriber::fmt::writer::BoxMakeWriter;
    use tracing_subscriber::prelude::*;
    let filter: tracing_subscriber::filter::Targets = std::env::var("MCP_PREAMBLE_LOG")
        .ok()
        .and_then(|l| l.parse().ok())
        .unwrap_or_else(|| LOG_DEFAULT.parse().unwrap_or_default());
    let writer = match file {
        Some(path) => {
            let f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| CliError::OutDir(path.to_path_buf(), e))?;
            BoxMakeWriter::new(std::sync::Mutex::new(LogLines(f)))
        }
        None => BoxMakeWriter::new(|| LogLines(std::io::stderr())),
    };
    use tracing_subscriber::filter::FilterExt;
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(writer)
        .with_ansi(false)
        .event_format(crate::jsonlog::LineFormat::new(json))
        .with_filter(filter.and(tracing_subscriber::filter::filter_fn(|m| {
            !rmcps_call_error(m)
        })));
    // Only one subscriber per process; a second is not an error worth stopping for.
    let _ = tracing_subscriber::registry().with(layer).try_init();
    Ok(())
}
