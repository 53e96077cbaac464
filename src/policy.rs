//! The operator's policy file, `mcp-preamble.toml`: defaults and per-server
//! policies, read with serde and turned into an [`Assembler`] by
//! [`Assembler::from_policy`]. The schema is in the crate docs, "Policy file".

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::assemble::{Assembler, Order, Policy};
use crate::error::{Error, ErrorKind, Result};
use crate::pin::OnChange;
use crate::support::distance;
use crate::template::Template;
use crate::tokens::Encoding;

/// The policy-file version this crate reads.
pub const POLICY_VERSION: u32 = 1;

const TOP_KEYS: &[&str] = &["version", "defaults", "servers"];
const DEFAULT_KEYS: &[&str] = &[
    "budget",
    "total_budget",
    "template",
    "encoding",
    "dedup",
    "similarity",
    "order",
    "list_tool_only_servers",
    "tool_descriptions",
    "on_change",
];
const SERVER_KEYS: &[&str] = &[
    "budget",
    "weight",
    "exclude",
    "instructions",
    "label",
    "on_change",
];

/// A parsed policy file (see the crate docs, "Policy file").
///
/// ```
/// use mcp_preamble::{Assembler, PolicyFile};
/// let file = PolicyFile::from_str(
///     "version = 1\n[defaults]\nbudget = 200\n[servers.scratch]\nexclude = true\n",
///     "mcp-preamble.toml",
/// )?;
/// let assembler = Assembler::from_policy(&file)?;
/// # let _ = assembler;
/// # Ok::<(), mcp_preamble::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PolicyFile {
    /// Where it was read from (for messages).
    pub origin: String,
    /// The directory a relative `template` path is resolved against, when
    /// the file was read from disk.
    pub base_dir: Option<PathBuf>,
    /// `[defaults]`.
    pub defaults: PolicyDefaults,
    /// `[servers.<alias>]`, by alias.
    pub servers: BTreeMap<String, ServerPolicy>,
    /// Where each `[servers.<alias>]` is: 1-based line and column.
    places: BTreeMap<String, (usize, usize)>,
}

/// `[defaults]`: settings for every server; unset keys keep the
/// [`Assembler`]'s defaults.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct PolicyDefaults {
    /// Token budget of every server's block.
    pub budget: Option<usize>,
    /// Token budget of the whole section.
    pub total_budget: Option<usize>,
    /// `"markdown"`, `"xml"`, or a template file (relative to the policy file).
    pub template: Option<String>,
    /// `"o200k_base"`, `"cl100k_base"`, or a model name.
    #[serde(default, deserialize_with = "encoding_name")]
    pub encoding: Option<String>,
    /// De-duplication on or off.
    pub dedup: Option<bool>,
    /// The similarity threshold of de-duplication, `0.0..=1.0`.
    #[serde(default, deserialize_with = "similarity")]
    pub similarity: Option<f64>,
    /// `"name"` or `"insertion"`.
    pub order: Option<PolicyOrder>,
    /// Whether servers with tools but no instructions are listed.
    pub list_tool_only_servers: Option<bool>,
    /// Whether tool descriptions are shown next to tool names.
    pub tool_descriptions: Option<bool>,
    /// What reaches the model when a server differs from its pin, for
    /// servers without their own `on_change`.
    pub on_change: Option<OnChange>,
}

/// The `order` key: the values of [`Order`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum PolicyOrder {
    /// [`Order::Name`].
    Name,
    /// [`Order::Insertion`].
    Insertion,
}

/// `[servers.<alias>]`: the operator's decisions for one server.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ServerPolicy {
    /// Token budget of this server's block.
    pub budget: Option<usize>,
    /// Weight in the fair shares of `total_budget`.
    pub weight: Option<f64>,
    /// Leave the server out.
    #[serde(default)]
    pub exclude: bool,
    /// Operator text shown instead of the server's instructions.
    pub instructions: Option<String>,
    /// Shown with the block when its text is the operator's (`instructions`).
    pub label: Option<String>,
    /// What reaches the model when the server differs from its pin.
    pub on_change: Option<OnChange>,
}

#[derive(Deserialize)]
struct Version {
    version: Option<Spanned<toml::Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    #[allow(dead_code)]
    version: toml::Value,
    #[serde(default)]
    defaults: PolicyDefaults,
    #[serde(default)]
    servers: BTreeMap<String, Spanned<ServerPolicy>>,
}

impl PolicyFile {
    /// Reads a policy file; relative template paths are resolved against
    /// its directory.
    pub fn from_path(path: impl AsRef<Path>) -> Result<PolicyFile> {
        let path = path.as_ref();
        let text = crate::error::read_file(path)?;
        let mut file = PolicyFile::from_str(&text, &path.display().to_string())?;
        file.base_dir = path.parent().map(Path::to_path_buf);
        Ok(file)
    }

    /// Parses policy TOML; `origin` names it in error messages.
    ///
    /// Errors are [`ErrorKind::InvalidConfig`] and name the origin, line and
    /// column: `invalid configuration: mcp-preamble.toml:4:1: unknown key
    /// "budgett" in [defaults] (did you mean "budget"?)`.
    #[allow(clippy::should_implement_trait)]
    pub fn from_str(text: &str, origin: &str) -> Result<PolicyFile> {
        let at = |span: Option<std::ops::Range<usize>>, detail: String| {
            let place = match span {
                Some(span) => {
                    let (line, col) = line_col(text, span.start);
                    format!("{origin}:{line}:{col}")
                }
                None => origin.to_string(),
            };
            Error::new(ErrorKind::InvalidConfig, format!("{place}: {detail}"))
        };
        let version: Version =
            toml::from_str(text).map_err(|e| at(e.span(), one_line(e.message())).with_source(e))?;
        match version.version {
            None => {
                return Err(at(
                    None,
                    format!("missing key \"version\" (add `version = {POLICY_VERSION}`)"),
                ));
            }
            Some(v) if v.get_ref().as_integer() == Some(POLICY_VERSION.into()) => {}
            Some(v) => {
                return Err(at(
                    Some(v.span()),
                    format!(
                        "policy file version {} is not supported (this mcp-preamble reads version {POLICY_VERSION})",
                        shown(v.get_ref())
                    ),
                ));
            }
        }
        let raw: Raw = toml::from_str(text).map_err(|e| {
            let detail = unknown_key(text, &e).unwrap_or_else(|| one_line(e.message()));
            at(e.span(), detail).with_source(e)
        })?;
        let mut servers = BTreeMap::new();
        let mut places = BTreeMap::new();
        for (alias, policy) in raw.servers {
            let span = policy.span();
            places.insert(alias.clone(), line_col(text, span.start));
            let policy = policy.into_inner();
            if policy.label.is_some() && policy.instructions.is_none() {
                return Err(at(
                    Some(span),
                    format!(
                        "[servers.{alias}]: \"label\" needs \"instructions\" (it marks the operator's text)"
                    ),
                ));
            }
            servers.insert(alias, policy);
        }
        Ok(PolicyFile {
            origin: origin.to_string(),
            base_dir: None,
            defaults: raw.defaults,
            servers,
            places,
        })
    }
}

impl PolicyFile {
    /// Where `[servers.<alias>]` is in the file: 1-based line and column.
    pub fn place_of(&self, alias: &str) -> Option<(usize, usize)> {
        self.places.get(alias).copied()
    }
}

impl Assembler {
    /// An assembler with a policy file's settings; builder calls after this
    /// override them (the CLI's flags do). Fails with
    /// [`ErrorKind::InvalidConfig`] naming the file when a template or
    /// encoding cannot be loaded or the similarity is out of range.
    ///
    /// A live hub takes a new policy without reconnecting any server:
    /// `hub.reconfigure(Assembler::from_policy(&PolicyFile::from_path(p)?)?)`.
    pub fn from_policy(file: &PolicyFile) -> Result<Assembler> {
        let bad = |detail: String| {
            Error::new(
                ErrorKind::InvalidConfig,
                format!("{}: {detail}", file.origin),
            )
        };
        let d = &file.defaults;
        let mut a = Assembler::new();
        if let Some(name) = &d.template {
            let path = match &file.base_dir {
                Some(dir) => dir.join(name),
                None => PathBuf::from(name),
            };
            let template = if Template::builtin(name).is_ok() {
                Template::builtin(name)
            } else {
                Template::from_path(&path)
            };
            a = a.template(
                template.map_err(|e| bad(format!("[defaults] template: {e}")).with_source(e))?,
            );
        }
        if let Some(name) = &d.encoding {
            let encoding =
                Encoding::from_name(name).map_err(|e| bad(format!("[defaults] encoding: {e}")))?;
            a = a.encoding(encoding);
        }
        if let Some(n) = d.budget {
            a = a.budget(n);
        }
        if let Some(n) = d.total_budget {
            a = a.total_budget(n);
        }
        if let Some(yes) = d.dedup {
            a = a.dedup(yes);
        }
        if let Some(t) = d.similarity {
            a = a
                .similarity_threshold(t)
                .map_err(|e| bad(format!("[defaults] similarity: {}", detail(&e))))?;
        }
        if let Some(order) = d.order {
            a = a.order(match order {
                PolicyOrder::Name => Order::Name,
                PolicyOrder::Insertion => Order::Insertion,
            });
        }
        if let Some(yes) = d.list_tool_only_servers {
            a = a.list_tool_only_servers(yes);
        }
        if let Some(yes) = d.tool_descriptions {
            a = a.tool_descriptions(yes);
        }
        if let Some(change) = d.on_change {
            a = a.on_change(change);
        }
        for (alias, s) in &file.servers {
            if let Some(n) = s.budget {
                a = a.server_budget(alias.clone(), n);
            }
            let mut p = Policy::new();
            if s.exclude {
                p = p.exclude();
            }
            if let Some(text) = &s.instructions {
                p = p.replace_instructions(text.clone());
            }
            if let Some(label) = &s.label {
                p = p.label(label.clone());
            }
            if let Some(w) = s.weight {
                p = p.weight(w);
            }
            if let Some(change) = s.on_change {
                p = p.on_change(change);
            }
            // Always set, so an alias no server has is reported as a policy.
            a = a.policy(alias.clone(), p);
        }
        Ok(a)
    }
}

/// The detail of one of this crate's errors, without its kind.
fn detail(e: &Error) -> String {
    let text = e.to_string();
    let prefix = format!("{}: ", e.kind());
    text.strip_prefix(&prefix).unwrap_or(&text).to_string()
}

/// An encoding name, checked where it is written.
fn encoding_name<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<String>, D::Error> {
    let name = String::deserialize(d)?;
    Encoding::from_name(&name).map_err(serde::de::Error::custom)?;
    Ok(Some(name))
}

/// A similarity threshold, checked where it is written.
fn similarity<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<f64>, D::Error> {
    let t = f64::deserialize(d)?;
    crate::dedup::similarity(t).map_err(|e| serde::de::Error::custom(detail(&e)))?;
    Ok(Some(t))
}

/// 1-based line and column (in characters) of byte `offset`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

fn shown(value: &toml::Value) -> String {
    match value {
        toml::Value::Integer(n) => n.to_string(),
        toml::Value::String(s) => format!("{s:?}"),
        other => format!("of type {}", other.type_str()),
    }
}

fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// "unknown key "x" in [table] (did you mean "y"?)" for serde's unknown-field error.
fn unknown_key(text: &str, e: &toml::de::Error) -> Option<String> {
    let message = e.message();
    let rest = message.strip_prefix("unknown field `")?;
    let key = &rest[..rest.find('`')?];
    let expected = &rest[rest.find('`')?..];
    let (known, table): (&[&str], String) = if expected.contains("`exclude`") {
        let header = e
            .span()
            .and_then(|s| header_before(text, s.start))
            .filter(|h| h.starts_with("servers."))
            .unwrap_or_else(|| "servers.<alias>".to_string());
        (SERVER_KEYS, format!("[{header}]"))
    } else if expected.contains("`similarity`") {
        (DEFAULT_KEYS, "[defaults]".to_string())
    } else {
        (TOP_KEYS, "the top level".to_string())
    };
    Some(format!(
        "unknown key {key:?} in {table}{}",
        suggest(key, known)
    ))
}

/// The last `[table]` header before `offset`.
fn header_before(text: &str, offset: usize) -> Option<String> {
    let before = text.get(..offset)?;
    before.lines().rev().find_map(|line| {
        let line = line.trim();
        let inner = line.strip_prefix('[')?.strip_suffix(']')?;
        (!inner.starts_with('[')).then(|| inner.trim().to_string())
    })
}

/// ` (did you mean "k"?)` for the closest key within a few edits, else the valid keys.
pub(crate) fn suggest(word: &str, known: &[&str]) -> String {
    match closest(word, known.iter().copied()) {
        Some(k) => format!(" (did you mean {k:?}?)"),
        None => format!(" (valid keys: {})", known.join(", ")),
    }
}

/// The candidate closest to `word` by edit distance, when close enough
/// (at most 2 edits, or a third of the word).
pub(crate) fn closest<'a>(
    word: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<&'a str> {
    distance::did_you_mean(word, candidates)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        PolicyFile::from_str(text, "mcp-preamble.toml")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_typo_names_line_column_and_the_key() {
        assert_eq!(
            err("version = 1\n\n[defaults]\nbudgett = 200\n"),
            "invalid configuration: mcp-preamble.toml:4:1: unknown key \"budgett\" in [defaults] (did you mean \"budget\"?)"
        );
        assert_eq!(
            err("version = 1\n[servers.billing]\n  wieght = 2.0\n"),
            "invalid configuration: mcp-preamble.toml:3:3: unknown key \"wieght\" in [servers.billing] (did you mean \"weight\"?)"
        );
        assert_eq!(
            err("version = 1\ndefault = {}\n"),
            "invalid configuration: mcp-preamble.toml:2:1: unknown key \"default\" in the top level (did you mean \"defaults\"?)"
        );
        assert_eq!(
            err("version = 1\n[defaults]\nzzzzzzzz = 1\n"),
            "invalid configuration: mcp-preamble.toml:3:1: unknown key \"zzzzzzzz\" in [defaults] (valid keys: budget, total_budget, template, encoding, dedup, similarity, order, list_tool_only_servers, tool_descriptions, on_change)"
        );
    }

    #[test]
    fn versions() {
        assert_eq!(
            err("version = 2\n"),
            "invalid configuration: mcp-preamble.toml:1:11: policy file version 2 is not supported (this mcp-preamble reads version 1)"
        );
        assert_eq!(
            err("[defaults]\n"),
            "invalid configuration: mcp-preamble.toml: missing key \"version\" (add `version = 1`)"
        );
    }

    #[test]
    fn other_errors_name_the_place() {
        let e = err("version = 1\n[defaults]\norder = \"random\"\n");
        assert!(
            e.starts_with("invalid configuration: mcp-preamble.toml:3:9: unknown variant"),
            "{e}"
        );
        assert_eq!(
            err("version = 1\n[servers.x]\nlabel = \"ops\"\n"),
            "invalid configuration: mcp-preamble.toml:2:1: [servers.x]: \"label\" needs \"instructions\" (it marks the operator's text)"
        );
        assert_eq!(
            err("version = 1\n[defaults]\nsimilarity = 2.0\n"),
            "invalid configuration: mcp-preamble.toml:3:14: similarity threshold 2 is outside 0.0..=1.0"
        );
        assert_eq!(
            err("version = 1\n[defaults]\nencoding = \"nope\"\n"),
            "invalid configuration: mcp-preamble.toml:3:12: unknown encoding: \"nope\" (use o200k_base, cl100k_base, or a model such as gpt-4o)"
        );
        let e = err("version = 1\n[servers.x]\non_change = \"keep\"\n");
        assert!(
            e.starts_with("invalid configuration: mcp-preamble.toml:3:13: "),
            "{e}"
        );
    }
}
