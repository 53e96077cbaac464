//! What one server exposes to the model, as the assembly decided it: the
//! tools it is sent (the policy's filter and overrides applied) by the names
//! the model sees, their text sanitized once (descriptions by the sanitize
//! stage's rule on first read), and its instructions before
//! de-duplication and budgets. The section is rendered from the same data,
//! and the gateway (`crate::serve`) serves it as it is, so `tools/list`, the
//! section and the gateway's reader tool cannot disagree.

use std::sync::OnceLock;

use crate::model::{Tool, ToolAnnotations};
use crate::sanitize::{self, HiddenChars};
use crate::schema::InputSchema;
use crate::tool_names::ExposedName;

/// One server's exposure (per [`crate::report::ServerReport`], in the same
/// order: [`crate::report::Assembly`] keeps both).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Exposure {
    /// The server's alias as given (a hub's key), if it has one.
    pub alias: Option<String>,
    /// The tools the model is sent, in the server's order (none when the
    /// policy excludes the server; tools whose name sanitizes to nothing
    /// are left out, as in the section).
    pub tools: Vec<ExposedTool>,
    /// The tools the policy's filter hides: (own name, the name the scheme
    /// would give it); none when the policy excludes the server.
    pub hidden: Vec<(String, String)>,
    /// The server's own instructions as the section shows them with no
    /// budget: sanitized (or the reviewed text while a change is held),
    /// units about hidden tools out, tool names as the model sees them,
    /// de-duplicated within the server (not against other servers). `None` when absent, blank, dropped, or replaced by
    /// the operator's text.
    pub instructions: Option<String>,
    /// The skills the model is shown (`skills/list`, sanitized and
    /// de-duplicated; none when the policy excludes the server), in the
    /// server's order, whatever a budget leaves of the index.
    pub skills: Vec<ExposedSkill>,
}

/// One skill as the model is shown it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ExposedSkill {
    /// The URI as the server sent it (a `skills/get` is forwarded under it).
    pub uri: String,
    /// The URI sanitized to one line (what the section shows).
    pub shown_uri: String,
    /// `frontmatter.name`, sanitized to one line.
    pub name: String,
    /// `frontmatter.description`, sanitized to one line.
    pub description: String,
    /// The frontmatter as sent, with `name` and `description` the sanitized ones.
    pub frontmatter: serde_json::Value,
    /// The files, as sent.
    pub resources: crate::model::SkillResources,
}

/// One tool as the model is sent it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ExposedTool {
    /// The tool's own name, as its server calls it (not sanitized: calls
    /// are forwarded under it).
    pub own: String,
    /// The name the model sees (the section's).
    pub name: String,
    /// The same name as the scheme's table gave it (with how it fits the
    /// cap); `None` under the plain scheme, where tools keep their own.
    pub exposed: Option<ExposedName>,
    /// `title`, sanitized to one line.
    pub title: Option<String>,
    /// `annotations`, as sent or overridden (its `title` sanitized to one line).
    pub annotations: Option<ToolAnnotations>,
    /// `inputSchema`, as read within the limits.
    pub input_schema: InputSchema,
    /// `outputSchema`, as read within the limits.
    pub output_schema: Option<InputSchema>,
    /// It as [`ExposedTool::served_schema`] is, on first read.
    served_output: OnceLock<Option<serde_json::Value>>,
    /// `icons`, as sent (not text the model reads).
    pub icons: Option<serde_json::Value>,
    /// `_meta`, as sent (not text the model reads).
    pub meta: Option<serde_json::Value>,
    /// It with every hidden character removed from its strings and keys,
    /// on first read (`None`: it had none): what the gateway serves.
    served_schema: OnceLock<Option<serde_json::Value>>,
    /// `description` as sent or overridden.
    sent: Option<String>,
    /// It sanitized, and the hidden characters that removed: on first read
    /// (a section that shows no descriptions does not pay for them).
    description: OnceLock<(Option<String>, HiddenChars)>,
}

impl ExposedTool {
    /// `own` (a server's tool) named `name` for the model (and `exposed`
    /// by the scheme's table), its `title` already sanitized, its
    /// `description` as sent.
    pub fn new(
        own: &Tool,
        (name, exposed): (String, Option<ExposedName>),
        title: Option<String>,
    ) -> ExposedTool {
        ExposedTool {
            own: own.name.clone(),
            name,
            exposed,
            title,
            annotations: own.annotations.clone().map(|mut a| {
                // The one text among the hints: a title, one line like `title`.
                a.title = a.title.as_deref().map(sanitize::line);
                a
            }),
            input_schema: own.input_schema.clone(),
            served_schema: OnceLock::new(),
            output_schema: own.output_schema.clone(),
            served_output: OnceLock::new(),
            icons: own.icons.clone(),
            meta: own.meta.clone(),
            sent: own.description.clone(),
            description: OnceLock::new(),
        }
    }

    /// `description`, sanitized (`None` when absent or empty once
    /// sanitized), and the hidden characters sanitizing removed from it.
    pub fn description_counted(&self) -> (Option<&str>, HiddenChars) {
        let (text, hidden) = self.description.get_or_init(|| {
            let mut hidden = HiddenChars::default();
            let text = self
                .sent
                .as_deref()
                .map(|d| sanitize::text_counting(d, &mut hidden))
                .filter(|d| !d.is_empty());
            (text, hidden)
        });
        (text.as_deref(), *hidden)
    }

    /// `inputSchema` as the gateway serves it: every string in it (object
    /// keys too: descriptions, titles, defaults, enums, examples, property
    /// names) without the characters sanitizing drops, nothing else changed.
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub fn served_schema(&self) -> &serde_json::Value {
        let schema = self.input_schema.as_value();
        let clean = self
            .served_schema
            .get_or_init(|| sanitize::json_counting(schema, &mut HiddenChars::default()));
        clean.as_ref().unwrap_or(schema)
    }

    /// `outputSchema` as the gateway serves it: sanitized as
    /// [`ExposedTool::served_schema`] is.
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub fn served_output_schema(&self) -> Option<&serde_json::Value> {
        let schema = self.output_schema.as_ref()?.as_value();
        let clean = self
            .served_output
            .get_or_init(|| sanitize::json_counting(schema, &mut HiddenChars::default()));
        Some(clean.as_ref().unwrap_or(schema))
    }

    /// `description`, sanitized; `None` when absent or empty once sanitized.
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub fn description(&self) -> Option<&str> {
        self.description_counted().0
    }
}
