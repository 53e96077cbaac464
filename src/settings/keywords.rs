//! The settings a host package's `Assembler` takes by name (the Python and
//! Node packages): the CLI's `preview` flags over a policy file, checked
//! as the CLI checks its flags, so the same settings give the same bytes
//! and a bad value the CLI's message.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::str::FromStr;

use crate::assemble::Assembler;
use crate::error::{Error, ErrorKind, Result};
use crate::hosts::namespace_chars;
use crate::tool_names::ToolNames;

use super::{Defaults, Settings, parse_count};

/// An `Assembler`'s keywords, each under its policy key's name. Counts
/// arrive as text (the decimal text of a Python int, a JavaScript number)
/// and are checked by [`parse_count`], as the CLI's flags are; an error
/// names the keyword.
///
/// ```
/// use mcp_preamble::settings::Keywords;
/// let mut k = Keywords::default();
/// k.budget = Some("-1".into());
/// let e = k.assembler().unwrap_err();
/// assert_eq!(e.to_string(), r#"invalid configuration: budget: "-1" is not a number of tokens"#);
/// k.budget = Some("64".into());
/// k.target = Some("sideways".into());
/// let e = k.assembler().unwrap_err();
/// assert_eq!(e.detail(), r#"target: "sideways" is not "section" or "namespace""#);
/// k.target = Some("namespace".into());
/// k.policy_keys.insert("order".into(), "sideways".into());
/// assert!(k.assembler().unwrap_err().detail().starts_with("order: unknown variant"));
/// k.policy_keys.insert("order".into(), "insertion".into());
/// assert!(k.assembler().is_ok());
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Keywords {
    /// A policy file, which the other keywords override.
    pub policy: Option<PathBuf>,
    /// `--budget`.
    pub budget: Option<String>,
    /// `--total-budget`.
    pub total_budget: Option<String>,
    /// `--defer-over` (a number of tools).
    pub defer_over: Option<String>,
    /// `--server-budget ALIAS=N`, by alias.
    pub server_budgets: BTreeMap<String, String>,
    /// `--deferred ALIAS`.
    pub deferred: Vec<String>,
    /// `--template`: a built-in name or a file.
    pub template: Option<String>,
    /// `--encoding`.
    pub encoding: Option<String>,
    /// `--model`.
    pub model: Option<String>,
    /// `--tokenizer`: a `tokenizer.json`.
    pub tokenizer: Option<String>,
    /// `--tool-names`: a host's scheme or a pattern.
    pub tool_names: Option<String>,
    /// `--target`: `"section"` or `"namespace"`.
    pub target: Option<String>,
    /// The keys only the policy file has (`order`, `on_change`, `dedup`,
    /// `similarity`, …), each read by the file's own schema.
    pub policy_keys: serde_json::Map<String, serde_json::Value>,
}

/// `err` about the keyword `key`: `invalid configuration: budget: "-1" is
/// not a number of tokens` (the CLI prints the part after the key for its flag).
fn keyed(key: &str, err: &Error) -> Error {
    Error::new(err.kind(), format!("{key}: {}", err.detail()))
}

/// A count keyword checked as the CLI checks its flag (`unit`: tokens, tools).
fn count(key: &str, value: Option<&String>, unit: &str) -> Result<Option<usize>> {
    value
        .map(|v| parse_count(v, unit).map_err(|e| keyed(key, &e)))
        .transpose()
}

fn invalid(detail: String) -> Error {
    Error::new(ErrorKind::InvalidConfig, detail)
}

impl Keywords {
    /// The keywords over the policy file, as the CLI lays its flags over `--policy`.
    pub fn settings(&self) -> Result<Settings> {
        let mut settings = match &self.policy {
            Some(path) => Settings::from_path(path)?,
            None => Settings::new(),
        };
        let mut over = self.defaults()?;
        over.budget = count("budget", self.budget.as_ref(), "tokens")?;
        over.total_budget = count("total_budget", self.total_budget.as_ref(), "tokens")?;
        over.defer_over = count("defer_over", self.defer_over.as_ref(), "tools")?;
        over.template.clone_from(&self.template);
        over.encoding.clone_from(&self.encoding);
        over.model.clone_from(&self.model);
        over.tokenizer.clone_from(&self.tokenizer);
        over.tool_names = self
            .tool_names
            .as_deref()
            .map(ToolNames::from_str)
            .transpose()?;
        settings.overrides = over;
        for (alias, n) in &self.server_budgets {
            let n = count(&format!("server_budgets[{alias:?}]"), Some(n), "tokens")?;
            let server = settings.server_overrides.entry(alias.clone()).or_default();
            server.budget = n;
        }
        for alias in &self.deferred {
            let server = settings.server_overrides.entry(alias.clone()).or_default();
            server.deferred = true;
        }
        Ok(settings)
    }

    /// The assembler of [`Keywords::settings`], with `target` (which the
    /// policy file has no key for).
    pub fn assembler(&self) -> Result<Assembler> {
        let settings = self.settings()?;
        let chars = match self.target.as_deref() {
            None | Some("section") => None,
            Some("namespace") => Some(namespace_chars()),
            Some(other) => {
                let detail = format!("target: {other:?} is not \"section\" or \"namespace\"");
                return Err(invalid(detail));
            }
        };
        let assembler = Assembler::from_settings(&settings)?;
        Ok(match chars {
            Some(chars) => assembler.namespace_chars(chars),
            None => assembler,
        })
    }

    /// The policy-file-only keys, each read by the file's schema
    /// ([`Defaults`]), so a value is refused with the message the policy
    /// file gets for it.
    fn defaults(&self) -> Result<Defaults> {
        for (key, value) in &self.policy_keys {
            let one =
                serde_json::Value::Object([(key.clone(), value.clone())].into_iter().collect());
            if let Err(e) = serde_json::from_value::<Defaults>(one) {
                return Err(invalid(format!("{key}: {e}")));
            }
        }
        let all = serde_json::Value::Object(self.policy_keys.clone());
        serde_json::from_value(all).map_err(|e| invalid(e.to_string()))
    }
}
