//! The operator's policy file, `mcp-preamble.toml`, read into
//! [`Settings`] (the schema) with the place of each table for messages.
//! The schema is in the crate docs, "Policy file".

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::{ClientSettings, Defaults, GatewaySettings, POLICY_VERSION, ServerSettings, Settings};
use crate::assemble::Assembler;
use crate::error::{Error, ErrorKind, Result};
use crate::support::distance;

/// A parsed policy file (see the crate docs, "Policy file"): its
/// [`Settings`] (which it dereferences to) and where each
/// `[servers.<alias>]` is.
///
/// ```
/// use mcp_preamble::Assembler;
/// use mcp_preamble::settings::PolicyFile;
/// let file = PolicyFile::from_str(
///     "version = 1\n[defaults]\nbudget = 200\n[servers.scratch]\nexclude = true\n",
///     "mcp-preamble.toml",
/// )?;
/// assert_eq!(file.defaults.budget, Some(200));
/// let assembler = Assembler::from_settings(&file)?;
/// # let _ = assembler;
/// # Ok::<(), mcp_preamble::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PolicyFile {
    /// What the file says, with its origin and directory.
    pub settings: Settings,
    /// Where each `[servers.<alias>]` is: 1-based line and column.
    places: BTreeMap<String, (usize, usize)>,
}

impl std::ops::Deref for PolicyFile {
    type Target = Settings;

    fn deref(&self) -> &Settings {
        &self.settings
    }
}

impl std::ops::DerefMut for PolicyFile {
    fn deref_mut(&mut self) -> &mut Settings {
        &mut self.settings
    }
}

impl From<PolicyFile> for Settings {
    fn from(file: PolicyFile) -> Settings {
        file.settings
    }
}

#[derive(Deserialize)]
struct Version {
    version: Option<Spanned<toml::Value>>,
}

impl Settings {
    /// Reads a policy file ([`PolicyFile::from_path`]).
    pub fn from_path(path: impl AsRef<Path>) -> Result<Settings> {
        PolicyFile::from_path(path).map(Settings::from)
    }

    /// Parses policy TOML ([`PolicyFile::from_str`]).
    #[allow(clippy::should_implement_trait)]
    pub fn from_str(text: &str, origin: &str) -> Result<Settings> {
        PolicyFile::from_str(text, origin).map(Settings::from)
    }
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
        // The parser's own error is the message: it is not kept as a
        // source, whose text (with a snippet of the file) would repeat it.
        let at = |span: Option<Range<usize>>, detail: String| {
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
            toml::from_str(text).map_err(|e| at(e.span(), one_line(e.message())))?;
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
        let table = DeTable::parse(text).map_err(|e| at(e.span(), one_line(e.message())))?;
        if let Some((span, detail)) = unknown_key(text, table.get_ref()) {
            return Err(at(Some(span), detail));
        }
        let mut settings: Settings =
            toml::from_str(text).map_err(|e| at(e.span(), one_line(e.message())))?;
        let spans = server_spans(table.get_ref());
        for (alias, policy) in &settings.servers {
            if policy.label.is_some() && policy.instructions.is_none() {
                return Err(at(
                    spans.get(alias).cloned(),
                    format!(
                        "[servers.{}]: \"label\" needs \"instructions\" (it marks the operator's text)",
                        cut(alias)
                    ),
                ));
            }
        }
        settings.origin = origin.to_string();
        // All places in one pass over the text.
        let places = line_cols(text, spans.values().map(|span| span.start));
        Ok(PolicyFile {
            settings,
            places: spans.into_keys().zip(places).collect(),
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
    /// An assembler with a policy file's settings:
    /// [`Assembler::from_settings`]. Builder calls after this override
    /// them (the CLI's flags do).
    ///
    /// A live hub takes a new policy without reconnecting any server:
    /// `hub.reconfigure(Assembler::from_policy(&PolicyFile::from_path(p)?)?)`.
    pub fn from_policy(file: &PolicyFile) -> Result<Assembler> {
        Assembler::from_settings(&file.settings)
    }
}

/// The span of each `[servers.<alias>]` table.
fn server_spans(table: &DeTable<'_>) -> BTreeMap<String, Range<usize>> {
    let Some(DeValue::Table(servers)) = table.get("servers").map(Spanned::get_ref) else {
        return BTreeMap::new();
    };
    servers
        .iter()
        .map(|(alias, value)| (alias.get_ref().to_string(), value.span()))
        .collect()
}

/// A table value's table.
fn table_of<'a, 'i>(value: &'a Spanned<DeValue<'i>>) -> Option<&'a DeTable<'i>> {
    match value.get_ref() {
        DeValue::Table(t) => Some(t),
        _ => None,
    }
}

/// The first key the schema does not have, checked against each table's
/// own field list ([`Settings`], [`Defaults`], [`ServerSettings`]) in the
/// order serde reads them: its span and `unknown key "x" in [table] (did
/// you mean "y"?)`. Linear in the file: the header is looked up only for
/// the key reported.
fn unknown_key(text: &str, top: &DeTable<'_>) -> Option<(Range<usize>, String)> {
    let (key, known, table) = first_unknown(top)?;
    let name = key.get_ref();
    let table = match table {
        Some(table) => table.to_string(),
        None => {
            let header = header_before(text, key.span().start)
                .filter(|h| h.starts_with("servers."))
                .unwrap_or_else(|| "servers.<alias>".to_string());
            format!("[{}]", cut(&header))
        }
    };
    Some((
        key.span(),
        format!(
            "unknown key {:?} in {table}{}",
            cut(name),
            suggest(name, known)
        ),
    ))
}

type Key<'a, 'i> = &'a Spanned<std::borrow::Cow<'i, str>>;

/// The first key not in its table's field list, the list, and the table's
/// name (`None` for a `[servers.<alias>]` table, named from its header).
fn first_unknown<'a, 'i>(
    top: &'a DeTable<'i>,
) -> Option<(Key<'a, 'i>, &'static [&'static str], Option<&'static str>)> {
    let is_unknown = |key: Key<'_, '_>, known: &[&str]| !known.contains(&key.get_ref().as_ref());
    for (key, value) in top {
        if is_unknown(key, Settings::keys()) {
            return Some((key, Settings::keys(), Some("the top level")));
        }
        match (key.get_ref().as_ref(), table_of(value)) {
            ("defaults", Some(defaults)) => {
                if let Some(k) = defaults.keys().find(|k| is_unknown(k, Defaults::keys())) {
                    return Some((k, Defaults::keys(), Some("[defaults]")));
                }
            }
            ("client", Some(client)) => {
                if let Some(k) = client
                    .keys()
                    .find(|k| is_unknown(k, ClientSettings::keys()))
                {
                    return Some((k, ClientSettings::keys(), Some("[client]")));
                }
            }
            ("gateway", Some(gateway)) => {
                if let Some(k) = gateway
                    .keys()
                    .find(|k| is_unknown(k, GatewaySettings::keys()))
                {
                    return Some((k, GatewaySettings::keys(), Some("[gateway]")));
                }
            }
            ("servers", Some(servers)) => {
                for server in servers.values().filter_map(table_of) {
                    if let Some(k) = server
                        .keys()
                        .find(|k| is_unknown(k, ServerSettings::keys()))
                    {
                        return Some((k, ServerSettings::keys(), None));
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// 1-based line and column (in characters) of byte `offset`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    line_cols(text, std::iter::once(offset))[0]
}

/// [`line_col`] of each offset, in their order, in one pass over the text.
fn line_cols(text: &str, offsets: impl Iterator<Item = usize>) -> Vec<(usize, usize)> {
    let mut order: Vec<(usize, usize)> = offsets
        .enumerate()
        .map(|(i, offset)| (offset.min(text.len()), i))
        .collect();
    order.sort_unstable();
    let mut out = vec![(1, 1); order.len()];
    let (mut line, mut col) = (1, 1);
    let mut chars = text.char_indices().peekable();
    for (offset, i) in order {
        while let Some((_, c)) = chars.next_if(|&(at, _)| at < offset) {
            if c == '\n' {
                (line, col) = (line + 1, 1);
            } else {
                col += 1;
            }
        }
        out[i] = (line, col);
    }
    out
}

/// Text from the file as a message quotes it: at most [`QUOTED_CHARS`]
/// characters, a longer one cut with `…` (a 4 MiB key is not echoed).
fn cut(text: &str) -> std::borrow::Cow<'_, str> {
    let mut ends = text.char_indices().map(|(i, _)| i);
    match (ends.nth(QUOTED_CHARS - 1), ends.next()) {
        (Some(end), Some(_)) => format!("{}…", &text[..end]).into(),
        _ => text.into(),
    }
}

/// The most characters of the file's text a message quotes at once.
const QUOTED_CHARS: usize = 64;

fn shown(value: &toml::Value) -> String {
    match value {
        toml::Value::Integer(n) => n.to_string(),
        toml::Value::String(s) => format!("{:?}", cut(s)),
        other => format!("of type {}", other.type_str()),
    }
}

/// The parser's message on one line, each word [`cut`] (it can quote a
/// value from the file).
fn one_line(message: &str) -> String {
    message
        .split_whitespace()
        .map(cut)
        .collect::<Vec<_>>()
        .join(" ")
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
    // A word far longer than any key is no typo of one.
    let near = word.chars().nth(QUOTED_CHARS).is_none();
    let closest = if near {
        closest(word, known.iter().copied())
    } else {
        None
    };
    match closest {
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
            "invalid configuration: mcp-preamble.toml:3:1: unknown key \"zzzzzzzz\" in [defaults] (valid keys: budget, total_budget, template, encoding, model, tokenizer, dedup, similarity, order, list_tool_only_servers, tool_descriptions, shortening_note, on_change, tool_names, defer_over)"
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
