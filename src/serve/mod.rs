//! `mcp-preamble serve`: the hub's section and its servers' tools served
//! to a host as one MCP server (feature `serve`).
//!
//! Hosts you cannot change drop server instructions, cut each server's
//! blindly, or surface a few hundred characters. A [`Gateway`] sits between
//! such a host and its servers: it connects them through a [`Hub`] (both
//! eras, supervised, with a grace period), and serves
//!
//! - `instructions` (in `initialize`, and in `server/discover` for
//!   2026-07-28 clients, with `ttlMs: 0` so they ask again): the hub's
//!   section, read from its memo (no assembly per request), fitted to the
//!   host with [`ServeAs`];
//! - `tools/list`: every upstream tool the policy's filter sends
//!   (`[servers.<alias>.tools]`), with its overrides
//!   (`[servers.<alias>.tool.<name>]`), under a name of [`GatewayNames`]
//!   (`{alias}__{tool}`, at most 64 characters, never two alike; the
//!   section's tool lists and its prose name tools the same way, and a
//!   sentence about a hidden tool leaves it; a name once given stays with
//!   its (alias, tool) for the gateway's life, and a tool listed twice by
//!   its server is served once, the first), titles and descriptions
//!   sanitized; plus `mcp_preamble__instructions`, which
//!   returns one server's full instructions as the section's block starts
//!   from them (sanitized, tools named as listed, sentences about hidden
//!   tools out; the reviewed text while a change is held) when the budget
//!   shortened them. Names, titles, descriptions, annotations, schemas and
//!   the reader's text are one per-server result of the hub's assembly,
//!   the one its section is rendered from, made once per revision: the
//!   gateway maps it to the wire and decides nothing of its own;
//! - `tools/call`, forwarded to the upstream with its arguments; its
//!   result or JSON-RPC error comes back as sent, a host's cancellation
//!   (or the call timeout) cancels the upstream request
//!   (`notifications/cancelled`), and a fault (the upstream restarting,
//!   gone, or ending mid-call) is a JSON-RPC error naming the upstream;
//!   a call to a tool the policy hides is refused (invalid params);
//! - `notifications/progress`: when the host's call carries a
//!   `progressToken`, the upstream's progress for that call goes to that
//!   host under that token (progress, total and message as sent), in
//!   order and before the answer, and stops with the call. The upstream
//!   gets a token of its own (two hosts may use the same one); progress
//!   under a token the gateway did not give that upstream for a call in
//!   flight is dropped (logged at debug), never sent to another call;
//! - `notifications/tools/list_changed` once per change of the tools or
//!   the instructions (2025 sessions as notifications, 2026-07-28 ones
//!   through `subscriptions/listen`), at most one per 250 ms to a host:
//!   changes within that time are told together at its end, so an upstream
//!   that changes its tools thousands of times a second costs a host four
//!   notifications a second, and the last change always reaches it.
//!
//! A request of a method served here whose params do not read is invalid
//! params (-32602) naming the field; another method is method not found
//! (-32601).
//!
//! Everything served is what the assembly kept within its
//! [`Limits`](crate::Limits) (instructions, tools, descriptions, schemas;
//! the hub's report names each limit a server reached), sanitized: names,
//! titles and descriptions by the section's rules, and every string of an
//! `inputSchema` (property names, descriptions, titles, defaults, enums,
//! examples) without the hidden characters those rules drop (tag
//! characters, bidi controls, zero-width and control characters), the
//! rest as sent.
//!
//! Upstreams start in the background ([`Gateway::start_all`]): the host is
//! served from the start, from the snapshots the hub already holds (an
//! earlier run's, [`Hub::upsert_all`](crate::hub::Hub::upsert_all)), and
//! each server joins when it connects (`list_changed`); a call to a server
//! still starting waits for it. [`Gateway::connect_all`] waits for all.
//!
//! On stdio ([`Gateway::serve_stdio`]), or with the feature `serve-http`
//! over Streamable HTTP on a loopback address only (`Gateway::serve_http`
//! on a listener from `bind_loopback`), each client bounded by
//! `HttpLimits` (timeouts, connections, sessions) and refused for a
//! non-local `Origin` or a second `Host` header.
//!
//! Not served: resources and prompts of the upstreams (a host that needs
//! them connects the server directly).
//!
//! [`Wrapper`] is the other mode: one upstream per host entry, relayed
//! line for line (resources, prompts and the rest as sent), its
//! instructions and `tools/list` from the same assembly.
//!
//! ```no_run
//! # async fn run() -> mcp_preamble::Result<()> {
//! use mcp_preamble::Assembler;
//! use mcp_preamble::connect::{ConnectOptions, Restart};
//! use mcp_preamble::files::McpConfig;
//! use mcp_preamble::hub::Hub;
//! use mcp_preamble::serve::{Gateway, ServeAs, prepare};
//!
//! let config = McpConfig::from_path("mcp.json")?;
//! let host = ServeAs::ClaudeCode;
//! let gateway = Gateway::new(Hub::new(prepare(Assembler::new(), host)?), host);
//! let failed = gateway.connect_all(&config, &ConnectOptions::new().restart(Restart::new())).await;
//! gateway.serve_stdio().await?;
//! # Ok(()) }
//! ```
//!
//! [`Hub`]: crate::hub::Hub

mod fit;
mod forward;
mod gateway;
#[cfg(feature = "serve-http")]
mod http;
mod names;
mod progress;
mod rpc;
#[cfg(feature = "serve-http")]
mod sessions;
mod start;
mod view;
mod wrap;

pub use fit::ServeAs;
#[doc(hidden)]
pub use forward::forward_in_process;
pub use gateway::Gateway;
#[cfg(feature = "serve-http")]
#[cfg_attr(docsrs, doc(cfg(feature = "serve-http")))]
pub use http::{HttpLimits, bind_loopback};
pub use names::{GatewayNames, SCHEME, exposed_name, scheme};
pub use view::{NOTE, READER};
#[doc(hidden)]
pub use wrap::relay_streams;
pub use wrap::{MAX_MESSAGE_BYTES, Wrapper};

/// `assembler` made ready for a gateway that serves `host`: the section
/// names tools as the gateway exposes them ([`scheme`]), its assemblies
/// keep what each server exposes (what the gateway serves), and the whole
/// text, with the gateway's note about its reader tool ([`NOTE`]), fits the
/// host's cut ([`ServeAs::fit`]).
pub fn prepare(
    assembler: crate::assemble::Assembler,
    host: ServeAs,
) -> crate::error::Result<crate::assemble::Assembler> {
    // Slack for a reader renamed because an upstream tool had its name.
    let reserve = host.measure(NOTE) + 4;
    let hint = format!("call `{}` with this server's alias", view::READER);
    let assembler = assembler.full_text_hint(hint);
    host.fit(assembler.tool_names(scheme()).exposing(), reserve)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod name_tests;
