//! Reading `skills/list` pages (the Skills extension, `io.modelcontextprotocol/skills`).
//!
//! The shape is that of the extension's stable specification (SEP-2640,
//! `modelcontextprotocol/ext-skills`, `specification/stable/skills.mdx`): a
//! server declares the extension under `capabilities.extensions` of its
//! `initialize` or `server/discover` result; `skills/list` takes an optional
//! `cursor` and answers `{skills: [Skill], nextCursor?, ttlMs, cacheScope}`;
//! `skills/get` takes `{uri}` and answers `{skill: Skill}`. A `Skill` is
//! `{uri, frontmatter: {name, description, …}, resources: [{uri, digest,
//! size}] | "dynamic"}`.
//!
//! The reader is tolerant: unknown fields are ignored, and an entry that does
//! not read (not an object, no string `uri`, no frontmatter `name` or
//! `description`, `resources` neither an array nor `"dynamic"`) is skipped
//! and its reason kept in [`ServerSnapshot::skills_skipped`], never an error
//! for the page. Only a page without a `skills` array is an error.

use serde_json::{Map, Value};

use super::{invalid, opt_str, unwrap_result};
use crate::error::Result;
use crate::model::{DynamicResources, ServerSnapshot, Skill, SkillFile, SkillResources};

/// The extension's key under `capabilities.extensions`.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// Skipped entries kept with their reason, at most: the rest are counted.
const MAX_SKIPPED: usize = 16;

/// One entry, or why it does not read.
pub(crate) fn skill(value: &Value) -> std::result::Result<Skill, String> {
    let obj = value.as_object().ok_or("not a json object")?;
    let uri = match obj.get("uri") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => return Err("no uri".into()),
    };
    let frontmatter = match obj.get("frontmatter") {
        Some(f @ Value::Object(_)) => f.clone(),
        _ => return Err(format!("{uri}: no frontmatter object")),
    };
    let text = |key: &str| match frontmatter.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => Err(format!("{uri}: frontmatter has no string {key}")),
    };
    let (name, description) = (text("name")?, text("description")?);
    let resources = match obj.get("resources") {
        Some(Value::String(s)) if s == "dynamic" => {
            SkillResources::Dynamic(DynamicResources::Dynamic)
        }
        Some(Value::Array(files)) => SkillResources::Files(skill_files(files)),
        _ => {
            return Err(format!(
                "{uri}: resources is neither an array nor \"dynamic\""
            ));
        }
    };
    Ok(Skill {
        uri,
        name,
        description,
        frontmatter,
        resources,
    })
}

/// The files of a manifest that read (a `uri` and a `digest`); others are left out.
fn skill_files(files: &[Value]) -> Vec<SkillFile> {
    files
        .iter()
        .filter_map(Value::as_object)
        .filter_map(|f: &Map<String, Value>| {
            Some(SkillFile {
                uri: f.get("uri")?.as_str()?.to_string(),
                digest: f.get("digest")?.as_str()?.to_string(),
                size: f.get("size").and_then(Value::as_u64).unwrap_or(0),
            })
        })
        .collect()
}

impl ServerSnapshot {
    /// Appends one `skills/list` page, bare or inside its JSON-RPC response,
    /// and returns its `nextCursor` (fetch the next page while it is `Some`).
    ///
    /// Entries that do not read are skipped and named in
    /// [`ServerSnapshot::skills_skipped`]. A JSON-RPC error response is an
    /// [`ErrorKind::RpcError`](crate::ErrorKind::RpcError) naming
    /// `skills/list`, and a result without a `skills` array an
    /// [`ErrorKind::InvalidMessage`](crate::ErrorKind::InvalidMessage); the
    /// snapshot is left as it was.
    pub fn push_skills_page(&mut self, msg: &Value) -> Result<Option<String>> {
        let result = unwrap_result(msg, "skills/list")?;
        let list = result
            .get("skills")
            .and_then(Value::as_array)
            .ok_or_else(|| invalid("skills/list result has no skills array"))?;
        let cursor = opt_str(result, "nextCursor", "skills/list result")?.map(str::to_string);
        for entry in list {
            match skill(entry) {
                Ok(s) => self.skills.push(s),
                Err(why) if self.skills_skipped.len() < MAX_SKIPPED => {
                    let at = self.skills.len() + self.skills_skipped.len();
                    self.skills_skipped.push(format!("entry {at}: {why}"));
                }
                Err(_) => {}
            }
        }
        Ok(cursor)
    }
}
