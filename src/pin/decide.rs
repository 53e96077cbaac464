//! One server against the lock: the pin to report and what to render.

use super::entry::{LockEntry, PinnedInstructions};
use super::lock::Lock;
use super::{Effect, OnChange, Pin, PinState};
use crate::error::{Error, ErrorKind, Result};
use crate::model::ServerSnapshot;

/// Compares `server`, pinned under `key`, with `lock` (when given) under
/// `on_change` (the operator's, `None` when unset): the pin to report and
/// what to render. Fails with [`ErrorKind::Drift`] for `fail` on a new or
/// changed server.
#[cfg(test)]
pub(crate) fn decide(
    lock: Option<&Lock>,
    server: &ServerSnapshot,
    key: Option<&str>,
    on_change: Option<OnChange>,
    limits: &crate::limits::Limits,
) -> Result<(Pin, Effect)> {
    decide_sent(lock, server, key, on_change, limits, None)
}

/// Compares `server`, pinned under `key`, with `lock` as `decide` does,
/// for a server whose tools are what `filter` (the operator's tool filter,
/// if any) sends: the filter is compared with the pinned one.
pub(crate) fn decide_sent(
    lock: Option<&Lock>,
    server: &ServerSnapshot,
    key: Option<&str>,
    on_change: Option<OnChange>,
    limits: &crate::limits::Limits,
    filter: Option<&crate::tool_policy::ToolFilter>,
) -> Result<(Pin, Effect)> {
    let Some(lock) = lock else {
        return Ok((Pin::unpinned(), Effect::AsIs));
    };
    // Hashing and sanitizing every tool is the costly part: done once.
    let now = LockEntry::sent(server, filter, limits);
    let mut pin = lock.compare(key, server, &now);
    if !matches!(pin.state, PinState::New | PinState::Changed) {
        return Ok((pin, Effect::AsIs));
    }
    pin.on_change = on_change;
    let effect = match on_change.unwrap_or(OnChange::Accept) {
        OnChange::Accept => Effect::AsIs,
        OnChange::Hold => {
            let entry = key.and_then(|k| lock.get(k));
            let unchanged_tools = match entry {
                Some(e) => now
                    .tools
                    .iter()
                    .filter(|(name, t)| e.tools.get(*name) == Some(t))
                    .map(|(name, _)| name.clone())
                    .collect(),
                None => Default::default(),
            };
            Effect::Hold {
                text: entry
                    .and_then(|e| e.instructions.as_ref())
                    .map(PinnedInstructions::text),
                unchanged_tools,
            }
        }
        OnChange::Drop => Effect::Drop,
        OnChange::Fail => {
            return Err(Error::new(
                ErrorKind::Drift,
                format!(
                    "{:?} {} (on_change = \"fail\")",
                    key.map_or_else(|| server.display_name(), str::to_string),
                    if pin.state == PinState::New {
                        "is not in the lock".to_string()
                    } else {
                        format!("changed since it was pinned: {}", pin.summary())
                    }
                ),
            ));
        }
    };
    Ok((pin, effect))
}
