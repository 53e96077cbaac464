//! [`ConnectOptions`]: how to reach a configured server, and who to say we are.

use std::time::Duration;

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};

use super::handshake::{Handshake, client_config};

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
}

impl Default for ConnectOptions {
    fn default() -> ConnectOptions {
        ConnectOptions::new()
    }
}

impl ConnectOptions {
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
