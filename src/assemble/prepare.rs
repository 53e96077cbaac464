//! One server on its way through the stages: sanitized into the view the
//! template sees, the operator's policy applied, de-duplicated, then fitted.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use super::builder::{Assembler, Policy};
use super::exposure::ServerNames;
use super::mentions;
use super::reuse::{DedupKey, DedupOutcome};
use crate::budget::{self, Measure, Render, Rendered, Trim};
use crate::dedup;
use crate::error::Result;
use crate::limits::{Limit, LimitHit};
use crate::model::{Instructions, ServerSnapshot};
use crate::report::{
    AppliedPolicy, Deferral, Exposure, Omission, PolicyAction, Removal, RemovalReason, Restatement,
    ServerDiagnostic, ServerReport,
};
use crate::sanitize::{self, HiddenChars};
use crate::support::distance::did_you_mean;
use crate::template::{Full, ServerView, ToolView};
use crate::tool_names::{Fit, MAX_LEN};
use crate::tool_policy::ToolRules;
use crate::visibility::Resolved;
use tools::{repeated_tools, tool_views};

mod tools;

/// One server on its way through the stages.
#[derive(Clone)]
pub(crate) struct Prepared {
    /// The server as it will be rendered, updated by each stage.
    pub view: ServerView,
    /// The view after de-duplication, before any budget trimming.
    deduped: Option<ServerView>,
    /// The instructions as units, once de-duplicated.
    trim: Option<Trim>,
    /// Removals of the de-duplication stage (kept across refits).
    dedup_removed: Vec<Removal>,
    /// Whether operator text replaced the instructions (never de-duplicated).
    replaced: bool,
    /// The untrimmed block and its tokens, reused when nothing was removed.
    pub untrimmed: Option<Render>,
    /// The instructions as rendered after de-duplication, to find servers
    /// with byte-identical ones.
    pub whole: Option<String>,
    /// The earlier server whose instructions these repeat.
    pub twin_of: Option<String>,
    /// Its own token budget, if any.
    pub budget: Option<usize>,
    /// Its weight in fair shares, in thousandths.
    pub weight: u64,
    /// Per tool of the source: behind tool search.
    tool_deferred: Vec<bool>,
    /// The memo's fingerprint of its visibility settings.
    pub visibility: u64,
    /// The memo's fingerprint of its pin and `on_change`.
    pub pin: u64,
    /// Under `hold`: the only tools (raw names) whose descriptions the held
    /// instructions are de-duplicated against.
    pub dedup_against: Option<std::collections::BTreeSet<String>>,
    /// The names the model sees for its tools.
    pub names: Arc<ServerNames>,
    /// What the model is sent of the server (the gateway serves it as
    /// is), when the assembler keeps it.
    pub exposure: Option<Arc<Exposure>>,
    pub report: ServerReport,
}

/// What the operator's policy did to the instructions.
struct Applied {
    instructions: Option<String>,
    replaced: bool,
    excluded: bool,
    actions: Vec<PolicyAction>,
    removed: Vec<Removal>,
}

/// What sanitizing a server's data found: its diagnostics, in report
/// order, and the hidden characters removed.
#[derive(Default)]
struct Found {
    notes: Vec<ServerDiagnostic>,
    hidden: HiddenChars,
}

impl Prepared {
    /// Sanitizes `s` into the view shown as `name`, with the policy and
    /// budget found under `config_key`. `held` replaces the server's
    /// instructions with text already sanitized (`Some(None)`: none).
    pub fn new(
        s: &ServerSnapshot,
        name: &str,
        renamed_from: Option<&str>,
        config_key: Option<&str>,
        config: &Assembler,
        held: Option<Option<&str>>,
        names: Arc<ServerNames>,
    ) -> Prepared {
        let policy = config_key.and_then(|k| config.policies.get(k));
        let repeated = repeated_tools(s);
        let (mut found, applied) = intake(s, name, renamed_from, held, policy, &repeated);
        found.names_over_cap(s, &names);
        if let Some(p) = policy {
            found.unmatched_rules(s, &names.hidden, &p.tools);
        }
        let mut resolved = config.visibility.resolve(config_key, s, &config.counter);
        mentions::always_load(policy, s, &mut resolved);
        let hidden = &mut found.hidden;
        let (exposed, (tools, index)) = match applied.excluded {
            true => Default::default(),
            false => {
                let descriptions = config.tool_descriptions;
                let how = (descriptions, config.expose);
                tool_views(s, &resolved.deferred, how, hidden, (&names, &repeated))
            }
        };
        let listed = config.list_tool_only_servers && config.tool_list;
        let omitted = omission(&applied, &tools, &index, listed);
        let tools = if config.tool_list { tools } else { Vec::new() };
        let label = policy
            .and_then(|p| p.label.as_deref())
            .filter(|_| applied.replaced && applied.instructions.is_some());
        let (instructions, hidden) = (applied.instructions, &mut found.hidden);
        let mut view = view_of(s, name, label, instructions, (tools, index), hidden);
        view.full = config.shortening_note.then(|| Full {
            bytes: 0,
            hint: config.full_text_hint.clone(),
        });
        let mut report = report_of(s, &view, &resolved, applied.actions, applied.removed, found);
        let denied = policy.map(|p| &p.tools.filter);
        mentions::apply(
            &mut view,
            &mut report,
            &names,
            s,
            (applied.replaced, denied),
        );
        let exposure = config.expose.then(|| Exposure {
            alias: s.alias.clone(),
            hidden: match applied.excluded {
                true => Vec::new(),
                false => names
                    .hidden
                    .iter()
                    .cloned()
                    .zip(names.hidden_names.iter().cloned())
                    .collect(),
            },
            tools: exposed,
            // The operator's text is in the section whole or not at all.
            instructions: view.instructions.clone().filter(|_| !applied.replaced),
        });
        if let Some(why) = omitted {
            report.omit(why);
        }
        let mut p = Prepared::unfitted(view, report);
        p.exposure = exposure.map(Arc::new);
        p.replaced = applied.replaced;
        p.tool_deferred = resolved.deferred;
        p.budget = config_key
            .and_then(|k| config.server_budgets.get(k))
            .copied()
            .or(config.budget);
        p.weight = policy.map_or(1000, Policy::weight_millis);
        p.visibility = config.visibility.fingerprint(config_key);
        p.names = names;
        p
    }

    /// `view` and `report` before any stage ran, with default settings.
    fn unfitted(view: ServerView, report: ServerReport) -> Prepared {
        Prepared {
            view,
            deduped: None,
            trim: None,
            dedup_removed: Vec::new(),
            replaced: false,
            untrimmed: None,
            whole: None,
            twin_of: None,
            budget: None,
            weight: 1000,
            tool_deferred: Vec::new(),
            visibility: 0,
            pin: 0,
            dedup_against: None,
            names: Arc::default(),
            exposure: None,
            report,
        }
    }

    /// Whether the server goes on to get a block (it was not left out
    /// before fitting).
    pub fn candidate(&self) -> bool {
        !matches!(
            self.report.omitted,
            Some(Omission::Excluded | Omission::Empty | Omission::ToolOnly)
        )
    }

    /// Ladder step 1 within the server: drops units that restate a loaded
    /// tool's description or repeat an earlier unit (one that restates a
    /// deferred tool stays, reported); the reader's text follows.
    pub fn dedup_within(&mut self, source: &ServerSnapshot, config: &Assembler) {
        let Some(text) = self.view.instructions.clone() else {
            return;
        };
        if self.replaced {
            self.trim = Some(self.trim_of(text));
            return;
        }
        let only = self.dedup_against.as_ref();
        let (loaded, deferred) = tools::descriptions(source, config, &self.tool_deferred, only);
        let key = DedupKey {
            text,
            names: self.tool_names().into_iter().collect(),
            loaded,
            deferred,
            similarity: config.similarity.to_bits(),
            max_units: config.limits.max_dedup_units(),
        };
        let done = config
            .dedup_memo
            .get_or_compute(key, |key| dedup_outcome(key, config.similarity));
        if let Some(hit) = done.hit {
            self.report.limit_hits(vec![hit]);
        }
        self.dedup_removed.extend(done.removed.iter().cloned());
        if let Some(d) = &mut self.report.deferred {
            d.restatements_kept = done.restatements_kept.clone();
        }
        self.view.instructions = done.kept_text.clone();
        self.whole = done.kept_text.clone();
        self.trim = Some(done.trim.clone());
        if let Some(e) = &mut self.exposure {
            Arc::make_mut(e).instructions = done.kept_text.clone(); // the reader's, unbudgeted
        }
    }

    /// Ladder step 1 across servers: the instructions equal `first`'s, which
    /// come earlier in the section; show a reference instead.
    pub fn make_twin(&mut self, first: String) {
        let text = self
            .trim
            .as_ref()
            .map(|t| t.text.clone())
            .unwrap_or_default();
        let mut removal = Removal::new(RemovalReason::SameAsServer, text);
        removal.server = Some(first.clone());
        self.dedup_removed = vec![removal];
        self.view.instructions = None;
        self.view.note = Some(format!("Same instructions as {first} above."));
        self.trim = None;
        self.twin_of = Some(first);
    }

    fn trim_of(&self, text: String) -> Trim {
        Trim::new(text, &self.tool_names().into_iter().collect())
    }

    /// The server's tool names (loaded and deferred), normalized.
    fn tool_names(&self) -> BTreeSet<String> {
        self.view
            .tools
            .iter()
            .chain(&self.view.deferred)
            .map(|t| dedup::normalize(&t.name))
            .collect()
    }

    /// Ladder steps 2–5: fits the de-duplicated view into `limit`.
    pub fn fit(
        &mut self,
        limit: Option<usize>,
        measure: &mut Measure<'_>,
    ) -> Result<Option<Rendered>> {
        let mut base = self
            .deduped
            .get_or_insert_with(|| self.view.clone())
            .clone();
        // What the shortening line compares with: the instructions as
        // de-duplicated, before any budget.
        let bytes = base.instructions.as_ref().map_or(0, String::len);
        if let Some(full) = &mut base.full {
            full.bytes = bytes;
        }
        if self.trim.is_none()
            && self.twin_of.is_none()
            && let Some(text) = base.instructions.clone()
        {
            self.trim = Some(self.trim_of(text));
        }
        let rendered = self
            .untrimmed
            .clone()
            .filter(|_| self.dedup_removed.is_empty());
        let fitted = budget::fit(base, self.trim.as_ref(), limit, rendered, measure)?;
        let report = &mut self.report;
        report.removed.retain(|r| {
            matches!(
                r.reason,
                RemovalReason::Policy | RemovalReason::MentionsHiddenTool
            )
        });
        report.removed.extend(self.dedup_removed.iter().cloned());
        report.removed.extend(fitted.removed);
        report.truncated = fitted.truncated;
        if let Some(d) = &mut report.deferred {
            d.summaries_cut = fitted.summaries_cut;
            d.names_cut = fitted.names_cut;
        }
        if fitted.block.is_none() {
            // Without a budget, only running out of template fuel leaves no block.
            report.omit(match limit {
                Some(budget) if !fitted.out_of_fuel => Omission::OverBudget { budget },
                _ => Omission::RenderFuel,
            });
        }
        Ok(fitted.block)
    }

    /// Left out so that the section fits its total budget.
    pub fn omit_for_total(&mut self) {
        self.report.omit(Omission::OverTotal);
    }

    /// Forgets the last fit's omission before fitting again.
    pub fn reset_fit(&mut self) {
        self.report.unomit_over_budget();
    }
}

/// Ladder step 1 within a server: its units, those that restate one of
/// its loaded tools' descriptions or repeat an earlier unit dropped.
fn dedup_outcome(key: &DedupKey, similarity: f64) -> DedupOutcome {
    let mut trim = Trim::new(key.text.clone(), &key.name_set());
    // Units past the limit are kept unchecked: their cost is the budget ladder's, which is linear.
    let checked = trim.units.len().min(key.max_units);
    let hit = (checked < trim.units.len())
        .then(|| LimitHit::new(Limit::DedupUnits, checked, trim.units.len()));
    let units = &trim.units[..checked];
    let restated = dedup::restatements(&trim.text, units, &key.loaded, similarity);
    let restated_deferred = if key.deferred.is_empty() {
        Vec::new()
    } else {
        dedup::restatements(&trim.text, units, &key.deferred, similarity)
    };
    let (removed, restatements_kept) = drop_repeats(&mut trim, &restated, &restated_deferred);
    DedupOutcome {
        kept_text: trim.kept(),
        trim,
        removed,
        restatements_kept,
        hit,
    }
}

/// Drops the units that restate a loaded tool (`restated`, per unit
/// checked) or repeat an earlier unit; raises those that restate a
/// deferred tool. Returns what it dropped and the restatements it kept.
fn drop_repeats(
    trim: &mut Trim,
    restated: &[Option<&str>],
    restated_deferred: &[Option<&str>],
) -> (Vec<Removal>, Vec<Restatement>) {
    let (mut removed, mut kept) = (Vec::new(), Vec::new());
    let mut units_seen: HashSet<String> = HashSet::new();
    for (k, (unit, tool)) in trim.units.clone().iter().zip(restated).enumerate() {
        let unit_text = unit.text(&trim.text);
        if let Some(tool) = tool {
            let mut removal = Removal::new(RemovalReason::RestatesTool, unit_text).of_unit(k);
            removal.tool = Some(tool.to_string());
            removed.push(removal);
            trim.drop_unit(k);
            continue;
        }
        let norm = dedup::normalize(unit_text);
        if !norm.is_empty() && !units_seen.insert(norm) {
            removed.push(Removal::new(RemovalReason::Repeated, unit_text).of_unit(k));
            trim.drop_unit(k);
            continue;
        }
        if let Some(tool) = restated_deferred.get(k).copied().flatten() {
            kept.push(Restatement {
                text: unit_text.to_string(),
                tool: tool.to_string(),
            });
            trim.raise(k, dedup::Priority::RestatesDeferred);
        }
    }
    (removed, kept)
}

impl Found {
    /// The tool rules that match none of the tools the server lists (`s`'s,
    /// after the filter, and `hidden`, those the filter took out); nothing
    /// when `tools/list` failed (no rule could match).
    fn unmatched_rules(&mut self, s: &ServerSnapshot, hidden: &[String], rules: &ToolRules) {
        if s.tools_error.is_some() {
            return;
        }
        let listed: Vec<&str> = s
            .tools
            .iter()
            .map(|t| t.name.as_str())
            .chain(hidden.iter().map(String::as_str))
            .collect();
        for (rule, pattern) in rules.unmatched(&listed) {
            let literal = !pattern.contains(['*', '?']);
            let closest = literal
                .then(|| did_you_mean(pattern, listed.iter().copied()))
                .flatten()
                .map(str::to_string);
            self.notes.push(ServerDiagnostic::UnmatchedToolRule {
                rule,
                pattern: pattern.to_string(),
                closest,
            });
        }
    }

    /// The tools whose name under the host's scheme is past its cap and
    /// sent whole anyway.
    fn names_over_cap(&mut self, s: &ServerSnapshot, names: &ServerNames) {
        for t in &s.tools {
            let Some(name) = names.sent(&t.name).filter(|n| n.fit() == Fit::OverCap) else {
                continue;
            };
            self.notes.push(ServerDiagnostic::ToolNameOverCap {
                tool: sanitize::line(&t.name),
                name: name.as_str().to_string(),
                chars: name.as_str().chars().count(),
                cap: MAX_LEN,
            });
        }
    }

    /// The sanitized instructions, `None` when absent or blank (a blank one
    /// is reported).
    fn instructions(&mut self, s: &ServerSnapshot) -> Option<String> {
        match &s.instructions {
            Instructions::Present(raw) => {
                Some(sanitize::text_counting(raw, &mut self.hidden)).filter(|t| !t.is_empty())
            }
            Instructions::Blank(raw) => {
                sanitize::text_counting(raw, &mut self.hidden);
                self.notes.push(ServerDiagnostic::BlankInstructions {
                    chars: raw.chars().count(),
                });
                None
            }
            Instructions::Absent => None,
        }
    }

    /// The exclusion, then a failed `tools/list`.
    fn data_problems(&mut self, s: &ServerSnapshot, excluded: bool) {
        if excluded {
            // Reported here, before the data's own problems (the JSON keeps this order).
            self.notes
                .push(ServerDiagnostic::Omitted(Omission::Excluded));
        }
        if let Some(err) = &s.tools_error {
            self.notes.push(ServerDiagnostic::ToolsListFailed {
                code: err.code,
                message: sanitize::line(&err.message),
            });
        }
    }

    /// Tools left out of the list because their name sanitizes to nothing.
    fn unnamed_tools(&mut self, s: &ServerSnapshot) {
        let count = s
            .tools
            .iter()
            .filter(|t| sanitize::line(&t.name).is_empty())
            .count();
        if count > 0 {
            self.notes.push(ServerDiagnostic::UnnamedTools { count });
        }
    }

    /// Tools left out of the list because an earlier tool has their name
    /// (`repeated`, see [`repeated_tools`]; only the first is listed).
    fn duplicate_tools(&mut self, s: &ServerSnapshot, repeated: &[usize]) {
        let mut names: Vec<String> = Vec::new();
        for &i in repeated {
            let name = sanitize::line(&s.tools[i].name);
            if !names.contains(&name) {
                names.push(name);
            }
        }
        if !repeated.is_empty() {
            let count = repeated.len();
            self.notes
                .push(ServerDiagnostic::DuplicateTools { count, names });
        }
    }
}

/// Sanitizes the instructions (or takes the `held` ones) and applies the
/// policy; with what was found so far, in report order.
fn intake(
    s: &ServerSnapshot,
    name: &str,
    renamed_from: Option<&str>,
    held: Option<Option<&str>>,
    policy: Option<&Policy>,
    repeated: &[usize],
) -> (Found, Applied) {
    let mut found = Found::default();
    if let Some(original) = renamed_from {
        found.notes.push(ServerDiagnostic::Renamed {
            original: original.to_string(),
            shown: name.to_string(),
        });
    }
    let own = match held {
        Some(text) => text.filter(|t| !t.is_empty()).map(str::to_string),
        None => found.instructions(s),
    };
    let applied = apply_policy(policy, own);
    found.data_problems(s, applied.excluded);
    found.unnamed_tools(s);
    found.duplicate_tools(s, repeated);
    (found, applied)
}

/// Why the server gets no block before any fitting, if it gets none.
fn omission(
    applied: &Applied,
    tools: &[ToolView],
    index: &[ToolView],
    list_tool_only_servers: bool,
) -> Option<Omission> {
    if applied.excluded {
        Some(Omission::Excluded)
    } else if applied.instructions.is_some() {
        None
    } else if tools.is_empty() && index.is_empty() {
        Some(Omission::Empty)
    } else {
        (!list_tool_only_servers).then_some(Omission::ToolOnly)
    }
}

/// The server as the template sees it, before de-duplication; `label` is
/// the policy's, when shown over the operator's own text.
fn view_of(
    s: &ServerSnapshot,
    name: &str,
    label: Option<&str>,
    instructions: Option<String>,
    (tools, deferred): (Vec<ToolView>, Vec<ToolView>),
    hidden: &mut HiddenChars,
) -> ServerView {
    let mut line = |t: &str| sanitize::line_counting(t, hidden);
    ServerView {
        name: name.to_string(),
        alias: s.alias.as_deref().map(sanitize::line),
        server_name: line(&s.server_info.name),
        title: s.server_info.title.as_deref().map(&mut line),
        version: line(&s.server_info.version),
        era: s.era.as_str(),
        protocol_version: line(&s.protocol_version),
        label: label.map(sanitize::line).filter(|l| !l.is_empty()),
        instructions,
        note: None,
        tools,
        more_tools: 0,
        deferred,
        more_deferred: 0,
        full: None,
    }
}

/// The server's report before fitting: what it is, what the policy did,
/// and what its data's problems are.
fn report_of(
    s: &ServerSnapshot,
    view: &ServerView,
    resolved: &Resolved,
    actions: Vec<PolicyAction>,
    removed: Vec<Removal>,
    found: Found,
) -> ServerReport {
    let mut report = ServerReport {
        name: view.name.clone(),
        alias: view.alias.clone(),
        server_name: view.server_name.clone(),
        version: view.version.clone(),
        era: s.era,
        protocol_version: view.protocol_version.clone(),
        instructions: s.instructions.state(),
        tools: s.tools.len(),
        policy: AppliedPolicy::new(actions),
        pin: crate::pin::Pin::unpinned(),
        included: false,
        text: String::new(),
        span: None,
        budget: None,
        tokens_before: 0,
        tokens: 0,
        removed,
        hidden_characters: found.hidden,
        truncated: false,
        limits: Vec::new(),
        tool_tokens: resolved.tool_tokens,
        deferred: deferral_of(resolved, view),
        hidden_tools: Vec::new(),
        rewrites: Vec::new(),
        hidden_mentions: Vec::new(),
        namespace: None,
        notes: Vec::new(),
        omitted: None,
        index: 0,
    };
    for note in found.notes {
        report.note(note);
    }
    report
}

/// The server's tool index, when it has deferred tools that are listed.
fn deferral_of(resolved: &Resolved, view: &ServerView) -> Option<Deferral> {
    let reason = resolved.reason.filter(|_| !view.deferred.is_empty())?;
    Some(Deferral {
        reason,
        tools: view.deferred.iter().map(|t| t.name.clone()).collect(),
        summaries_cut: Vec::new(),
        names_cut: Vec::new(),
        restatements_kept: Vec::new(),
    })
}

fn apply_policy(policy: Option<&Policy>, instructions: Option<String>) -> Applied {
    let mut applied = Applied {
        instructions,
        replaced: false,
        excluded: false,
        actions: Vec::new(),
        removed: Vec::new(),
    };
    let Some(policy) = policy else {
        return applied;
    };
    let removal = |text| Removal::new(RemovalReason::Policy, text);
    if let Some(text) = &policy.instructions {
        applied
            .removed
            .extend(applied.instructions.take().map(removal));
        applied.instructions = Some(sanitize::text(text)).filter(|t| !t.is_empty());
        applied.replaced = true;
        applied.actions.push(PolicyAction::InstructionsReplaced);
    }
    if !policy.include {
        applied.excluded = true;
        applied
            .removed
            .extend(applied.instructions.take().map(removal));
        applied.actions.push(PolicyAction::Excluded);
    }
    if policy.weight_millis() != 1000 {
        let weight = policy.weight_millis() as f64 / 1000.0;
        applied.actions.push(PolicyAction::Weight(weight));
    }
    applied
}

#[cfg(test)]
mod tests;
