//! `mcp-preamble`: see what your MCP servers would put into a prompt, and
//! what it costs, before a single model call.

mod args;
mod emit;
mod lint;
mod load;
mod memory;
mod pin;
mod preview;
mod progress;
mod serve;
mod snapshot;

use std::fmt;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser as _;

use crate::args::{Cli, Command};

/// Why a run stopped short; every one exits 2.
#[derive(Debug)]
pub enum CliError {
    /// A template, encoding, config or assembly the library refused.
    Library(mcp_preamble::Error),
    /// Neither files nor `--config`.
    NoInput,
    /// `snapshot` without `--config`.
    NoConfig,
    /// `snapshot --out` could not be created.
    OutDir(PathBuf, std::io::Error),
    /// The tokio runtime would not start.
    Runtime(std::io::Error),
    /// `pin` cannot go on: an unknown `--update` alias, two servers under
    /// one key, a lock that cannot be written.
    Pin(String),
    /// Some servers could not be linted. Each was reported on stderr as
    /// found, before the report went to stdout, so nothing more is printed.
    LintIncomplete,
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Library(e) => write!(f, "{e}"),
            CliError::NoInput => f.write_str("give capture/snapshot FILES or --config PATH"),
            CliError::NoConfig => f.write_str("snapshot needs --config PATH"),
            CliError::OutDir(dir, e) => write!(f, "{}: {e}", dir.display()),
            CliError::Runtime(e) => write!(f, "cannot start the async runtime: {e}"),
            CliError::Pin(detail) => f.write_str(detail),
            CliError::LintIncomplete => f.write_str("some servers could not be linted"),
        }
    }
}

impl From<mcp_preamble::Error> for CliError {
    fn from(e: mcp_preamble::Error) -> CliError {
        CliError::Library(e)
    }
}

fn run() -> Result<ExitCode, CliError> {
    let cli = Cli::parse();
    memory::guard();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    runtime.block_on(async {
        match cli.command {
            Command::Preview(p) => preview::preview(p).await,
            Command::Snapshot(s) => snapshot::snapshot(s).await,
            Command::Lint(l) => lint::lint(l).await,
            Command::Pin(a) => pin::pin(a).await,
            Command::Serve(a) => serve::serve(a).await,
        }
    })
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
