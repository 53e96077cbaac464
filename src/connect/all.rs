//! [`connect_all`]: every server of a config at once.

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::ClientConfig;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use super::options::ConnectOptions;
use super::transport::{ConnectFailure, Connection, connect_with};
use crate::config::{McpConfig, ServerEntry};
use crate::error::{Error, ErrorKind};

/// One server's outcome in a [`ConnectAll`].
pub type ConnectResult<H = ClientConfig> = std::result::Result<Connection<H>, ConnectFailure>;

/// The connections of [`connect_all`], under way. `.await` it for every
/// result in config order, or call [`ConnectAll::next`] for each as it
/// finishes (to show progress).
///
/// Dropping it before the end stops the connections still under way.
pub struct ConnectAll<H: rmcp::ClientHandler = ClientConfig> {
    aliases: Vec<String>,
    tasks: JoinSet<(usize, ConnectResult<H>)>,
    /// Indexes of the tasks still running, so a lost one can be reported.
    pending: Vec<bool>,
}

impl<H: rmcp::ClientHandler> std::fmt::Debug for ConnectAll<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectAll")
            .field("aliases", &self.aliases)
            .finish_non_exhaustive()
    }
}

/// Connects to every server of `config`, at most
/// [`ConnectOptions::concurrency`] (default 8) starting at a time, each
/// within the options' timeout (counted from its own start), with
/// [`ConnectOptions::client_config`] as the identity. A server that fails
/// does not hold up or fail the others.
///
/// ```no_run
/// # async fn run() -> anyhow::Result<()> {
/// use mcp_preamble::files::McpConfig;
/// use mcp_preamble::connect::{ConnectOptions, connect_all};
///
/// let config = McpConfig::from_path("mcp.json")?;
/// for result in connect_all(&config, &ConnectOptions::new()).await {
///     match result {
///         Ok(c) => println!("{}: {} tools", c.snapshot.alias.as_deref().unwrap_or(""), c.snapshot.tools.len()),
///         Err(failure) => eprintln!("{failure}"),
///     }
/// }
/// # Ok(()) }
/// ```
pub fn connect_all(config: &McpConfig, options: &ConnectOptions) -> ConnectAll {
    let client = options.client_config().clone();
    connect_all_with(config, options, move |_| client.clone())
}

/// [`connect_all`] with a handler of yours per server, made by `handler`.
pub fn connect_all_with<H, F>(
    config: &McpConfig,
    options: &ConnectOptions,
    mut handler: F,
) -> ConnectAll<H>
where
    H: rmcp::ClientHandler,
    F: FnMut(&ServerEntry) -> H,
{
    let mut tasks = JoinSet::new();
    // At most `concurrency` servers starting at once: thousands at a time
    // would run out of processes and file handles.
    let slots = Arc::new(Semaphore::new(options.concurrency));
    for (i, entry) in config.servers.iter().enumerate() {
        let (entry, options, handler) = (entry.clone(), options.clone(), handler(entry));
        let slots = slots.clone();
        tasks.spawn(async move {
            let _slot = slots.acquire_owned().await;
            (i, connect_with(&entry, &options, handler).await)
        });
    }
    ConnectAll {
        aliases: config.servers.iter().map(|e| e.alias.clone()).collect(),
        tasks,
        pending: vec![true; config.servers.len()],
    }
}

impl<H: rmcp::ClientHandler> ConnectAll<H> {
    /// The next server to finish, with its index in the config; `None` once
    /// all have.
    pub async fn next(&mut self) -> Option<(usize, ConnectResult<H>)> {
        loop {
            match self.tasks.join_next().await {
                Some(Ok((i, result))) => {
                    self.pending[i] = false;
                    return Some((i, result));
                }
                // A task that panicked or was cancelled: report it as its server's failure.
                Some(Err(_)) => continue,
                None => {
                    let i = self.pending.iter().position(|p| *p)?;
                    self.pending[i] = false;
                    return Some((i, Err(lost(&self.aliases[i]))));
                }
            }
        }
    }
}

fn lost(alias: &str) -> ConnectFailure {
    ConnectFailure {
        alias: alias.to_string(),
        error: Error::new(
            ErrorKind::Connect,
            "the connection task stopped unexpectedly",
        ),
        stderr: String::new(),
        elapsed: Duration::ZERO,
    }
}

impl<H: rmcp::ClientHandler> IntoFuture for ConnectAll<H> {
    type Output = Vec<ConnectResult<H>>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send>>;

    /// Every result, in config order.
    fn into_future(mut self) -> Self::IntoFuture {
        Box::pin(async move {
            let mut done: Vec<Option<ConnectResult<H>>> =
                (0..self.aliases.len()).map(|_| None).collect();
            while let Some((i, result)) = self.next().await {
                done[i] = Some(result);
            }
            done.into_iter().flatten().collect()
        })
    }
}
