//! `mcp-preamble lint`.

use std::process::ExitCode;

use mcp_preamble::{Encoding, McpConfig, PolicyFile, ServerSnapshot, terminal_safe};

use crate::CliError;
use crate::args::{LintArgs, LintFormat};
use crate::emit::{emit, emit_err};
use crate::load::{gather, load_file, require_input};
use mcp_preamble::json_safe;

/// Lints files and a config's servers. Exit 2 when a server could not be
/// linted (so an incomplete lint never passes), else 1 when a finding is at
/// or above `--deny`, else 0.
pub async fn lint(a: LintArgs) -> Result<ExitCode, CliError> {
    let policy = a.policy.as_deref().map(PolicyFile::from_path).transpose()?;
    let encoding = match (
        &a.encoding,
        policy.as_ref().and_then(|p| p.defaults.encoding.as_ref()),
    ) {
        (Some(name), _) | (None, Some(name)) => Encoding::from_name(name)?,
        (None, None) => Encoding::O200kBase,
    };
    require_input(&a.files, &a.connect)?;
    let mut linter = mcp_preamble::Linter::new()
        .encoding(encoding)
        .max_tokens(a.max_tokens);
    if let Some(list) = &a.hosts {
        linter = linter.hosts(mcp_preamble::HostProfile::parse_list(list, a.max_tokens)?);
    }
    for code in &a.allow {
        linter = linter.allow(*code);
    }
    let mut servers = Vec::new();
    let mut failures = Vec::new();
    let mut known = Vec::new();
    for file in &a.files {
        let source = file.display().to_string();
        let loaded = load_file(file);
        if let Ok(s) = &loaded {
            known.push(s.display_name());
        }
        match loaded {
            Ok(s) if excluded(policy.as_ref(), &s) => {}
            Ok(s) => servers.push(linter.check(&s, Some(&source))),
            Err(e) => failures.push((source, e.to_string())),
        }
    }
    if let Some(path) = &a.connect.config {
        let origin = path.display().to_string();
        let mut gathered = gather(&McpConfig::from_path(path)?, &a.connect).await;
        gathered.close().await;
        for s in &gathered.snapshots {
            if !excluded(policy.as_ref(), s) {
                servers.push(linter.check(s, Some(&origin)));
            }
        }
        known.extend(gathered.sources.iter().map(|s| s.alias.clone()));
        for f in gathered.sources.iter().filter(|c| !c.ok) {
            let error = f.error.as_deref().unwrap_or("failed");
            failures.push((origin.clone(), format!("server {}: {error}", f.alias)));
        }
    }
    if let Some(policy) = &policy {
        warn_unknown_aliases(policy, &known);
    }
    let mut report = mcp_preamble::LintReport::new(servers);
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

/// Whether the policy file leaves this server out.
pub fn excluded(policy: Option<&PolicyFile>, s: &ServerSnapshot) -> bool {
    policy.is_some_and(|p| p.servers.get(&s.display_name()).is_some_and(|s| s.exclude))
}

/// Warns about each `[servers.<alias>]` no server has.
pub fn warn_unknown_aliases(policy: &PolicyFile, known: &[String]) {
    for alias in policy.servers.keys() {
        if !known.contains(alias) {
            emit_err(&format!(
                "mcp-preamble: warning: policy for {alias:?}: no server has this alias"
            ));
        }
    }
}
