//! Where each host keeps its servers (issue 51.2): the config files of
//! every scope, and the servers objects inside one file. Claude Code keeps
//! a user scope (`~/.claude.json` `mcpServers`), a project scope per
//! folder in the same file (`projects["<path>"].mcpServers`, where `claude
//! mcp add` saves by default) and a shared one (`.mcp.json`); Cursor a
//! global and a project `mcp.json`; VS Code a workspace `mcp.json`, a user
//! `mcp.json` and `settings.json`'s `mcp.servers`.

use std::path::{Path, PathBuf};

use crate::args::HostKind;
use crate::error::CliError;
use crate::jsonc::{Kind, Node};

/// One servers object of a config file.
pub struct Servers<'n> {
    /// Where it is in the file: `mcpServers`, `projects["/p"].mcpServers`,
    /// `mcp.servers`.
    pub place: String,
    /// The object (not checked to be one).
    pub node: &'n Node,
}

/// Every servers object of `root` for `host`, in file order.
pub fn servers_objects(root: &Node, host: HostKind) -> Vec<Servers<'_>> {
    let mut out = Vec::new();
    fn push<'n>(out: &mut Vec<Servers<'n>>, place: String, node: Option<&'n Node>) {
        if let Some(node) = node {
            out.push(Servers { place, node });
        }
    }
    let mut push = |place: String, node| push(&mut out, place, node);
    match host {
        HostKind::Vscode => {
            push("servers".into(), root.get("servers"));
            push(
                "mcp.servers".into(),
                root.get("mcp").and_then(|m| m.get("servers")),
            );
        }
        HostKind::ClaudeCode => {
            push("mcpServers".into(), root.get("mcpServers"));
            if let Some(Kind::Object(projects)) = root.get("projects").map(|p| &p.kind) {
                for p in projects {
                    let place = format!("projects[{}].mcpServers", json(&p.key));
                    push(place, p.value.get("mcpServers"));
                }
            }
        }
        _ => push("mcpServers".into(), root.get("mcpServers")),
    }
    out
}

/// The scope a servers object is, for people: `user`, `project /p`, ….
pub fn scope_of(host: HostKind, path: &Path, place: &str) -> String {
    let file = path.file_name().and_then(|f| f.to_str()).unwrap_or("");
    match (host, place) {
        (HostKind::ClaudeCode, _) if place.starts_with("projects[") => {
            let key = &place["projects[".len()..place.len() - "].mcpServers".len()];
            let key: String = serde_json::from_str(key).unwrap_or_default();
            format!("project {key} (local)")
        }
        (HostKind::ClaudeCode, _) if file == ".claude.json" => "user".into(),
        (HostKind::ClaudeCode, _) => "project (shared, .mcp.json)".into(),
        (HostKind::Vscode, "mcp.servers") => "user settings.json".into(),
        (HostKind::Vscode | HostKind::Cursor, _) if in_folder(path, ".vscode", ".cursor") => {
            "workspace".into()
        }
        (HostKind::Vscode, _) => "user".into(),
        (HostKind::Cursor, _) => "global".into(),
        (HostKind::ClaudeDesktop, _) => "user".into(),
    }
}

/// Whether `path` is in a folder named `a` or `b` below the home folder's
/// own (a project's `.cursor/`, not `~/.cursor/`).
fn in_folder(path: &Path, a: &str, b: &str) -> bool {
    let parent = path.parent();
    let named = parent
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .is_some_and(|n| n == a || n == b);
    let at_home = parent.and_then(Path::parent).map(Path::to_path_buf) == home();
    named && !at_home
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// VS Code's user folder (`Code/User`).
fn vscode_user() -> Option<PathBuf> {
    let base = if cfg!(target_os = "macos") {
        home()?.join("Library/Application Support")
    } else if cfg!(windows) {
        PathBuf::from(std::env::var_os("APPDATA")?)
    } else {
        match std::env::var_os("XDG_CONFIG_HOME").filter(|x| !x.is_empty()) {
            Some(x) => PathBuf::from(x),
            None => home()?.join(".config"),
        }
    };
    Some(base.join("Code/User"))
}

/// The host's config files besides its first one (`install`'s default
/// file): Claude Code's `~/.claude.json`, Cursor's project file, VS Code's
/// user `mcp.json` and `settings.json`.
pub fn more_files(host: HostKind) -> Vec<PathBuf> {
    match host {
        HostKind::ClaudeCode => home().map(|h| h.join(".claude.json")).into_iter().collect(),
        HostKind::Cursor => vec![PathBuf::from(".cursor/mcp.json")],
        HostKind::Vscode => vscode_user()
            .map(|u| vec![u.join("mcp.json"), u.join("settings.json")])
            .unwrap_or_default(),
        HostKind::ClaudeDesktop => Vec::new(),
    }
}

/// `first` and `more`, those that exist; fails naming them all when none does.
pub fn existing(all: Vec<PathBuf>) -> Result<Vec<PathBuf>, CliError> {
    let (found, missing): (Vec<PathBuf>, Vec<PathBuf>) = all.into_iter().partition(|p| p.exists());
    if found.is_empty() {
        let looked: Vec<String> = missing.iter().map(|p| p.display().to_string()).collect();
        return Err(CliError::Install(format!(
            "no config file found (looked at {}); give --host-config PATH",
            looked.join(", ")
        )));
    }
    Ok(found)
}

fn json(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// Where the host's model reads each wrapped server's instructions, from
/// the host table, as `install` says it (issue 51.4).
pub fn channel(host: HostKind) -> String {
    use clap::ValueEnum as _;
    use mcp_preamble::hosts::{Host, Reads};
    let name = host
        .to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default();
    let Some(row) = Host::named(&name).map(Host::profile) else {
        return format!("{name}: where its model reads instructions is not known");
    };
    let how = match row.reads {
        Reads::Nowhere => format!(
            "its model reads no instructions: wrap lists a `{}` tool whose description carries them",
            mcp_preamble::serve::READER
        ),
        Reads::Unknown => {
            "where its model reads instructions is not known: served as the instructions field"
                .into()
        }
        reads => format!("its model reads instructions in {}", reads.describe()),
    };
    format!("{name}: {how}")
}

/// `old` against `new` as a unified diff (`install --dry-run`).
pub fn diff(path: &Path, old: &str, new: &str) -> String {
    let name = path.display().to_string();
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(2)
        .header(&name, &format!("{name} (after)"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_has_a_user_and_a_project_scope_in_one_file() {
        let text = r#"{"mcpServers": {"a": {}}, "projects": {"/w/p": {"mcpServers": {"b": {}}}, "/w/q": {}}}"#;
        let root = crate::jsonc::parse(text).unwrap();
        let found = servers_objects(&root, HostKind::ClaudeCode);
        let places: Vec<&str> = found.iter().map(|s| s.place.as_str()).collect();
        assert_eq!(places, ["mcpServers", "projects[\"/w/p\"].mcpServers"]);
        let path = Path::new("/h/.claude.json");
        assert_eq!(scope_of(HostKind::ClaudeCode, path, places[0]), "user");
        assert_eq!(
            scope_of(HostKind::ClaudeCode, path, places[1]),
            "project /w/p (local)"
        );
        let shared = Path::new(".mcp.json");
        assert_eq!(
            scope_of(HostKind::ClaudeCode, shared, "mcpServers"),
            "project (shared, .mcp.json)"
        );
    }

    #[test]
    fn vscode_reads_settings_json_mcp_servers() {
        let text = r#"{"editor.x": 1, "mcp": {"servers": {"a": {}}}}"#;
        let root = crate::jsonc::parse(text).unwrap();
        let found = servers_objects(&root, HostKind::Vscode);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].place, "mcp.servers");
        assert_eq!(
            scope_of(HostKind::Vscode, Path::new(".vscode/mcp.json"), "servers"),
            "workspace"
        );
    }
}
