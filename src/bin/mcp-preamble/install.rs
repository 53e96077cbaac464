//! `mcp-preamble install` / `uninstall`: a host's own MCP config rewritten
//! so that each stdio server runs under `wrap`, by splicing text (the
//! JSONC reader's spans): comments, key order, whitespace and unknown keys
//! stay. The first install keeps the file as it was beside it
//! (`FILE.mcp-preamble.bak`); uninstall puts that back byte for byte when
//! the file is still what install made of it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::args::{HostKind, InstallArgs};
use crate::error::CliError;
use crate::jsonc::{self, Kind, Node};
use mcp_preamble::files::FileWriter;

/// The suffix of the backup beside the config.
const BACKUP: &str = ".mcp-preamble.bak";

impl HostKind {
    /// Its name on the command line (clap's, from the variant).
    fn name(self) -> String {
        use clap::ValueEnum as _;
        self.to_possible_value()
            .map(|v| v.get_name().to_string())
            .unwrap_or_default()
    }

    /// The key that holds the servers.
    fn servers_key(self) -> &'static str {
        match self {
            HostKind::Vscode => "servers",
            _ => "mcpServers",
        }
    }

    /// The host's own config file: Claude Desktop's per user, Claude
    /// Code's and VS Code's per project (the current directory), Cursor's
    /// global one.
    fn default_config(self) -> Result<PathBuf, CliError> {
        let home = || {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .ok_or_else(|| CliError::Install("HOME is not set; give --host-config PATH".into()))
        };
        Ok(match self {
            HostKind::ClaudeDesktop if cfg!(target_os = "macos") => {
                home()?.join("Library/Application Support/Claude/claude_desktop_config.json")
            }
            HostKind::ClaudeDesktop if cfg!(windows) => std::env::var_os("APPDATA")
                .map(PathBuf::from)
                .ok_or_else(|| {
                    CliError::Install("APPDATA is not set; give --host-config PATH".into())
                })?
                .join("Claude/claude_desktop_config.json"),
            HostKind::ClaudeDesktop => {
                // An empty XDG_CONFIG_HOME is unset (the XDG spec says so).
                let config = std::env::var_os("XDG_CONFIG_HOME")
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
                    .map_or_else(|| home().map(|h| h.join(".config")), Ok)?;
                config.join("Claude/claude_desktop_config.json")
            }
            HostKind::ClaudeCode => PathBuf::from(".mcp.json"),
            HostKind::Cursor => home()?.join(".cursor/mcp.json"),
            HostKind::Vscode => PathBuf::from(".vscode/mcp.json"),
        })
    }

    /// `wrap`'s `--as` for this host, when the host table has its cap.
    fn serve_as(self) -> Option<String> {
        let name = self.name();
        name.parse::<mcp_preamble::serve::ServeAs>()
            .ok()
            .map(|_| name)
    }
}

/// What one run did to each entry, in file order.
struct Plan {
    edits: Vec<(std::ops::Range<usize>, String)>,
    told: Vec<String>,
}

/// Whether anything (a symlink included, dangling or not) has the name.
fn present(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// The file at `path`, never read through a symlink: a project can plant
/// one at its `.mcp.json` or at the backup's name.
fn read(path: &Path) -> Result<String, CliError> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(CliError::Install(format!(
            "{}: a symlink, not followed (give the file it points to with --host-config)",
            path.display()
        )));
    }
    std::fs::read_to_string(path)
        .map_err(|e| CliError::Install(format!("cannot read {}: {e}", path.display())))
}

/// The config rewritten through the one file writer: whole or not at all,
/// its mode kept, a symlink replaced itself (never written through).
fn write(path: &Path, text: &str) -> Result<(), CliError> {
    FileWriter::new(path)
        .replace()
        .write(text.as_bytes())
        .map(|_| ())
        .map_err(|e| CliError::Install(format!("cannot write {}: {e}", path.display())))
}

/// The backup, created exclusively (anything at its name, a planted
/// symlink above all, is refused, never followed or replaced) with the
/// config's own mode (a `0600` config's API keys stay `0600`).
fn write_backup(backup: &Path, config: &Path, text: &str) -> Result<(), CliError> {
    FileWriter::new(backup)
        .mode_of(config)
        .write(text.as_bytes())
        .map(|_| ())
        .map_err(|e| {
            CliError::Install(format!(
                "cannot write the backup: {e}; remove it if you did not put it there"
            ))
        })
}

fn backup_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(BACKUP);
    PathBuf::from(name)
}

/// The servers object of `text`, read as JSONC.
fn servers(text: &str, host: HostKind, path: &Path) -> Result<Option<Node>, CliError> {
    let root = jsonc::parse(text)
        .map_err(|e| CliError::Install(format!("{} does not read as JSON: {e}", path.display())))?;
    if !matches!(root.kind, Kind::Object(_)) {
        return Err(CliError::Install(format!(
            "{} is not a JSON object",
            path.display()
        )));
    }
    Ok(root.get(host.servers_key()).cloned())
}

/// The command `wrap` entries run: this program, by its full path (hosts
/// such as Claude Desktop start servers without the user's shell `PATH`),
/// as the OS gives it (not canonicalized: a package manager's symlink
/// outlives an upgrade that moves the file it points at).
fn this_program() -> String {
    std::env::current_exe()
        .ok()
        .map_or_else(|| "mcp-preamble".to_string(), |p| p.display().to_string())
}

/// Whether `entry` already runs under `wrap`.
fn wrapped(entry: &Node) -> bool {
    let program = entry
        .get("command")
        .and_then(Node::as_str)
        .unwrap_or_default();
    let stem = Path::new(program)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let first = match entry.get("args").map(|a| &a.kind) {
        Some(Kind::Array(items)) => items.first().and_then(Node::as_str),
        _ => None,
    };
    stem == "mcp-preamble" && first == Some("wrap")
}

fn json(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// The edits that wrap every stdio entry of `text` not wrapped yet.
fn wrap_plan(text: &str, host: HostKind, path: &Path, program: &str) -> Result<Plan, CliError> {
    let mut plan = Plan {
        edits: Vec::new(),
        told: Vec::new(),
    };
    let Some(servers) = servers(text, host, path)? else {
        plan.told.push(format!(
            "no \"{}\" in {}",
            host.servers_key(),
            path.display()
        ));
        return Ok(plan);
    };
    let Kind::Object(members) = &servers.kind else {
        return Err(CliError::Install(format!(
            "\"{}\" is not an object",
            host.servers_key()
        )));
    };
    for m in members {
        let (name, entry) = (&m.key, &m.value);
        let Some(command) = entry.get("command").filter(|c| c.as_str().is_some()) else {
            let why = match entry.get("url") {
                Some(_) => "an HTTP (url) entry: wrap serves stdio servers only",
                None => "no command",
            };
            plan.told.push(format!("{name}: left alone ({why})"));
            continue;
        };
        if wrapped(entry) {
            // Installed from elsewhere: point the entry at this program.
            if command.as_str() != Some(program) {
                plan.edits.push((command.span.clone(), json(program)));
                plan.told.push(format!("{name}: wrapped, now by {program}"));
            } else {
                plan.told.push(format!("{name}: already wrapped"));
            }
            continue;
        }
        let args = entry.get("args");
        let old: Vec<&str> = match args.map(|a| &a.kind) {
            Some(Kind::Array(items)) => items.iter().map(|i| &text[i.span.clone()]).collect(),
            None => Vec::new(),
            Some(_) => {
                plan.told
                    .push(format!("{name}: left alone (its \"args\" is not an array)"));
                continue;
            }
        };
        let mut new = vec![json("wrap")];
        if let Some(serve_as) = host.serve_as() {
            new.extend([json("--as"), json(&serve_as)]);
        }
        // `--name=-v`: a key that begins with `-` is never read as a flag.
        if name.starts_with('-') {
            new.extend([json(&format!("--name={name}")), json("--")]);
        } else {
            new.extend([json("--name"), json(name), json("--")]);
        }
        new.push(text[command.span.clone()].to_string());
        new.extend(old.into_iter().map(str::to_string));
        let new = format!("[{}]", new.join(", "));
        plan.edits.push((command.span.clone(), json(program)));
        match args {
            Some(a) => plan.edits.push((a.span.clone(), new)),
            None => plan.edits.push((
                command.span.end..command.span.end,
                format!(", \"args\": {new}"),
            )),
        }
        plan.told.push(format!("{name}: wrapped"));
    }
    Ok(plan)
}

/// The edits that give every wrapped entry its own command and args back.
fn unwrap_plan(text: &str, host: HostKind, path: &Path) -> Result<Plan, CliError> {
    let mut plan = Plan {
        edits: Vec::new(),
        told: Vec::new(),
    };
    let Some(Node {
        kind: Kind::Object(members),
        ..
    }) = servers(text, host, path)?
    else {
        return Ok(plan);
    };
    for m in &members {
        let entry = &m.value;
        let (Some(command), Some(args)) = (entry.get("command"), entry.get("args")) else {
            continue;
        };
        let Kind::Array(items) = &args.kind else {
            continue;
        };
        let Some(at) = separator(items).filter(|_| wrapped(entry)) else {
            continue;
        };
        let Some(own) = items.get(at + 1) else {
            continue;
        };
        let rest: Vec<&str> = items[at + 2..]
            .iter()
            .map(|i| &text[i.span.clone()])
            .collect();
        plan.edits
            .push((command.span.clone(), text[own.span.clone()].to_string()));
        plan.edits
            .push((args.span.clone(), format!("[{}]", rest.join(", "))));
        plan.told.push(format!("{}: unwrapped", m.key));
    }
    Ok(plan)
}

/// The index of the `--` that ends `wrap`'s own options in a wrapped
/// entry's args (`wrap --as X --name=-- -- cmd`), read as `wrap` reads them:
/// a flag that takes a value takes the next item, whatever it is (so
/// `--name -- -- cmd`, written before keys were quoted, reads right too).
fn separator(items: &[Node]) -> Option<usize> {
    const VALUED: &[&str] = &[
        "--as",
        "--name",
        "--policy",
        "--lock",
        "--log",
        "--max-message-mib",
        "--url",
    ];
    let mut i = 1; // after "wrap"
    while let Some(item) = items.get(i) {
        match item.as_str() {
            Some("--") => return Some(i),
            Some(flag) if VALUED.contains(&flag) => i += 2,
            _ => i += 1,
        }
    }
    None
}

fn config_path(a: &InstallArgs) -> Result<PathBuf, CliError> {
    match &a.host_config {
        Some(p) => Ok(p.clone()),
        None => a.host.default_config(),
    }
}

fn tell(path: &Path, plan: &Plan) {
    for line in &plan.told {
        crate::emit::emit_line(&format!("{}: {line}", path.display()));
    }
}

pub fn install(a: &InstallArgs) -> Result<ExitCode, CliError> {
    let path = config_path(a)?;
    let text = read(&path)?;
    let program = this_program();
    let plan = wrap_plan(&text, a.host, &path, &program)?;
    tell(&path, &plan);
    if plan.edits.is_empty() {
        crate::emit::emit_line(&format!("{}: nothing to change", path.display()));
        return Ok(ExitCode::SUCCESS);
    }
    let backup = backup_of(&path);
    // A backup of an earlier install stays while the file still has wrapped entries.
    let keep_old = present(&backup) && !unwrap_plan(&text, a.host, &path)?.edits.is_empty();
    if !keep_old {
        write_backup(&backup, &path, &text)?;
        crate::emit::emit_line(&format!("{}: backup written", backup.display()));
    }
    write(&path, &jsonc::splice(&text, plan.edits))?;
    Ok(ExitCode::SUCCESS)
}

pub fn uninstall(a: &InstallArgs) -> Result<ExitCode, CliError> {
    let path = config_path(a)?;
    let text = read(&path)?;
    let backup = backup_of(&path);
    // Only a regular file is a backup install could have made.
    if std::fs::symlink_metadata(&backup).is_ok_and(|m| m.is_file()) {
        let original = read(&backup)?;
        let plan = wrap_plan(&original, a.host, &backup, &this_program())?;
        if jsonc::splice(&original, plan.edits) == text {
            write(&path, &original)?;
            remove(&backup);
            crate::emit::emit_line(&format!(
                "{}: restored from {}",
                path.display(),
                backup.display()
            ));
            return Ok(ExitCode::SUCCESS);
        }
    }
    let plan = unwrap_plan(&text, a.host, &path)?;
    tell(&path, &plan);
    if plan.edits.is_empty() {
        crate::emit::emit_line(&format!("{}: nothing to change", path.display()));
        return Ok(ExitCode::SUCCESS);
    }
    crate::emit::emit_line(&format!(
        "{}: changed since install; each wrapped entry unwrapped in place (the rest as it is now)",
        path.display()
    ));
    write(&path, &jsonc::splice(&text, plan.edits))?;
    if present(&backup) {
        remove(&backup);
    }
    Ok(ExitCode::SUCCESS)
}

fn remove(backup: &Path) {
    if let Err(e) = std::fs::remove_file(backup) {
        crate::emit::emit_err(&format!(
            "mcp-preamble: cannot remove {}: {e}",
            backup.display()
        ));
    }
}
