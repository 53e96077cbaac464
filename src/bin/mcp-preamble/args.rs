//! The command line: clap's types (their value parsers are `parse`'s).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use mcp_preamble::connect::Handshake;
use mcp_preamble::settings::{Capability, ClientSettings};

use crate::parse::{
    parse_capability, parse_handshake, parse_lint_code, parse_positive_timeout, parse_prefix,
    parse_rate, parse_replica_id, parse_serve_as, parse_server_budget, parse_severity,
    parse_timeout, parse_tokens, parse_tool_names, parse_tools, parse_ttl,
};

/// Preview the system-prompt section your MCP servers' instructions make.
#[derive(Parser)]
#[command(name = "mcp-preamble", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Connect to servers (or read files) and print the assembled section and a token table.
    Preview(Preview),
    /// Connect to the servers of a config and write one snapshot file per server.
    ///
    /// Exit status: 0 when every server's file was written; 1 when a server
    /// failed, or a file was skipped (it exists; see `--force`) or could not
    /// be written; 2 when nothing could start (no or a bad config, `--out`
    /// not creatable).
    Snapshot(SnapshotArgs),
    /// Lint servers' instructions (files or a config's live servers): findings per server.
    Lint(LintArgs),
    /// Pin what servers say now (instructions and tools) in a lock file, for `preview --lock`.
    ///
    /// Servers not in the lock are added; a server that changed since it
    /// was pinned keeps its old pin unless named with `--update ALIAS`, and
    /// its change is summed up (exit 1). `--all` rewrites the lock from the
    /// servers given (a server no longer given loses its pin). Unchanged
    /// servers give a byte-identical file. Exit status: 0 when every server
    /// given is pinned as it is now; 1 when a changed server was not pinned
    /// again or a server failed (its old pin is kept; the lock is still
    /// written); 2 when nothing could start (bad lock, config or alias).
    Pin(PinArgs),
    /// Serve the section and the servers' tools to a host as one MCP server on stdio (a gateway).
    ///
    /// Hosts see the assembled, budgeted instructions (`--as` fits them to
    /// a host's cut) and every server's tools as `ALIAS__TOOL`; calls go to
    /// the server that owns the tool. Servers that end are restarted.
    /// With `--lock` and `on_change = "hold"`, a server's changed text is
    /// held until `pin --update ALIAS` (alias `--approve`) writes the lock;
    /// the running gateway reloads the lock and the policy when either file
    /// changes or on SIGHUP. With `--state redis://…` the pins are shared
    /// by every gateway and followed as `pin --state` writes them. Stdout
    /// carries MCP messages only.
    Serve(Box<ServeArgs>),
    /// Serve one MCP server to a host as it is, but for its instructions and tool descriptions.
    ///
    /// Starts COMMAND (or reaches `--url`) and relays it to this process's stdio, message for
    /// message: tools, resources, prompts, completions, logging, and the
    /// server's own requests (sampling, elicitation, roots) pass as sent.
    /// Its instructions are sanitized, de-duplicated against its tools,
    /// pinned (`--lock`), within the policy's budgets and, with `--as`,
    /// within the host's per-server cap; its tools/list gets the policy's
    /// filter and overrides with descriptions and schemas sanitized; a call
    /// to a hidden tool is refused (-32602). Stdout carries MCP messages
    /// only; the log goes to stderr. Exit status: 0 when the host closed
    /// the connection or the server exited with 0; 1 when the server
    /// ended otherwise; 2 when it could not start.
    Wrap(WrapArgs),
    /// Rewrite a host's MCP config so that each server runs under `wrap` (a backup beside it).
    ///
    /// Each stdio entry's command becomes `mcp-preamble wrap --as HOST
    /// --name KEY -- COMMAND ARGS…`; comments, key order, other keys and
    /// entries already wrapped are left as they are, so a second run
    /// changes nothing. URL (HTTP) entries are left alone and named. The
    /// first run keeps the file as it was in FILE.mcp-preamble.bak.
    Install(InstallArgs),
    /// Undo `install`: the backup back byte for byte when the config is
    /// still what install wrote, else each wrapped entry unwrapped in place.
    Uninstall(InstallArgs),
    /// Print, per server, what a host's model reads after `install`.
    ///
    /// The text `wrap --as HOST` serves, where the host reads it (the
    /// instructions field, or for a host that reads none the reader tool's
    /// description), its length against the host's cap, the units cut, and
    /// the tools as listed. Servers come from capture or snapshot files or
    /// a config (`--config`, before install: the servers' own commands).
    Show(ShowArgs),
}

#[derive(Args)]
pub struct ShowArgs {
    #[arg(long = "host", value_name = "HOST", value_parser = parse_serve_as, help = format!(
        "The host whose model reads: {}, a host that reads no instructions, or `plain`",
        serve_hosts()
    ))]
    pub host: mcp_preamble::serve::ServeAs,
    /// Capture or snapshot files (as `preview` reads them).
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub connect: Connect,
    /// A policy file (`mcp-preamble.toml`), as `wrap --policy` reads it.
    #[arg(long, value_name = "PATH")]
    pub policy: Option<PathBuf>,
}

#[derive(Args)]
pub struct WrapArgs {
    /// A policy file (`mcp-preamble.toml`): budgets, the server's
    /// `[servers.NAME]` table, its tool rules and overrides.
    #[arg(long, value_name = "PATH")]
    pub policy: Option<PathBuf>,
    /// A lock file made by `pin`: the server's reviewed text (`on_change`).
    #[arg(long, value_name = "PATH")]
    pub lock: Option<PathBuf>,
    #[arg(long = "as", default_value = "plain", value_name = "HOST", value_parser = parse_serve_as, help = format!(
        "Fit the instructions to the host's per-server cap, in its unit: {}, or `plain` \
         (the policy's token budgets only)",
        serve_hosts()
    ))]
    pub serve_as: mcp_preamble::serve::ServeAs,
    /// The name the policy and the lock know this server by (the key of
    /// its entry in the host's config); default: its serverInfo name.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// The longest message either side may send, in MiB; a longer one
    /// ends the connection.
    #[arg(long, default_value = "64", value_name = "MIB", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub max_message_mib: u32,
    #[arg(long, value_name = "FILE", help = format!(
        "Write the log here instead of stderr (never stdout); `MCP_PREAMBLE_LOG` sets what it \
         says; default `{LOG_DEFAULT}`"
    ))]
    pub log: Option<PathBuf>,
    /// A Streamable HTTP server to relay instead of a command: each host
    /// message one POST, its session kept, deleted when the host goes.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    pub url: Option<String>,
    /// The server to start, and its arguments (after `--`).
    #[arg(last = true, required_unless_present = "url", value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[derive(Args)]
pub struct InstallArgs {
    /// The host whose MCP config file to change.
    #[arg(long, value_enum, value_name = "HOST")]
    pub host: HostKind,
    /// The config file (default: every scope's file of the host that
    /// exists, see the README).
    #[arg(long, value_name = "PATH")]
    pub host_config: Option<PathBuf>,
    /// List each scope's servers and whether each runs under `wrap`;
    /// change nothing.
    #[arg(long)]
    pub list: bool,
    /// Print the changes as a diff; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Claude Code: mark each wrapped entry `"alwaysLoad": true`, so its
    /// tools (and its instructions) are loaded on the first turn instead of
    /// behind tool search.
    #[arg(long)]
    pub always_load: bool,
}

/// What `serve` logs when `MCP_PREAMBLE_LOG` is not set: the gateway's
/// `info`, and only rmcp's warnings.
pub const LOG_DEFAULT: &str = "info,rmcp=warn";

#[derive(Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub connect: Connect,
    /// A policy file (`mcp-preamble.toml`), reloaded when it changes.
    #[arg(long, value_name = "PATH")]
    pub policy: Option<PathBuf>,
    /// A lock file made by `pin`, reloaded when it changes (approvals).
    #[arg(long, value_name = "PATH")]
    pub lock: Option<PathBuf>,
    /// Re-read `--config` whenever it changes, as on SIGHUP: upstreams
    /// added, removed or changed are started, stopped or restarted.
    #[arg(long)]
    pub watch_config: bool,
    /// Review state shared by gateways in Redis or Valkey instead of a lock
    /// file, followed as it changes: `redis://HOST:PORT/DB`, or
    /// `rediss://` over TLS (`USER:PASSWORD@` before the host when Redis
    /// asks for them).
    #[arg(long, value_name = "URL", conflicts_with = "lock")]
    pub state: Option<String>,
    // The help names the hosts and caps of the library's table (`serve_hosts`).
    #[arg(long = "as", default_value = "plain", value_name = "HOST", value_parser = parse_serve_as, help = format!(
        "Fit the whole instructions text to the host's cap, in its unit, as well as the \
         policy's token budgets (which stay in the model's tokens): {}, or `plain` (the \
         token budgets only)",
        serve_hosts()
    ))]
    pub serve_as: mcp_preamble::serve::ServeAs,
    /// The key the host's config gives the gateway: with `--as HOST` the
    /// instructions name tools as that host shows them
    /// (`mcp__NAME__billing__get_invoice` under Claude Code), and tool
    /// names are kept short enough for the host's prefix.
    #[arg(long, default_value = mcp_preamble::serve::DEFAULT_NAME, value_name = "NAME")]
    pub name: String,
    /// When served tool and prompt names start with their upstream's
    /// alias: `always` (the default, `billing__get_invoice`), `never`
    /// (`get_invoice`; refused at start when two upstreams have one name,
    /// and a tool that takes another's name later is not served), or
    /// `on-collision` (only names more than one upstream has). Default:
    /// the policy's `[serve] prefix`, else `always`.
    #[arg(long, value_name = "WHEN", value_parser = parse_prefix)]
    pub prefix: Option<mcp_preamble::serve::Prefix>,
    /// What stands between alias and name when prefixed: 1 to 8 of
    /// `A-Z a-z 0-9 _ -`. Default: the policy's `[serve] separator`, else `__`.
    #[arg(long, value_name = "TEXT")]
    pub separator: Option<String>,
    /// Fail a forwarded tools/call after this many seconds, and any other
    /// request to an upstream too (the upstream is told to cancel it).
    /// Default: 300 for a call, 30 for other requests; 0: calls take as
    /// long as they take.
    #[arg(long, value_name = "SECONDS", value_parser = parse_timeout)]
    pub call_timeout: Option<Duration>,
    /// On a first start (no snapshot of an earlier run in the state
    /// directory), wait for the servers at most this long after the
    /// gateway started before serving the host; the others join later
    /// (`list_changed`). With snapshots the
    /// host is served at once from them.
    #[arg(long, default_value = "5", value_name = "SECONDS", value_parser = parse_timeout)]
    pub ready_within: Duration,
    /// The gateway's state directory (its status for `--status`, and the
    /// servers' last snapshots, served at once on the next start); default:
    /// a folder named after the config in the user's cache directory
    /// (`$XDG_CACHE_HOME` or `~/.cache`, `mcp-preamble/serve/`).
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Print the state of the gateway of `--config` (the one that ran last
    /// with it and this `--state-dir`): each upstream's state, process id
    /// and restarts; then exit.
    #[arg(long)]
    pub status: bool,
    /// Restart an upstream that ended on its own at most this many times
    /// within `--restart-window`; when it ends once more the gateway gives
    /// up on it (its tools leave). 0: never restart.
    #[arg(long, default_value = "5", value_name = "N")]
    pub restart_max: u32,
    /// The time over which `--restart-max` counts restarts.
    #[arg(long, default_value = "60", value_name = "SECONDS", value_parser = parse_positive_timeout)]
    pub restart_window: Duration,
    /// Serve Streamable HTTP on this address (`127.0.0.1:PORT`,
    /// `[::1]:PORT`; port 0 picks one, logged) instead of stdio, with
    /// `/healthz`, `/readyz` and `/metrics`; runs until SIGTERM or Ctrl-C
    /// (then drains: `--drain-seconds`). A non-loopback address needs
    /// `--auth-tokens` or `--oauth-issuer`, and `--tls-cert`/`--tls-key` or
    /// `--behind-proxy`.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<std::net::SocketAddr>,
    /// With `--listen`: `/metrics`, `/healthz` and `/readyz` on this address
    /// too (plain HTTP, no token) for a scraper; nothing else is served there.
    #[arg(long, value_name = "ADDR", requires = "listen")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// With `--listen`: at most N requests a second from each caller (its
    /// token, else its address); more get 429 with `Retry-After`.
    #[arg(long, value_name = "N/s", value_parser = parse_rate, requires = "listen")]
    pub rate_limit: Option<f64>,
    /// The log's lines: `text`, or `json` (one object a line).
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    pub log_format: String,
    /// With `--listen`: every request needs `Authorization: Bearer TOKEN`
    /// with a token of this file (one per line, at least 16 characters;
    /// blank lines and `#` comments skipped), reloaded when it changes.
    #[arg(long, value_name = "FILE", requires = "listen")]
    pub auth_tokens: Option<PathBuf>,
    /// With `--listen`: accept OAuth 2.1 access tokens (JWTs) of this
    /// issuer, checked against its keys (its JWKS, found through its
    /// metadata, or `--oauth-jwks`).
    #[arg(long, value_name = "URL", requires_all = ["listen", "oauth_audience"])]
    pub oauth_issuer: Option<String>,
    /// With `--oauth-issuer`: the audience the tokens must name (`aud`),
    /// usually this gateway's URL (`https://NAME/mcp`).
    #[arg(long, value_name = "AUD", requires = "oauth_issuer")]
    pub oauth_audience: Option<String>,
    /// With `--oauth-issuer`: the issuer's keys from this JWKS file instead
    /// of fetched from the issuer.
    #[arg(long, value_name = "FILE", requires = "oauth_issuer")]
    pub oauth_jwks: Option<PathBuf>,
    /// With `--oauth-issuer`: the scopes clients should ask the issuer for
    /// (comma-separated, or repeated), named in the `401`'s challenge and
    /// the metadata's `scopes_supported`.
    #[arg(
        long,
        value_name = "SCOPE,...",
        value_delimiter = ',',
        requires = "oauth_issuer"
    )]
    pub oauth_scopes: Vec<String>,
    /// With `--listen`: serve HTTPS with this certificate chain (PEM, leaf
    /// first); read again when it or the key file changes (a renewal).
    #[arg(long, value_name = "PEM", requires_all = ["listen", "tls_key"])]
    pub tls_cert: Option<PathBuf>,
    /// With `--tls-cert`: the certificate's private key (PEM).
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// With `--listen` on a non-loopback address: plain HTTP, for a
    /// TLS-terminating proxy in front (URLs the gateway gives say https).
    #[arg(long, requires = "listen")]
    pub behind_proxy: bool,
    /// With `--listen`: a `Host` the gateway answers to (`NAME` or
    /// `NAME:PORT`), repeatable. Off loopback, when given, other hosts are
    /// refused and a browser's `Origin` must be one of them.
    #[arg(long = "allowed-host", value_name = "NAME", requires = "listen")]
    pub allowed_hosts: Vec<String>,
    /// With `--listen`: close a connection that has not sent a whole
    /// request head this many seconds after it opened or was last answered.
    #[arg(long, default_value = "10", value_name = "SECONDS", value_parser = parse_positive_timeout)]
    pub header_timeout: Duration,
    /// With `--listen`: close a connection that moved no byte for this
    /// many seconds (event streams send a keep-alive every 15).
    #[arg(long, default_value = "120", value_name = "SECONDS", value_parser = parse_positive_timeout)]
    pub idle_timeout: Duration,
    /// With `--listen`: connections served at once (more wait to be accepted).
    #[arg(long, default_value = "256", value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,
    /// With `--listen`: live MCP sessions; a new one beyond closes the
    /// least recently used.
    #[arg(long, default_value = "128", value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_sessions: u32,
    /// With `--listen`: close a session without a request for this many seconds.
    #[arg(long, default_value = "300", value_name = "SECONDS", value_parser = parse_positive_timeout)]
    pub session_idle: Duration,
    /// With `--listen`: seal each session's state into its `Mcp-Session-Id`
    /// with the key in FILE (32 random bytes, or one key a line in hex or
    /// base64: `openssl rand -hex 32 > FILE`), so that every gateway
    /// reading the same FILE serves any request of any session (replicas
    /// behind a load balancer). The first key seals, every key opens.
    /// The task ids and `requestState` values hosts get are sealed with
    /// the whole FILE too, so any replica reading it routes them.
    #[arg(long, value_name = "FILE", requires = "listen")]
    pub session_key_file: Option<PathBuf>,
    /// With `--listen`: this replica's name, in every answer's
    /// `Mcp-Replica` header and `mcp_replica` cookie, for a load balancer
    /// that keeps a host on one replica (session affinity: upstreams with
    /// state of their own). Letters, digits, `-`, `_` and `.`, at most 64.
    #[arg(long, value_name = "NAME", requires = "listen", value_parser = parse_replica_id)]
    pub replica_id: Option<String>,
    /// With `--session-key-file`: refuse a session's id this many seconds
    /// after the session began (404: the host starts a new session).
    #[arg(long, default_value = "86400", value_name = "SECONDS", value_parser = parse_ttl, requires = "session_key_file")]
    pub session_ttl: Duration,
    /// With `--listen`: on SIGTERM or Ctrl-C, stop accepting connections and
    /// give the requests in flight this many seconds to finish, then exit.
    #[arg(long, default_value = "10", value_name = "SECONDS", value_parser = parse_timeout)]
    pub drain_seconds: Duration,
    #[arg(long, value_name = "FILE", help = format!(
        "Write the log here instead of stderr (never stdout). What it says is \
         `MCP_PREAMBLE_LOG`: levels (`error`, `warn`, `info`, `debug`, `trace`), per target if \
         you like (`info,rmcp=debug`); default `{LOG_DEFAULT}`"
    ))]
    pub log: Option<PathBuf>,
}

#[derive(Args)]
pub struct PinArgs {
    /// Capture files (tests/corpus format) or snapshot files.
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub connect: Connect,
    /// The lock file to write (read first when it exists).
    #[arg(long, value_name = "PATH", required_unless_present = "state")]
    pub lock: Option<PathBuf>,
    /// Review state shared by gateways in Redis or Valkey to write instead
    /// of a lock file (each pin written is recorded as an approval):
    /// `redis://HOST:PORT/DB`, or `rediss://` over TLS (`USER:PASSWORD@`
    /// before the host when Redis asks for them).
    #[arg(long, value_name = "URL", conflicts_with = "lock")]
    pub state: Option<String>,
    /// Pin these changed aliases again (repeatable, or several after one
    /// flag); a `pin --review` digest pins exactly the text it was shown
    /// for, and is refused when the server says something else now.
    #[arg(long, visible_alias = "approve", value_name = "ALIAS|DIGEST", num_args = 1.., conflicts_with = "all")]
    pub update: Vec<String>,
    /// Show each new or changed server's diff and the digest that approves
    /// exactly that text; write nothing.
    #[arg(long, conflicts_with_all = ["update", "all"])]
    pub review: bool,
    /// Who approves, recorded with each pin written (default: the OS user).
    #[arg(long, value_name = "NAME")]
    pub approver: Option<String>,
    /// A policy file (`mcp-preamble.toml`): its `[client]` is who `pin`
    /// says it is, so the lock matches the host that shares the file.
    #[arg(long, value_name = "PATH")]
    pub policy: Option<PathBuf>,
    /// Pin every server given again and drop the pins of servers not given.
    #[arg(long)]
    pub all: bool,
}

#[derive(Args)]
pub struct Connect {
    /// An MCP config: Claude Desktop / Cursor `mcpServers`, VS Code `servers`, or `url` entries.
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Seconds each server has for its handshake and tools/list.
    #[arg(long, default_value = "30", value_name = "SECONDS", value_parser = parse_timeout)]
    pub timeout: Duration,
    /// `legacy` (initialize), `auto` (server/discover, falling back), or a revision such as `2026-07-28`.
    #[arg(long, default_value = "auto", value_parser = parse_handshake)]
    pub handshake: Handshake,
    /// Reuse stored server/discover results while their ttlMs says they are fresh.
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// The client name (and version) sent in the handshake, as your host
    /// says it: servers can show other tools to other clients. Default: the
    /// policy file's `[client]`, else `mcp-preamble`.
    #[arg(long, value_name = "NAME[@VERSION]")]
    pub client_name: Option<String>,
    /// Client capabilities to advertise, comma-separated: `roots`,
    /// `sampling`, `elicitation`. Default: the policy file's `[client]`,
    /// else none. `serve` relays those requests to the host whose call an
    /// upstream answers (when it declared them too): over HTTP these are
    /// what a 2025-era upstream's shared connection is told (a host that
    /// declared otherwise gets a connection told its own), over stdio the
    /// host's `initialize` replaces them; elsewhere only roots/list is
    /// answered (the `[client]` roots).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_capability)]
    pub capabilities: Vec<Capability>,
    /// The policy file's `[client]`, set by the subcommand before it connects.
    #[arg(skip)]
    pub client: ClientSettings,
}

impl Connect {
    /// The identity to connect with: the policy file's `[client]` with
    /// the flags over it.
    pub fn client_settings(&self) -> ClientSettings {
        let mut flags = ClientSettings::default();
        if let Some(given) = &self.client_name {
            let (name, version) = match given.rsplit_once('@') {
                Some((name, version)) if !name.is_empty() => (name, Some(version.to_string())),
                _ => (given.as_str(), None),
            };
            flags.name = Some(name.to_string());
            flags.version = version;
        }
        flags.capabilities.clone_from(&self.capabilities);
        self.client.clone().overlay(&flags)
    }
}

#[derive(Args)]
pub struct Preview {
    /// Capture files (tests/corpus format) or snapshot files.
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub connect: Connect,
    /// Token budget of every server's block.
    #[arg(long, value_name = "N", value_parser = parse_tokens)]
    pub budget: Option<usize>,
    /// Token budget of one server, by alias (repeatable); an alias no server has is warned about.
    #[arg(long, value_name = "ALIAS=N", value_parser = parse_server_budget)]
    pub server_budget: Vec<(String, usize)>,
    /// Token budget of the whole section, shared fairly.
    #[arg(long, value_name = "N", value_parser = parse_tokens)]
    pub total_budget: Option<usize>,
    /// A server whose tools the host defers behind tool search, by alias (repeatable).
    #[arg(long, value_name = "ALIAS")]
    pub deferred: Vec<String>,
    /// Defer the tools of servers with more than N tools.
    #[arg(long, value_name = "N", value_parser = parse_tools)]
    pub defer_over: Option<usize>,
    /// `markdown` (the default), `xml`, or a template file.
    #[arg(long, value_name = "NAME|PATH")]
    pub template: Option<String>,
    /// `o200k_base` (the default), `cl100k_base`, or a model name.
    #[arg(long, value_name = "E")]
    pub encoding: Option<String>,
    // The help names the schemes of the library's table.
    #[arg(long, value_name = "SCHEME", value_parser = parse_tool_names, help = format!(
        "The names the model sees for tools, as this host names them: `{}` (`plain`, the \
         tools' own names, is the default), or a pattern such as `{{server}}__{{tool}}`",
        mcp_preamble::ToolNames::names().join("`, `")
    ))]
    pub tool_names: Option<mcp_preamble::ToolNames>,
    #[arg(long, value_enum, default_value_t = Target::Section, help = format!(
        "`section` (the default): the system-prompt section; `namespace`: also each \
         server's block as a namespace description within {} characters, constraints \
         first (Codex and OpenAI tool search)",
        namespace_chars()
    ))]
    pub target: Target,
    /// Count in this model's tokens (`gpt-4o`, `llama-3.1` with `--tokenizer`,
    /// `claude-sonnet-4`: an estimate); overrides `--encoding`'s default.
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// Count with this Hugging Face `tokenizer.json` (exact).
    #[arg(long, value_name = "FILE")]
    pub tokenizer: Option<String>,
    /// A policy file (`mcp-preamble.toml`); flags override its settings.
    #[arg(long, value_name = "PATH")]
    pub policy: Option<PathBuf>,
    // The help names the hosts of the library's table (`host_names`).
    #[arg(long = "hosts", value_name = "HOSTS", help = format!(
        "What survives these hosts' own cuts, per server (as `lint --hosts`): the characters \
         and tokens that reach the model and the constraint sentences lost: comma-separated {}, \
         `mcp-preamble` (at `--budget`), or `all`",
        host_names()
    ))]
    pub hosts: Option<String>,
    // `--as` means what it means for `wrap` and `serve`: fit to the host.
    #[arg(long = "as", value_name = "HOST", value_parser = parse_serve_as,
        conflicts_with_all = ["json", "hosts", "check", "target"], help = format!(
        "Print, per server, what the host's model reads through `wrap --as HOST` (the same \
         as `show --host HOST`, with this command's budgets and lock): {}, or `plain`",
        serve_hosts()
    ))]
    pub serve_as: Option<mcp_preamble::serve::ServeAs>,
    /// A lock file made by `pin`: each server is compared with its pin
    /// (a `pin` column, and the diff of changed instructions under the table).
    #[arg(long, value_name = "PATH")]
    pub lock: Option<PathBuf>,
    /// Review state shared by gateways in Redis or Valkey, instead of a
    /// lock file: `redis://HOST:PORT/DB`, or `rediss://` over TLS
    /// (`USER:PASSWORD@` before the host when Redis asks for them).
    #[arg(long, value_name = "URL", conflicts_with = "lock")]
    pub state: Option<String>,
    /// Print the report as JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Exit 1 when any server failed or needed budget trimming, when a
    /// setting (`--server-budget`, `--deferred`, a `[servers.<alias>]` of
    /// `--policy`) names an alias no server has, or (with `--lock`) when a
    /// server is new or changed and its policy's `on_change` is not `accept`.
    #[arg(long)]
    pub check: bool,
}

#[derive(Args)]
pub struct SnapshotArgs {
    #[command(flatten)]
    pub connect: Connect,
    /// Directory for the snapshot files (`<alias>.json`). An existing file
    /// (or symlink) of that name is kept and reported, unless `--force`.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Replace existing files; a symlink is replaced itself, never followed.
    #[arg(long)]
    pub force: bool,
    /// A policy file (`mcp-preamble.toml`): servers it excludes are not
    /// written, and a policy for an alias no server has is warned about.
    #[arg(long, value_name = "PATH")]
    pub policy: Option<PathBuf>,
}

#[derive(Args)]
pub struct LintArgs {
    /// Capture files (tests/corpus format) or snapshot files.
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub connect: Connect,
    /// `text`, `json`, or `sarif` (SARIF 2.1.0, for code-scanning tools).
    #[arg(long, value_enum, default_value_t = LintFormat::Text)]
    pub format: LintFormat,
    /// Exit 1 when a finding is at or above this level: `note`, `warning` or `error`.
    #[arg(long, default_value = "error", value_name = "LEVEL", value_parser = parse_severity)]
    pub deny: mcp_preamble::lint::Severity,
    /// Instructions over this many tokens get MCP004.
    #[arg(long, default_value_t = mcp_preamble::lint::DEFAULT_MAX_TOKENS, value_name = "N", value_parser = parse_tokens)]
    pub max_tokens: usize,
    /// `o200k_base` (the default), `cl100k_base`, or a model name.
    #[arg(long, value_name = "E")]
    pub encoding: Option<String>,
    /// Count in this model's tokens (`gpt-4o`, `llama-3.1` with `--tokenizer`,
    /// `claude-sonnet-4`: an estimate); overrides `--encoding`'s default.
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// Count with this Hugging Face `tokenizer.json` (exact).
    #[arg(long, value_name = "FILE")]
    pub tokenizer: Option<String>,
    /// A policy file (`mcp-preamble.toml`): its encoding, unless `--encoding`;
    /// servers it excludes are not linted; a policy for an alias no server
    /// has is warned about.
    #[arg(long, value_name = "PATH")]
    pub policy: Option<PathBuf>,
    /// The token table under several models side by side, comma-separated
    /// (`gpt-4o,llama-3.1=FILE,claude-sonnet-4`): instructions and tool
    /// definitions, per server; a model counted with its `tokenizer.json`
    /// takes the file after `=`.
    #[arg(long, value_name = "MODEL[=FILE],…", value_delimiter = ',')]
    pub models: Vec<String>,
    /// Turn a lint off, by code or name (repeatable): `--allow MCP002`, `--allow restates-tool`.
    #[arg(long, value_name = "CODE", value_parser = parse_lint_code)]
    pub allow: Vec<mcp_preamble::lint::LintCode>,
    // The help names the hosts of the library's table (`host_names`).
    #[arg(long, value_name = "HOSTS", help = format!(
        "Show what survives these hosts and report constraint sentences they cut off (MCP010): \
         comma-separated {}, `mcp-preamble` (at `--max-tokens`), `mcp-preamble=N`, or `all`",
        host_names()
    ))]
    pub hosts: Option<String>,
    /// Connect to each server of `--config` N times (1 to 10), one connect
    /// after another, and report instructions or tools that change between
    /// connects (MCP016).
    #[arg(long, default_value_t = 1, value_name = "N", requires = "config",
          value_parser = clap::value_parser!(u8).range(1..=10))]
    pub connects: u8,
    /// Connect to each server of `--config` once more in the other era
    /// (`initialize` after `server/discover`, or the other way) and report
    /// instructions or tools that differ (MCP015). Capture files that hold
    /// both handshakes are always compared.
    #[arg(long, requires = "config")]
    pub eras: bool,
}

/// What `preview` renders besides the section.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    /// The system-prompt section.
    Section,
    /// The section and each server's namespace description.
    Namespace,
}

/// The characters of a namespace description Codex and OpenAI tool search
/// surface: Codex's cap in the library's host table.
pub fn namespace_chars() -> usize {
    mcp_preamble::hosts::namespace_chars()
}

/// The hosts `serve --as` fits to, with their caps, as the help lists them.
fn serve_hosts() -> String {
    let hosts: Vec<String> = mcp_preamble::serve::ServeAs::all()
        .into_iter()
        .filter_map(|h| Some(format!("`{h}` ({} in all)", h.cap()?)))
        .collect();
    hosts.join(", ")
}

/// The hosts whose MCP config `install` edits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum HostKind {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    Vscode,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum LintFormat {
    Text,
    Json,
    Sarif,
}

/// The known hosts' names as the help lists them, from the library's table.
fn host_names() -> String {
    let names: Vec<String> = mcp_preamble::lint::HostProfile::known()
        .iter()
        .map(|p| format!("`{}`", p.name))
        .collect();
    names.join(", ")
}
