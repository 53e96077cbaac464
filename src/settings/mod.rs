//! The operator's settings: one model for the policy file
//! (`mcp-preamble.toml`, read by [`PolicyFile`]) and the
//! command line's flags laid over it, turned into an [`Assembler`] in one
//! place, [`Assembler::from_settings`].
//!
//! As in ripgrep, the layers are the same settings: the file's
//! [`Settings::defaults`] first, then [`Settings::overrides`] (the flags),
//! and a value set in a later layer wins; per server, [`Settings::servers`]
//! then [`Settings::server_overrides`] (`--server-budget`, `--deferred`).
//!
//! # The policy file
//!
//! The same controls, and the defaults, from a file the operator edits:
//! [`PolicyFile::from_path`] reads `mcp-preamble.toml` (TOML) into
//! [`Settings`], the one model of the operator's settings, and
//! [`Assembler::from_settings`](crate::Assembler::from_settings) (or [`Assembler::from_policy`](crate::Assembler::from_policy)) builds the
//! assembler, loading templates and encodings. Values set in
//! [`Settings::overrides`] win over the file's, as the CLI's flags do with
//! `--policy PATH` on `preview`, `lint` and `snapshot`; builder calls after
//! it override both. Per-server tables apply by [`ServerKey`].
//! `mcp-preamble.example.toml` in the repository shows every key.
//!
//! | Key | Meaning |
//! |-----|---------|
//! | `version = 1` | required; any other version is an error naming the file |
//! | `[defaults]` `budget`, `total_budget` | [`Assembler::budget`](crate::Assembler::budget), [`Assembler::total_budget`](crate::Assembler::total_budget) |
//! | `[defaults]` `template` | `"markdown"`, `"xml"`, or a template file relative to the policy file |
//! | `[defaults]` `encoding` | `"o200k_base"`, `"cl100k_base"`, or a model name |
//! | `[defaults]` `model` | a model of [`Model::known`](crate::tokens::Model::known): its counter ([`Assembler::model`](crate::Assembler::model)) |
//! | `[defaults]` `tokenizer` | a Hugging Face `tokenizer.json`, relative to the policy file ([`Assembler::tokenizer_file`](crate::Assembler::tokenizer_file); feature `tokenizers`) |
//! | `[defaults]` `dedup`, `similarity` | [`Assembler::dedup`](crate::Assembler::dedup), [`Assembler::similarity`](crate::Assembler::similarity) ([`Similarity`]) |
//! | `[defaults]` `order` | `"name"` or `"insertion"` ([`Order`]) |
//! | `[defaults]` `list_tool_only_servers`, `tool_descriptions`, `shortening_note` | the builder calls of those names |
//! | `[servers.<alias>]` `budget` | [`Assembler::server_budget`](crate::Assembler::server_budget) |
//! | `[servers.<alias>]` `weight` (0.001 to 1000), `exclude = true`, `instructions = "…"` | [`Policy::weight`](crate::Policy::weight) ([`Weight`]), [`Policy::exclude`](crate::Policy::exclude), [`Policy::replace_instructions`](crate::Policy::replace_instructions) |
//! | `[servers.<alias>]` `label = "…"` | [`Policy::label`](crate::Policy::label): shown with the block, so operator text is not presented as the server's; needs `instructions` |
//! | `[defaults]` `tool_names` | `"claude-code"`, `"vscode"`, `"codex"`, `"opencode"`, `"plain"` or a pattern such as `"{server}__{tool}"`: [`Assembler::tool_names`](crate::Assembler::tool_names) ([`ToolNames`]) |
//! | `[defaults]` `on_change` | [`Assembler::on_change`](crate::Assembler::on_change): for servers without their own |
//! | `[servers.<alias>]` `on_change` | `"accept"`, `"hold"`, `"drop"` or `"fail"` ([`Policy::on_change`](crate::Policy::on_change); see "Pins and drift") |
//! | `[servers.<alias>.tools]` `allow = ["glob", …]`, `deny = […]` | [`Policy::tools`](crate::Policy::tools) ([`ToolFilter`]): the tools the model is sent |
//! | `[servers.<alias>.tool.<name>]` `description`, `title`, `annotations`, `always_load` | [`Policy::tool`](crate::Policy::tool) ([`ToolOverride`]) |
//! | `[servers.<alias>]` `always_load = true` | [`Policy::always_load`](crate::Policy::always_load): never deferred |
//! | `[defaults]` `defer_over` | [`Assembler::defer_over`](crate::Assembler::defer_over): defer the tools of servers with more tools |
//! | `[servers.<alias>]` `deferred = true` | [`Assembler::defer`](crate::Assembler::defer): the host defers this server's tools |
//! | `[gateway]` `prefix`, `separator` | how `serve` names what it serves: `"always"` (default), `"never"`, `"on-collision"`; 1 to 8 of `A-Z a-z 0-9 _ -` (default `"__"`); `--prefix` and `--separator` win ([`GatewaySettings`]) |
//! | `[client]` `name`, `version`, `capabilities`, `roots` | who the CLI says it is when it connects ([`ClientSettings`]); a host that shares the file connects as the same client with [`ClientSettings::client_config`] and [`ClientSettings::handler`] (feature `rmcp`) |
//!
//! ```toml
//! version = 1
//! [defaults]
//! budget = 400
//! [servers.billing]
//! instructions = "Use only for invoices."
//! label = "platform team"
//! [servers.scratch]
//! exclude = true
//! ```
//!
//! Errors are [`ErrorKind::InvalidConfig`] and name the file, line and
//! column; an unknown key names the closest valid one:
//! `invalid configuration: mcp-preamble.toml:4:1: unknown key "budgett" in
//! [defaults] (did you mean "budget"?)`. A budget or policy for an alias no
//! server has is never ignored silently: it is in [`Assembly::diagnostics`](crate::Assembly::diagnostics)
//! (with the closest alias), and typed in [`Assembly::notes`](crate::Assembly::notes) for a host
//! that refuses to start on one.
//!
//! A live hub (feature `hub`) takes a new policy without reconnecting any
//! server: `hub.reconfigure(Assembler::from_policy(&PolicyFile::from_path(path)?)?)`
//! (`hub::Hub::reconfigure`); the section is re-assembled from the
//! snapshots it holds.

pub use crate::dedup::Similarity;
pub use crate::server_key::ServerKey;
pub use crate::tool_policy::{ToolFilter, ToolOverride};
#[cfg(feature = "rmcp")]
pub use client::ClientIdentity;
pub use client::{Capability, ClientSettings};
pub use file::PolicyFile;
pub use gateway::GatewaySettings;
pub use keywords::Keywords;
pub use weight::Weight;

mod client;
mod counter;
mod file;
pub(crate) mod gateway;
mod keywords;
mod tools;
mod weight;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::assemble::{Assembler, Order, Policy};
use crate::error::{Error, ErrorKind, Result};
use crate::model::ServerSnapshot;
use crate::pin::OnChange;
use crate::template::Template;
use crate::tokens::Encoding;
use crate::tool_names::ToolNames;

/// The policy-file version this crate reads.
pub const POLICY_VERSION: u32 = 1;

/// The operator's settings: the policy file's schema (see the crate docs,
/// "Policy file"), and what the command line's flags overlay.
///
/// ```
/// use mcp_preamble::Assembler;
/// use mcp_preamble::settings::Settings;
/// let mut settings = Settings::from_str(
///     "version = 1\n[defaults]\nbudget = 200\n[servers.scratch]\nexclude = true\n",
///     "mcp-preamble.toml",
/// )?;
/// // A flag: it wins over the file's value.
/// settings.overrides.budget = Some(120);
/// assert_eq!(settings.effective().budget, Some(120));
/// let assembler = Assembler::from_settings(&settings)?;
/// # let _ = assembler;
/// # Ok::<(), mcp_preamble::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Settings {
    /// The file's `version` ([`POLICY_VERSION`]).
    #[serde(default = "policy_version")]
    pub version: u32,
    /// `[defaults]`: the file's settings for every server.
    #[serde(default)]
    pub defaults: Defaults,
    /// `[servers.<alias>]`, by the alias (a [`ServerKey`]) they apply to.
    #[serde(default)]
    pub servers: BTreeMap<String, ServerSettings>,
    /// `[client]`: who the CLI says it is when it connects, so it sees the
    /// servers as the host that shares the file does.
    #[serde(default)]
    pub client: ClientSettings,
    /// `[gateway]`: how the gateway names what it serves.
    #[serde(default)]
    pub gateway: GatewaySettings,
    /// The layer over `defaults`: what the command line (or code) sets.
    /// Its values win; a relative `template` path in it is resolved
    /// against the working directory, and its errors name no file.
    #[serde(skip)]
    pub overrides: Defaults,
    /// The layer over `servers`: what the command line (or code) sets for
    /// one server, by its alias. Its values win; unlike `servers`, an alias
    /// here that no server has is not reported as a policy.
    #[serde(skip)]
    pub server_overrides: BTreeMap<String, ServerOverrides>,
    /// Where the settings were read from, for messages (empty when they
    /// were made in code).
    #[serde(skip)]
    pub origin: String,
    /// The directory a relative `template` path in `defaults` is resolved
    /// against, when the file was read from disk.
    #[serde(skip)]
    pub base_dir: Option<PathBuf>,
}

fn policy_version() -> u32 {
    POLICY_VERSION
}

impl Default for Settings {
    fn default() -> Settings {
        Settings::new()
    }
}

/// `[defaults]`: settings for every server; unset keys keep the
/// [`Assembler`]'s defaults.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Defaults {
    /// Token budget of every server's block.
    pub budget: Option<usize>,
    /// Token budget of the whole section.
    pub total_budget: Option<usize>,
    /// `"markdown"`, `"xml"`, or a template file (relative to the policy
    /// file in [`Settings::defaults`], to the working directory in
    /// [`Settings::overrides`]).
    pub template: Option<String>,
    /// `"o200k_base"`, `"cl100k_base"`, or a model name (checked where the
    /// file is read).
    #[serde(default, deserialize_with = "encoding_name")]
    pub encoding: Option<String>,
    /// A model name of the model table (checked where the file is read):
    /// the counter it is read with. With `tokenizer`, the file counts.
    #[serde(default, deserialize_with = "counter::model_name")]
    pub model: Option<String>,
    /// A Hugging Face `tokenizer.json` (relative to the policy file in
    /// [`Settings::defaults`], to the working directory in
    /// [`Settings::overrides`]).
    pub tokenizer: Option<String>,
    /// De-duplication on or off.
    pub dedup: Option<bool>,
    /// The similarity threshold of de-duplication.
    pub similarity: Option<Similarity>,
    /// `"name"` or `"insertion"`.
    pub order: Option<Order>,
    /// Whether servers with tools but no instructions are listed.
    pub list_tool_only_servers: Option<bool>,
    /// Whether tool descriptions are shown next to tool names.
    pub tool_descriptions: Option<bool>,
    /// Whether a shortened block says so in one line
    /// ([`Assembler::shortening_note`]).
    pub shortening_note: Option<bool>,
    /// What reaches the model when a server differs from its pin, for
    /// servers without their own `on_change`.
    pub on_change: Option<OnChange>,
    /// The names the model sees for tools: `"claude-code"`, `"vscode"`,
    /// `"codex"`, `"opencode"`, `"plain"` or a pattern ([`ToolNames`]).
    pub tool_names: Option<ToolNames>,
    /// Defer the tools of every server with more than this many tools
    /// ([`Assembler::defer_over`]).
    pub defer_over: Option<usize>,
}

/// `[servers.<alias>]`: the operator's decisions for one server.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ServerSettings {
    /// Token budget of this server's block.
    pub budget: Option<usize>,
    /// Weight in the fair shares of `total_budget`, checked where it is
    /// read ([`Weight`]).
    pub weight: Option<Weight>,
    /// Leave the server out.
    #[serde(default)]
    pub exclude: bool,
    /// Operator text shown instead of the server's instructions.
    pub instructions: Option<String>,
    /// Shown with the block when its text is the operator's (`instructions`).
    pub label: Option<String>,
    /// What reaches the model when the server differs from its pin.
    pub on_change: Option<OnChange>,
    /// `[servers.<alias>.tools]`: which tools the model is sent.
    pub tools: Option<ToolFilter>,
    /// `[servers.<alias>.tool.<name>]`: overrides per tool, by its name.
    #[serde(default)]
    pub tool: BTreeMap<String, ToolOverride>,
    /// Never defer this server's tools behind tool search.
    pub always_load: Option<bool>,
    /// The host defers this server's tools behind tool search
    /// ([`Assembler::defer`]).
    #[serde(default)]
    pub deferred: bool,
}

/// What the command line (or code) sets for one server
/// ([`Settings::server_overrides`]): the per-server flags, over the
/// server's `[servers.<alias>]`.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ServerOverrides {
    /// Token budget of this server's block (`--server-budget`), over `budget`.
    pub budget: Option<usize>,
    /// Defer this server's tools (`--deferred`), as `deferred = true` does.
    pub deferred: bool,
}

impl Defaults {
    /// `self` with every value set in `over` replaced by it.
    pub fn overlay(mut self, over: &Defaults) -> Defaults {
        fn set<T: Clone>(to: &mut Option<T>, from: &Option<T>) {
            if from.is_some() {
                to.clone_from(from);
            }
        }
        set(&mut self.budget, &over.budget);
        set(&mut self.total_budget, &over.total_budget);
        set(&mut self.template, &over.template);
        set(&mut self.encoding, &over.encoding);
        set(&mut self.model, &over.model);
        set(&mut self.tokenizer, &over.tokenizer);
        set(&mut self.dedup, &over.dedup);
        set(&mut self.similarity, &over.similarity);
        set(&mut self.order, &over.order);
        set(
            &mut self.list_tool_only_servers,
            &over.list_tool_only_servers,
        );
        set(&mut self.tool_descriptions, &over.tool_descriptions);
        set(&mut self.shortening_note, &over.shortening_note);
        set(&mut self.on_change, &over.on_change);
        set(&mut self.tool_names, &over.tool_names);
        set(&mut self.defer_over, &over.defer_over);
        self
    }

    /// The keys of `[defaults]`, in the schema's order (what the Python
    /// package checks its `Assembler` keywords against).
    pub fn keys() -> &'static [&'static str] {
        serde_fields::<Defaults>()
    }
}

/// A count as the CLI's flags and the Python package's keywords take it:
/// ASCII digits only (`usize::from_str` alone would take `+5`), so `-1`,
/// `+5` and `" 5"` are errors, and so is a count past `usize`. `unit` names
/// what is counted: `"-1" is not a number of tokens`. The error is
/// [`ErrorKind::InvalidConfig`]; its [`Error::detail`] is what the CLI prints.
///
/// ```
/// use mcp_preamble::settings::parse_count;
/// assert_eq!(parse_count("0500", "tokens")?, 500);
/// let e = parse_count("-1", "tokens").unwrap_err();
/// assert_eq!(e.detail(), r#""-1" is not a number of tokens"#);
/// # Ok::<(), mcp_preamble::Error>(())
/// ```
pub fn parse_count(s: &str, unit: &str) -> Result<usize> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        let detail = format!("{s:?} is not a number of {unit}");
        return Err(Error::new(ErrorKind::InvalidConfig, detail));
    }
    s.parse().map_err(|_| {
        let detail = format!("{s} is too large a number of {unit}");
        Error::new(ErrorKind::InvalidConfig, detail)
    })
}

impl ServerSettings {
    /// The keys of `[servers.<alias>]`, in the schema's order.
    pub(crate) fn keys() -> &'static [&'static str] {
        serde_fields::<ServerSettings>()
    }
}

impl ClientSettings {
    /// The keys of `[client]`, in the schema's order.
    pub(crate) fn keys() -> &'static [&'static str] {
        serde_fields::<ClientSettings>()
    }
}

impl GatewaySettings {
    /// The keys of `[gateway]`, in the schema's order.
    pub(crate) fn keys() -> &'static [&'static str] {
        serde_fields::<GatewaySettings>()
    }
}

/// Which layer a value came from: errors and relative paths differ.
#[derive(Clone, Copy)]
enum Layer {
    File,
    Overrides,
}

impl Settings {
    /// Settings with nothing set: [`Assembler::new`]'s defaults.
    pub fn new() -> Settings {
        Settings {
            version: POLICY_VERSION,
            defaults: Defaults::default(),
            servers: BTreeMap::new(),
            client: ClientSettings::default(),
            gateway: GatewaySettings::default(),
            overrides: Defaults::default(),
            server_overrides: BTreeMap::new(),
            origin: String::new(),
            base_dir: None,
        }
    }

    /// The top-level keys of the file, in the schema's order.
    pub(crate) fn keys() -> &'static [&'static str] {
        serde_fields::<Settings>()
    }

    /// The defaults in force: [`Settings::overrides`] over
    /// [`Settings::defaults`].
    pub fn effective(&self) -> Defaults {
        self.defaults.clone().overlay(&self.overrides)
    }

    /// The settings of one server, by its key.
    pub fn server(&self, key: &ServerKey) -> Option<&ServerSettings> {
        self.servers.get(key.as_str())
    }

    /// Whether the settings leave `server` out (`exclude = true` under
    /// its [`ServerKey`]).
    pub fn excludes(&self, server: &ServerSnapshot) -> bool {
        self.server(&ServerKey::of(server))
            .is_some_and(|s| s.exclude)
    }

    /// The encoding tokens are counted with: the overrides', else the
    /// file's, else `o200k_base`.
    pub fn encoding(&self) -> Result<Encoding> {
        Ok(self.chosen_encoding()?.unwrap_or(Encoding::O200kBase))
    }

    /// The encoding set in a layer, if any.
    pub(super) fn chosen_encoding(&self) -> Result<Option<Encoding>> {
        let Some((name, layer)) = self.pick(|d| d.encoding.as_ref()) else {
            return Ok(None);
        };
        Encoding::from_name(name)
            .map(Some)
            .map_err(|e| self.named(layer, "encoding", e))
    }

    /// The template set in a layer, if any, loaded: a built-in name, else
    /// a file. In the file a built-in name wins and a path is relative to
    /// the file; in the overrides a file that exists wins.
    fn chosen_template(&self) -> Result<Option<Template>> {
        let Some((name, layer)) = self.pick(|d| d.template.as_ref()) else {
            return Ok(None);
        };
        let template = match layer {
            Layer::File => {
                let path = match &self.base_dir {
                    Some(dir) => dir.join(name),
                    None => PathBuf::from(name),
                };
                Template::builtin(name).or_else(|_| Template::from_path(&path))
            }
            Layer::Overrides if Path::new(name).is_file() => Template::from_path(name),
            Layer::Overrides => Template::builtin(name),
        };
        template
            .map(Some)
            .map_err(|e| self.named(layer, "template", e))
    }

    /// A value from the top layer that sets it.
    fn pick<'a, T>(
        &'a self,
        get: impl Fn(&'a Defaults) -> Option<&'a T>,
    ) -> Option<(&'a T, Layer)> {
        get(&self.overrides)
            .map(|v| (v, Layer::Overrides))
            .or_else(|| get(&self.defaults).map(|v| (v, Layer::File)))
    }

    /// Fails on a budget of 0 tokens in any layer: it would leave every
    /// block (or the section) empty without a word.
    fn check_budgets(&self) -> Result<()> {
        const ZERO: &str = "= 0 leaves no room for any text: give 1 or more tokens";
        let zero = |what: String| {
            Err(Error::new(
                ErrorKind::InvalidConfig,
                format!("{what} {ZERO}"),
            ))
        };
        let in_file = |what: String| match self.origin.as_str() {
            "" => zero(what),
            origin => zero(format!("{origin}: {what}")),
        };
        for (key, over, file) in [
            ("budget", self.overrides.budget, self.defaults.budget),
            (
                "total_budget",
                self.overrides.total_budget,
                self.defaults.total_budget,
            ),
        ] {
            match (over, file) {
                (Some(0), _) => return zero(key.to_string()),
                (None, Some(0)) => return in_file(format!("[defaults] {key}")),
                _ => {}
            }
        }
        if let Some((alias, _)) = self
            .server_overrides
            .iter()
            .find(|(_, o)| o.budget == Some(0))
        {
            return zero(format!("the budget of {alias:?}"));
        }
        if let Some((alias, _)) = self.servers.iter().find(|(_, s)| s.budget == Some(0)) {
            return in_file(format!("[servers.{alias}] budget"));
        }
        Ok(())
    }

    /// An error about a file's key names the file and the key; one about
    /// an override is the error itself.
    fn named(&self, layer: Layer, key: &str, e: Error) -> Error {
        match layer {
            Layer::Overrides => e,
            Layer::File => {
                let detail = format!("[defaults] {key}: {e}");
                let message = if self.origin.is_empty() {
                    detail
                } else {
                    format!("{}: {detail}", self.origin)
                };
                // The message quotes `e`: not kept as a source as well.
                Error::new(ErrorKind::InvalidConfig, message)
            }
        }
    }
}

impl Assembler {
    /// An assembler with these settings: the one place templates (a
    /// built-in name or a file) and encodings (a name or a model) are
    /// loaded. Builder calls after this override them.
    ///
    /// Fails on a budget of 0 tokens (every block would be empty), and
    /// when a template or encoding cannot be loaded: for a value of
    /// the file, with [`ErrorKind::InvalidConfig`] naming the file and the
    /// key (`mcp-preamble.toml: [defaults] template: …`); for one of
    /// [`Settings::overrides`], with the loader's own error.
    ///
    /// A live hub takes new settings without reconnecting any server:
    /// `hub.reconfigure(Assembler::from_settings(&Settings::from_path(p)?)?)`.
    pub fn from_settings(settings: &Settings) -> Result<Assembler> {
        settings.check_budgets()?;
        let mut a = Assembler::new();
        if let Some(template) = settings.chosen_template()? {
            a = a.template(template);
        }
        if let Some(counter) = settings.chosen_counter()? {
            a = a.token_counter(counter);
        }
        let d = settings.effective();
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
            a = a.similarity(t);
        }
        if let Some(order) = d.order {
            a = a.order(order);
        }
        if let Some(yes) = d.list_tool_only_servers {
            a = a.list_tool_only_servers(yes);
        }
        if let Some(yes) = d.tool_descriptions {
            a = a.tool_descriptions(yes);
        }
        if let Some(yes) = d.shortening_note {
            a = a.shortening_note(yes);
        }
        if let Some(change) = d.on_change {
            a = a.on_change(change);
        }
        if let Some(names) = d.tool_names {
            a = a.tool_names(names);
        }
        if let Some(n) = d.defer_over {
            a = a.defer_over(n);
        }
        for (alias, s) in &settings.servers {
            if let Some(n) = s.budget {
                a = a.server_budget(alias.clone(), n);
            }
            if s.deferred {
                a = a.defer(alias.clone());
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
                p = p.weight(w.get());
            }
            if let Some(change) = s.on_change {
                p = p.on_change(change);
            }
            p = s.tool_policy(p);
            // Always set, so an alias no server has is reported as a policy.
            a = a.policy(alias.clone(), p);
        }
        for (alias, o) in &settings.server_overrides {
            if let Some(n) = o.budget {
                a = a.server_budget(alias.clone(), n);
            }
            if o.deferred {
                a = a.defer(alias.clone());
            }
        }
        Ok(a)
    }
}

/// An encoding name, checked where it is written.
fn encoding_name<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<String>, D::Error> {
    let name = String::deserialize(d)?;
    Encoding::from_name(&name).map_err(serde::de::Error::custom)?;
    Ok(Some(name))
}

/// The field names serde's derive reads for the struct `T`, in declaration
/// order: the schema's own key list, so a new field cannot be missing
/// from the unknown-key check.
fn serde_fields<T: for<'de> Deserialize<'de>>() -> &'static [&'static str] {
    use serde::de::{self, Visitor};

    /// A deserializer that only records the fields it is asked for.
    struct Probe<'a>(&'a mut &'static [&'static str]);

    impl<'de> de::Deserializer<'de> for Probe<'_> {
        type Error = de::value::Error;

        fn deserialize_any<V: Visitor<'de>>(
            self,
            _: V,
        ) -> std::result::Result<V::Value, Self::Error> {
            Err(de::Error::custom("not a struct"))
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            fields: &'static [&'static str],
            _visitor: V,
        ) -> std::result::Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(de::Error::custom("fields recorded"))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
            bytes byte_buf option unit unit_struct newtype_struct seq tuple
            tuple_struct map enum identifier ignored_any
        }
    }

    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(Probe(&mut fields));
    fields
}

#[cfg(test)]
mod tests;
