//! `mcp-preamble wrap`: one upstream served to a host over stdio as it is,
//! except what this crate exists for ([`Wrapper`]).

mod describe;
#[cfg(feature = "http")]
mod http;
mod lines;
mod reader;
mod reads;
mod relay;
mod shape;

use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncRead, AsyncWrite, BufReader};
use tokio::sync::mpsc;

use crate::assemble::Assembler;
use crate::error::{Error, ErrorKind, Result};
use crate::hosts::{Host, Reads};
use crate::serve::gateway::fit::ServeAs;
use relay::{Ended, Relay, write_lines};
use shape::Shaper;

pub use crate::serve::upstream::MAX_MESSAGE_BYTES;
pub use reads::ModelReads;

/// How long a Streamable HTTP upstream's session may take to end (its
/// DELETE) once the host has gone: within the 2 s a host's SDK waits
/// before it sends SIGTERM.
#[cfg(feature = "http")]
const EXIT_GRACE: Duration = Duration::from_millis(1500);

/// One upstream MCP server served to a host as it is, but for what this
/// crate exists for: a raw JSON-RPC line relay (feature `serve`).
///
/// Every message passes byte for byte, both ways: tool names, resources,
/// resource templates, prompts, completions, logging, and the upstream's
/// own requests to the host (sampling, elicitation, roots) and their
/// answers. Three things change:
///
/// - the handshake answer (`initialize`, or `server/discover` for a
///   2026-07-28 host): its `instructions` become the assembly's section for
///   this one server (sanitized, de-duplicated against its tools, pinned
///   with the assembler's lock, within its budgets, and, with a
///   [`ServeAs`] host, within the host's per-server cap); the wrapper lists
///   the tools first under ids of its own (in the 2025 era after sending
///   `notifications/initialized` itself; the host's is then not sent
///   twice);
/// - each `tools/list` answer: tools the policy's filter hides leave it,
///   the others get the assembly's description, title and annotations
///   (the policy's overrides, sanitized) and their `inputSchema` without
///   hidden characters; every other field stays as sent;
/// - a `tools/call` of a hidden tool is refused with invalid params
///   (-32602) and never reaches the upstream.
///
/// The upstream is untrusted: a message over
/// [`Wrapper::max_message_bytes`] ends the relay, a line that is not a
/// JSON-RPC message is dropped and logged, and descriptions, schemas and
/// instructions are cut to the assembler's [`Limits`](crate::Limits).
///
/// ```no_run
/// # async fn run() -> mcp_preamble::Result<()> {
/// use mcp_preamble::Assembler;
/// use mcp_preamble::serve::{ServeAs, Wrapper};
///
/// let wrapper = Wrapper::new(Assembler::new(), ServeAs::ClaudeCode)?.alias("everything");
/// let args = vec!["server.mjs".to_string()];
/// let status = wrapper.run_command("node", &args).await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Wrapper {
    shaper: Shaper,
    max_message: usize,
}

impl Wrapper {
    /// A wrapper assembling with `assembler` (a policy's, with its lock),
    /// fitted to `host`. Fails when the host's cap cannot be met.
    pub fn new(assembler: Assembler, host: ServeAs) -> Result<Wrapper> {
        // The host lists the tools itself: no tool list in the instructions.
        // The policy's shortening line stays (the gateway's fit drops it for
        // its own note), ending with the reader tool that has the full text.
        let note = assembler.shortening_note_on();
        // One server's room: a framing line, not the section's paragraph.
        let assembler = host.fit(assembler.tool_list(false).exposing().own_room(true), 0)?;
        let assembler = assembler
            .shortening_note(note)
            .full_text_hint(crate::serve::gateway::view::READER);
        let row = host.as_host().map(Host::profile);
        let cap = row.and_then(|p| p.description_cap);
        Ok(Wrapper {
            shaper: Shaper {
                assembler,
                alias: None,
                describer: cap.and_then(describe::Describer::new),
                delivers: row.is_some_and(|p| p.reads == Reads::Nowhere),
                host: host.as_host(),
            },
            max_message: MAX_MESSAGE_BYTES,
        })
    }

    /// The name the policy and the lock know the upstream by (the host
    /// config's key for it); default: its `serverInfo.name`.
    pub fn alias(mut self, alias: impl Into<String>) -> Wrapper {
        self.shaper.alias = Some(alias.into());
        self
    }

    /// The longest message either side may send (default
    /// [`MAX_MESSAGE_BYTES`]).
    pub fn max_message_bytes(mut self, bytes: usize) -> Wrapper {
        self.max_message = bytes;
        self
    }

    /// Starts `command` with `args` (this process's environment, its
    /// stderr inherited: the host logs it as the server's) and relays this
    /// process's stdin and stdout to it until either side ends. Returns
    /// the upstream's exit status, or `None` when the host went first: the
    /// upstream's stdin is closed, and what is left of its process group
    /// 400 ms later gets SIGTERM, then SIGKILL 300 ms after that (within
    /// the 2 s a host's SDK waits before it sends SIGTERM to this process).
    pub async fn run_command(&self, command: &str, args: &[String]) -> Result<Option<ExitStatus>> {
        let mut child = crate::connect::own_group(&mut tokio::process::Command::new(command))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                Error::new(ErrorKind::Connect, format!("cannot start {command:?}: {e}"))
                    .with_source(e)
            })?;
        let (Some(up_in), Some(up_out)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(Error::new(ErrorKind::Connect, "the upstream has no stdio"));
        };
        let group = crate::connect::Group::of(&child);
        let alias = self.shaper.alias.as_deref().unwrap_or("upstream");
        let cause = crate::connect::Cause::Start;
        crate::connect::started(alias, child.id(), command, args, cause);
        let (host_in, host_out) = crate::serve::front::stdio::host_io();
        let ended = self
            .relay(
                BufReader::new(host_in),
                host_out,
                BufReader::new(up_out),
                up_in,
            )
            .await;
        let status = match ended {
            Ended::Upstream => {
                let status = child.wait().await.ok();
                crate::connect::exited(alias, status);
                group.left_behind().await;
                status
            }
            // Its stdin is closed now: it may end on its own.
            Ended::Host => {
                match tokio::time::timeout(crate::connect::EXIT_WAIT, child.wait()).await {
                    Ok(_) => group.left_behind().await,
                    Err(_) => drop(group.end(&mut child).await),
                }
                None
            }
        };
        Ok(status)
    }

    /// Relays this process's stdin and stdout to the Streamable HTTP
    /// server at `url` (feature `http`) until the host closes stdin; then
    /// deletes the session. Each host message is one POST, sent in order;
    /// the server's answers (JSON or event streams) and what it sends on
    /// its GET stream come back as they are.
    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    pub async fn run_url(&self, url: &str) -> Result<()> {
        let parsed = reqwest::Url::parse(url).map_err(|e| {
            Error::new(
                ErrorKind::InvalidConfig,
                format!("{url:?} is not a URL: {e}"),
            )
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            let why = format!("{url:?} is not an http or https URL");
            return Err(Error::new(ErrorKind::InvalidConfig, why));
        }
        let (relay_side, bridge_side) = tokio::io::duplex(1 << 16);
        let (up_out, up_in) = tokio::io::split(relay_side);
        let (from_relay, to_relay) = tokio::io::split(bridge_side);
        let bridge = tokio::spawn(http::bridge(
            url.to_string(),
            self.max_message,
            BufReader::new(from_relay),
            to_relay,
        ));
        let (host_in, host_out) = crate::serve::front::stdio::host_io();
        self.relay(
            BufReader::new(host_in),
            host_out,
            BufReader::new(up_out),
            up_in,
        )
        .await;
        let _ = tokio::time::timeout(EXIT_GRACE, bridge).await;
        Ok(())
    }

    /// Relays `host_in`/`host_out` to an upstream's `up_out`/`up_in` until
    /// either side ends; the upstream's stdin (`up_in`) is closed on return.
    pub(crate) async fn relay<HR, HW, UR, UW>(
        &self,
        host_in: HR,
        host_out: HW,
        up_out: UR,
        up_in: UW,
    ) -> Ended
    where
        HR: AsyncBufRead + Unpin,
        HW: AsyncWrite + Unpin + Send + 'static,
        UR: AsyncBufRead + Unpin,
        UW: AsyncWrite + Unpin + Send + 'static,
    {
        let (to_host, host_queue) = mpsc::channel(64);
        let (to_upstream, upstream_queue) = mpsc::channel(64);
        let host_writer = tokio::spawn(write_lines(host_out, host_queue));
        let upstream_writer = tokio::spawn(write_lines(up_in, upstream_queue));
        let relay = Arc::new(Relay::new(
            self.shaper.clone(),
            self.max_message,
            to_host,
            to_upstream,
        ));
        let ended = tokio::select! {
            ended = relay.relay_host(host_in) => ended,
            ended = relay.relay_upstream(up_out) => ended,
        };
        // What is queued still goes out (the queues close with the relay),
        // then the upstream's stdin closes.
        drop(relay);
        let mut upstream_writer = upstream_writer;
        let _ = tokio::time::timeout(Duration::from_secs(1), &mut upstream_writer).await;
        upstream_writer.abort();
        let _ = tokio::time::timeout(Duration::from_secs(2), host_writer).await;
        ended
    }
}

/// [`Wrapper::relay`] over any byte streams (tests and fuzzing).
#[doc(hidden)]
pub async fn relay_streams<HR, HW, UR, UW>(
    wrapper: &Wrapper,
    host_in: HR,
    host_out: HW,
    up_out: UR,
    up_in: UW,
) -> bool
where
    HR: AsyncRead + Unpin,
    HW: AsyncWrite + Unpin + Send + 'static,
    UR: AsyncRead + Unpin,
    UW: AsyncWrite + Unpin + Send + 'static,
{
    let ended = wrapper
        .relay(
            BufReader::new(host_in),
            host_out,
            BufReader::new(up_out),
            up_in,
        )
        .await;
    ended == Ended::Host
}

#[cfg(test)]
mod tests;
