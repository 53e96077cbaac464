//! Why a run stopped short.

use std::fmt;
use std::path::PathBuf;

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
    /// `serve`'s state directory cannot be found or read.
    State(String),
    /// `install` / `uninstall` cannot read, understand or write a host config.
    Install(String),
    /// `serve` cannot serve as asked (`--prefix never` with shared names).
    Serve(String),
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
            CliError::Pin(detail)
            | CliError::State(detail)
            | CliError::Install(detail)
            | CliError::Serve(detail) => f.write_str(detail),
            CliError::LintIncomplete => f.write_str("some servers could not be linted"),
        }
    }
}

impl From<mcp_preamble::Error> for CliError {
    fn from(e: mcp_preamble::Error) -> CliError {
        CliError::Library(e)
    }
}
