//! `mcp-preamble preview`.

use std::process::ExitCode;

use mcp_preamble::lint::{HostProfile, HostSurvival, Linter};
use mcp_preamble::report::{AliasSetting, ConfigDiagnostic};
use mcp_preamble::settings::Settings;
use mcp_preamble::{Assembler, ServerSnapshot};

use crate::args::{Preview, Target, namespace_chars};
use crate::emit::{emit, emit_err, emit_preview, needed_trimming, pending_review, unmatched_rules};
use crate::error::CliError;
use crate::load::load_inputs;
use crate::review::Review;
use crate::source::Source;

/// The policy file's settings (if any) with the flags over them: a flag wins.
fn settings(p: &Preview) -> Result<Settings, mcp_preamble::Error> {
    let mut settings = match &p.policy {
        Some(path) => Settings::from_path(path)?,
        None => Settings::new(),
    };
    let flags = &mut settings.overrides;
    flags.budget = p.budget;
    flags.total_budget = p.total_budget;
    flags.template.clone_from(&p.template);
    flags.encoding.clone_from(&p.encoding);
    flags.tool_names.clone_from(&p.tool_names);
    flags.model.clone_from(&p.model);
    flags.tokenizer.clone_from(&p.tokenizer);
    flags.defer_over = p.defer_over;
    // Budgets by alias are warned about by the CLI, not as policies.
    for (alias, n) in &p.server_budget {
        let server = settings.server_overrides.entry(alias.clone()).or_default();
        server.budget = Some(*n);
    }
    for alias in &p.deferred {
        let server = settings.server_overrides.entry(alias.clone()).or_default();
        server.deferred = true;
    }
    Ok(settings)
}

/// The assembler of `settings`, with the flags the policy file has no key for.
async fn assembler(
    p: &Preview,
    settings: &Settings,
    review: &Review,
) -> Result<Assembler, mcp_preamble::Error> {
    let mut a = Assembler::from_settings(settings)?;
    if let Some(lock) = review.load().await? {
        a = a.lock(lock);
    }
    if p.target == Target::Namespace {
        a = a.namespace_chars(namespace_chars());
    }
    Ok(a)
}

/// A `--server-budget` or `--deferred` alias that no server has would be
/// ignored silently: warned about with the closest alias and the known
/// ones. Returns whether there was one.
fn warn_unknown_flag_aliases(
    p: &Preview,
    snapshots: &[ServerSnapshot],
    sources: &[Source],
) -> bool {
    // Settings are looked up by the shown name; a failed server keeps its alias.
    let mut known: Vec<String> = snapshots.iter().map(|s| s.display_name()).collect();
    known.extend(sources.iter().map(|s| s.alias.clone()));
    known.sort();
    known.dedup();
    let budgets = p
        .server_budget
        .iter()
        .map(|(alias, _)| ("--server-budget", alias));
    let deferred = p.deferred.iter().map(|alias| ("--deferred", alias));
    let mut any = false;
    for (flag, alias) in budgets.chain(deferred) {
        if known.contains(alias) {
            continue;
        }
        any = true;
        let unknown = ConfigDiagnostic::unknown_alias(
            AliasSetting::Budget,
            alias.clone(),
            known.iter().map(String::as_str),
        );
        let hint = match &unknown {
            ConfigDiagnostic::UnknownAlias {
                closest: Some(k), ..
            } => format!(" (did you mean {k:?}?)"),
            _ => String::new(),
        };
        let list: Vec<String> = known.iter().map(|a| format!("{a:?}")).collect();
        emit_err(&format!(
            "mcp-preamble: warning: {flag} {alias:?}: no server has that alias{hint} (known: {})",
            if list.is_empty() {
                "none".to_string()
            } else {
                list.join(", ")
            }
        ));
    }
    any
}

/// `--hosts HOSTS`: what of each server's instructions survives each host,
/// by the server's shown name.
fn host_survival(
    p: &Preview,
    settings: &Settings,
    snapshots: &[ServerSnapshot],
) -> Result<Vec<(String, Vec<HostSurvival>)>, mcp_preamble::Error> {
    let Some(list) = &p.hosts else {
        return Ok(Vec::new());
    };
    // The same budget the assembly uses: the flag over the policy file.
    let budget = settings
        .effective()
        .budget
        .unwrap_or(mcp_preamble::lint::DEFAULT_MAX_TOKENS);
    let linter = Linter::new()
        .token_counter(settings.token_counter()?)
        .hosts(HostProfile::parse_list(list, budget)?);
    Ok(snapshots
        .iter()
        .map(|s| (s.display_name(), linter.check(s, None).hosts))
        .collect())
}

pub async fn preview(mut p: Preview) -> Result<ExitCode, CliError> {
    let settings = settings(&p)?;
    p.connect.client = settings.client.clone();
    let review = Review::open(p.lock.as_deref(), p.state.as_deref())?;
    let assembler = assembler(&p, &settings, &review).await?;
    for w in settings.counter_warnings() {
        emit_err(&format!("mcp-preamble: warning: {w}"));
    }
    let mut gathered = load_inputs(&p.files, &p.connect).await?;
    let snapshots = std::mem::take(&mut gathered.snapshots);
    let sources = std::mem::take(&mut gathered.sources);
    let unknown_flag_alias = warn_unknown_flag_aliases(&p, &snapshots, &sources);
    let failed = sources.iter().any(|s| !s.ok);
    // User templates run here: the time ceiling bounds this, not connecting.
    let assembly = {
        let _clock = crate::memory::timed();
        assembler.assemble(&snapshots)?
    };
    gathered.close().await;
    // `--server-budget` and `--deferred` aliases are warned about above,
    // with the known ones; a server that failed has its own row.
    let mut unknown_alias = unknown_flag_alias;
    for d in assembly.notes() {
        let quiet = match d {
            ConfigDiagnostic::UnknownAlias {
                setting:
                    AliasSetting::Budget | AliasSetting::Visibility | AliasSetting::ToolVisibility,
                ..
            } => true,
            ConfigDiagnostic::UnknownAlias {
                setting: AliasSetting::Policy,
                alias,
                ..
            } => sources.iter().any(|s| !s.ok && s.alias == *alias),
            _ => false,
        };
        if !quiet {
            unknown_alias = true;
            emit_err(&format!("mcp-preamble: warning: {d}"));
        }
    }
    if let Some(host) = p.serve_as {
        crate::show::emit_reads(&assembler, host, &snapshots)?;
        return Ok(if failed {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        });
    }
    let hosts = host_survival(&p, &settings, &snapshots)?;
    emit_preview(&assembly, &sources, &hosts, p.json);
    if p.target == Target::Namespace && !p.json {
        emit_namespaces(&assembly);
    }
    if let Review::Shared(state) = &review
        && !p.json
    {
        emit_gateways_pending(state).await;
    }
    Ok(
        if failed
            || (p.check
                && (needed_trimming(&assembly)
                    || pending_review(&assembly)
                    || unknown_alias
                    || unmatched_rules(&assembly)))
        {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        },
    )
}

/// `--state`: the changes the gateways hold for review, one line each
/// (what a gateway recorded; the diff is in `pin`'s output).
async fn emit_gateways_pending(state: &mcp_preamble::state::SharedState) {
    let pending = match state.pending().await {
        Ok(p) => p,
        Err(e) => {
            emit_err(&format!("mcp-preamble: warning: {e}"));
            return;
        }
    };
    if pending.is_empty() {
        return;
    }
    let mut text = "\nheld for review on the gateways:\n".to_string();
    for (alias, held) in &pending {
        let pin = &held["pin"];
        let mut what = Vec::new();
        if pin["instructions_changed"] == true {
            what.push("instructions changed".to_string());
        }
        for (key, label) in [
            ("tools_added", "tools added"),
            ("tools_removed", "tools removed"),
            ("tools_redescribed", "tools redescribed"),
            ("skills_added", "skills added"),
            ("skills_removed", "skills removed"),
            ("skills_changed", "skills changed"),
        ] {
            if let Some(names) = pin[key].as_array().filter(|n| !n.is_empty()) {
                let names: Vec<&str> = names.iter().filter_map(|n| n.as_str()).collect();
                what.push(format!("{label}: {}", names.join(", ")));
            }
        }
        let state = pin["state"].as_str().unwrap_or("changed");
        text.push_str(&format!("  {alias}: {state}"));
        if !what.is_empty() {
            text.push_str(&format!(" ({})", what.join("; ")));
        }
        text.push('\n');
    }
    emit(&mcp_preamble::text::terminal_safe(&text));
}

/// `--target namespace`: each server's namespace description after the report.
fn emit_namespaces(assembly: &mcp_preamble::Assembly) {
    let mut text = format!(
        "\nnamespace descriptions (at most {} characters each):\n",
        namespace_chars()
    );
    for r in assembly.servers() {
        if let Some(ns) = &r.namespace {
            text.push_str(&format!(
                "\n{} ({} characters, {} units left out):\n{}\n",
                r.name, ns.chars, ns.units_left_out, ns.text
            ));
        }
    }
    emit(&mcp_preamble::text::terminal_safe(&text));
}
