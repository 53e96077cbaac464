//! `[client]`: who the CLI (and a host sharing the policy file) says it is
//! when it connects.

use serde::Deserialize;

use crate::error::{Error, ErrorKind, Result};

/// `[client]`: the identity sent in the handshake (`clientInfo` and
/// capabilities) and the roots answered to `roots/list`.
///
/// Servers show different tools to different clients (server-everything
/// registers `get-roots-list` only for a client with roots), so a lock made
/// by the CLI matches a host only when both say the same: give the host's
/// name and capabilities here, and let the host read them too
/// ([`ClientSettings::client_config`], [`ClientSettings::handler`]).
///
/// ```
/// use mcp_preamble::settings::{Capability, Settings};
/// let settings = Settings::from_str(
///     "version = 1\n[client]\nname = \"acme-agent\"\nversion = \"1.2.0\"\n\
///      capabilities = [\"roots\"]\nroots = [\"file:///work/project\"]\n",
///     "mcp-preamble.toml",
/// )?;
/// assert_eq!(settings.client.name.as_deref(), Some("acme-agent"));
/// assert_eq!(settings.client.capabilities, [Capability::Roots]);
/// # Ok::<(), mcp_preamble::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ClientSettings {
    /// `clientInfo.name` (default `mcp-preamble`).
    pub name: Option<String>,
    /// `clientInfo.version` (default: this crate's version with the default
    /// name, else empty).
    pub version: Option<String>,
    /// The capabilities advertised (default: none).
    #[serde(default)]
    pub capabilities: Vec<Capability>,
    /// The roots answered to `roots/list`, as URIs (`file:///work/project`).
    #[serde(default)]
    pub roots: Vec<String>,
}

/// A client capability the CLI can advertise: `"roots"`, `"sampling"`,
/// `"elicitation"`. `serve` relays those requests to the host whose call
/// the server answers (when that host declared them too); elsewhere only
/// `roots/list` is answered (with [`ClientSettings::roots`]) and sampling
/// and elicitation requests are declined, the capability only there so
/// that servers show what they show such a host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Capability {
    /// `roots`.
    Roots,
    /// `sampling`.
    Sampling,
    /// `elicitation`.
    Elicitation,
}

impl Capability {
    /// The name in the file and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Capability::Roots => "roots",
            Capability::Sampling => "sampling",
            Capability::Elicitation => "elicitation",
        }
    }
}

impl std::fmt::Display for Capability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

impl std::str::FromStr for Capability {
    type Err = Error;

    /// `roots`, `sampling` or `elicitation`; else [`ErrorKind::InvalidConfig`].
    fn from_str(s: &str) -> Result<Capability> {
        [
            Capability::Roots,
            Capability::Sampling,
            Capability::Elicitation,
        ]
        .into_iter()
        .find(|c| c.as_str() == s)
        .ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidConfig,
                format!(
                    "unknown capability {:?} (use roots, sampling or elicitation)",
                    s.chars().take(64).collect::<String>()
                ),
            )
        })
    }
}

impl ClientSettings {
    /// `self` with every value set in `over` replaced by it (a non-empty
    /// list counts as set).
    pub fn overlay(mut self, over: &ClientSettings) -> ClientSettings {
        if over.name.is_some() {
            self.name.clone_from(&over.name);
            self.version.clone_from(&over.version);
        }
        if !over.capabilities.is_empty() {
            self.capabilities.clone_from(&over.capabilities);
        }
        if !over.roots.is_empty() {
            self.roots.clone_from(&over.roots);
        }
        self
    }

    /// The identity for rmcp: `clientInfo` and capabilities, for
    /// [`ConnectOptions::client`](crate::connect::ConnectOptions::client)
    /// or your own handler's `get_info`.
    #[cfg(feature = "rmcp")]
    pub fn client_config(&self) -> rmcp::model::ClientConfig {
        use rmcp::model::{ClientCapabilities, Implementation};
        let (name, version) = match (&self.name, &self.version) {
            (None, _) => ("mcp-preamble", env!("CARGO_PKG_VERSION")),
            (Some(name), version) => (name.as_str(), version.as_deref().unwrap_or("")),
        };
        let mut capabilities = ClientCapabilities::default();
        for c in &self.capabilities {
            match c {
                Capability::Roots => capabilities.roots = Some(Default::default()),
                Capability::Sampling => capabilities.sampling = Some(Default::default()),
                Capability::Elicitation => capabilities.elicitation = Some(Default::default()),
            }
        }
        rmcp::model::ClientConfig::new(capabilities, Implementation::new(name, version))
    }

    /// A client handler that says [`ClientSettings::client_config`] and
    /// answers `roots/list` with [`ClientSettings::roots`], for
    /// [`connect_with`](crate::connect::connect_with) and
    /// [`connect_all_with`](crate::connect::connect_all_with).
    #[cfg(feature = "rmcp")]
    pub fn handler(&self) -> ClientIdentity {
        ClientIdentity {
            config: self.client_config(),
            roots: self.roots.clone(),
        }
    }
}

/// The rmcp client handler of [`ClientSettings::handler`].
#[cfg(feature = "rmcp")]
#[derive(Debug, Clone)]
pub struct ClientIdentity {
    config: rmcp::model::ClientConfig,
    roots: Vec<String>,
}

#[cfg(feature = "rmcp")]
#[allow(deprecated)] // rmcp marks roots deprecated (SEP-2577); servers still ask.
impl rmcp::ClientHandler for ClientIdentity {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        self.config.clone()
    }

    fn list_roots(
        &self,
        _context: rmcp::service::RequestContext<rmcp::service::RoleClient>,
    ) -> impl Future<Output = std::result::Result<rmcp::model::ListRootsResult, rmcp::ErrorData>>
    + rmcp::service::MaybeSendFuture
    + '_ {
        let roots = self
            .roots
            .iter()
            .map(|uri| rmcp::model::Root::new(uri.clone()))
            .collect();
        std::future::ready(Ok(rmcp::model::ListRootsResult::new(roots)))
    }
}
