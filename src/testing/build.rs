//! Servers for tests: built from their parts, or loaded from files.

use std::path::Path;

use crate::model::{Instructions, ServerSnapshot, Tool};

/// A server built in a test: `server("invoice").instructions("…").tool("list_periods", "List billing periods.")`.
///
/// Use it where a [`ServerSnapshot`] is expected with `&builder` (the kit's
/// functions take `&impl AsRef<ServerSnapshot>`), or turn it into one with
/// [`ServerBuilder::build`] or `.into()`.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerBuilder(ServerSnapshot);

/// Starts a [`ServerBuilder`] for a server with this `serverInfo.name`.
pub fn server(name: impl Into<String>) -> ServerBuilder {
    ServerBuilder(ServerSnapshot::new(name))
}

impl ServerBuilder {
    /// Sets the host's alias (the name the section shows).
    pub fn alias(mut self, alias: impl Into<String>) -> ServerBuilder {
        self.0.alias = Some(alias.into());
        self
    }

    /// Sets the instructions, raw as the server sends them.
    pub fn instructions(mut self, raw: impl AsRef<str>) -> ServerBuilder {
        self.0.instructions = Instructions::from_raw(Some(raw.as_ref()));
        self
    }

    /// Adds a tool with a name and a description.
    pub fn tool(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> ServerBuilder {
        self.0.tools.push(Tool::new(name, description));
        self
    }

    /// Adds a tool as you built it (title, schema, annotations).
    pub fn with_tool(mut self, tool: Tool) -> ServerBuilder {
        self.0.tools.push(tool);
        self
    }

    /// Sets `serverInfo.version`.
    pub fn version(mut self, version: impl Into<String>) -> ServerBuilder {
        self.0.server_info.version = version.into();
        self
    }

    /// The snapshot.
    pub fn build(self) -> ServerSnapshot {
        self.0
    }
}

impl From<ServerBuilder> for ServerSnapshot {
    fn from(b: ServerBuilder) -> ServerSnapshot {
        b.0
    }
}

impl AsRef<ServerSnapshot> for ServerBuilder {
    fn as_ref(&self) -> &ServerSnapshot {
        &self.0
    }
}

impl AsRef<ServerSnapshot> for ServerSnapshot {
    fn as_ref(&self) -> &ServerSnapshot {
        self
    }
}

/// Loads a capture (the `tests/corpus/` format) or a snapshot file, aliased
/// by its file stem unless the file sets an alias.
///
/// # Panics
///
/// With `cannot load server file <path>: <error>` when the file cannot be
/// read or parsed: in a test, that is the failure to report.
pub fn load(path: impl AsRef<Path>) -> ServerSnapshot {
    let path = path.as_ref();
    match crate::wire::load_server_file(path) {
        Ok(mut s) => {
            if s.alias.is_none() {
                s.alias = path.file_stem().map(|n| n.to_string_lossy().into_owned());
            }
            s
        }
        Err(e) => panic!("cannot load server file {}: {e}", path.display()),
    }
}

/// Loads every `.json` file of a directory with [`load`], sorted by file name.
///
/// # Panics
///
/// With `cannot read directory <path>: <error>`, or as [`load`] does.
pub fn load_dir(dir: impl AsRef<Path>) -> Vec<ServerSnapshot> {
    let dir = dir.as_ref();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => panic!("cannot read directory {}: {e}", dir.display()),
    };
    let mut files: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files.iter().map(load).collect()
}
