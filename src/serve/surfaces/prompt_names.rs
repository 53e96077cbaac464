//! The names the gateway gives the upstreams' prompts, made as the tools'
//! are: a name once given kept by its (alias, prompt), never two alike.

use rmcp::model::Prompt;

use crate::hub::RETIRED_NAMES;
use crate::serve::gateway::names::GatewayNames;
use crate::tool_names::{NameTable, ToolNames};

/// The prompts' names: every name given so far, and the table of the last
/// list.
#[derive(Default)]
pub(crate) struct Prompts {
    given: NameTable,
    names: GatewayNames,
}

impl Prompts {
    /// Names the prompts listed now, keeping every name given before; the
    /// names in list order, the first of a prompt a server lists twice.
    pub(in crate::serve) fn name(
        &mut self,
        scheme: &ToolNames,
        listed: &[(String, Vec<Prompt>)],
    ) -> &GatewayNames {
        let pairs = listed
            .iter()
            .flat_map(|(a, ps)| ps.iter().map(move |p| (a.as_str(), p.name.as_str())));
        self.names = GatewayNames::keeping(scheme, pairs, &mut self.given, RETIRED_NAMES);
        &self.names
    }

    /// The (alias, prompt) behind an exposed name, in the last list.
    pub(in crate::serve) fn owner(&self, name: &str) -> Option<(String, String)> {
        let (a, p) = self.names.upstream(name)?;
        Some((a.to_string(), p.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::scheme;

    fn listed(pairs: &[(&str, &str)]) -> Vec<(String, Vec<Prompt>)> {
        let mut all: Vec<(String, Vec<Prompt>)> = Vec::new();
        for (alias, prompt) in pairs {
            let p = Prompt::new(*prompt, None::<String>, None);
            match all.iter_mut().find(|(a, _)| a == alias) {
                Some((_, ps)) => ps.push(p),
                None => all.push((alias.to_string(), vec![p])),
            }
        }
        all
    }

    #[test]
    fn a_prompt_keeps_its_name_when_another_upstream_would_take_it() {
        let mut prompts = Prompts::default();
        let names = prompts.name(&scheme(), &listed(&[("a_b", "x")]));
        assert_eq!(names.exposed("a_b", "x"), Some("a_b__x"));
        // `a b` sorts first and wants the same name: it gets another, the
        // first keeps its own, and the host's `a_b__x` still reaches it.
        let names = prompts.name(&scheme(), &listed(&[("a b", "x"), ("a_b", "x")]));
        assert_eq!(names.exposed("a_b", "x"), Some("a_b__x"));
        let other = names.exposed("a b", "x").unwrap();
        assert_ne!(other, "a_b__x");
        assert!(other.starts_with("a_b__x_") && other.len() <= 64, "{other}");
        assert_eq!(prompts.owner("a_b__x"), Some(("a_b".into(), "x".into())));
        // Gone and back: the name is still its own.
        prompts.name(&scheme(), &listed(&[("a b", "x")]));
        assert_eq!(prompts.owner("a_b__x"), None);
        let names = prompts.name(&scheme(), &listed(&[("a b", "x"), ("a_b", "x")]));
        assert_eq!(names.exposed("a_b", "x"), Some("a_b__x"));
        // A prompt a server lists twice is named once.
        let names = prompts.name(&scheme(), &listed(&[("c", "y"), ("c", "y")]));
        assert_eq!(names.len(), 1);
    }
}
