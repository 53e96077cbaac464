//! The handshake to use (which era), and the identity sent in it.

use std::str::FromStr;

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::ClientLifecycleMode;

use crate::error::{Error, ErrorKind, Result};

/// Which handshake to use when connecting.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Handshake {
    /// `initialize` only (the 2025 era), naming 2025-11-25 unless the
    /// client's config names another revision that has `initialize`.
    Legacy,
    /// `server/discover` (2026-07-28) first, `initialize` when the server
    /// answers it with an error.
    ///
    /// On stdio a server that has not answered `server/discover` within the
    /// probe time ([`ConnectOptions::probe_timeout`]) is sent `initialize`
    /// too, on the same stream, and the era is the one that answered:
    /// `initialize` when it succeeds (a late discover answer is dropped),
    /// else `server/discover`. So a server that is slow to start connects
    /// as long as it answers within the timeout, and is started once. Over
    /// Streamable HTTP this is rmcp's auto mode (a server that takes the
    /// request is already up). On both, an answer to `server/discover` that
    /// is not a discover result (an empty `{}`, say) counts as a 2025
    /// server's: `initialize` follows.
    ///
    /// [`ConnectOptions::probe_timeout`]: super::ConnectOptions::probe_timeout
    #[default]
    Auto,
    /// This revision only: `server/discover` naming it (2026-07-28 and
    /// later; fails if the server cannot), or, for a revision that has
    /// `initialize` (`2025-11-25`, say), `initialize` naming it and no
    /// `server/discover`.
    Pinned(String),
}

impl FromStr for Handshake {
    type Err = Error;

    /// `legacy`, `auto`, or a revision date such as `2026-07-28`.
    fn from_str(s: &str) -> Result<Handshake> {
        match s {
            "legacy" => Ok(Handshake::Legacy),
            "auto" => Ok(Handshake::Auto),
            v if v.len() == 10 && v.chars().all(|c| c.is_ascii_digit() || c == '-') => {
                Ok(Handshake::Pinned(v.to_string()))
            }
            other => Err(Error::new(
                ErrorKind::InvalidConfig,
                format!("handshake {other:?} (use legacy, auto, or a revision such as 2026-07-28)"),
            )),
        }
    }
}

impl Handshake {
    /// The 2025 revision to name in `initialize` when this handshake is
    /// `initialize` alone: `legacy`, or a revision before 2026-07-28 (which
    /// has no `server/discover`); `None` when it starts with `server/discover`.
    /// (`legacy` names the client's own revision when that has `initialize`.)
    pub(super) fn initialize_only(&self, own: &ProtocolVersion) -> Option<ProtocolVersion> {
        match self {
            Handshake::Legacy if own.has_initialize() => Some(own.clone()),
            Handshake::Legacy => Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
            Handshake::Pinned(v) => serde_json::from_value::<ProtocolVersion>(serde_json::json!(v))
                .ok()
                .filter(ProtocolVersion::has_initialize),
            Handshake::Auto => None,
        }
    }

    pub(super) fn lifecycle(&self) -> ClientLifecycleMode {
        match self {
            Handshake::Legacy => ClientLifecycleMode::Initialize,
            Handshake::Auto => ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::V_2025_11_25),
            },
            Handshake::Pinned(v) => ClientLifecycleMode::Discover {
                // ProtocolVersion has no public constructor from text; serde has one.
                preferred_versions: serde_json::from_value(serde_json::json!([v]))
                    .unwrap_or_else(|_| vec![ProtocolVersion::V_2026_07_28]),
            },
        }
    }
}

/// The identity sent when you name none: `mcp-preamble` and its version,
/// no capabilities (the default of [`ConnectOptions::client`]).
///
/// [`ConnectOptions::client`]: super::ConnectOptions::client
pub fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("mcp-preamble", env!("CARGO_PKG_VERSION")),
    )
}
