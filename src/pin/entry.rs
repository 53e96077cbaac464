//! One server's entry in the lock: what [`Limits`] keep of it, pinned as
//! text (instructions) and digests (tools, schemas, and what the limits cut).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::limits::Limits;
use crate::model::ServerSnapshot;
use crate::sanitize;
use crate::support::canonical;
use crate::support::hash::sha256_hex;
use crate::tool_policy::ToolFilter;

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
    /// The sanitized instructions as one string, with any character
    /// sanitizing removes taken out again: a lock edited by hand cannot pass
    /// tag characters, bidi controls or terminal escapes to the model or the
    /// terminal through held text or a diff.
    pub fn text(&self) -> String {
        super::clean_held(&self.joined())
    }

    /// The lines as stored (what `sha256` is of).
    pub(super) fn joined(&self) -> String {
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

/// The pinned fingerprint of one skill (`skills/list`), by its URI.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct PinnedSkill {
    /// SHA-256 of the frontmatter's canonical JSON (keys sorted, no
    /// spaces): `name`, `description` and every other field as sent.
    pub frontmatter_sha256: String,
    /// SHA-256 of the canonical JSON of its `resources` (every file's
    /// `uri`, `digest` and `size`, or `"dynamic"`).
    pub resources_sha256: String,
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
    /// SHA-256 of what [`Limits`] cut from the server (instructions past the
    /// byte limit, tools past the count limit, description tails, schemas
    /// over the limits): never rendered, so not stored, but a change in it is
    /// still a change. Absent when nothing was cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_sha256: Option<String>,
    /// The operator's tool filter (`[servers.<alias>.tools]`) the server
    /// was pinned under: `tools` are the tools it sends. Absent when there
    /// was none. A different filter now is a policy change, not drift.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_filter: Option<ToolFilter>,
    /// The pinned skills by URI, as sent (lock version 3; absent when the
    /// server lists none).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub skills: BTreeMap<String, PinnedSkill>,
    /// Who pinned this text and when (lock version 4; absent before). Not
    /// part of [`LockEntry::digest`]: the same text approved again is the
    /// same pin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved: Option<super::Approval>,
}

impl LockEntry {
    /// The entry that pins `server` as it is now, within the default
    /// [`Limits`] (see [`LockEntry::within`]).
    pub fn of(server: &ServerSnapshot) -> LockEntry {
        LockEntry::within(server, &Limits::default())
    }

    /// The entry that pins what `limits` keep of `server`, and a digest of
    /// what they cut: its size is bounded by the limits, whatever the server
    /// sends.
    pub fn within(server: &ServerSnapshot, limits: &Limits) -> LockEntry {
        let (kept, hits) = server.within(limits);
        let mut entry = LockEntry::exact(&kept);
        if !hits.is_empty() {
            entry.cut_sha256 = Some(cut_digest(server, &kept));
        }
        entry
    }

    /// The entry of `server` as it is, nothing cut.
    fn exact(server: &ServerSnapshot) -> LockEntry {
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
            cut_sha256: None,
            tool_filter: None,
            skills: skill_pins(server),
            approved: None,
        }
    }

    /// [`LockEntry::within`] of what `filter` sends of `server`, with the
    /// filter recorded (none when it sends every tool).
    pub fn sent(
        server: &ServerSnapshot,
        filter: Option<&ToolFilter>,
        limits: &Limits,
    ) -> LockEntry {
        let filter = filter.filter(|f| !f.is_empty());
        let mut entry = match filter {
            Some(f) => LockEntry::within(&f.apply(server), limits),
            None => LockEntry::within(server, limits),
        };
        entry.tool_filter = filter.cloned();
        entry
    }

    /// SHA-256 of the whole entry but its approval (lowercase hex): two
    /// entries with the same digest pin the same text, tools and cut parts.
    /// It is what `pin --review` shows and `pin --approve DIGEST` takes.
    pub fn digest(&self) -> String {
        let text = if self.approved.is_some() {
            let mut bare = self.clone();
            bare.approved = None;
            serde_json::to_string(&bare)
        } else {
            serde_json::to_string(self)
        };
        // Maps and strings only: serializing cannot fail.
        sha256_hex(text.unwrap_or_default().as_bytes())
    }
}

/// A digest of what `kept` (the server within its limits) lacks of `sent`:
/// the instructions' tail, the tools past the count limit, and each kept
/// tool's description tail and replaced schema, in order, tagged so that
/// moving text from one part to another changes it.
fn cut_digest(sent: &ServerSnapshot, kept: &ServerSnapshot) -> String {
    let mut bytes: Vec<u8> = Vec::new();
    let mut part = |tag: u8, data: &[u8]| {
        bytes.push(tag);
        bytes.extend_from_slice(&(data.len() as u64).to_le_bytes());
        bytes.extend_from_slice(data);
    };
    if let (Some(raw), kept) = (sent.instructions.raw(), kept.instructions.raw()) {
        part(
            b'i',
            raw.as_bytes()
                .get(kept.map_or(0, str::len)..)
                .unwrap_or_default(),
        );
    }
    for (i, t) in sent.tools.iter().enumerate() {
        let mut schema = Vec::new();
        match kept.tools.get(i) {
            None => {
                canonical::write(t.input_schema.as_value(), &mut schema);
                part(b'n', t.name.as_bytes());
                part(b'd', t.description.as_deref().unwrap_or("").as_bytes());
                part(b's', &schema);
            }
            Some(k) => {
                let (d, kd) = (t.description.as_deref(), k.description.as_deref());
                if d != kd {
                    let d = d.unwrap_or("").as_bytes();
                    part(b'D', d.get(kd.map_or(0, str::len)..).unwrap_or_default());
                }
                if t.input_schema != k.input_schema {
                    canonical::write(t.input_schema.as_value(), &mut schema);
                    part(b'S', &schema);
                }
            }
        }
    }
    for (i, k) in sent.skills.iter().enumerate() {
        match kept.skills.get(i) {
            None => {
                part(b'k', k.uri.as_bytes());
                part(b'K', k.description.as_bytes());
            }
            Some(c) if c.description != k.description => {
                let tail = k.description.as_bytes().get(c.description.len()..);
                part(b'E', tail.unwrap_or_default());
            }
            Some(_) => {}
        }
    }
    sha256_hex(&bytes)
}

/// Bytes of a tool name the lock stores as it is; see [`pinned_name`].
const MAX_PINNED_NAME: usize = 256;

/// The key a tool is pinned under: its name, or for a name over
/// [`MAX_PINNED_NAME`] bytes its first 128 bytes, `…sha256:` and the
/// name's SHA-256, so that no tool name can make the lock large.
fn pinned_name(name: &str) -> String {
    if name.len() <= MAX_PINNED_NAME {
        return name.to_string();
    }
    format!(
        "{}…sha256:{}",
        crate::limits::prefix(name, 128),
        sha256_hex(name.as_bytes())
    )
}

/// A tool's pins by name; a name sent twice pins every occurrence, in order.
fn tool_pins(server: &ServerSnapshot) -> BTreeMap<String, PinnedTool> {
    let mut parts: BTreeMap<String, (Vec<u8>, Vec<u8>)> = BTreeMap::new();
    for t in &server.tools {
        let (desc, schema) = parts.entry(pinned_name(&t.name)).or_default();
        if !desc.is_empty() || !schema.is_empty() {
            // Separators no UTF-8 text or JSON contains.
            desc.push(0xff);
            schema.push(0xff);
        }
        desc.extend_from_slice(t.description.as_deref().unwrap_or("").as_bytes());
        canonical::write(t.input_schema.as_value(), schema);
    }
    parts
        .into_iter()
        .map(|(name, (desc, schema))| {
            (
                name,
                PinnedTool {
                    description_sha256: sha256_hex(&desc),
                    schema_sha256: sha256_hex(&schema),
                },
            )
        })
        .collect()
}

/// A skill's pins by URI; a URI listed twice pins its first entry (the one shown).
fn skill_pins(server: &ServerSnapshot) -> BTreeMap<String, PinnedSkill> {
    let mut pins = BTreeMap::new();
    for k in &server.skills {
        if pins.contains_key(&k.uri) {
            continue;
        }
        let frontmatter = match &k.frontmatter {
            serde_json::Value::Null => {
                serde_json::json!({"name": k.name, "description": k.description})
            }
            f => f.clone(),
        };
        let resources = serde_json::to_value(&k.resources).unwrap_or_default();
        let digest = |v: &serde_json::Value| {
            let mut bytes = Vec::new();
            canonical::write(v, &mut bytes);
            sha256_hex(&bytes)
        };
        let pin = PinnedSkill {
            frontmatter_sha256: digest(&frontmatter),
            resources_sha256: digest(&resources),
        };
        pins.insert(pinned_name(&k.uri), pin);
    }
    pins
}

/// The skills `now` lists that `old` does not, those `old` lists that `now`
/// does not, and those whose frontmatter or files changed: URIs as one
/// safe line each.
pub(super) fn skill_changes(old: &LockEntry, now: &LockEntry) -> [Vec<String>; 3] {
    let mut changes: [Vec<String>; 3] = Default::default();
    for (uri, skill) in &now.skills {
        match old.skills.get(uri) {
            None => changes[0].push(sanitize::line(uri)),
            Some(o) if o != skill => changes[2].push(sanitize::line(uri)),
            Some(_) => {}
        }
    }
    for uri in old.skills.keys().filter(|u| !now.skills.contains_key(*u)) {
        changes[1].push(sanitize::line(uri));
    }
    changes
}
