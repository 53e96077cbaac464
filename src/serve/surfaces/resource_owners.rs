//! Where each resource URI and template goes, from the upstreams' last
//! lists: a URI two upstreams claim is served by neither (told once).

use std::collections::{BTreeMap, BTreeSet};

use crate::serve::surfaces::uri::UriTemplate;

/// How many collisions the log is told of once each; past that, one
/// told before is forgotten for each new one (and told again if seen
/// again): the set stays bounded whatever an upstream lists.
const REPORTED: usize = 1024;

/// Where each URI and template goes, from the last lists.
#[derive(Default)]
pub(crate) struct Resources {
    /// URI → the upstreams that listed it.
    pub(in crate::serve) listed: BTreeMap<String, BTreeSet<String>>,
    /// Each upstream's templates, parsed, with their text.
    pub(in crate::serve) templates: Vec<(String, String, UriTemplate)>,
    /// Collisions already told to the log.
    reported: BTreeSet<String>,
}

impl Resources {
    /// The upstreams that claim `uri`.
    pub(in crate::serve) fn claims(&self, uri: &str) -> BTreeSet<String> {
        let mut owners = self.listed.get(uri).cloned().unwrap_or_default();
        for (alias, _, t) in &self.templates {
            if !owners.contains(alias) && t.matches(uri) {
                owners.insert(alias.clone());
            }
        }
        owners
    }

    /// Tells the log of a URI claimed by several upstreams, once.
    pub(in crate::serve) fn report(&mut self, uri: &str, owners: &BTreeSet<String>) {
        if self.reported.len() >= REPORTED {
            self.reported.pop_first();
        }
        if self.reported.insert(uri.to_string()) {
            let names: Vec<String> = owners.iter().map(|a| format!("{a:?}")).collect();
            tracing::warn!(
                uri = %uri,
                "resource {uri:?} is claimed by upstreams {}: served by neither",
                names.join(" and ")
            );
        }
    }
}
