//! `mcp-preamble preview`.

use std::process::ExitCode;

use mcp_preamble::{
    AliasSetting, Assembler, ConfigDiagnostic, Encoding, HostProfile, HostSurvival, Linter, Lock,
    PolicyFile, ServerSnapshot, Template,
};

use crate::CliError;
use crate::args::Preview;
use crate::emit::{emit_err, emit_preview, needed_trimming, pending_review};
use crate::load::{Source, load_inputs};

fn assembler(p: &Preview, policy: Option<&PolicyFile>) -> Result<Assembler, mcp_preamble::Error> {
    let mut a = match policy {
        Some(file) => Assembler::from_policy(file)?,
        None => Assembler::new(),
    };
    if let Some(name) = &p.template {
        a = a.template(if std::path::Path::new(name).is_file() {
            Template::from_path(name)
        } else {
            Template::builtin(name)
        }?);
    }
    if let Some(name) = &p.encoding {
        a = a.encoding(Encoding::from_name(name)?);
    }
    if let Some(n) = p.budget {
        a = a.budget(n);
    }
    for (alias, n) in &p.server_budget {
        a = a.server_budget(alias.clone(), *n);
    }
    if let Some(n) = p.total_budget {
        a = a.total_budget(n);
    }
    for alias in &p.deferred {
        a = a.defer(alias.clone());
    }
    if let Some(n) = p.defer_over {
        a = a.defer_over(n);
    }
    if let Some(path) = &p.lock {
        a = a.lock(Lock::from_path(path)?);
    }
    Ok(a)
}

/// A `--server-budget` alias that no server has would be ignored silently.
fn warn_unknown_budget_aliases(p: &Preview, snapshots: &[ServerSnapshot], sources: &[Source]) {
    // Budgets are looked up by the shown name; a failed server keeps its alias.
    let mut known: Vec<String> = snapshots.iter().map(|s| s.display_name()).collect();
    known.extend(sources.iter().map(|s| s.alias.clone()));
    known.sort();
    known.dedup();
    for (alias, _) in &p.server_budget {
        if !known.contains(alias) {
            let list: Vec<String> = known.iter().map(|a| format!("{a:?}")).collect();
            emit_err(&format!(
                "mcp-preamble: warning: --server-budget {alias:?}: no server has that alias (known: {})",
                if list.is_empty() {
                    "none".to_string()
                } else {
                    list.join(", ")
                }
            ));
        }
    }
}

/// `--as HOSTS`: what of each server's instructions survives each host,
/// by the server's shown name.
fn host_survival(
    p: &Preview,
    policy: Option<&PolicyFile>,
    snapshots: &[ServerSnapshot],
) -> Result<Vec<(String, Vec<HostSurvival>)>, mcp_preamble::Error> {
    let Some(list) = &p.as_hosts else {
        return Ok(Vec::new());
    };
    let budget = p.budget.unwrap_or(mcp_preamble::DEFAULT_MAX_TOKENS);
    let encoding = crate::load::encoding(p.encoding.as_deref(), policy)?;
    let linter = Linter::new()
        .encoding(encoding)
        .hosts(HostProfile::parse_list(list, budget)?);
    Ok(snapshots
        .iter()
        .map(|s| (s.display_name(), linter.check(s, None).hosts))
        .collect())
}

pub async fn preview(p: Preview) -> Result<ExitCode, CliError> {
    let policy = p.policy.as_deref().map(PolicyFile::from_path).transpose()?;
    let assembler = assembler(&p, policy.as_ref())?;
    let mut gathered = load_inputs(&p.files, &p.connect).await?;
    let snapshots = std::mem::take(&mut gathered.snapshots);
    let sources = std::mem::take(&mut gathered.sources);
    warn_unknown_budget_aliases(&p, &snapshots, &sources);
    let failed = sources.iter().any(|s| !s.ok);
    let assembly = assembler.assemble(&snapshots)?;
    gathered.close().await;
    // `--server-budget` aliases are warned about above, with the known ones;
    // a server that failed has its own row.
    for d in assembly.notes() {
        let quiet = match d {
            ConfigDiagnostic::UnknownAlias {
                setting: AliasSetting::Budget,
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
            emit_err(&format!("mcp-preamble: warning: {d}"));
        }
    }
    let hosts = host_survival(&p, policy.as_ref(), &snapshots)?;
    emit_preview(&assembly, &sources, &hosts, p.json);
    Ok(
        if failed || (p.check && (needed_trimming(&assembly) || pending_review(&assembly))) {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        },
    )
}
