//! `mcp-preamble lint`.

use std::collections::BTreeMap;
use std::process::ExitCode;

use mcp_preamble::connect::Handshake;
use mcp_preamble::files::McpConfig;
use mcp_preamble::lint::{Linter, ServerLint};
use mcp_preamble::report::{AliasSetting, ConfigDiagnostic};
use mcp_preamble::settings::{PolicyFile, Settings};
use mcp_preamble::text::terminal_safe;
use mcp_preamble::{Era, ServerSnapshot};

use crate::args::{LintArgs, LintFormat};
use crate::emit::{emit, emit_err};
use crate::error::CliError;
use crate::load::{gather, gather_with, load_file_eras, require_input};
use mcp_preamble::text::json_safe;

/// Lints files and a config's servers. Exit 2 when a server could not be
/// linted (so an incomplete lint never passes), else 1 when a finding is at
/// or above `--deny`, else 0.
pub async fn lint(mut a: LintArgs) -> Result<ExitCode, CliError> {
    let policy = a.policy.as_deref().map(PolicyFile::from_path).transpose()?;
    if let Some(policy) = &policy {
        a.connect.client = policy.client.clone();
    }
    // The file's settings with the flags over them.
    let mut settings = policy
        .as_ref()
        .map_or_else(Settings::new, |p| p.settings.clone());
    settings.overrides.encoding.clone_from(&a.encoding);
    settings.overrides.model.clone_from(&a.model);
    settings.overrides.tokenizer.clone_from(&a.tokenizer);
    let counter = settings.token_counter()?;
    for w in settings.counter_warnings() {
        emit_err(&format!("mcp-preamble: warning: {w}"));
    }
    require_input(&a.files, &a.connect)?;
    let linter = linter(&a, &settings)?.token_counter(counter);
    let Linted {
        servers,
        failures,
        known,
    } = lint_inputs(&a, &settings, &linter).await?;
    let mut report = mcp_preamble::lint::LintReport::new(servers);
    if let (Some(policy), Some(path)) = (&policy, &a.policy) {
        // A table for an alias no server has is a finding (MCP017).
        let known: Vec<&str> = known.iter().map(String::as_str).collect();
        report.add_policy(
            path.display().to_string(),
            linter.check_policy(policy, &known),
        );
    }
    for (source, error) in failures {
        report.add_failure(source, error);
    }
    // Printed as the report keeps them: with secrets redacted.
    for (source, error) in report.failures() {
        emit_err(&format!("mcp-preamble: {source}: {error}"));
    }
    // Messages quote tool names as sent; the text report has no escapes of
    // its own, so all of it can go through terminal_safe.
    let out = match a.format {
        LintFormat::Text => terminal_safe(&report.to_text()).into_owned(),
        LintFormat::Json => json_safe(&report.to_json()).into_owned() + "\n",
        LintFormat::Sarif => json_safe(&report.to_sarif()).into_owned() + "\n",
    };
    emit(&out);
    if !report.failures().is_empty() {
        Err(CliError::LintIncomplete)
    } else if report.count_at_least(a.deny) > 0 {
        Ok(ExitCode::from(1))
    } else {
        Ok(ExitCode::SUCCESS)
    }
}

/// The linter of the flags, with the policy's tool filters (its counter is
/// set by the caller).
fn linter(a: &LintArgs, settings: &Settings) -> Result<Linter, CliError> {
    let mut linter = Linter::new().max_tokens(a.max_tokens);
    if let Some(list) = &a.hosts {
        linter = linter.hosts(mcp_preamble::lint::HostProfile::parse_list(
            list,
            a.max_tokens,
        )?);
    }
    for given in &a.models {
        let (name, file) = match given.split_once('=') {
            Some((name, file)) => (name, Some(std::path::Path::new(file))),
            None => (given.as_str(), None),
        };
        linter = linter.compare(mcp_preamble::tokens::Model::from_name(name)?.counter(file)?);
    }
    for code in &a.allow {
        linter = linter.allow(*code);
    }
    for (alias, s) in &settings.servers {
        if let Some(filter) = &s.tools {
            linter = linter.tool_filter(alias.clone(), filter.clone());
        }
    }
    Ok(linter)
}

/// What [`lint_inputs`] found.
struct Linted {
    servers: Vec<ServerLint>,
    /// `(source, error)` of each server that could not be linted.
    failures: Vec<(String, String)>,
    /// The aliases given, for the policy's unknown ones.
    known: Vec<String>,
}

/// Lints the files, then the config's servers (if any), leaving out the
/// servers the settings exclude.
async fn lint_inputs(
    a: &LintArgs,
    settings: &Settings,
    linter: &Linter,
) -> Result<Linted, CliError> {
    let mut servers = Vec::new();
    let mut failures = Vec::new();
    let mut known = Vec::new();
    for file in &a.files {
        let source = file.display().to_string();
        // A capture with both handshakes is linted with both (MCP015).
        let loaded = load_file_eras(file);
        if let Some(s) = loaded.as_ref().ok().and_then(|all| all.first()) {
            known.push(s.display_name());
        }
        match loaded {
            Ok(all) if all.first().is_some_and(|s| settings.excludes(s)) => {}
            Ok(all) => servers.extend(linter.check_connects(&all, Some(&source))),
            Err(e) => failures.push((source, e.to_string())),
        }
    }
    if let Some(path) = &a.connect.config {
        let origin = path.display().to_string();
        let config = McpConfig::from_path(path)?;
        let mut gathered = gather(&config, &a.connect).await;
        gathered.close().await;
        known.extend(gathered.sources.iter().map(|s| s.alias.clone()));
        for f in gathered.sources.iter().filter(|c| !c.ok) {
            let error = f.error.as_deref().unwrap_or("failed");
            failures.push((origin.clone(), format!("server {}: {error}", f.alias)));
        }
        let mut runs: Vec<Vec<ServerSnapshot>> = gathered
            .snapshots
            .into_iter()
            .filter(|s| !settings.excludes(s))
            .map(|s| vec![s])
            .collect();
        connect_again(&config, a, &mut runs, &mut failures, &origin).await;
        for run in &runs {
            servers.extend(linter.check_connects(run, Some(&origin)));
        }
    }
    Ok(Linted {
        servers,
        failures,
        known,
    })
}

/// The later connects of `--connects` and `--eras`, appended to each
/// server's run (its first snapshot first). Each round connects to the
/// servers that answered the first time, all at once and live (never from
/// the cache), so one server's connects follow one another. A server that
/// fails a later connect of `--connects` is a failure: its lint would be
/// incomplete. One that cannot connect in the other era is only warned
/// about, since many servers speak one era.
async fn connect_again(
    config: &McpConfig,
    a: &LintArgs,
    runs: &mut [Vec<ServerSnapshot>],
    failures: &mut Vec<(String, String)>,
    origin: &str,
) {
    let index: BTreeMap<String, usize> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, run)| Some((run.first()?.alias.clone()?, i)))
        .collect();
    let subset = |keep: &dyn Fn(&str) -> bool| McpConfig {
        origin: config.origin.clone(),
        servers: config
            .servers
            .iter()
            .filter(|e| index.contains_key(&e.alias) && keep(&e.alias))
            .cloned()
            .collect(),
    };
    let n = a.connects;
    for k in 2..=n {
        let mut again =
            gather_with(&subset(&|_| true), &a.connect, &a.connect.handshake, false).await;
        again.close().await;
        for s in again.snapshots {
            if let Some(&i) = s.alias.as_ref().and_then(|alias| index.get(alias)) {
                runs[i].push(s);
            }
        }
        for f in again.sources.iter().filter(|c| !c.ok) {
            let error = f.error.as_deref().unwrap_or("failed");
            failures.push((
                origin.to_string(),
                format!("server {}: connect {k} of {n}: {error}", f.alias),
            ));
        }
    }
    if !a.eras {
        return;
    }
    // Each server's first era, fixed before the other era's snapshots are added.
    let first_era: BTreeMap<String, Era> = index
        .iter()
        .filter_map(|(alias, &i)| Some((alias.clone(), runs[i].first()?.era)))
        .collect();
    let era_of = |alias: &str| first_era.get(alias).copied();
    for (from, to, handshake) in [
        (Era::Modern, "initialize", Handshake::Legacy),
        (
            Era::Legacy,
            "server/discover",
            Handshake::Pinned("2026-07-28".to_string()),
        ),
    ] {
        let todo = subset(&|alias| era_of(alias) == Some(from));
        if todo.servers.is_empty() {
            continue;
        }
        let mut other = gather_with(&todo, &a.connect, &handshake, false).await;
        other.close().await;
        for s in other.snapshots {
            if let Some(&i) = s.alias.as_ref().and_then(|alias| index.get(alias)) {
                runs[i].push(s);
            }
        }
        for f in other.sources.iter().filter(|c| !c.ok) {
            let error = f.error.as_deref().unwrap_or("failed");
            emit_err(&format!(
                "mcp-preamble: warning: server {}: no {to} to compare with (MCP015): {error}",
                f.alias
            ));
        }
    }
}

/// Warns about each `[servers.<alias>]` no server has, with the closest
/// known alias.
pub fn warn_unknown_aliases(policy: &PolicyFile, known: &[String]) {
    for alias in policy.servers.keys() {
        if !known.contains(alias) {
            let unknown = ConfigDiagnostic::unknown_alias(
                AliasSetting::Policy,
                alias.clone(),
                known.iter().map(String::as_str),
            );
            emit_err(&format!("mcp-preamble: warning: {unknown}"));
        }
    }
}
