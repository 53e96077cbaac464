//! Bounds on the work one server's data can cost the host.
//!
//! The library runs before every model request, so a hostile server's size
//! is the host's latency and memory. Past a limit the server is cut, with a
//! diagnostic naming the limit; the other servers are never touched.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::schema::InputSchema;
use crate::support::string_enum;

/// Bounds on one server's data, with defaults well above what real servers
/// send (the largest in `tests/corpus/`: 123 tools, about 4,000 characters
/// of instructions, 11 KB in one tool description).
///
/// ```
/// use mcp_preamble::{Assembler, Limits};
/// let assembler = Assembler::new().limits(Limits::default().tools(5_000));
/// # let _ = assembler;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Limits {
    pub(crate) instructions_bytes: usize,
    pub(crate) tools: usize,
    pub(crate) tool_description_bytes: usize,
    pub(crate) schema_depth: usize,
    pub(crate) schema_bytes: usize,
    pub(crate) dedup_units: usize,
    pub(crate) tool_pages: usize,
    pub(crate) skills: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            instructions_bytes: 64 * 1024,
            tools: 1_000,
            tool_description_bytes: 16 * 1024,
            schema_depth: 32,
            schema_bytes: 64 * 1024,
            dedup_units: 2_000,
            tool_pages: 100,
            skills: 256,
        }
    }
}

macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {
        impl Limits {
            $(
                $(#[$doc])*
                pub fn $name(mut self, n: usize) -> Limits {
                    self.$name = n;
                    self
                }
            )*
        }
    };
}

setters! {
    /// Bytes of instructions read (default 64 KiB); the rest is cut at a
    /// character boundary.
    instructions_bytes,
    /// Tools read per server (default 1,000); later ones are not listed.
    tools,
    /// Bytes of each tool description read (default 16 KiB).
    tool_description_bytes,
    /// Deepest input schema kept (default 32 levels, as
    /// [`InputSchema::depth`] counts them); a deeper one is replaced by `{}`. Assembly never reads schemas; the lint and pins do.
    schema_depth,
    /// Largest input schema kept, in bytes of compact JSON (default 64 KiB,
    /// [`InputSchema::json_bytes`]).
    schema_bytes,
    /// Units (sentences, list items…) of instructions checked by
    /// de-duplication (default 2,000); later ones are kept as they are.
    dedup_units,
    /// `tools/list` pages read from a live server (default 100); the same
    /// bound holds for `skills/list` pages.
    tool_pages,
    /// Skills read per server (default 256, from `skills/list`); later ones
    /// are not listed. Their descriptions are cut at
    /// [`Limits::tool_description_bytes`].
    skills,
}

impl Limits {
    /// See [`Limits::tools`].
    pub fn max_tools(&self) -> usize {
        self.tools
    }

    /// See [`Limits::tool_pages`].
    pub fn max_tool_pages(&self) -> usize {
        self.tool_pages
    }

    /// See [`Limits::skills`].
    pub fn max_skills(&self) -> usize {
        self.skills
    }

    /// See [`Limits::dedup_units`].
    /// Instructions cut to [`Limits::instructions_bytes`], at a character.
    pub(crate) fn cut_instructions<'s>(&self, text: &'s str) -> &'s str {
        prefix(text, self.instructions_bytes)
    }

    pub(crate) fn max_dedup_units(&self) -> usize {
        self.dedup_units
    }

    /// Whether `schema` is within the depth and byte limits (measured
    /// when the schema was made).
    pub(crate) fn schema_fits(&self, schema: &InputSchema) -> bool {
        schema.depth() <= self.schema_depth && schema.json_bytes() <= self.schema_bytes
    }
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
pub(crate) fn prefix(s: &str, max: usize) -> &str {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

string_enum! {
    /// Which limit a server reached.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    #[non_exhaustive]
    pub enum Limit {
        /// [`Limits::instructions_bytes`].
        InstructionsBytes => "instructions_bytes",
        /// [`Limits::tools`].
        Tools => "tools",
        /// [`Limits::tool_description_bytes`].
        ToolDescriptionBytes => "tool_description_bytes",
        /// [`Limits::schema_depth`] or [`Limits::schema_bytes`].
        Schema => "schema",
        /// [`Limits::dedup_units`].
        DedupUnits => "dedup_units",
        /// [`Limits::tool_pages`].
        ToolPages => "tool_pages",
        /// The template's fuel for one block, or its size (256 KiB): the block
        /// could not be rendered whole and was cut to what renders.
        RenderFuel => "render_fuel",
        /// [`Limits::skills`].
        Skills => "skills",
        /// `skills/list` gave more than [`Limits::tool_pages`] pages.
        SkillPages => "skill_pages",
    }
    /// The name used in reports, e.g. `tools`.
    fn as_str;
}

/// A limit one server reached: what was allowed and what it sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LimitHit {
    /// The limit.
    pub limit: Limit,
    /// What the limit allows.
    pub allowed: usize,
    /// What the server sent (the largest, when several items were over).
    pub sent: usize,
    /// How many items were over (tool descriptions, schemas); 1 otherwise.
    pub count: usize,
}

impl LimitHit {
    pub(crate) fn new(limit: Limit, allowed: usize, sent: usize) -> LimitHit {
        LimitHit {
            limit,
            allowed,
            sent,
            count: 1,
        }
    }

    pub(crate) fn times(mut self, count: usize) -> LimitHit {
        self.count = count;
        self
    }
}

/// The diagnostic line, e.g. `limit tools reached: 200000 sent, 1000 read`.
impl fmt::Display for LimitHit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let LimitHit {
            limit,
            allowed,
            sent,
            count,
        } = *self;
        match limit {
            Limit::InstructionsBytes => write!(
                f,
                "limit {limit} reached: {sent} bytes of instructions sent, the first {allowed} read"
            ),
            Limit::Tools => write!(
                f,
                "limit {limit} reached: {sent} tools sent, the first {allowed} read"
            ),
            Limit::ToolDescriptionBytes => write!(
                f,
                "limit {limit} reached: {count} tool description(s) over {allowed} bytes (up to {sent}) cut"
            ),
            Limit::Schema => write!(
                f,
                "limit {limit} reached: {count} input schema(s) too deep or over {allowed} bytes (up to {sent}) not read"
            ),
            Limit::DedupUnits => write!(
                f,
                "limit {limit} reached: {sent} units of instructions, the first {allowed} checked for de-duplication"
            ),
            Limit::ToolPages => write!(
                f,
                "limit {limit} reached: tools/list gave more than {allowed} pages; the rest not read"
            ),
            Limit::Skills => write!(
                f,
                "limit {limit} reached: {sent} skills sent, the first {allowed} read"
            ),
            Limit::SkillPages => write!(
                f,
                "limit {limit} reached: skills/list gave more than {allowed} pages; the rest not read"
            ),
            Limit::RenderFuel => write!(
                f,
                "limit {limit} reached: the block ran out of template fuel or grew past 256 KiB and was cut to what renders"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ServerSnapshot, Tool};
    use std::borrow::Cow;

    #[test]
    fn prefix_ends_on_a_character() {
        assert_eq!(prefix("aé", 2), "a");
        assert_eq!(prefix("abc", 10), "abc");
    }

    #[test]
    fn schemas_over_either_limit_do_not_fit() {
        let v = serde_json::json!({"a": {"description": "x".repeat(100)}});
        let size = serde_json::to_string(&v).unwrap().len();
        let v = InputSchema::new(v);
        let fits = |bytes, depth| {
            Limits::default()
                .schema_bytes(bytes)
                .schema_depth(depth)
                .schema_fits(&v)
        };
        assert!(fits(size, 2));
        assert!(!fits(size - 1, 2));
        assert!(!fits(size, 1));
        assert!(!fits(0, 0));
        // A scalar has no depth.
        assert!(
            Limits::default()
                .schema_depth(0)
                .schema_fits(&InputSchema::default())
        );
    }

    #[test]
    fn nothing_over_borrows() {
        let s = ServerSnapshot::new("x")
            .with_instructions("Hi.")
            .with_tool(Tool::new("a", "b"));
        let (out, hits) = s.within(&Limits::default());
        assert!(matches!(out, Cow::Borrowed(_)));
        assert!(hits.is_empty());
    }
}
