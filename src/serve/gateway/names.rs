//! The names the gateway exposes its upstream tools under.
//!
//! One scheme, in one place ([`scheme`]): the [`ToolNames`] pattern
//! [`SCHEME`], `{alias}__{tool}`, with every character outside
//! `[A-Za-z0-9_-]` made `_` (the character set model APIs accept in a tool
//! name), at most 64 characters (a longer name keeps its first 55, then `_`
//! and 8 hex digits of a SHA-256 of the alias and the tool). The hub's
//! assembler is given the same scheme, so the section's tool lists name the
//! tools as the gateway lists them. A name two tools would share is told
//! apart by [`ToolNames::table`] (a hash suffix), so no two tools are ever
//! listed under one name. The gateway's hub keeps every name it has given,
//! and names each new assembly's tools keeping them (a tool keeps its
//! name; a new one never gets a name another tool holds or held), so no
//! upstream can take a name the host has for another tool by adding a
//! tool later. The gateway serves the names the assembly gave
//! (`Assembly` keeps them per server): it never names a tool itself.
//! [`Naming`] (`serve --prefix`, `--separator`) picks the pattern:
//! `{alias}{sep}{tool}`, `{tool}`, or `[{alias}{sep}]{tool}` (the prefix
//! only for a name more than one upstream has).

use crate::serve::gateway::fit::ServeAs;
use crate::tool_names::{Kept, MAX_LEN, NameTable, ToolNames};

/// The gateway's naming pattern by default ([`Naming::default`]).
pub const SCHEME: &str = "{server}__{tool}";

crate::support::string_enum! {
    /// When a served name starts with its upstream's alias (`serve --prefix`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    #[non_exhaustive]
    pub enum Prefix {
        /// Always `{alias}{separator}{name}` (the default).
        #[default]
        Always => "always",
        /// Never: each name as its upstream gives it. Two upstreams with one
        /// name cannot both be served: the name stays with the tool that had
        /// it first, the other is not listed and the log says so
        /// ([`Gateway::refused_names`](crate::serve::Gateway::refused_names)).
        Never => "never",
        /// Only for a name more than one upstream has; a name once given is
        /// kept, so an upstream that adds a tool of another's name later gets
        /// the prefix on its own tool.
        OnCollision => "on-collision",
    }
    /// `"always"`, `"never"` or `"on-collision"`.
    fn as_str;
    impl FromStr, Err = crate::error::Error, |s| crate::error::Error::new(
        crate::error::ErrorKind::InvalidConfig,
        format!(
            "unknown prefix {:?} (always, never, on-collision)",
            s.chars().take(32).collect::<String>()
        ),
    );
}

/// How the gateway names what it serves from its upstreams: tools,
/// prompts and completions' prompt references (`serve --prefix`,
/// `--separator`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Naming {
    prefix: Prefix,
    separator: String,
}

impl Default for Naming {
    fn default() -> Naming {
        Naming {
            prefix: Prefix::Always,
            separator: "__".to_string(),
        }
    }
}

impl Naming {
    /// `prefix` with `separator` between alias and name: 1 to 8 of
    /// `A-Z a-z 0-9 _ -` (the characters a tool name may have everywhere);
    /// else [`ErrorKind::InvalidConfig`](crate::ErrorKind::InvalidConfig).
    pub fn new(prefix: Prefix, separator: &str) -> crate::error::Result<Naming> {
        let fits = (1..=8).contains(&separator.len())
            && (separator.chars()).all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !fits {
            return Err(crate::error::Error::new(
                crate::error::ErrorKind::InvalidConfig,
                format!(
                    "separator {:?} must be 1 to 8 of the characters A-Z a-z 0-9 _ -",
                    separator.chars().take(16).collect::<String>()
                ),
            ));
        }
        Ok(Naming {
            prefix,
            separator: separator.to_string(),
        })
    }

    /// The policy file's `[gateway]` naming over `self` (a key it sets wins):
    /// the CLI's flags go on top of this.
    pub fn with_settings(
        self,
        settings: &crate::settings::GatewaySettings,
    ) -> crate::error::Result<Naming> {
        let prefix = match &settings.prefix {
            Some(p) => p.parse()?,
            None => self.prefix,
        };
        let separator = settings.separator.as_deref().unwrap_or(&self.separator);
        Naming::new(prefix, separator)
    }

    /// When names are prefixed.
    pub fn prefix(&self) -> Prefix {
        self.prefix
    }

    /// The [`ToolNames`] pattern: `{server}__{tool}`, `{tool}`, or
    /// `[{server}__]{tool}` (the prefix only on collision).
    pub fn pattern(&self) -> String {
        let sep = &self.separator;
        match self.prefix {
            Prefix::Always => format!("{{server}}{sep}{{tool}}"),
            Prefix::Never => "{tool}".to_string(),
            Prefix::OnCollision => format!("[{{server}}{sep}]{{tool}}"),
        }
    }

    /// The scheme of [`Naming::pattern`].
    pub fn scheme(&self) -> ToolNames {
        // `new` checked the separator, so the pattern reads.
        ToolNames::pattern(&self.pattern()).unwrap_or_else(|_| ToolNames::plain())
    }
}

/// The name a host's config gives the gateway when none is said
/// (`serve --name`).
pub const DEFAULT_NAME: &str = "preamble";

/// The gateway's [`ToolNames`] scheme ([`SCHEME`]).
pub fn scheme() -> ToolNames {
    // A fixed pattern that `ToolNames::pattern` accepts (tested below).
    ToolNames::pattern(SCHEME).unwrap_or_else(|_| ToolNames::plain())
}

/// [`scheme`] for a gateway that `host` knows as `name` (the key of its
/// config): names short enough that the host's prefix (`mcp__NAME__` under
/// Claude Code) keeps them within 64 characters, as far as the pattern
/// leaves room. Hosts that do not rename tools get [`scheme`].
pub fn scheme_for(host: ServeAs, name: &str) -> ToolNames {
    naming_for(host, name, &Naming::default())
}

/// [`scheme_for`] with `naming`'s pattern.
pub fn naming_for(host: ServeAs, name: &str, naming: &Naming) -> ToolNames {
    let Some(h) = host.as_host().filter(|h| h.profile().tool_names.is_some()) else {
        return naming.scheme();
    };
    let prefix = ToolNames::host(h)
        .exposed(name, "")
        .as_str()
        .chars()
        .count();
    naming.scheme().within(MAX_LEN.saturating_sub(prefix))
}

/// The scheme the gateway names tools (and prompts) with: its pattern as
/// `prepare_named` fitted it to the host in `hub` (a [`Naming`]'s), else
/// the default one.
pub(crate) fn served_scheme(hub: &crate::hub::Hub) -> ToolNames {
    match hub.tool_names() {
        named if named.is_pattern() => named,
        _ => scheme(),
    }
}

/// The scheme a host shows the gateway's tools through, when it renames
/// them ([`Assembler::shown_through`](crate::Assembler::shown_through)).
pub(crate) fn host_scheme(host: ServeAs) -> Option<ToolNames> {
    let h = host.as_host()?;
    h.profile().tool_names.map(|_| ToolNames::host(h))
}

/// The name `tool` of the upstream `alias` is exposed under, when no other
/// tool claims it first.
pub fn exposed_name(alias: &str, tool: &str) -> String {
    scheme().exposed(alias, tool).into_string()
}

/// The exposed names of a set of upstream tools, both ways, and the name
/// of the gateway's own reader tool (`mcp_preamble__instructions`, with a
/// number after it in the unlikely case an upstream tool has that name).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GatewayNames {
    table: NameTable,
    reader: String,
}

impl GatewayNames {
    /// Names every `(alias, tool)` pair in the order given (the hub's:
    /// aliases sorted, each server's tools in its order).
    pub fn new<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
        reader: &str,
    ) -> GatewayNames {
        GatewayNames::of_table(scheme().table(pairs), reader)
    }

    /// The names in `table` (the assembly's, as the gateway serves them),
    /// and a name for the reader tool no tool in it has.
    pub(crate) fn of_table(table: NameTable, reader: &str) -> GatewayNames {
        let mut name = reader.to_string();
        let mut n = 1;
        while table.resolve(&name).is_some() {
            n += 1;
            name = format!("{reader}_{n}");
        }
        GatewayNames {
            table,
            reader: name,
        }
    }

    /// Names `pairs` (the upstreams' prompts, say) with `scheme` (the
    /// tools', as [`scheme_for`] fitted it) in the order given,
    /// keeping the names of `given` (every name given so far, which it
    /// becomes after: at most `retired` names of pairs not given now are
    /// kept): a pair keeps its name, and no other pair ever gets a name
    /// `given` holds. The same guarantee as the tools' (the hub keeps
    /// theirs), for a set of names the assembly does not make.
    pub(crate) fn keeping<'a>(
        scheme: &ToolNames,
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
        given: &mut NameTable,
        retired: usize,
    ) -> GatewayNames {
        let kept = Kept {
            given: std::mem::take(given),
            reserved: Default::default(),
        };
        let table = scheme.table_keeping(pairs, &kept);
        *given = kept.given.kept_after(&table, retired);
        GatewayNames::of_table(table, "")
    }

    /// The `(alias, tool)` behind an exposed name.
    pub fn upstream(&self, exposed: &str) -> Option<(&str, &str)> {
        self.table.resolve(exposed)
    }

    /// The exposed name of `alias`'s tool `tool`.
    pub fn exposed(&self, alias: &str, tool: &str) -> Option<&str> {
        self.table.get(alias, tool).map(|n| n.as_str())
    }

    /// The name of the gateway's reader tool.
    pub fn reader(&self) -> &str {
        &self.reader
    }

    /// Every upstream tool's names.
    pub fn table(&self) -> &NameTable {
        &self.table
    }

    /// How many upstream tools are named.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether no upstream tool is named.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn the_policy_files_prefixes_are_the_gateways() {
        let named: Vec<&str> = Prefix::ALL.iter().map(|p| p.as_str()).collect();
        assert_eq!(named, crate::settings::gateway::PREFIXES);
    }

    #[test]
    fn plain_names_join_alias_and_tool() {
        assert_eq!(ToolNames::pattern(SCHEME).unwrap().to_string(), SCHEME);
        assert_eq!(
            exposed_name("billing", "get_invoice"),
            "billing__get_invoice"
        );
        assert_eq!(exposed_name("my server", "a.b/c"), "my_server__a_b_c");
    }

    #[test]
    fn namings_make_their_patterns() {
        let of = |p: Prefix, sep: &str| Naming::new(p, sep).unwrap().scheme().to_string();
        assert_eq!(Naming::default().scheme().to_string(), SCHEME);
        assert_eq!(of(Prefix::Always, "-x-"), "{server}-x-{tool}");
        assert_eq!(of(Prefix::Never, "__"), "{tool}");
        assert_eq!(of(Prefix::OnCollision, "_"), "[{server}_]{tool}");
        for bad in ["", "a.b", "123456789", "a b"] {
            let e = Naming::new(Prefix::Always, bad).unwrap_err().to_string();
            assert!(e.contains("must be 1 to 8 of the characters"), "{e}");
        }
        for p in Prefix::ALL {
            assert_eq!(p.as_str().parse::<Prefix>().unwrap(), *p);
        }
        let e = "sometimes".parse::<Prefix>().unwrap_err().to_string();
        assert!(e.contains("(always, never, on-collision)"), "{e}");
    }

    #[test]
    fn long_names_are_cut_with_a_hash() {
        let tool = "t".repeat(80);
        let a = exposed_name("billing", &tool);
        let b = exposed_name("billing", &format!("{tool}x"));
        assert_eq!(a.len(), 64);
        assert!(a.starts_with("billing__ttt"));
        assert_ne!(a, b);
        assert_eq!(a, exposed_name("billing", &tool), "deterministic");
    }

    #[test]
    fn collisions_are_impossible() {
        // `a b` and `a_b` make the same safe name; so do `x.y` and `x_y`;
        // `mcp_preamble` has a tool with the reader's name.
        let pairs = [
            ("a b", "x.y"),
            ("a_b", "x_y"),
            ("a_b", "x.y"),
            ("mcp_preamble", "instructions"),
        ];
        let names = GatewayNames::new(pairs, "mcp_preamble__instructions");
        assert_eq!(names.len(), 4);
        let all: BTreeSet<&str> = pairs
            .iter()
            .map(|(a, t)| names.exposed(a, t).unwrap())
            .collect();
        assert_eq!(all.len(), 4, "{all:?}");
        assert_eq!(names.reader(), "mcp_preamble__instructions_2");
        for (a, t) in pairs {
            let name = names.exposed(a, t).unwrap();
            assert!(name.len() <= 64);
            assert_eq!(names.upstream(name), Some((a, t)));
        }
        assert_eq!(names.upstream(names.reader()), None);
    }
}
