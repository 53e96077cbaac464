//! A server's instructions against the tools the model is sent, after
//! sanitizing and the policy, before de-duplication and budgets (so budgets
//! count what is sent): units whose only tool references are hidden tools
//! go, then references are rewritten to the names the model sees. Both
//! find references by the rule of `crate::rewrite` (see the crate docs,
//! "Tool names").

use std::collections::BTreeSet;

use super::builder::Policy;
use super::exposure::ServerNames;
use crate::model::ServerSnapshot;
use crate::report::{HiddenMention, Removal, RemovalReason, ServerReport};
use crate::rewrite;
use crate::segment;
use crate::template::ServerView;
use crate::tool_policy::ToolFilter;
use crate::visibility::Resolved;

/// Loads the tools the policy always loads, whatever deferred them.
pub(super) fn always_load(policy: Option<&Policy>, s: &ServerSnapshot, resolved: &mut Resolved) {
    let Some(rules) = policy.map(|p| &p.tools) else {
        return;
    };
    for (t, deferred) in s.tools.iter().zip(resolved.deferred.iter_mut()) {
        if *deferred && rules.always_loads(&t.name) {
            *deferred = false;
        }
    }
    if !resolved.deferred.contains(&true) {
        resolved.reason = None;
    }
}

/// Removes the units that name only hidden tools (not from operator
/// text, which is the operator's own), reports the mixed ones, and
/// rewrites the references to the tools `s` sends. A name `denied`
/// denies by name (an entry without `*` or `?`) is hidden whether or not
/// the server lists it (a tool registered only for some clients is still
/// one the operator hid).
pub(super) fn apply(
    view: &mut ServerView,
    report: &mut ServerReport,
    names: &ServerNames,
    s: &ServerSnapshot,
    (replaced, denied): (bool, Option<&ToolFilter>),
) {
    report.hidden_tools.clone_from(&names.hidden);
    let Some(mut text) = view.instructions.take() else {
        return;
    };
    let denied = denied.filter(|f| !f.deny.is_empty());
    if !replaced && (!names.hidden.is_empty() || denied.is_some()) {
        let hidden: BTreeSet<&str> = names.hidden.iter().map(String::as_str).collect();
        let sent: BTreeSet<&str> = s.tools.iter().map(|t| t.name.as_str()).collect();
        // A deny entry that is a name, not a pattern: a glob such as `*`
        // describes listed tools, never every word of the prose.
        let named: BTreeSet<&str> = denied
            .map(|f| {
                f.deny
                    .iter()
                    .map(String::as_str)
                    .filter(|p| !p.contains(['*', '?']))
            })
            .into_iter()
            .flatten()
            .collect();
        let is_hidden = |n: &str| hidden.contains(n) || (!sent.contains(n) && named.contains(n));
        let units = segment::units(&text);
        let mut keep = vec![true; units.len()];
        for (k, u) in units.iter().enumerate() {
            let unit = u.text(&text);
            let mut named: Vec<String> = Vec::new();
            for r in rewrite::references(unit, is_hidden) {
                let n = &unit[r.start..r.end];
                if !named.iter().any(|x| x == n) {
                    named.push(n.to_string());
                }
            }
            if named.is_empty() {
                continue;
            }
            if rewrite::references(unit, |n| sent.contains(n)).is_empty() {
                keep[k] = false;
                let mut removal = Removal::new(RemovalReason::MentionsHiddenTool, unit);
                removal.tool = named.into_iter().next();
                report.removed.push(removal);
            } else {
                report.hidden_mentions.push(HiddenMention {
                    text: unit.to_string(),
                    tools: named,
                });
            }
        }
        if keep.contains(&false) {
            text = segment::join(&text, &units, |k| keep[k]);
        }
    }
    if text.is_empty() {
        return;
    }
    let (text, rewrites) = rewrite::rewrite(&text, |n| names.get(n));
    report.rewrites = rewrites;
    view.instructions = Some(text);
}
