//! The entry point: [`Assembler`] runs the stages and builds the [`Assembly`].
//!
//! The driver reads as the pipeline: place (order and names), prepare
//! (sanitize, policy, de-duplicate within a server), link twins across
//! servers, limits (budgets and fair shares), fit, fit the total, fit a
//! host's cap (in its unit, by a smaller total), report.

mod builder;
mod exposure;
mod layout;
mod memo;
mod mentions;
mod names;
mod namespace;
mod prepare;
mod reuse;

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::budget::{self, Measure, Render, Rendered};
use crate::error::{Error, ErrorKind, Result};
use crate::hosts::HostCap;
use crate::limits::{Limit, LimitHit};
use crate::model::ServerSnapshot;
use crate::pin::{self, Effect, Pin, PinState};
use crate::report::{AliasSetting, Assembly, ConfigDiagnostic, ServerReport};
use crate::server_key::ServerKey;
use crate::template::{MAX_BLOCK_BYTES, ServerView};

pub use builder::{Assembler, Order, Policy};
use layout::Layout;
pub(crate) use memo::Memo;
use memo::{FittedEntry, FittedKey, PinKey, PreparedKey};
use names::Placement;
use prepare::Prepared;

impl Assembler {
    /// Per-alias settings whose alias no server has, one diagnostic per
    /// alias: policies, budgets, visibilities, then tool patterns (an
    /// alias under several is reported under the first).
    fn config_diagnostics(&self, placement: &Placement) -> Vec<ConfigDiagnostic> {
        let keys: std::collections::BTreeSet<&str> = placement
            .config_keys
            .iter()
            .flatten()
            .map(ServerKey::as_str)
            .collect();
        let settings = [
            (
                AliasSetting::Policy,
                self.policies.keys().collect::<Vec<_>>(),
            ),
            (AliasSetting::Budget, self.server_budgets.keys().collect()),
            (
                AliasSetting::Visibility,
                self.visibility.servers.keys().collect(),
            ),
            (
                AliasSetting::ToolVisibility,
                self.visibility.tools.keys().collect(),
            ),
        ];
        let mut out = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for (setting, aliases) in settings {
            for alias in aliases {
                if keys.contains(alias.as_str()) || !seen.insert(alias.as_str()) {
                    continue;
                }
                out.push(ConfigDiagnostic::unknown_alias(
                    setting,
                    alias.clone(),
                    keys.iter().copied(),
                ));
            }
        }
        out
    }

    /// The section with no servers.
    #[cfg(feature = "hub")]
    pub(crate) fn empty_assembly(&self) -> Assembly {
        Assembly::new(
            self.counter.counting(0),
            self.template.name(),
            String::new(),
            0,
            Vec::new(),
        )
    }

    /// Assembles the section for these servers.
    ///
    /// Fails on a template error, with [`ErrorKind::Drift`](crate::ErrorKind::Drift) for a server
    /// under `on_change = "fail"`, and with
    /// [`ErrorKind::InvalidConfig`](crate::ErrorKind::InvalidConfig) when an `on_change` other than
    /// `accept` is set without a [`Assembler::lock`]: review without a lock
    /// would let every server through unreviewed. Every problem with a
    /// server's own data is reported in its
    /// [`ServerReport::diagnostics`](crate::ServerReport::diagnostics). When no server has a
    /// block the section is empty (no heading either).
    pub fn assemble(&self, servers: &[ServerSnapshot]) -> Result<Assembly> {
        let refs: Vec<&ServerSnapshot> = servers.iter().collect();
        self.assemble_with(&refs, None)
    }

    /// Assembles, reusing per-server work from `memo` for servers whose
    /// version (given by the caller, who knows what changed; one per server)
    /// was seen before.
    pub(crate) fn assemble_with(
        &self,
        servers: &[&ServerSnapshot],
        mut memo: Option<(&[u64], &mut Memo)>,
    ) -> Result<Assembly> {
        let span = tracing::debug_span!(
            "assemble",
            servers = servers.len(),
            tokens = tracing::field::Empty
        );
        let _entered = span.enter();
        let fallbacks = self.counter.fallbacks();
        self.check_review_has_lock()?;
        let placement = names::place(servers, self.order);
        // What the model is sent: pins, names and stages see the filtered tools.
        let filtered = exposure::filtered(self, servers, &placement);
        let sent: Vec<&ServerSnapshot> = servers
            .iter()
            .zip(&filtered)
            .map(|(s, f)| f.as_ref().map_or(*s, |(kept, _)| kept))
            .collect();
        let servers = &sent[..];
        let kept = self.kept_names.as_deref();
        let (exposed, table) = exposure::expose(
            &self.tool_names,
            servers,
            &placement,
            &filtered,
            (kept, self.shown.as_deref()),
        );
        let mut session = self.template.session(0)?;
        // A block that runs out of template fuel, or grows past
        // MAX_BLOCK_BYTES, fits no budget: the ladder cuts it. The size cap
        // keeps an expensive template from making every rung count tokens
        // of a huge block.
        let mut measure = |view: &ServerView| -> Result<Render> {
            let block = self
                .block_memo
                .get_or_render(&self.template, view, || session.block(view))?;
            Ok(match block {
                Some(text) if text.len() <= MAX_BLOCK_BYTES => {
                    let tokens = self.count_pieces(&text);
                    Render::Block(Rendered { text, tokens })
                }
                _ => Render::OutOfFuel,
            })
        };
        let mut run = Run {
            servers,
            placement: &placement,
            exposed: &exposed,
            memo: memo.as_mut().map(|(versions, m)| {
                let generation = m.next_generation();
                (*versions, &mut **m, generation)
            }),
        };

        let mut prepared = self.prepare(&mut run, &mut measure)?;
        if self.dedup && self.dedup_across_servers {
            link_twins(&mut prepared);
        } else if self.dedup {
            link_same_servers(&mut prepared, servers, &placement);
        }
        // Fitted from here on; a host's cap starts again from `base` (kept
        // only then: holding it makes each fit clone its server).
        let base = self.host_cap.map(|_| prepared.clone());
        let mut out = self.fit_all(&mut run, prepared, self.total_budget, &mut measure)?;
        if let (Some(cap), Some(base)) = (self.host_cap, base) {
            out = self.fit_host_cap(cap, &base, out, &mut run, &mut measure)?;
        }
        if let Some((_, m, _)) = run.memo {
            m.evict();
        }
        let mut assembly = self.finish(out, &placement, fallbacks);
        if self.expose {
            assembly = assembly.with_names(Arc::new(table));
        }
        span.record("tokens", assembly.total_tokens());
        Ok(assembly)
    }

    /// The assembly from what fitting gave: the section and its count, each
    /// server's report and (when kept) exposure, the settings' diagnostics.
    fn finish(&self, out: Fitted, placement: &Placement, fallbacks: u64) -> Assembly {
        let Fitted {
            prepared,
            limits,
            mut fitted,
            layout,
        } = out;
        let total_tokens = self.count_section(&layout);
        // Kept for every server or for none (`Assembler::exposing`).
        let exposures = prepared.iter().filter_map(|p| p.exposure.clone()).collect();
        let reports = self.reports(prepared, &limits, &mut fitted, &layout, placement);
        Assembly::new(
            self.counter
                .counting(self.counter.fallbacks().saturating_sub(fallbacks)),
            self.template.name(),
            layout.text,
            total_tokens,
            reports,
        )
        .with_notes(self.config_diagnostics(placement))
        .with_exposures(exposures)
    }

    /// Steps 2 to 5 of the ladder for every server within their limits
    /// (their own budgets, then fair shares of `total`), and the section laid
    /// out.
    fn fit_all(
        &self,
        run: &mut Run<'_>,
        mut prepared: Vec<Arc<Prepared>>,
        total: Option<usize>,
        measure: &mut Measure<'_>,
    ) -> Result<Fitted> {
        let mut limits = self.token_limits(&prepared, total, measure)?;
        let mut fitted = self.fit(run, &mut prepared, &limits, measure)?;
        let layout = self.fit_total(&mut prepared, &mut fitted, &mut limits, total, measure)?;
        Ok(Fitted {
            prepared,
            limits,
            fitted,
            layout,
        })
    }

    /// Under a host's cap ([`Assembler::host_cap`]): fitted again from
    /// `base` with a smaller token total until the section also fits the
    /// cap in the host's unit. The token budgets still hold, in tokens.
    fn fit_host_cap(
        &self,
        cap: HostCap,
        base: &[Arc<Prepared>],
        mut out: Fitted,
        run: &mut Run<'_>,
        measure: &mut Measure<'_>,
    ) -> Result<Fitted> {
        let mut total = self.count_section(&out.layout);
        let mut steps = 0u32;
        while !cap.fits(&out.layout.text) && total > 0 {
            // Tokens to units is about proportional: scale the total,
            // then halve should that not settle in a few steps.
            let scaled = (total as u128 * cap.limit as u128
                / cap.measure(&out.layout.text).max(1) as u128) as usize;
            total = if steps < 8 {
                scaled.min(total - 1)
            } else {
                total / 2
            };
            steps += 1;
            let within = Some(self.total_budget.map_or(total, |t| t.min(total)));
            out = self.fit_all(run, base.to_vec(), within, measure)?;
        }
        Ok(out)
    }

    /// An `on_change` other than `accept` needs a lock to review against.
    fn check_review_has_lock(&self) -> Result<()> {
        if self.lock_ref().is_none()
            && let Some(on_change) = self.reviewing_on_change()
        {
            return Err(Error::new(
                ErrorKind::InvalidConfig,
                format!(
                    "on_change = \"{on_change}\" needs a lock to compare servers with (Assembler::lock, or --lock in the CLI); without one every server would go through unreviewed"
                ),
            ));
        }
        Ok(())
    }

    /// Each server's report, in section order: its budget, and the block
    /// that went into the section.
    fn reports(
        &self,
        prepared: Vec<Arc<Prepared>>,
        limits: &[Option<usize>],
        fitted: &mut [Option<Rendered>],
        layout: &Layout,
        placement: &Placement,
    ) -> Vec<ServerReport> {
        // Twins describe their namespace with the first server's text.
        let prepared_names: HashMap<String, Option<String>> = prepared
            .iter()
            .map(|p| (p.view.name.clone(), p.whole.clone()))
            .collect();
        let mut reports = Vec::with_capacity(prepared.len());
        for (k, p) in prepared.into_iter().enumerate() {
            let mut report = p.report.clone();
            report.budget = limits[k];
            report.index = placement.order[k];
            if let (Some(block), Some(span)) = (fitted[k].take(), layout.spans[k]) {
                report.included = true;
                report.text = block.text;
                report.tokens = block.tokens;
                report.span = Some(span);
            }
            if let Some(max) = self.namespace_chars {
                report.namespace = namespace::describe(&p, &prepared_names, max);
            }
            if report.trimmed() || !report.included {
                tracing::debug!(server = %report.name, tokens_before = report.tokens_before, tokens_after = report.tokens, budget = report.budget, removed = report.removed.len(), included = report.included, "trimmed");
            }
            reports.push(report);
        }
        reports
    }

    /// Prepares each server, in section order: sanitize, policy, untrimmed
    /// size, then step 1 of the budget ladder (de-duplication within the
    /// server). Shared with the memo: cloned only when a later stage changes
    /// one.
    fn prepare(&self, run: &mut Run<'_>, measure: &mut Measure<'_>) -> Result<Vec<Arc<Prepared>>> {
        let placement = run.placement;
        let mut prepared = Vec::with_capacity(placement.order.len());
        for (pos, &i) in placement.order.iter().enumerate() {
            let (name, renamed_from) = &placement.shown[pos];
            let config_key = placement.config_keys[i].as_ref().map(ServerKey::as_str);
            let (pinned, pin_fp) = self.pin_of(run, i, config_key)?;
            let key = run.version(i).map(|version| PreparedKey {
                version,
                name: name.clone(),
                visibility: self.visibility.fingerprint(config_key),
                pin: pin_fp,
                names: run.exposed[pos].fingerprint,
            });
            if let Some(hit) = run.lookup(&key, |m, k, g| m.prepared.get(k, g)) {
                prepared.push(hit);
                continue;
            }
            let (server, mut hits) = run.servers[i].within(&self.limits);
            let server = match config_key.and_then(|k| self.policies.get(k)) {
                Some(p) if !p.tools.overrides.is_empty() => {
                    std::borrow::Cow::Owned(p.tools.overridden(server.into_owned()))
                }
                _ => server,
            };
            hits.splice(0..0, server.limits.iter().copied());
            let (pin, effect) = &*pinned;
            // Held text is the pinned, sanitized text: not sanitized again
            // (sanitizing twice can dedent further), cut like sent text.
            let held = match effect {
                Effect::AsIs => None,
                Effect::Hold { text, .. } => {
                    Some(text.as_deref().map(|t| self.limits.cut_instructions(t)))
                }
                Effect::Drop => Some(None),
            };
            let mut p = Prepared::new(
                &server,
                name,
                renamed_from.as_deref(),
                config_key,
                self,
                held,
                run.exposed[pos].clone(),
            );
            if let Effect::Hold {
                unchanged_tools, ..
            } = effect
            {
                p.dedup_against = Some(unchanged_tools.clone());
            }
            // The report tells what the server sent, whatever was rendered.
            p.report.instructions = run.servers[i].instructions.state();
            p.report.pinned(pin.clone(), effect);
            p.pin = pin_fp;
            p.report.limit_hits(hits);
            if p.candidate() {
                let first = measure(&p.view)?;
                if first == Render::OutOfFuel {
                    p.report
                        .limit_hits(vec![LimitHit::new(Limit::RenderFuel, 0, 0)]);
                }
                // Unknown when it did not render: 0, and the limit says why.
                p.report.tokens_before = first.tokens().unwrap_or(0);
                p.untrimmed = Some(first);
                if self.dedup {
                    p.dedup_within(&server, self);
                }
            }
            let p = Arc::new(p);
            run.store(key, |m, k, g| m.prepared.insert(k, g, p.clone()));
            prepared.push(p);
        }
        Ok(prepared)
    }

    /// Input server `i` compared with the lock, and a fingerprint of what
    /// decides that (the pin and `on_change`) for the memo keys.
    fn pin_of(
        &self,
        run: &mut Run<'_>,
        i: usize,
        config_key: Option<&str>,
    ) -> Result<(Arc<(Pin, Effect)>, u64)> {
        let on_change = self.on_change_for(config_key);
        let lock = self.lock_ref();
        let entry = lock.and_then(|l| config_key.and_then(|k| l.get(k)));
        let fp = {
            let mut h = std::hash::DefaultHasher::new();
            (lock.is_some(), entry, on_change).hash(&mut h);
            h.finish()
        };
        let key = run.version(i).map(|version| PinKey { version, pin: fp });
        if let Some(hit) = run.lookup(&key, |m, k, g| m.pins.get(k, g)) {
            return Ok((hit, fp));
        }
        let decided = Arc::new(pin::decide::decide_sent(
            lock,
            run.servers[i],
            config_key,
            on_change,
            &self.limits,
            self.tool_filter_of(config_key),
        )?);
        run.store(key, |m, k, g| m.pins.insert(k, g, decided.clone()));
        Ok((decided, fp))
    }

    /// Each server's limit: its own budget, then its fair share of `total`
    /// when the servers' needs add up to more.
    fn token_limits(
        &self,
        prepared: &[Arc<Prepared>],
        total: Option<usize>,
        measure: &mut Measure<'_>,
    ) -> Result<Vec<Option<usize>>> {
        let mut limits: Vec<Option<usize>> = prepared.iter().map(|p| p.budget).collect();
        let Some(total) = total else {
            return Ok(limits);
        };
        let overhead = self.overhead(prepared.iter().filter(|p| p.candidate()).count())?;
        let available = total.saturating_sub(overhead);
        let mut needs = Vec::with_capacity(prepared.len());
        for (p, limit) in prepared.iter().zip(&limits) {
            needs.push(if p.candidate() {
                // A block that did not render needs more than there is.
                let n = measure(&p.view)?
                    .tokens()
                    .unwrap_or(available.saturating_add(1));
                limit.map_or(n, |l| n.min(l))
            } else {
                0
            });
        }
        if needs.iter().fold(0usize, |a, n| a.saturating_add(*n)) > available {
            let weights: Vec<u64> = prepared.iter().map(|p| p.weight).collect();
            let shares = budget::fair_shares(available, &needs, &weights);
            for (limit, share) in limits.iter_mut().zip(shares) {
                *limit = Some(limit.map_or(share, |l| l.min(share)));
            }
        }
        Ok(limits)
    }

    /// Steps 2 to 5 of the budget ladder, per server: fit the block into its
    /// limit.
    fn fit(
        &self,
        run: &mut Run<'_>,
        prepared: &mut [Arc<Prepared>],
        limits: &[Option<usize>],
        measure: &mut Measure<'_>,
    ) -> Result<Vec<Option<Rendered>>> {
        let mut fitted = vec![None; prepared.len()];
        for (k, p) in prepared.iter_mut().enumerate() {
            if !p.candidate() {
                continue;
            }
            let key = run
                .version(run.placement.order[k])
                .map(|version| FittedKey {
                    prepared: PreparedKey {
                        version,
                        name: p.view.name.clone(),
                        visibility: p.visibility,
                        pin: p.pin,
                        names: run.exposed[k].fingerprint,
                    },
                    twin_of: p.twin_of.clone(),
                    limit: limits[k],
                });
            if let Some(hit) = run.lookup(&key, |m, k, g| m.fitted.get(k, g)) {
                *p = hit.prepared;
                fitted[k] = hit.block;
                continue;
            }
            fitted[k] = Arc::make_mut(p).fit(limits[k], measure)?;
            let entry = FittedEntry {
                prepared: p.clone(),
                block: fitted[k].clone(),
            };
            run.store(key, |m, k, g| m.fitted.insert(k, g, entry));
        }
        Ok(fitted)
    }

    /// Lays the section out; with a `total` budget, token merges where blocks
    /// meet the body can cost a token or two, so the largest block shrinks
    /// until the whole section fits.
    fn fit_total(
        &self,
        prepared: &mut [Arc<Prepared>],
        fitted: &mut [Option<Rendered>],
        limits: &mut [Option<usize>],
        total: Option<usize>,
        measure: &mut Measure<'_>,
    ) -> Result<Layout> {
        let mut layout = self.layout(fitted)?;
        let Some(total) = total else {
            return Ok(layout);
        };
        while self.count_section(&layout) > total {
            let over = self.count_section(&layout) - total;
            let Some(k) = (0..fitted.len())
                .filter(|k| fitted[*k].is_some())
                .max_by_key(|k| (fitted[*k].as_ref().map_or(0, |f| f.tokens), *k))
            else {
                break;
            };
            let current = fitted[k].as_ref().map_or(0, |f| f.tokens);
            limits[k] = Some(current.saturating_sub(over.max(1)));
            let p = Arc::make_mut(&mut prepared[k]);
            p.reset_fit();
            let refit = p.fit(limits[k], measure)?;
            // A block that cannot shrink (say, one that renders empty) goes.
            fitted[k] = refit.filter(|b| b.tokens < current);
            if fitted[k].is_none() {
                p.omit_for_total();
            }
            layout = self.layout(fitted)?;
        }
        Ok(layout)
    }
}

/// Step 1 of the budget ladder (de-duplication) across servers:
/// instructions identical to an earlier server's become a reference to it.
fn link_twins(prepared: &mut [Arc<Prepared>]) {
    let mut seen: HashMap<&str, String> = HashMap::new();
    let mut twins = Vec::new();
    for (k, p) in prepared.iter().enumerate() {
        if let Some(whole) = p.whole.as_deref() {
            match seen.get(whole) {
                Some(first) => twins.push((k, first.clone())),
                None => {
                    seen.insert(whole, p.view.name.clone());
                }
            }
        }
    }
    for (k, first) in twins {
        Arc::make_mut(&mut prepared[k]).make_twin(first);
    }
}

/// The same server connected twice (two aliases, `markdown-vault-mcp`
/// #1252): a later server whose `serverInfo`, instructions and tools are
/// byte-identical to an earlier one's, neither differing from its pin, shows
/// a one-line reference to it instead of the text again
/// ([`RemovalReason::SameAsServer`](crate::report::RemovalReason::SameAsServer)).
/// Unlike [`Assembler::dedup_across_servers`], nothing of one server can
/// stand in for a different one: only a server identical in everything the
/// model reads of it is folded, so no rule moves to another server's scope.
fn link_same_servers(
    prepared: &mut [Arc<Prepared>],
    servers: &[&ServerSnapshot],
    placement: &Placement,
) {
    let identity = |s: &ServerSnapshot| {
        serde_json::to_string(&(&s.server_info, s.instructions.raw(), &s.tools)).unwrap_or_default()
    };
    // Cheap first: only servers with the same instructions are serialized.
    let mut by_text: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (k, &i) in placement.order.iter().enumerate() {
        let p = &prepared[k];
        let settled = !matches!(p.report.pin.state, PinState::New | PinState::Changed);
        if let (Some(raw), true, true) = (servers[i].instructions.raw(), settled, p.candidate()) {
            by_text.entry(raw).or_default().push(k);
        }
    }
    let mut twins = Vec::new();
    for group in by_text.values().filter(|g| g.len() > 1) {
        let mut firsts: Vec<(String, usize)> = Vec::new();
        for &k in group {
            let id = identity(servers[placement.order[k]]);
            match firsts.iter().find(|(f, _)| *f == id) {
                Some((_, first)) => twins.push((k, prepared[*first].view.name.clone())),
                None => firsts.push((id, k)),
            }
        }
    }
    for (k, first) in twins {
        Arc::make_mut(&mut prepared[k]).make_twin(first);
    }
}

/// What fitting gave, per server in section order, and the section.
struct Fitted {
    prepared: Vec<Arc<Prepared>>,
    limits: Vec<Option<usize>>,
    fitted: Vec<Option<Rendered>>,
    layout: Layout,
}

/// One assembly's inputs and its memo (with the versions and generation).
struct Run<'r> {
    servers: &'r [&'r ServerSnapshot],
    placement: &'r Placement,
    /// Per section position: the names the model sees for its tools.
    exposed: &'r [Arc<exposure::ServerNames>],
    memo: Option<(&'r [u64], &'r mut Memo, u64)>,
}

impl Run<'_> {
    /// The caller's version of input server `i`, when there is a memo.
    fn version(&self, i: usize) -> Option<u64> {
        self.memo.as_ref().map(|(versions, _, _)| versions[i])
    }

    fn lookup<K, V>(
        &mut self,
        key: &Option<K>,
        get: impl FnOnce(&mut Memo, &K, u64) -> Option<V>,
    ) -> Option<V> {
        let (key, (_, memo, generation)) = (key.as_ref()?, self.memo.as_mut()?);
        get(memo, key, *generation)
    }

    fn store<K>(&mut self, key: Option<K>, put: impl FnOnce(&mut Memo, K, u64)) {
        if let (Some(key), Some((_, memo, generation))) = (key, self.memo.as_mut()) {
            put(memo, key, *generation);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Tool;

    #[test]
    fn a_visibility_change_misses_the_memo() {
        let s = ServerSnapshot::new("x")
            .with_alias("x")
            .with_instructions("List billing periods. Be brief.")
            .with_tool(Tool::new("list_periods", "List billing periods."));
        let mut memo = Memo::default();
        let loaded = Assembler::new();
        let deferred = Assembler::new().defer("x");
        let first = loaded
            .assemble_with(&[&s], Some((&[1], &mut memo)))
            .unwrap();
        assert!(!first.text().contains("List billing periods. Be brief."));
        // Same server version, same memo, tools now deferred.
        let second = deferred
            .assemble_with(&[&s], Some((&[1], &mut memo)))
            .unwrap();
        assert_eq!(second.text(), deferred.assemble(&[s]).unwrap().text());
        assert!(second.text().contains("List billing periods. Be brief."));
    }
}
