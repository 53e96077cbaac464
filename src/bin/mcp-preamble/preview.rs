//! `mcp-preamble preview`.

use std::process::ExitCode;

use mcp_preamble::{Assembler, Encoding, McpConfig, Template, load_server_file};

use crate::CliError;
use crate::args::Preview;
use crate::emit::{emit, needed_trimming, text_report};
use crate::load::{Source, gather};

fn assembler(p: &Preview) -> Result<Assembler, mcp_preamble::Error> {
    let template = if std::path::Path::new(&p.template).is_file() {
        Template::from_path(&p.template)
    } else {
        Template::builtin(&p.template)
    }?;
    let encoding = Encoding::from_name(&p.encoding)?;
    let mut a = Assembler::new().template(template).encoding(encoding);
    if let Some(n) = p.budget {
        a = a.budget(n);
    }
    for (alias, n) in &p.server_budget {
        a = a.server_budget(alias.clone(), *n);
    }
    if let Some(n) = p.total_budget {
        a = a.total_budget(n);
    }
    Ok(a)
}

pub async fn preview(p: Preview) -> Result<ExitCode, CliError> {
    let assembler = assembler(&p)?;
    let mut snapshots = Vec::new();
    let mut sources = Vec::new();
    let mut failed = false;
    for file in &p.files {
        let alias = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        match load_server_file(file) {
            Ok(mut s) => {
                if s.alias.is_none() {
                    s.alias = Some(alias);
                }
                snapshots.push(s);
            }
            Err(e) => {
                failed = true;
                eprintln!("mcp-preamble: {}: {e}", file.display());
                sources.push(Source {
                    alias,
                    source: "file",
                    ok: false,
                    error: Some(e.to_string()),
                    stderr: String::new(),
                    elapsed_ms: 0,
                });
            }
        }
    }
    let mut live = Vec::new();
    if let Some(path) = &p.connect.config {
        let gathered = gather(&McpConfig::from_path(path)?, &p.connect).await;
        failed |= gathered.sources.iter().any(|c| !c.ok);
        snapshots.extend(gathered.snapshots);
        sources.extend(gathered.sources);
        live = gathered.live;
    }
    if p.files.is_empty() && p.connect.config.is_none() {
        return Err(CliError::NoInput);
    }
    let assembly = assembler.assemble(&snapshots)?;
    for c in live {
        c.close().await;
    }
    if p.json {
        let report = serde_json::json!({ "assembly": assembly, "connections": sources });
        emit(&(serde_json::to_string_pretty(&report).unwrap_or_default() + "\n"));
    } else {
        emit(&text_report(&assembly, &sources));
    }
    Ok(if failed || (p.check && needed_trimming(&assembly)) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
