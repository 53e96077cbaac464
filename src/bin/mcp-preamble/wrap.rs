//! `mcp-preamble wrap`: one server relayed to the host, its instructions
//! and tools under the policy (the library's `serve::Wrapper`).

use std::process::ExitCode;

use mcp_preamble::Assembler;
use mcp_preamble::pin::Lock;
use mcp_preamble::serve::Wrapper;

use crate::args::WrapArgs;
use crate::error::CliError;

pub async fn wrap(a: WrapArgs) -> Result<ExitCode, CliError> {
    crate::serve::init_log(a.log.as_deref(), false)?;
    let settings = crate::reload::settings(a.policy.as_deref())?;
    let mut assembler = Assembler::from_settings(&settings)?;
    if let Some(path) = &a.lock {
        assembler = assembler.lock(Lock::from_path(path)?);
    }
    let mut wrapper = Wrapper::new(assembler, a.serve_as)?
        .max_message_bytes(usize::try_from(a.max_message_mib).unwrap_or(64) << 20);
    if let Some(name) = &a.name {
        wrapper = wrapper.alias(name.clone());
    }
    if let Some(url) = &a.url {
        wrapper.run_url(url).await?;
        tracing::info!("the host closed the connection");
        return Ok(ExitCode::SUCCESS);
    }
    let Some((command, args)) = a.command.split_first() else {
        return Err(CliError::NoInput);
    };
    let status = wrapper.run_command(command, args).await?;
    match status {
        Some(status) if !status.success() => {
            crate::emit::emit_err(&format!("mcp-preamble wrap: the server ended: {status}"));
            Ok(ExitCode::from(1))
        }
        Some(_) => Ok(ExitCode::SUCCESS),
        None => {
            tracing::info!("the host closed the connection");
            Ok(ExitCode::SUCCESS)
        }
    }
}
