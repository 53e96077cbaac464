//! Each upstream's last prompts, resources and templates: a host's list is
//! answered within [`LIST_ANSWER`] from what is known, an upstream that
//! has not answered by then is served from its last list, and its answer,
//! when it comes, is kept and told to hosts (`list_changed`) if it differs.
//! So one hung or slow upstream never holds up a list.

use std::time::Duration;

use tokio::time::Instant;

use crate::serve::surfaces::Surfaces;
use rmcp::model::{Prompt, Resource, ResourceTemplate};

use crate::serve::surfaces::lists::{Listing, all_pages};

/// The longest a host's list of prompts, resources or templates takes,
/// waiting for upstreams still starting included.
pub(in crate::serve) const LIST_ANSWER: Duration = Duration::from_millis(900);

/// How long a list answered by `deadline` waits for the upstreams still
/// starting: half the time left, so that the connected ones have the rest.
pub(in crate::serve) fn starting_by(deadline: Instant) -> Instant {
    let now = Instant::now();
    now + deadline.saturating_duration_since(now) / 2
}

impl Surfaces {
    /// Reads the lists of an upstream that joined, ahead of any host: a
    /// host's list asked while that upstream is slow is answered from them.
    pub(in crate::serve) fn read_ahead(&self, alias: &str, caps: &rmcp::model::ServerCapabilities) {
        let (upstreams, catalog) = (self.upstreams().clone(), self.catalog().clone());
        let (limits, alias) = (self.hub().limits(), alias.to_string());
        let (prompts, resources) = (caps.prompts.is_some(), caps.resources.is_some());
        tokio::spawn(async move {
            let keep = |method, ok: bool| {
                if !ok {
                    tracing::debug!(upstream = %alias, "{method} failed when it joined");
                }
            };
            if prompts {
                let listed = all_pages::<Prompt>(&alias, &upstreams, limits).await;
                keep("prompts/list", listed.as_ref().is_ok());
                if let Ok(items) = listed {
                    catalog.known.put(Prompt::METHOD, &alias, items);
                }
            }
            if resources {
                let listed = all_pages::<Resource>(&alias, &upstreams, limits).await;
                keep("resources/list", listed.as_ref().is_ok());
                if let Ok(items) = listed {
                    catalog.known.put(Resource::METHOD, &alias, items);
                }
                let listed = all_pages::<ResourceTemplate>(&alias, &upstreams, limits).await;
                keep("resources/templates/list", listed.as_ref().is_ok());
                if let Ok(items) = listed {
                    catalog.known.put(ResourceTemplate::METHOD, &alias, items);
                }
            }
        });
    }
}

/// A deadline that never comes first: the call timeout governs (a host's
/// `prompts/get` of a name no list has shown yet waits for every upstream).
pub(in crate::serve) fn no_deadline() -> Instant {
    Instant::now() + Duration::from_secs(86_400)
}

impl Surfaces {
    /// Every upstream's list of `T` of `aliases`, by alias (sorted), as
    /// answered by `deadline`; an upstream that has not answered by then is
    /// served as it last answered (left out if it never did), its answer
    /// kept when it comes, and hosts told if it differs. One that fails is
    /// left out (logged).
    pub(in crate::serve) async fn listed<T: Listing>(
        &self,
        aliases: Vec<String>,
        deadline: Instant,
    ) -> Vec<(String, Vec<T>)> {
        let limits = self.hub().limits();
        let mut asks = tokio::task::JoinSet::new();
        for alias in aliases.iter().cloned() {
            let (upstreams, catalog) = (self.upstreams().clone(), self.catalog().clone());
            asks.spawn(async move {
                let listed = all_pages::<T>(&alias, &upstreams, limits).await;
                match listed {
                    Ok(items) => {
                        let changed = catalog.known.put(T::METHOD, &alias, items.clone());
                        Ok((alias, items, changed))
                    }
                    Err(e) => Err((alias, e)),
                }
            });
        }
        let mut all = Vec::new();
        while let Ok(Some(done)) = tokio::time::timeout_at(deadline, asks.join_next()).await {
            match done {
                Ok(Ok((alias, items, _))) => all.push((alias, items)),
                Ok(Err((alias, e))) => {
                    tracing::warn!(upstream = %alias, "{} failed: {}", T::METHOD, e.message);
                }
                Err(e) => tracing::warn!("{} failed: {e}", T::METHOD),
            }
        }
        let answered: std::collections::BTreeSet<String> =
            all.iter().map(|(a, _)| a.clone()).collect();
        let late = (aliases.into_iter())
            .filter(|a| !answered.contains(a))
            .filter_map(|a| Some((a.clone(), self.catalog().known.get::<T>(T::METHOD, &a)?)));
        all.extend(late);
        all.sort_by(|a, b| a.0.cmp(&b.0));
        if !asks.is_empty() {
            self.tell_late::<T>(asks);
        }
        all
    }

    /// The answers still to come: each kept, and told to hosts if it differs.
    fn tell_late<T: Listing>(&self, mut asks: tokio::task::JoinSet<LateAnswer<T>>) {
        let catalog = self.catalog().clone();
        tokio::spawn(async move {
            while let Some(done) = asks.join_next().await {
                if let Ok(Ok((alias, _, true))) = done {
                    tracing::debug!(upstream = %alias, "{} answered late: told to hosts", T::METHOD);
                    let changed = match T::METHOD {
                        "prompts/list" => &catalog.prompts_changed,
                        _ => &catalog.resources_changed,
                    };
                    changed.send_modify(|n| *n += 1);
                }
            }
        });
    }
}

/// An upstream's list (and whether it differs from the one known), or its error.
type LateAnswer<T> = Result<(String, Vec<T>, bool), (String, rmcp::ErrorData)>;

#[cfg(test)]
mod tests {
    use crate::serve::surfaces::catalog::Known;

    #[test]
    fn a_list_is_kept_per_kind_and_upstream_and_a_change_is_told() {
        let known = Known::default();
        assert_eq!(known.get::<u8>("prompts/list", "a"), None);
        assert!(known.put("prompts/list", "a", vec![1u8]));
        assert!(!known.put("prompts/list", "a", vec![1u8]));
        assert!(known.put("prompts/list", "a", vec![2u8]));
        assert!(known.put("resources/list", "a", vec![2u8]));
        assert_eq!(known.get::<u8>("prompts/list", "a"), Some(vec![2]));
        assert_eq!(known.get::<u8>("prompts/list", "b"), None);
    }
}
