//! `mcp-preamble`: see what your MCP servers would put into a prompt, and
//! what it costs, before a single model call.

mod approve;
mod args;
mod emit;
mod error;
mod install;
mod jsonc;
mod jsonlog;
mod lint;
mod listen;
mod load;
mod memory;
mod parse;
mod pin;
mod preview;
mod progress;
mod reload;
mod review;
mod scopes;
mod serve;
mod show;
mod snapshot;
mod source;
mod state;
mod stop;
mod wrap;

use std::process::ExitCode;

use clap::Parser as _;

use crate::args::{Cli, Command};
use crate::error::CliError;

fn run() -> Result<ExitCode, CliError> {
    serve::started();
    let cli = Cli::parse();
    memory::guard();
    // The gateways forward on one thread: a message between its tasks is a
    // wake-up in the same thread, not a handoff to another (measured in
    // benches/serve.rs; README "Cost").
    let mut runtime = match cli.command {
        Command::Serve(_) | Command::Wrap(_) => tokio::runtime::Builder::new_current_thread(),
        _ => tokio::runtime::Builder::new_multi_thread(),
    };
    let runtime = runtime.enable_all().build().map_err(CliError::Runtime)?;
    let result = runtime.block_on(async {
        match cli.command {
            Command::Preview(p) => preview::preview(p).await,
            Command::Snapshot(s) => snapshot::snapshot(s).await,
            Command::Lint(l) => lint::lint(l).await,
            Command::Pin(a) => pin::pin(a).await,
            // Over HTTP, SIGTERM is the drain's (`--listen`).
            Command::Serve(a) if a.listen.is_some() => serve::serve(*a).await,
            Command::Serve(a) => stop::until_stopped(serve::serve(*a)).await,
            Command::Wrap(a) => stop::until_stopped(wrap::wrap(a)).await,
            Command::Install(a) => install::install(&a),
            Command::Uninstall(a) => install::uninstall(&a),
            Command::Show(a) => show::show(a).await,
        }
    });
    // Not waiting for blocking reads of stdin (`wrap`'s host may keep it open).
    runtime.shutdown_background();
    result
}

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            if !matches!(e, CliError::LintIncomplete) {
                // Library errors can quote a server's message.
                emit::emit_err(&format!("mcp-preamble: {e}"));
            }
            ExitCode::from(2)
        }
    }
}
