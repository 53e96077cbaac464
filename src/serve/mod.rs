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
//!   from them (sanitized, tools named as the section names them, sentences
//!   about hidden tools out; the reviewed text while a change is held),
//!   listed to a host only when it did not read some server's text whole
//!   (shortened by the budget or the host's cap, joined after its
//!   `initialize`, or changed since). Names, titles, descriptions,
//!   annotations, schemas and
//!   the reader's text are one per-server result of the hub's assembly,
//!   the one its section is rendered from, made once per revision: the
//!   gateway maps it to the wire and decides nothing of its own. Fitted to
//!   a host that renames tools ([`prepare_named`]), the section names each
//!   tool as that host shows it (`mcp__preamble__billing__get_invoice`
//!   under Claude Code), and served names leave room for its prefix;
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
//! - prompts, resources and completions, when some upstream has them
//!   (the capabilities are advertised only then, or while upstreams are
//!   still starting): `prompts/list` merges every connected upstream's
//!   prompts (each one's pages, within [`Limits`](crate::Limits)) under
//!   names made as the tools' are ([`GatewayNames`]: the same scheme, a
//!   name once given kept by its (alias, prompt), never two alike), and
//!   `prompts/get` reaches the owner under its own name; `resources/list`
//!   and `resources/templates/list` merge every upstream's, URIs as sent,
//!   and `resources/read` goes to the one upstream that lists the URI or
//!   has a template that makes it (a URI two upstreams claim is served by
//!   neither, and the log says so once, naming both);
//!   `resources/subscribe` subscribes the gateway once to the owner, whose
//!   `notifications/resources/updated` reach the hosts subscribed to that
//!   URI (a 2026-07-28 host subscribes through `subscriptions/listen`);
//!   `completion/complete` goes to the prompt's or the template's owner; an
//!   upstream's prompts and resources `list_changed` reach each host paced
//!   as the tools' are. Names, titles and descriptions are sanitized as
//!   tool text is. A list waits at most 5 s for the servers still
//!   starting (a later one is told by `list_changed`); a request for a
//!   name or URI not listed yet waits for them as a call does.
//! - `skills/list` and `skills/get` (the Skills extension, declared with
//!   `resources`): every upstream's skills as the section shows them, each
//!   URI under its upstream's alias (`skill://billing/refunds/SKILL.md`);
//!   `skills/get`, and `resources/read` of a skill's files, forwarded to
//!   the owner under its own URI (contents renamed back); declared when
//!   some upstream has skills (with `resources`, which the extension
//!   needs), or while upstreams are still starting.
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
//! The route of a `tools/call`, in the files that take it (`src/serve/`,
//! on floors: `upstream/` lowest, then `surfaces/`, `gateway/`, `front/`):
//! 1. `front/http.rs` reads the request (or `front/stdio.rs` the line);
//! 2. `front/gate.rs` checks the one `Host`, that it is served, the
//!    `Origin` and the token, for every request before anything else;
//! 3. `front/ops.rs` answers the operations paths, `front/lane.rs` a
//!    stateless call rmcp would answer the same way, `front/stdio_lane.rs`
//!    a stdio host's call (handed to rmcp's own handler), rmcp the rest;
//! 4. `gateway/handler.rs` and `gateway::call_tool_as`: the reader tool,
//!    a hidden tool refused, the exposed name mapped to its upstream's;
//! 5. `upstream/send.rs`, the one way out (deadline, cancel, progress),
//!    to `upstream/direct.rs`, `upstream/piped.rs` (a stdio upstream's
//!    pipe) or rmcp's client, and back the same way.
//!
//! [`Wrapper`] is the other mode: one upstream per host entry, relayed
//! line for line (resources, prompts and the rest as sent), its
//! instructions and `tools/list` from the same assembly.
//!
//! The host's first line is read before the upstreams start
//! ([`StdioHost`]): a 2025-era upstream hears what its client may be asked
//! (sampling, elicitation, roots) once, at its handshake, so it is told
//! what this host declared.
//!
//! ```no_run
//! # async fn run() -> mcp_preamble::Result<()> {
//! use mcp_preamble::Assembler;
//! use mcp_preamble::connect::{ConnectOptions, Restart};
//! use mcp_preamble::connect::client_config;
//! use mcp_preamble::files::McpConfig;
//! use mcp_preamble::serve::{Gateway, ServeAs, StdioHost};
//!
//! let config = McpConfig::from_path("mcp.json")?;
//! let gateway = Gateway::new(Assembler::new(), ServeAs::ClaudeCode)?;
//! let host = StdioHost::hello().await?;
//! let options = ConnectOptions::new()
//!     .restart(Restart::new())
//!     .client(host.told(client_config()));
//! let failed = gateway.connect_all(&config, &options).await;
//! gateway.serve_stdio_host(host).await?;
//! # Ok(()) }
//! ```
//!
//! [`Hub`]: crate::hub::Hub

mod front;
mod gateway;
mod surfaces;
mod upstream;
mod wrap;

#[cfg(feature = "serve-auth")]
#[cfg_attr(docsrs, doc(cfg(feature = "serve-auth")))]
pub use front::auth::{Access, METADATA_PATH, OAuth, bind};
#[cfg(feature = "serve-http")]
#[cfg_attr(docsrs, doc(cfg(feature = "serve-http")))]
pub use front::http::{HttpLimits, HttpOptions, bind_loopback};
#[cfg(feature = "serve-http")]
#[cfg_attr(docsrs, doc(cfg(feature = "serve-http")))]
pub use front::ops::{DEFAULT_DRAIN, ReadinessCheck};
#[cfg(feature = "serve-http")]
#[cfg_attr(docsrs, doc(cfg(feature = "serve-http")))]
pub use front::replica::SessionKey;
pub use front::stdio::StdioHost;
#[doc(hidden)]
pub use gateway::call::forward_in_process;
pub use gateway::fit::ServeAs;
pub use gateway::metrics::{MAX_LABEL, MAX_SERIES, MAX_TOOLS};
pub use gateway::names::{
    DEFAULT_NAME, GatewayNames, Naming, Prefix, SCHEME, exposed_name, naming_for, scheme,
    scheme_for,
};
pub use gateway::view::{NOTE, READER, RefusedName};
pub use gateway::{Gateway, GatewayBuilder};
#[doc(hidden)]
pub use upstream::events::{EventReader, TooLong};
pub use upstream::send::DEFAULT_CALL_TIMEOUT;
#[doc(hidden)]
pub use wrap::relay_streams;
pub use wrap::{MAX_MESSAGE_BYTES, ModelReads, Wrapper};

/// `assembler` made ready for a gateway that serves `host` under the name
/// [`DEFAULT_NAME`] ([`prepare_named`]).
pub fn prepare(
    assembler: crate::assemble::Assembler,
    host: ServeAs,
) -> crate::error::Result<crate::assemble::Assembler> {
    prepare_named(assembler, host, DEFAULT_NAME)
}

/// `assembler` made ready for a gateway that serves `host`, whose config
/// names the gateway `name` (`serve --name`): the section names tools as
/// the gateway exposes them ([`scheme_for`]) and as the host shows those
/// (`mcp__NAME__billing__get_invoice` under Claude Code,
/// [`Assembler::shown_through`](crate::Assembler::shown_through)), its
/// assemblies keep what each server exposes (what the gateway serves),
/// and the whole text, with the gateway's note about its reader tool
/// ([`NOTE`]), fits the host's cut ([`ServeAs::fit`]).
pub fn prepare_named(
    assembler: crate::assemble::Assembler,
    host: ServeAs,
    name: &str,
) -> crate::error::Result<crate::assemble::Assembler> {
    prepare_naming(assembler, host, name, &Naming::default())
}

/// [`prepare_named`] for a gateway that names what it serves by `naming`
/// (`serve --prefix`, `--separator`; [`naming_for`]).
pub fn prepare_naming(
    assembler: crate::assemble::Assembler,
    host: ServeAs,
    name: &str,
    naming: &Naming,
) -> crate::error::Result<crate::assemble::Assembler> {
    let assembler = match gateway::names::host_scheme(host) {
        Some(shown) => assembler.shown_through(shown, name),
        None => assembler,
    };
    let reader = assembler.shown_name(gateway::view::READER);
    // Slack for a reader renamed because an upstream tool had its name.
    let reserve = host.measure(&NOTE.replace(gateway::view::READER, &reader)) + 4;
    let hint = format!("call `{reader}` with this server's alias");
    let assembler = assembler.full_text_hint(hint);
    host.fit(
        assembler
            .tool_names(naming_for(host, name, naming))
            .exposing(),
        reserve,
    )
}
