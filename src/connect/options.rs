//! [`ConnectOptions`]: how to reach a configured server, and who to say we are.

use std::time::Duration;

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};

use super::handshake::{Handshake, client_config};
use super::tap::{BoundTap, ProgressTap};

/// How [`connect`](super::connect), [`connect_all`](super::connect_all) and
/// `Hub::connect` reach a server.
///
/// ```
/// use std::time::Duration;
/// use mcp_preamble::connect::{ConnectOptions, Handshake};
/// use mcp_preamble::rmcp::model::{ClientCapabilities, Implementation};
///
/// let mut capabilities = ClientCapabilities::default();
/// capabilities.roots = Some(Default::default());        // if your handler answers roots/list
/// let options = ConnectOptions::new()
///     .handshake(Handshake::Auto)                       // the default
///     .timeout(Duration::from_secs(20))                 // default 30 s
///     .client_info(Implementation::new("my-host", "1.2.0"))
///     .capabilities(capabilities);
/// assert_eq!(options.client_config().client_info.name, "my-host");
/// ```
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    pub(super) handshake: Handshake,
    pub(super) timeout: Duration,
    probe: Option<Duration>,
    client: ClientConfig,
    pub(super) restart: Option<Restart>,
    pub(super) concurrency: usize,
    progress: Option<ProgressTap>,
}

impl Default for ConnectOptions {
    fn default() -> ConnectOptions {
        ConnectOptions::new()
    }
}

impl ConnectOptions {
    /// How many servers [`connect_all`](super::connect_all) and
    /// `Hub::connect_all` start at a time by default: 8, so that a config of
    /// thousands of servers does not run out of processes or file handles.
    pub const DEFAULT_CONCURRENCY: usize = 8;

    /// The longest default wait for `server/discover` under [`Handshake::Auto`].
    pub const MAX_DEFAULT_PROBE: Duration = Duration::from_secs(20);

    /// [`Handshake::Auto`], a 30 s timeout, and the identity of
    /// [`client_config`]: `mcp-preamble` and its version, no capabilities.
    pub fn new() -> ConnectOptions {
        ConnectOptions {
            handshake: Handshake::Auto,
            timeout: Duration::from_secs(30),
            probe: None,
            client: client_config(),
            restart: None,
            concurrency: Self::DEFAULT_CONCURRENCY,
            progress: None,
        }
    }

    /// The handshake to use (default [`Handshake::Auto`]).
    pub fn handshake(mut self, handshake: Handshake) -> ConnectOptions {
        self.handshake = handshake;
        self
    }

    /// How long one server may take from start to a complete snapshot
    /// (handshake and every `tools/list` page); default 30 s.
    pub fn timeout(mut self, timeout: Duration) -> ConnectOptions {
        self.timeout = timeout;
        self
    }

    /// Under [`Handshake::Auto`] on stdio: how long to wait for the answer to
    /// `server/discover` before sending `initialize` as well. Default: two
    /// thirds of the timeout, at most [`ConnectOptions::MAX_DEFAULT_PROBE`].
    ///
    /// Either way a server that answers within the timeout connects: a
    /// discover answer that arrives after `initialize` was sent is dropped,
    /// and the connection takes the 2025 era when `initialize` succeeds (the
    /// 2026-07-28 era when only `server/discover` does). The probe time
    /// only matters for a server that answers both: a long one lets it take
    /// the 2026-07-28 era even when it starts slowly; a short one costs less
    /// with a server that never answers `server/discover`.
    pub fn probe_timeout(mut self, probe: Duration) -> ConnectOptions {
        self.probe = Some(probe);
        self
    }

    /// The whole client identity sent in the handshake (`clientInfo`,
    /// capabilities, preferred version), for the functions that take no
    /// handler of yours. With your own handler, its
    /// [`get_info`](rmcp::ClientHandler::get_info) is sent instead.
    pub fn client(mut self, config: ClientConfig) -> ConnectOptions {
        self.client = config;
        self
    }

    /// The `clientInfo` sent in the handshake (see [`ConnectOptions::client`]).
    pub fn client_info(mut self, info: Implementation) -> ConnectOptions {
        self.client.client_info = info;
        self
    }

    /// The client capabilities sent in the handshake, e.g. roots (see
    /// [`ConnectOptions::client`]). Advertise only what your handler answers:
    /// the functions without a handler answer `roots/list` with no roots and
    /// decline sampling and elicitation.
    pub fn capabilities(mut self, capabilities: ClientCapabilities) -> ConnectOptions {
        self.client.capabilities = capabilities;
        self
    }

    /// How many servers [`connect_all`](super::connect_all) and
    /// `Hub::connect_all` start and read at a time (default
    /// [`ConnectOptions::DEFAULT_CONCURRENCY`]; 0 counts as 1). The next
    /// starts as soon as one is connected or has failed.
    pub fn concurrency(mut self, limit: usize) -> ConnectOptions {
        self.concurrency = limit.max(1);
        self
    }

    /// How many servers are started at once.
    #[cfg(feature = "serve")]
    pub(crate) fn concurrency_limit(&self) -> usize {
        self.concurrency
    }

    /// Restarts a server that `Hub::connect` or `Hub::connect_all` started
    /// when it ends on its own (not when the host closes it), within the
    /// hub's grace period: see [`Restart`]. Off by default; the other
    /// functions do not restart.
    pub fn restart(mut self, restart: Restart) -> ConnectOptions {
        self.restart = Some(restart);
        self
    }

    /// Shows every server's progress notifications to `tap` as they are
    /// read (for the gateway's relay; restarted connections too).
    #[cfg(feature = "serve")]
    pub(crate) fn tap_progress(mut self, tap: ProgressTap) -> ConnectOptions {
        self.progress = Some(tap);
        self
    }

    /// The progress tap of `alias`'s connection, if any.
    pub(super) fn progress_tap(&self, alias: &str) -> Option<BoundTap> {
        self.progress.as_ref().map(|t| t.bind(alias))
    }

    /// The identity the functions without a handler send.
    pub fn client_config(&self) -> &ClientConfig {
        &self.client
    }

    /// The probe time in effect (see [`ConnectOptions::probe_timeout`]).
    pub fn probe(&self) -> Duration {
        self.probe
            .unwrap_or_else(|| (self.timeout * 2 / 3).min(Self::MAX_DEFAULT_PROBE))
    }
}

/// How a hub restarts a server it started that ended on its own
/// ([`ConnectOptions::restart`]).
///
/// The `n`-th attempt (from 0) waits `first_pause · 2ⁿ`, at most
/// `max_pause`, of which a random half is left out (so servers that failed
/// together do not restart together); an attempt that would start after
/// the hub's grace period is not made, and after `max_attempts` failed
/// ones the server is left to the grace period (its block goes when it
/// ends). A server that connects again with the same snapshot keeps its
/// block byte for byte: no new revision. [`Hub::subscribe_states`] tells
/// of each step.
///
/// Restarts have a budget over time, so a server that exits after every
/// handshake is not started forever: at most `max_restarts` (default 5)
/// within `window` (default 60 s), each pausing as the next attempt of
/// the backoff above (250 ms, 500 ms, 1 s… before jitter); when the server
/// ends once more with the budget spent, the hub gives up: the server is
/// removed at once (`gone`, reason `gave_up`, one new revision) and not
/// started again.
///
/// ```
/// use std::time::Duration;
/// use mcp_preamble::connect::{ConnectOptions, Restart};
///
/// let restart = Restart::new().max_attempts(3).first_pause(Duration::from_millis(100));
/// let options = ConnectOptions::new().restart(restart);
/// assert!(restart.pause(0, 0.0) >= Duration::from_millis(50));
/// assert!(restart.pause(2, 0.99) <= Duration::from_millis(400));
/// let budget = Restart::new().max_restarts(3).window(Duration::from_secs(30));
/// assert_eq!((budget.restarts(), budget.restart_window()), (3, Duration::from_secs(30)));
/// ```
///
/// [`Hub::subscribe_states`]: crate::hub::Hub::subscribe_states
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Restart {
    pub(super) max_attempts: u32,
    first_pause: Duration,
    max_pause: Duration,
    max_restarts: u32,
    window: Duration,
}

impl Default for Restart {
    fn default() -> Restart {
        Restart::new()
    }
}

impl Restart {
    /// Five attempts, pausing 250 ms before the first, at most 8 s; at
    /// most five restarts within 60 s.
    pub const fn new() -> Restart {
        Restart {
            max_attempts: 5,
            first_pause: Duration::from_millis(250),
            max_pause: Duration::from_secs(8),
            max_restarts: 5,
            window: Duration::from_secs(60),
        }
    }

    /// How many times the server may be restarted within
    /// [`Restart::window`] (default 5); when it ends once more, the hub
    /// gives up on it. 0: it is never restarted.
    pub fn max_restarts(mut self, restarts: u32) -> Restart {
        self.max_restarts = restarts;
        self
    }

    /// The time over which [`Restart::max_restarts`] counts (default 60 s).
    pub fn window(mut self, window: Duration) -> Restart {
        self.window = window;
        self
    }

    /// The restart budget: how many within [`Restart::restart_window`].
    pub const fn restarts(&self) -> u32 {
        self.max_restarts
    }

    /// The time the restart budget counts over.
    pub const fn restart_window(&self) -> Duration {
        self.window
    }

    /// How many restarts to try, in a row, before giving up (default 5).
    pub fn max_attempts(mut self, attempts: u32) -> Restart {
        self.max_attempts = attempts;
        self
    }

    /// The pause before the first attempt, before jitter (default 250 ms).
    pub fn first_pause(mut self, pause: Duration) -> Restart {
        self.first_pause = pause;
        self
    }

    /// The longest pause, before jitter (default 8 s).
    pub fn max_pause(mut self, pause: Duration) -> Restart {
        self.max_pause = pause;
        self
    }

    /// The pause before attempt `attempt` (from 0) for a `jitter` in
    /// [0, 1): half the backed-off pause, plus `jitter` times the other half.
    pub fn pause(&self, attempt: u32, jitter: f64) -> Duration {
        let factor = 2u32.saturating_pow(attempt.min(31));
        let full = self.first_pause.saturating_mul(factor).min(self.max_pause);
        let half = full / 2;
        half + half.mul_f64(jitter.clamp(0.0, 1.0))
    }
}
