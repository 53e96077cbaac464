//! `mcp-preamble lint`.

use std::process::ExitCode;

use mcp_preamble::{Encoding, McpConfig, terminal_safe};

use crate::CliError;
use crate::args::{LintArgs, LintFormat};
use crate::emit::{emit, emit_err, json_safe};
use crate::load::{gather, load_file, require_input};

/// Lints files and a config's servers. Exit 2 when a server could not be
/// linted (so an incomplete lint never passes), else 1 when a finding is at
/// or above `--deny`, else 0.
pub async fn lint(a: LintArgs) -> Result<ExitCode, CliError> {
    let encoding = Encoding::from_name(&a.encoding)?;
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
    for file in &a.files {
        let source = file.display().to_string();
        match load_file(file) {
            Ok(s) => servers.push(linter.check(&s, Some(&source))),
            Err(e) => failures.push((source, e.to_string())),
        }
    }
    if let Some(path) = &a.connect.config {
        let origin = path.display().to_string();
        let mut gathered = gather(&McpConfig::from_path(path)?, &a.connect).await;
        gathered.close().await;
        for s in &gathered.snapshots {
            servers.push(linter.check(s, Some(&origin)));
        }
        for f in gathered.sources.iter().filter(|c| !c.ok) {
            let error = f.error.as_deref().unwrap_or("failed");
            failures.push((origin.clone(), format!("server {}: {error}", f.alias)));
        }
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
