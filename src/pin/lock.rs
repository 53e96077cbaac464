//! The lock file: each server's pin, its JSON form, and the comparison of
//! a server with its pin.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Pin, PinState, unified_diff};
use crate::error::{Error, ErrorKind, Result};
use crate::model::ServerSnapshot;
use crate::sanitize;
use crate::server_key::ServerKey;
use crate::support::canonical;
use crate::support::hash::sha256_hex;

/// The lock-file version this crate reads and writes.
pub const LOCK_VERSION: u32 = 1;

/// The pinned instructions of one server.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct PinnedInstructions {
    /// SHA-256 of the instructions as the server sent them (lowercase hex).
    pub raw_sha256: String,
    /// SHA-256 of the sanitized instructions.
    pub sha256: String,
    /// The sanitized instructions, one string per line.
    pub text: Vec<String>,
}

impl PinnedInstructions {
    /// The sanitized instructions as one string.
    pub fn text(&self) -> String {
        self.text.join("\n")
    }
}

/// The pinned fingerprint of one tool.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct PinnedTool {
    /// SHA-256 of the description as sent (of the empty string when none).
    pub description_sha256: String,
    /// SHA-256 of the input schema's canonical JSON (keys sorted, no spaces).
    pub schema_sha256: String,
}

/// One server in the lock.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct LockEntry {
    /// `serverInfo.name` when pinned (sanitized; for people reading the lock).
    pub name: String,
    /// `serverInfo.version` when pinned (sanitized; not compared).
    pub version: String,
    /// The pinned instructions; `None` when the server sent none.
    pub instructions: Option<PinnedInstructions>,
    /// The pinned tools by name, as sent.
    pub tools: BTreeMap<String, PinnedTool>,
}

impl LockEntry {
    /// The entry that pins `server` as it is now.
    pub fn of(server: &ServerSnapshot) -> LockEntry {
        let instructions = server.instructions.raw().map(|raw| {
            let text = sanitize::text(raw);
            PinnedInstructions {
                raw_sha256: sha256_hex(raw.as_bytes()),
                sha256: sha256_hex(text.as_bytes()),
                text: if text.is_empty() {
                    Vec::new()
                } else {
                    text.split('\n').map(str::to_string).collect()
                },
            }
        });
        LockEntry {
            name: sanitize::line(&server.server_info.name),
            version: sanitize::line(&server.server_info.version),
            instructions,
            tools: tool_pins(server),
        }
    }
}

/// A tool's pins by name; a name sent twice pins every occurrence, in order.
fn tool_pins(server: &ServerSnapshot) -> BTreeMap<String, PinnedTool> {
    let mut parts: BTreeMap<&str, (Vec<u8>, Vec<u8>)> = BTreeMap::new();
    for t in &server.tools {
        let (desc, schema) = parts.entry(&t.name).or_default();
        if !desc.is_empty() || !schema.is_empty() {
            // Separators no UTF-8 text or JSON contains.
            desc.push(0xff);
            schema.push(0xff);
        }
        desc.extend_from_slice(t.description.as_deref().unwrap_or("").as_bytes());
        canonical::write(&t.input_schema, schema);
    }
    parts
        .into_iter()
        .map(|(name, (desc, schema))| {
            (
                name.to_string(),
                PinnedTool {
                    description_sha256: sha256_hex(&desc),
                    schema_sha256: sha256_hex(&schema),
                },
            )
        })
        .collect()
}

/// The key a server is pinned under, as for policies and budgets: its
/// alias, else its `serverInfo.name` (as one safe line).
fn key_of(server: &ServerSnapshot) -> String {
    ServerKey::of(server).into_string()
}

/// The pinned state of a set of servers: the lock file.
///
/// ```
/// use mcp_preamble::{ServerSnapshot, Tool};
/// use mcp_preamble::pin::{Lock, PinState};
///
/// let v1 = ServerSnapshot::new("invoice").with_alias("billing")
///     .with_instructions("Call list_periods first.")
///     .with_tool(Tool::new("list_periods", "List billing periods."));
/// let mut lock = Lock::new();
/// lock.pin(&v1);
/// let v2 = v1.clone().with_instructions("Call get_invoice first.");
/// let pin = lock.check(&v2);
/// assert_eq!(pin.state, PinState::Changed);
/// assert!(pin.diff.unwrap().contains("+Call get_invoice first."));
/// // The file round-trips byte for byte.
/// let text = lock.to_json();
/// assert_eq!(Lock::from_str(&text, "mcp-preamble.lock")?.to_json(), text);
/// # Ok::<(), mcp_preamble::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lock {
    servers: Arc<BTreeMap<String, LockEntry>>,
}

#[derive(Serialize)]
struct FileOut<'a> {
    version: u32,
    servers: &'a BTreeMap<String, LockEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileIn {
    #[allow(dead_code)]
    version: Value,
    servers: BTreeMap<String, LockEntry>,
}

impl Lock {
    /// An empty lock: every server is `new` against it.
    pub fn new() -> Lock {
        Lock::default()
    }

    /// Pins `server` as it is now, under its [`ServerKey`] (its alias, else
    /// its `serverInfo.name`), replacing any earlier pin of that key.
    pub fn pin(&mut self, server: &ServerSnapshot) {
        Arc::make_mut(&mut self.servers).insert(key_of(server), LockEntry::of(server));
    }

    /// Sets the pin of `key` to `entry` (say, one kept from another lock).
    pub fn insert(&mut self, key: impl Into<String>, entry: LockEntry) {
        Arc::make_mut(&mut self.servers).insert(key.into(), entry);
    }

    /// Removes the pin of `key`; returns whether there was one.
    pub fn unpin(&mut self, key: &str) -> bool {
        Arc::make_mut(&mut self.servers).remove(key).is_some()
    }

    /// The pin of `key`.
    pub fn get(&self, key: &str) -> Option<&LockEntry> {
        self.servers.get(key)
    }

    /// The pinned keys, sorted.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.servers.keys().map(String::as_str)
    }

    /// How `server` compares with its pin. Tool names in the result are
    /// sanitized lines; `on_change` is left unset (the assembler fills it).
    pub fn check(&self, server: &ServerSnapshot) -> Pin {
        self.check_as(Some(&key_of(server)), server)
    }

    /// [`Lock::check`] under `key`; a server without a key (its name is
    /// another server's alias) is always new.
    pub(super) fn check_as(&self, key: Option<&str>, server: &ServerSnapshot) -> Pin {
        self.compare(key, server, &LockEntry::of(server))
    }

    /// [`Lock::check_as`] with the server's entry `now` already made.
    pub(super) fn compare(
        &self,
        key: Option<&str>,
        server: &ServerSnapshot,
        now: &LockEntry,
    ) -> Pin {
        let Some(entry) = key.and_then(|k| self.servers.get(k)) else {
            return Pin::with_state(PinState::New);
        };
        let mut pin = Pin::with_state(PinState::Same);
        match (&entry.instructions, &now.instructions) {
            (Some(a), Some(b)) if a.sha256 == b.sha256 => {
                pin.invisible_only = a.raw_sha256 != b.raw_sha256;
            }
            (None, None) => {}
            (a, b) => {
                pin.instructions_changed = true;
                let text = |p: &Option<PinnedInstructions>| {
                    p.as_ref().map(PinnedInstructions::text).unwrap_or_default()
                };
                pin.diff = Some(unified_diff(&text(a), &text(b)));
            }
        }
        // A failed tools/list leaves the tools unknown, not removed.
        if server.tools_error.is_none() {
            for (name, tool) in &now.tools {
                match entry.tools.get(name) {
                    None => pin.tools_added.push(sanitize::line(name)),
                    Some(old) if old != tool => pin.tools_redescribed.push(sanitize::line(name)),
                    Some(_) => {}
                }
            }
            for name in entry.tools.keys() {
                if !now.tools.contains_key(name) {
                    pin.tools_removed.push(sanitize::line(name));
                }
            }
        }
        if pin.instructions_changed
            || pin.invisible_only
            || !pin.tools_added.is_empty()
            || !pin.tools_removed.is_empty()
            || !pin.tools_redescribed.is_empty()
        {
            pin.state = PinState::Changed;
        }
        pin
    }

    /// The lock file: pretty JSON, keys sorted, characters a terminal could
    /// act on escaped (`\u202e`), ending in a newline. The same servers give
    /// the same bytes.
    pub fn to_json(&self) -> String {
        let out = FileOut {
            version: LOCK_VERSION,
            servers: &self.servers,
        };
        // Strings, maps and numbers only: serializing cannot fail.
        let json = serde_json::to_string_pretty(&out).unwrap_or_default();
        let mut text = crate::text::json_safe(&json).into_owned();
        text.push('\n');
        text
    }

    /// Reads a lock file; errors name the file.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Lock> {
        let path = path.as_ref();
        let text = crate::error::read_file(path)?;
        Lock::from_str(&text, &path.display().to_string())
    }

    /// Parses lock-file JSON; `origin` names it in errors, which are
    /// [`ErrorKind::InvalidConfig`]: `invalid configuration: mcp-preamble.lock:
    /// lock file version 2 is not supported (this mcp-preamble reads version 1)`.
    #[allow(clippy::should_implement_trait)]
    pub fn from_str(text: &str, origin: &str) -> Result<Lock> {
        let bad = |detail: String| {
            Error::new(
                ErrorKind::InvalidConfig,
                format!("{origin}: not a valid lock file: {detail}"),
            )
        };
        let value: Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        match value.get("version") {
            None => return Err(bad("missing key \"version\"".to_string())),
            Some(v) if v.as_u64() == Some(LOCK_VERSION.into()) => {}
            Some(v) => {
                return Err(Error::new(
                    ErrorKind::InvalidConfig,
                    format!(
                        "{origin}: lock file version {v} is not supported (this mcp-preamble reads version {LOCK_VERSION})"
                    ),
                ));
            }
        }
        let file: FileIn = serde_json::from_value(value).map_err(|e| bad(e.to_string()))?;
        for (key, entry) in &file.servers {
            let mut hashes: Vec<&str> = Vec::new();
            if let Some(i) = &entry.instructions {
                hashes.extend([i.raw_sha256.as_str(), i.sha256.as_str()]);
                if sha256_hex(i.text().as_bytes()) != i.sha256 {
                    return Err(bad(format!(
                        "servers.{key:?}: the instructions do not match their sha256"
                    )));
                }
            }
            for t in entry.tools.values() {
                hashes.extend([t.description_sha256.as_str(), t.schema_sha256.as_str()]);
            }
            if let Some(h) = hashes.iter().find(|h| !is_sha256_hex(h)) {
                return Err(bad(format!(
                    "servers.{key:?}: {h:?} is not a lowercase hex sha256"
                )));
            }
        }
        Ok(Lock {
            servers: Arc::new(file.servers),
        })
    }
}

fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Tool;
    use crate::pin::tests::server;

    #[test]
    fn an_unchanged_server_is_same() {
        let mut lock = Lock::new();
        lock.pin(&server());
        let pin = lock.check(&server());
        assert_eq!(pin, Pin::with_state(PinState::Same));
        assert!(!pin.pending());
    }

    #[test]
    fn tools_added_removed_and_redescribed() {
        let mut lock = Lock::new();
        lock.pin(&server());
        let mut now = server();
        now.tools.remove(0);
        now.tools[0].description = Some("Get one invoice by id.".into());
        now.tools.push(Tool::new("pay", "Pay an invoice."));
        let pin = lock.check(&now);
        assert_eq!(pin.state, PinState::Changed);
        assert_eq!(pin.tools_added, ["pay"]);
        assert_eq!(pin.tools_removed, ["list_periods"]);
        assert_eq!(pin.tools_redescribed, ["get_invoice"]);
        assert!(!pin.instructions_changed);
        assert_eq!(
            pin.summary(),
            "tools added: pay; tools removed: list_periods; tools redescribed: get_invoice"
        );
    }

    #[test]
    fn a_schema_change_is_a_redescription_but_key_order_is_not() {
        let mut lock = Lock::new();
        let mut s = server();
        s.tools[0].input_schema = serde_json::json!({"type": "object", "properties": {}});
        lock.pin(&s);
        s.tools[0].input_schema = serde_json::json!({"properties": {}, "type": "object"});
        assert_eq!(lock.check(&s).state, PinState::Same);
        s.tools[0].input_schema = serde_json::json!({"type": "object", "required": ["id"]});
        assert_eq!(lock.check(&s).tools_redescribed, ["list_periods"]);
    }

    #[test]
    fn an_invisible_only_change_is_reported_as_such() {
        let mut lock = Lock::new();
        lock.pin(&server());
        let now = server().with_instructions("Call list_periods\u{200b} first.\nThen get_invoice.");
        let pin = lock.check(&now);
        assert_eq!(pin.state, PinState::Changed);
        assert!(pin.invisible_only);
        assert!(!pin.instructions_changed);
        assert_eq!(pin.diff, None);
    }

    #[test]
    fn the_file_round_trips_and_is_stable() {
        let mut lock = Lock::new();
        lock.pin(&server());
        lock.pin(&ServerSnapshot::new("quiet"));
        let text = lock.to_json();
        let again = Lock::from_str(&text, "x.lock").unwrap();
        assert_eq!(again, lock);
        assert_eq!(again.to_json(), text);
        assert!(text.starts_with("{\n  \"version\": 1,\n  \"servers\": {\n    \"billing\": {"));
        assert!(text.contains("\"text\": [\n          \"Call list_periods first.\",\n          \"Then get_invoice.\"\n        ]"));
    }

    #[test]
    fn hidden_characters_in_tool_names_are_escaped_in_the_file() {
        let mut lock = Lock::new();
        lock.pin(&ServerSnapshot::new("x").with_tool(Tool::new("a\u{202e}b", "d")));
        let text = lock.to_json();
        assert!(text.contains("a\\u202eb"));
        assert!(!text.contains('\u{202e}'));
        assert_eq!(Lock::from_str(&text, "x").unwrap(), lock);
    }

    #[test]
    fn bad_files_name_the_file() {
        let err = |t: &str| Lock::from_str(t, "team.lock").unwrap_err().to_string();
        assert_eq!(
            err("{\"version\": 2, \"servers\": {}}"),
            "invalid configuration: team.lock: lock file version 2 is not supported (this mcp-preamble reads version 1)"
        );
        assert_eq!(
            err("{\"servers\": {}}"),
            "invalid configuration: team.lock: not a valid lock file: missing key \"version\""
        );
        assert!(err("{\"version\": 1, \"servers\": {").starts_with(
            "invalid configuration: team.lock: not a valid lock file: EOF while parsing"
        ));
        let mut lock = Lock::new();
        lock.pin(&server());
        let tampered = lock.to_json().replace("Then get_invoice.", "Then pay.");
        assert_eq!(
            err(&tampered),
            "invalid configuration: team.lock: not a valid lock file: servers.\"billing\": the instructions do not match their sha256"
        );
    }
}
