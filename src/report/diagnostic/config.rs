//! What an assembly says about the configuration rather than one server.

use std::fmt;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

/// What an [`Assembly`](crate::Assembly) says about the configuration
/// rather than one server: [`Assembly::notes`](crate::Assembly::notes);
/// its `Display` is the line of [`Assembly::diagnostics`](crate::Assembly::diagnostics).
/// In the JSON report it is an object with its [`code`](ConfigDiagnostic::code),
/// its fields and that line as `message` (see [`ConfigDiagnostic::CODES`]).
///
/// A host that refuses to start on a misspelt alias matches on it:
///
/// ```
/// use mcp_preamble::{Assembler, ServerSnapshot};
/// use mcp_preamble::report::{AliasSetting, ConfigDiagnostic};
/// let server = ServerSnapshot::new("billing").with_instructions("Be brief.");
/// let assembly = Assembler::new().server_budget("biling", 50).assemble(&[server]).unwrap();
/// let ConfigDiagnostic::UnknownAlias { setting, alias, closest } = &assembly.notes()[0] else {
///     panic!("not an unknown alias");
/// };
/// assert_eq!(*setting, AliasSetting::Budget);
/// assert_eq!((alias.as_str(), closest.as_deref()), ("biling", Some("billing")));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConfigDiagnostic {
    /// A setting for an alias no server has; it applies to nothing.
    UnknownAlias {
        /// Which setting names the alias.
        setting: AliasSetting,
        /// The alias as configured.
        alias: String,
        /// The servers' alias closest to it, when one is close.
        closest: Option<String>,
    },
}

impl ConfigDiagnostic {
    /// Every [`ConfigDiagnostic::code`], in declaration order. A public
    /// format: a code is never renamed or reused. The JSON object of each:
    ///
    /// | `code` | fields besides `code` and `message` |
    /// |---|---|
    /// | `unknown_alias` | `setting` ([`AliasSetting::CODES`]), `alias`, and `closest` when one is close |
    pub const CODES: &'static [&'static str] = &["unknown_alias"];

    /// The diagnostic's stable snake_case name, e.g. `unknown_alias` (the
    /// JSON object's `code`).
    pub fn code(&self) -> &'static str {
        match self {
            ConfigDiagnostic::UnknownAlias { .. } => "unknown_alias",
        }
    }

    /// [`ConfigDiagnostic::UnknownAlias`] for `alias`, with the alias of
    /// `known` closest to it (within a few edits), as the assembler and
    /// the CLI report a misspelt alias.
    ///
    /// ```
    /// use mcp_preamble::report::{AliasSetting, ConfigDiagnostic};
    /// let d = ConfigDiagnostic::unknown_alias(AliasSetting::Visibility, "note", ["notes", "time"]);
    /// assert_eq!(d.to_string(), "visibility for \"note\": no server has this alias (did you mean \"notes\"?)");
    /// ```
    pub fn unknown_alias<'a>(
        setting: AliasSetting,
        alias: impl Into<String>,
        known: impl IntoIterator<Item = &'a str>,
    ) -> ConfigDiagnostic {
        let alias = alias.into();
        let closest = crate::support::distance::did_you_mean(&alias, known).map(str::to_string);
        ConfigDiagnostic::UnknownAlias {
            setting,
            alias,
            closest,
        }
    }
}

/// `{"code", …its fields, "message"}`: the fields typed, the message its `Display`.
impl Serialize for ConfigDiagnostic {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("code", self.code())?;
        match self {
            ConfigDiagnostic::UnknownAlias {
                setting,
                alias,
                closest,
            } => {
                map.serialize_entry("setting", setting.code())?;
                map.serialize_entry("alias", alias)?;
                if let Some(closest) = closest {
                    map.serialize_entry("closest", closest)?;
                }
            }
        }
        map.serialize_entry("message", &self.to_string())?;
        map.end()
    }
}

impl fmt::Display for ConfigDiagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigDiagnostic::UnknownAlias {
                setting,
                alias,
                closest,
            } => {
                write!(f, "{setting} for {alias:?}: no server has this alias")?;
                match closest {
                    Some(k) => write!(f, " (did you mean {k:?}?)"),
                    None => Ok(()),
                }
            }
        }
    }
}

/// A per-alias setting of the [`Assembler`](crate::Assembler) (or the
/// policy file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AliasSetting {
    /// A [`Policy`](crate::Policy) (any `[servers.<alias>]` table of the
    /// policy file).
    Policy,
    /// A budget from [`Assembler::server_budget`](crate::Assembler::server_budget).
    Budget,
    /// A server's tool visibility: [`Assembler::defer`](crate::Assembler::defer)
    /// or [`Assembler::visibility`](crate::Assembler::visibility).
    Visibility,
    /// A tool pattern's visibility:
    /// [`Assembler::defer_tools`](crate::Assembler::defer_tools) or
    /// [`Assembler::tool_visibility`](crate::Assembler::tool_visibility).
    ToolVisibility,
}

impl AliasSetting {
    /// Every [`AliasSetting::code`], in declaration order: a public format
    /// (the `setting` of an `unknown_alias` diagnostic in the JSON report).
    pub const CODES: &'static [&'static str] =
        &["policy", "budget", "visibility", "tool_visibility"];

    /// The setting's stable name, e.g. `tool_visibility` (its `Display`
    /// is the words, `tool visibility`).
    pub fn code(&self) -> &'static str {
        match self {
            AliasSetting::Policy => "policy",
            AliasSetting::Budget => "budget",
            AliasSetting::Visibility => "visibility",
            AliasSetting::ToolVisibility => "tool_visibility",
        }
    }
}

impl fmt::Display for AliasSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            AliasSetting::Policy => "policy",
            AliasSetting::Budget => "budget",
            AliasSetting::Visibility => "visibility",
            AliasSetting::ToolVisibility => "tool visibility",
        })
    }
}
