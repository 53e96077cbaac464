//! `mcp-preamble show --host HOST`: per server, what that host's model
//! reads after `install` (issue 51.8): the text wrap serves, where the host
//! reads it (the host table's rule), its length against the host's cap,
//! what was cut, and the tools as listed. The same shaping as `wrap --as
//! HOST` (`Wrapper::model_reads`), offline; `preview --as HOST` prints the
//! same with its own budgets and lock.

use std::process::ExitCode;

use mcp_preamble::serve::{ModelReads, ServeAs, Wrapper};
use mcp_preamble::{Assembler, ServerSnapshot};

use crate::args::ShowArgs;
use crate::emit::emit;
use crate::error::CliError;

pub async fn show(mut a: ShowArgs) -> Result<ExitCode, CliError> {
    let settings = crate::reload::settings(a.policy.as_deref())?;
    a.connect.client = settings.client.clone();
    let assembler = Assembler::from_settings(&settings)?;
    let mut gathered = crate::load::load_inputs(&a.files, &a.connect).await?;
    emit_reads(&assembler, a.host, &gathered.snapshots)?;
    gathered.close().await;
    Ok(ExitCode::SUCCESS)
}

/// Per server, what `host`'s model reads through `wrap --as HOST` built on
/// `assembler` (`show --host`, and `preview --as` with its own budgets).
pub fn emit_reads(
    assembler: &Assembler,
    host: ServeAs,
    snapshots: &[ServerSnapshot],
) -> Result<(), mcp_preamble::Error> {
    for snapshot in snapshots {
        let mut wrapper = Wrapper::new(assembler.clone(), host)?;
        if let Some(alias) = &snapshot.alias {
            wrapper = wrapper.alias(alias.clone());
        }
        let reads = wrapper.model_reads(snapshot)?;
        let name = snapshot
            .alias
            .as_deref()
            .unwrap_or(&snapshot.server_info.name);
        emit(&render(name, host.as_str(), &reads));
    }
    Ok(())
}

/// One server's part of the output.
fn render(name: &str, host: &str, r: &ModelReads) -> String {
    let mut out = format!(
        "== {name} ==\n{host} reads instructions in: {}\n",
        r.reads.describe()
    );
    let text = r.text.as_deref().unwrap_or_default();
    match r.cap {
        Some(cap) => out.push_str(&format!("length: {} of {cap}\n", cap.measure(text))),
        None => out.push_str(&format!(
            "length: {} characters (no cap)\n",
            text.chars().count()
        )),
    }
    out.push_str(&format!("cut: {} units\n", r.cut.len()));
    for removed in &r.cut {
        let line = removed
            .text
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        out.push_str(&format!("  - {}\n", crate::emit::truncate(&line, 100)));
    }
    out.push_str("--- what the model reads ---\n");
    out.push_str(text.trim_end());
    out.push_str("\n--- end ---\n");
    out.push_str(&format!("tools: {}\n", r.tools.len()));
    for (tool, description) in &r.tools {
        let n = description.as_deref().map_or(0, |d| d.chars().count());
        out.push_str(&format!("  {tool}: {n} characters of description\n"));
    }
    out
}
