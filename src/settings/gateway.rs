//! `[gateway]`: the gateway's own settings, read by `serve` alone (no
//! assembly reads them, so they are no `[defaults]` keys).

use serde::{Deserialize, Deserializer};

/// The values `prefix` takes (the gateway's `Prefix`, which a test holds
/// to this list).
pub(crate) const PREFIXES: &[&str] = &["always", "never", "on-collision"];

/// `[gateway]`: how the gateway names the tools, prompts and completions it
/// serves from its upstreams (`serve --prefix` and `--separator` win over
/// them; library: `GatewayBuilder::naming` with `Naming::from_settings`).
///
/// ```
/// use mcp_preamble::settings::Settings;
/// let settings = Settings::from_str(
///     "version = 1\n[gateway]\nprefix = \"on-collision\"\nseparator = \"-\"\n",
///     "mcp-preamble.toml",
/// )?;
/// assert_eq!(settings.gateway.prefix.as_deref(), Some("on-collision"));
/// assert_eq!(settings.gateway.separator.as_deref(), Some("-"));
/// # Ok::<(), mcp_preamble::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct GatewaySettings {
    /// When a served name starts with its upstream's alias: `"always"`
    /// (the default), `"never"` or `"on-collision"`.
    #[serde(default, deserialize_with = "prefix")]
    pub prefix: Option<String>,
    /// What stands between alias and name when prefixed (default `"__"`):
    /// 1 to 8 of `A-Z a-z 0-9 _ -`.
    #[serde(default, deserialize_with = "separator")]
    pub separator: Option<String>,
}

fn prefix<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let value = String::deserialize(d)?;
    if !PREFIXES.contains(&value.as_str()) {
        let shown: String = value.chars().take(32).collect();
        return Err(serde::de::Error::custom(format!(
            "unknown prefix {shown:?} (always, never, on-collision)"
        )));
    }
    Ok(Some(value))
}

fn separator<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let value = String::deserialize(d)?;
    let fits = (1..=8).contains(&value.len())
        && (value.chars()).all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !fits {
        let shown: String = value.chars().take(16).collect();
        return Err(serde::de::Error::custom(format!(
            "separator {shown:?} must be 1 to 8 of the characters A-Z a-z 0-9 _ -"
        )));
    }
    Ok(Some(value))
}
