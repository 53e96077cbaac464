//! `mcp-preamble`: see what your MCP servers would put into a prompt, and
//! what it costs, before a single model call.

mod args;
mod emit;
mod lint;
mod load;
mod preview;
mod progress;
mod snapshot;

use std::process::ExitCode;

use clap::Parser as _;

use crate::args::{Cli, Command};
use crate::lint::lint;
use crate::preview::preview;
use crate::snapshot::snapshot;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mcp-preamble: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    runtime.block_on(async {
        match cli.command {
            Command::Preview(p) => preview(p).await,
            Command::Snapshot(s) => snapshot(s).await,
            Command::Lint(l) => lint(l).await,
        }
    })
}
