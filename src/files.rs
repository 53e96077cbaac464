//! The files the crate reads and writes besides the policy and lock files:
//! capture files (the raw JSON-RPC answers of a handshake, the format of
//! `tests/corpus/`), snapshot files (one [`ServerSnapshot`](crate::ServerSnapshot)
//! as versioned JSON, for offline use) and MCP client configs
//! (`mcpServers`, as Claude Desktop, Cursor and VS Code write them).
//!
//! ```
//! use mcp_preamble::files::Capture;
//! let snapshot = Capture::from_path("tests/corpus/seed-invoice-server.json")?.snapshot()?;
//! assert_eq!(snapshot.display_name(), "invoice-server");
//! # Ok::<(), mcp_preamble::Error>(())
//! ```
//!
//! Every file is read up to [`MAX_FILE_BYTES`]; a larger one is an
//! [`ErrorKind::Io`](crate::ErrorKind::Io) error naming it. Every file the
//! crate and its CLI write goes through one writer, [`FileWriter`]: created
//! exclusively, never through a symlink, with the mode it is given.

pub use crate::config::{McpConfig, ServerEntry, ServerTransport};
pub use crate::error::MAX_FILE_BYTES;
pub use crate::support::write::{FileWriter, InTheWay, Written};
pub use crate::wire::{
    Capture, SKILLS_EXTENSION, SNAPSHOT_FORMAT_VERSION, SnapshotFile, load_server_eras,
    load_server_file,
};
