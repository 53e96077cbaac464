//! What a host knows about one connected server.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::error::RpcError;
use crate::limits::{self, Limit, LimitHit, Limits};
use crate::sanitize;
use crate::schema::InputSchema;
use crate::support::string_enum;

string_enum! {
    /// Which handshake the connection used.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Era {
        /// The 2025 protocol era: an `initialize` request.
        Legacy => "legacy",
        /// The 2026-07-28 revision: a `server/discover` request.
        Modern => "modern",
    }
    /// `"legacy"` or `"modern"`.
    fn as_str;
    impl FromStr, Err = String, |s| format!("unknown era {s:?} (legacy, modern)");
}

/// The `serverInfo` a server sent (in `_meta` in the 2026-07-28 era).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ServerInfo {
    /// `serverInfo.name`, as sent (may differ from the package name).
    pub name: String,
    /// `serverInfo.version`, as sent (servers send empty or wrong ones).
    #[serde(default)]
    pub version: String,
    /// `serverInfo.title`, when sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// A server's `instructions`, in one of three states.
///
/// Servers on the TypeScript SDK drop an empty string from the wire, so an
/// empty string and a missing key are both [`Instructions::Absent`]. Text that
/// is empty after [sanitizing](crate#sanitizing) (whitespace, invisible
/// characters) is [`Instructions::Blank`]: it is never rendered, and reported.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "state", content = "raw", rename_all = "snake_case")]
pub enum Instructions {
    /// No `instructions` key, `null`, or `""`.
    #[default]
    Absent,
    /// Whitespace or invisible characters only; the raw text is kept as a diagnostic.
    Blank(String),
    /// Text, raw as the server sent it.
    Present(String),
}

impl Instructions {
    /// Classifies a raw value as a server sent it.
    pub fn from_raw(raw: Option<&str>) -> Instructions {
        match raw {
            None | Some("") => Instructions::Absent,
            Some(s) if sanitize::text(s).is_empty() => Instructions::Blank(s.to_string()),
            Some(s) => Instructions::Present(s.to_string()),
        }
    }

    /// Which of the three states this is, without the text.
    pub fn state(&self) -> InstructionsState {
        match self {
            Instructions::Absent => InstructionsState::Absent,
            Instructions::Blank(_) => InstructionsState::Blank,
            Instructions::Present(_) => InstructionsState::Present,
        }
    }

    /// The raw text, for [`Instructions::Blank`] and [`Instructions::Present`].
    pub fn raw(&self) -> Option<&str> {
        match self {
            Instructions::Absent => None,
            Instructions::Blank(s) | Instructions::Present(s) => Some(s),
        }
    }
}

string_enum! {
    /// The state of a server's [`Instructions`], without the text (in reports).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum InstructionsState {
        /// No `instructions` key, `null`, or `""`.
        Absent => "absent",
        /// Whitespace or invisible characters only.
        Blank => "blank",
        /// Text.
        Present => "present",
    }
    /// `"absent"`, `"blank"` or `"present"`.
    fn as_str;
}

/// Tool annotations (all hints; untrusted, like everything a server sends).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeated calls with the same arguments have no further effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// One tool from `tools/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// The tool's name, as the model calls it.
    pub name: String,
    /// `title`, when sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `description`, when sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `inputSchema`, as sent (`null` when absent), measured once.
    #[serde(default)]
    pub input_schema: InputSchema,
    /// `annotations`, when sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// `outputSchema`, when sent, measured once; one over the schema
    /// limits is left out. The assembly never reads it; the gateway serves it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<InputSchema>,
    /// `icons`, as sent (the gateway serves them as it serves a prompt's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<serde_json::Value>,
    /// `_meta`, as sent (the gateway serves it as it serves a prompt's).
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<serde_json::Value>,
}

impl Tool {
    /// A tool with a name and a description (handy in tests and examples).
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Tool {
        Tool {
            name: name.into(),
            description: Some(description.into()),
            ..Tool::default()
        }
    }
}

/// Cache hints of the 2026-07-28 era (`ttlMs`, `cacheScope`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheHints {
    /// How long the result may be reused, in milliseconds; `0` means do not cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// `"private"` or `"public"` (kept as sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<String>,
}

/// One file of a skill: its URI, the `sha256:<hex>` digest of its bytes,
/// and their length, as the server published them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SkillFile {
    /// The file's resource URI.
    pub uri: String,
    /// `sha256:{64 lowercase hex}` of the file's bytes, as sent.
    pub digest: String,
    /// The file's length in bytes, as sent.
    #[serde(default)]
    pub size: u64,
}

/// A skill's files: a complete manifest, or `"dynamic"` (generated content,
/// no digests).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SkillResources {
    /// Every file of the skill, `SKILL.md` included.
    Files(Vec<SkillFile>),
    /// `"dynamic"`: the server publishes no digests.
    Dynamic(DynamicResources),
}

/// The string `"dynamic"` of [`SkillResources::Dynamic`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DynamicResources {
    /// `"dynamic"`.
    #[default]
    #[serde(rename = "dynamic")]
    Dynamic,
}

impl Default for SkillResources {
    fn default() -> SkillResources {
        SkillResources::Files(Vec::new())
    }
}

/// One entry of `skills/list` (the Skills extension,
/// `io.modelcontextprotocol/skills`): the URI of its `SKILL.md`, its
/// frontmatter's `name` and `description` (raw, untrusted), the whole
/// frontmatter as sent (for pins), and its files.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    /// The resource URI of the skill's `SKILL.md`.
    pub uri: String,
    /// `frontmatter.name`, as sent.
    pub name: String,
    /// `frontmatter.description`, as sent.
    pub description: String,
    /// The whole frontmatter object as sent (`name` and `description`
    /// included); `null` for a skill made by hand.
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub frontmatter: serde_json::Value,
    /// The skill's files, or `"dynamic"`.
    #[serde(default)]
    pub resources: SkillResources,
}

impl Skill {
    /// A skill with a URI, a name and a description (handy in tests and examples).
    pub fn new(
        uri: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> Skill {
        Skill {
            uri: uri.into(),
            name: name.into(),
            description: description.into(),
            ..Skill::default()
        }
    }

    /// Adds a file to the manifest (a `"dynamic"` one becomes a manifest).
    pub fn with_file(mut self, uri: impl Into<String>, digest: impl Into<String>) -> Skill {
        let file = SkillFile {
            uri: uri.into(),
            digest: digest.into(),
            size: 0,
        };
        match &mut self.resources {
            SkillResources::Files(files) => files.push(file),
            SkillResources::Dynamic(_) => self.resources = SkillResources::Files(vec![file]),
        }
        self
    }
}

/// Everything a host knows about one connected server.
///
/// Build one from the wire with [`ServerSnapshot::from_initialize`] or
/// [`ServerSnapshot::from_discover`] plus [`ServerSnapshot::push_tools_page`],
/// from a capture file with [`Capture`](crate::files::Capture), or by hand.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct ServerSnapshot {
    /// The host's own name for the server (its key in `mcpServers`), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    /// What the server says it is.
    pub server_info: ServerInfo,
    /// The server's instructions.
    #[serde(default)]
    pub instructions: Instructions,
    /// The tools, from every `tools/list` page in order.
    #[serde(default)]
    pub tools: Vec<Tool>,
    /// Which handshake was used.
    pub era: Era,
    /// The negotiated protocol version (`protocolVersion`, or the first of `supportedVersions`).
    pub protocol_version: String,
    /// Cache hints of the handshake result (2026-07-28 era only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheHints>,
    /// Cache hints of the tool list (2026-07-28 era only): the shortest `ttlMs` of its pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_cache: Option<CacheHints>,
    /// Set when `tools/list` answered an error; the tools read before it are kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_error: Option<RpcError>,
    /// The skills, from every `skills/list` page in order (servers that
    /// declare the Skills extension; see [`Skill`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<Skill>,
    /// Entries of `skills/list` that did not read (no URI, no name…), each
    /// with why: skipped, never rendered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills_skipped: Vec<String>,
    /// Set when `skills/list` answered an error; the skills read before it are kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills_error: Option<RpcError>,
    /// Limits reached while reading the server live (pages, tools): what
    /// was read is kept, the rest was never read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<LimitHit>,
}

impl ServerSnapshot {
    /// A snapshot with a server name and nothing else (fill the fields or use the setters).
    pub fn new(name: impl Into<String>) -> ServerSnapshot {
        let info = ServerInfo {
            name: name.into(),
            ..ServerInfo::default()
        };
        ServerSnapshot::handshake(info, Instructions::Absent, Era::Legacy, String::new())
    }

    /// What a handshake gives, before any `tools/list`.
    pub(crate) fn handshake(
        server_info: ServerInfo,
        instructions: Instructions,
        era: Era,
        protocol_version: String,
    ) -> ServerSnapshot {
        ServerSnapshot {
            alias: None,
            server_info,
            instructions,
            tools: Vec::new(),
            era,
            protocol_version,
            cache: None,
            tools_cache: None,
            tools_error: None,
            skills: Vec::new(),
            skills_skipped: Vec::new(),
            skills_error: None,
            limits: Vec::new(),
        }
    }

    /// Sets the host's alias for this server.
    pub fn with_alias(mut self, alias: impl Into<String>) -> ServerSnapshot {
        self.alias = Some(alias.into());
        self
    }

    /// Sets the instructions from a raw string (classified by [`Instructions::from_raw`]).
    pub fn with_instructions(mut self, raw: impl AsRef<str>) -> ServerSnapshot {
        self.instructions = Instructions::from_raw(Some(raw.as_ref()));
        self
    }

    /// Appends a tool.
    pub fn with_tool(mut self, tool: Tool) -> ServerSnapshot {
        self.tools.push(tool);
        self
    }

    /// Appends a skill.
    pub fn with_skill(mut self, skill: Skill) -> ServerSnapshot {
        self.skills.push(skill);
        self
    }

    /// The name the section shows: the alias when set, else `serverInfo.name`
    /// (both made one safe line); `"unnamed server"` when both are empty.
    pub fn display_name(&self) -> String {
        let from_alias = self.alias.as_deref().map(sanitize::line);
        match from_alias.filter(|s| !s.is_empty()) {
            Some(s) => s,
            None => {
                let s = sanitize::line(&self.server_info.name);
                if s.is_empty() {
                    "unnamed server".to_string()
                } else {
                    s
                }
            }
        }
    }
}

impl ServerSnapshot {
    /// This server within `limits`: borrowed when nothing is over, else a
    /// cut copy, with what was cut.
    pub(crate) fn within<'s>(
        &'s self,
        limits: &Limits,
    ) -> (Cow<'s, ServerSnapshot>, Vec<LimitHit>) {
        let mut hits = Vec::new();
        let over_instructions = self
            .instructions
            .raw()
            .filter(|raw| raw.len() > limits.instructions_bytes);
        let over_tools = self.tools.len() > limits.tools;
        let over_tool = |t: &Tool| {
            t.description
                .as_ref()
                .is_some_and(|d| d.len() > limits.tool_description_bytes)
                || !limits.schema_fits(&t.input_schema)
                || (t.output_schema.as_ref()).is_some_and(|o| !limits.schema_fits(o))
        };
        let over_skills = self.skills.len() > limits.skills
            || self
                .skills
                .iter()
                .any(|k| k.description.len() > limits.tool_description_bytes);
        if over_instructions.is_none()
            && !over_tools
            && !over_skills
            && !self.tools.iter().any(over_tool)
        {
            return (Cow::Borrowed(self), hits);
        }
        let mut cut = self.clone();
        if over_skills {
            cut.cut_skills(limits, &mut hits);
        }
        if let Some(raw) = over_instructions {
            hits.push(LimitHit::new(
                Limit::InstructionsBytes,
                limits.instructions_bytes,
                raw.len(),
            ));
            let kept = limits::prefix(raw, limits.instructions_bytes);
            cut.instructions = Instructions::from_raw(Some(kept));
        }
        if over_tools {
            hits.push(LimitHit::new(Limit::Tools, limits.tools, self.tools.len()));
            cut.tools.truncate(limits.tools);
        }
        let (mut long, mut deep) = ((0, 0), (0, 0));
        for t in &mut cut.tools {
            if let Some(d) = &mut t.description
                && d.len() > limits.tool_description_bytes
            {
                long = (long.0 + 1, long.1.max(d.len()));
                let kept = limits::prefix(d, limits.tool_description_bytes).len();
                d.truncate(kept);
            }
            if !limits.schema_fits(&t.input_schema) {
                deep = (deep.0 + 1, deep.1.max(t.input_schema.json_bytes()));
                t.input_schema = InputSchema::new(serde_json::Value::Object(Default::default()));
            }
            // Over the limits: none served (never a cut one, which the
            // host would check structured results against).
            t.output_schema.take_if(|o| !limits.schema_fits(o));
        }
        if long.0 > 0 {
            hits.push(
                LimitHit::new(
                    Limit::ToolDescriptionBytes,
                    limits.tool_description_bytes,
                    long.1,
                )
                .times(long.0),
            );
        }
        if deep.0 > 0 {
            hits.push(LimitHit::new(Limit::Schema, limits.schema_bytes, deep.1).times(deep.0));
        }
        (Cow::Owned(cut), hits)
    }
}

impl ServerSnapshot {
    /// Keeps the first [`Limits::skills`] skills, each description cut
    /// like a tool's ([`Limits::tool_description_bytes`]).
    fn cut_skills(&mut self, limits: &Limits, hits: &mut Vec<LimitHit>) {
        if self.skills.len() > limits.skills {
            hits.push(LimitHit::new(
                Limit::Skills,
                limits.skills,
                self.skills.len(),
            ));
            self.skills.truncate(limits.skills);
        }
        let (mut count, mut longest) = (0, 0);
        for k in &mut self.skills {
            if k.description.len() > limits.tool_description_bytes {
                (count, longest) = (count + 1, longest.max(k.description.len()));
                let kept = limits::prefix(&k.description, limits.tool_description_bytes).len();
                k.description.truncate(kept);
            }
        }
        if count > 0 {
            let hit = LimitHit::new(
                Limit::ToolDescriptionBytes,
                limits.tool_description_bytes,
                longest,
            );
            hits.push(hit.times(count));
        }
    }
}
