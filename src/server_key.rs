//! [`ServerKey`]: the one rule for the key a server's settings, budget and
//! pin are found under ("an alias claims the name").

use std::borrow::Borrow;
use std::collections::HashSet;
use std::fmt;

use crate::model::ServerSnapshot;

/// The key a server's operator settings are found under: its policy
/// (`[servers.<key>]`), its budget, its pin in a [`Lock`](crate::pin::Lock).
///
/// The key is the server's alias when it has one, else its
/// `serverInfo.name`, both made one safe line (`"unnamed server"` when
/// both are empty): the name the section shows before any ` (2)` suffix.
/// An alias *claims* its name: among several servers, one without an alias
/// whose `serverInfo.name` is another server's alias has no key at all
/// ([`ServerKey::resolve`]), so an operator's settings for the alias never
/// reach a server that merely calls itself by it.
///
/// Keys compare, hash and order as their text; [`ServerKey::claims`] does
/// not take part.
///
/// ```
/// use mcp_preamble::ServerSnapshot;
/// use mcp_preamble::settings::ServerKey;
/// let billing = ServerSnapshot::new("invoice-server").with_alias("billing");
/// let impostor = ServerSnapshot::new("billing");
/// assert_eq!(ServerKey::of(&billing), "billing");
/// assert_eq!(ServerKey::of(&impostor), "billing");
/// // Together, the alias claims the name: the impostor has no key.
/// let keys = ServerKey::resolve(&[&billing, &impostor]);
/// assert_eq!(keys[0].as_ref().map(|k| k.as_str()), Some("billing"));
/// assert_eq!(keys[1], None);
/// ```
#[derive(Debug, Clone)]
pub struct ServerKey {
    key: String,
    claims: bool,
}

impl ServerKey {
    /// The key of `server` on its own: its alias, else its `serverInfo.name`.
    pub fn of(server: &ServerSnapshot) -> ServerKey {
        ServerKey {
            key: server.display_name(),
            claims: server.alias.is_some(),
        }
    }

    /// The key of a server known only by its host alias (a configured
    /// server that failed to connect, an alias given on the command line).
    pub fn alias(alias: &str) -> ServerKey {
        ServerKey::of(&ServerSnapshot::new("").with_alias(alias))
    }

    /// The keys of `servers` taken together, in their order: a server
    /// without an alias loses its key when an aliased server claims it.
    pub fn resolve(servers: &[&ServerSnapshot]) -> Vec<Option<ServerKey>> {
        let keys: Vec<ServerKey> = servers.iter().map(|s| ServerKey::of(s)).collect();
        let claimed: HashSet<&str> = keys
            .iter()
            .filter(|k| k.claims)
            .map(ServerKey::as_str)
            .collect();
        keys.iter()
            .map(|k| (k.claims || !claimed.contains(k.as_str())).then(|| k.clone()))
            .collect()
    }

    /// Whether the key comes from an alias, which claims it from servers
    /// that only have it as their `serverInfo.name`.
    pub fn claims(&self) -> bool {
        self.claims
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.key
    }

    /// The key as an owned string.
    pub fn into_string(self) -> String {
        self.key
    }
}

impl PartialEq for ServerKey {
    fn eq(&self, other: &ServerKey) -> bool {
        self.key == other.key
    }
}

impl Eq for ServerKey {}

impl PartialOrd for ServerKey {
    fn partial_cmp(&self, other: &ServerKey) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ServerKey {
    fn cmp(&self, other: &ServerKey) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

impl std::hash::Hash for ServerKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key.hash(state);
    }
}

impl PartialEq<str> for ServerKey {
    fn eq(&self, other: &str) -> bool {
        self.key == other
    }
}

impl PartialEq<&str> for ServerKey {
    fn eq(&self, other: &&str) -> bool {
        self.key == *other
    }
}

impl Borrow<str> for ServerKey {
    fn borrow(&self) -> &str {
        &self.key
    }
}

impl AsRef<str> for ServerKey {
    fn as_ref(&self) -> &str {
        &self.key
    }
}

impl fmt::Display for ServerKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.key)
    }
}

impl From<ServerKey> for String {
    fn from(key: ServerKey) -> String {
        key.key
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_alias_else_the_name_as_one_line() {
        let s = ServerSnapshot::new("time\nserver");
        assert_eq!(ServerKey::of(&s), "time server");
        assert!(!ServerKey::of(&s).claims());
        let s = s.with_alias("clock");
        assert_eq!(ServerKey::of(&s), "clock");
        assert!(ServerKey::of(&s).claims());
        // An alias that is blank as a line falls back to the name, and
        // still claims it.
        let s = ServerSnapshot::new("time").with_alias("");
        assert_eq!(ServerKey::of(&s), "time");
        assert!(ServerKey::of(&s).claims());
        assert_eq!(ServerKey::of(&ServerSnapshot::new("")), "unnamed server");
        assert_eq!(
            ServerKey::alias("a\tb"),
            ServerKey::of(&ServerSnapshot::new("x").with_alias("a\tb"))
        );
    }

    #[test]
    fn an_alias_claims_the_name() {
        let aliased = ServerSnapshot::new("x").with_alias("time");
        let named = ServerSnapshot::new("time");
        let other = ServerSnapshot::new("other");
        let keys = ServerKey::resolve(&[&named, &aliased, &other]);
        let keys: Vec<Option<&str>> = keys
            .iter()
            .map(|k| k.as_ref().map(|k| k.as_str()))
            .collect();
        assert_eq!(keys, [None, Some("time"), Some("other")]);
        // Two servers named alike without aliases both keep the key.
        let keys = ServerKey::resolve(&[&named, &named]);
        assert!(keys.iter().all(|k| k.as_ref().is_some_and(|k| k == "time")));
    }
}
