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
use crate::scopes;
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

/// `text` read as JSONC, a JSON object.
fn root_of(text: &str, path: &Path) -> Result<Node, CliError> {
    let root = jsonc::parse(text)
        .map_err(|e| CliError::Install(format!("{} does not read as JSON: {e}", path.display())))?;
    if !matches!(root.kind, Kind::Object(_)) {
        return Err(CliError::Install(format!(
            "{} is not a JSON object",
            path.display()
        )));
    }
    Ok(root)
}

/// The members of each servers object of `root` (every scope the file
/// holds), each with the prefix its lines get (none for the file's own).
fn scoped_members<'n>(
    root: &'n Node,
    host: HostKind,
    path: &Path,
) -> Result<Vec<(String, &'n [jsonc::Member])>, CliError> {
    let mut out = Vec::new();
    for s in scopes::servers_objects(root, host) {
        let Kind::Object(members) = &s.node.kind else {
            return Err(CliError::Install(format!(
                "\"{}\" is not an object",
                s.place
            )));
        };
        let prefix = match s.place == host.servers_key() {
            true => String::new(),
            false => format!("{}: ", scopes::scope_of(host, path, &s.place)),
        };
        out.push((prefix, members.as_slice()));
    }
    Ok(out)
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

/// What `install` adds besides the wrapping.
#[derive(Clone, Copy, Default)]
struct Extras {
    /// `"alwaysLoad": true` on each Claude Code entry wrapped.
    always_load: bool,
}

/// The edits that wrap every stdio entry of `text` not wrapped yet.
fn wrap_plan(
    text: &str,
    host: HostKind,
    path: &Path,
    program: &str,
    extras: Extras,
) -> Result<Plan, CliError> {
    let mut plan = Plan {
        edits: Vec::new(),
        told: Vec::new(),
    };
    let root = root_of(text, path)?;
    let scoped = scoped_members(&root, host, path)?;
    if scoped.is_empty() {
        plan.told.push(format!(
            "no \"{}\" in {}",
            host.servers_key(),
            path.display()
        ));
    }
    for (prefix, members) in scoped {
        for m in members {
            wrap_entry(&mut plan, text, host, program, m, extras);
            if let Some(last) = plan.told.last_mut() {
                last.insert_str(0, &prefix);
            }
        }
    }
    Ok(plan)
}

/// The edits that wrap one entry, and the line that says what was done.
fn wrap_entry(
    plan: &mut Plan,
    text: &str,
    host: HostKind,
    program: &str,
    m: &jsonc::Member,
    extras: Extras,
) {
    let (name, entry) = (&m.key, &m.value);
    let Some(command) = entry.get("command").filter(|c| c.as_str().is_some()) else {
        if let Some(told) = desktop_url(plan, text, host, program, m) {
            plan.told.push(told);
            return;
        }
        let why = match entry.get("url") {
            Some(_) => "an HTTP (url) entry: wrap serves stdio servers only",
            None => "no command",
        };
        plan.told.push(format!("{name}: left alone ({why})"));
        return;
    };
    if wrapped(entry) {
        // Installed from elsewhere: point the entry at this program.
        if command.as_str() != Some(program) {
            plan.edits.push((command.span.clone(), json(program)));
            plan.told.push(format!("{name}: wrapped, now by {program}"));
        } else {
            plan.told.push(format!("{name}: already wrapped"));
        }
        return;
    }
    let args = entry.get("args");
    let old: Vec<&str> = match args.map(|a| &a.kind) {
        Some(Kind::Array(items)) => items.iter().map(|i| &text[i.span.clone()]).collect(),
        None => Vec::new(),
        Some(_) => {
            plan.told
                .push(format!("{name}: left alone (its \"args\" is not an array)"));
            return;
        }
    };
    let mut new = vec![json("wrap")];
    if let Some(serve_as) = host.serve_as() {
        new.extend([json("--as"), json(&serve_as)]);
    }
    new.extend(name_args(name));
    new.push(json("--"));
    new.push(text[command.span.clone()].to_string());
    new.extend(old.into_iter().map(str::to_string));
    let new = format!("[{}]", new.join(", "));
    // Claude Code loads the tools of an `alwaysLoad` server up front, not
    // behind tool search: they and the instructions are there on turn one.
    let asked = extras.always_load && host == HostKind::ClaudeCode;
    let load = if asked && entry.get("alwaysLoad").is_none() {
        ", \"alwaysLoad\": true"
    } else {
        ""
    };
    plan.edits.push((command.span.clone(), json(program)));
    match args {
        Some(a) => plan.edits.push((a.span.clone(), format!("{new}{load}"))),
        None => plan.edits.push((
            command.span.end..command.span.end,
            format!(", \"args\": {new}{load}"),
        )),
    }
    plan.told.push(format!("{name}: wrapped"));
}

/// `--name KEY`, or `--name=KEY` for a key that begins with `-` (never
/// read as a flag then: `--` and `-v` broke `wrap`'s arguments).
fn name_args(name: &str) -> Vec<String> {
    match name.starts_with('-') {
        true => vec![json(&format!("--name={name}"))],
        false => vec![json("--name"), json(name)],
    }
}

/// Claude Desktop runs stdio entries only (it skips `url` ones): an HTTP
/// entry becomes `wrap --url`, which relays it over stdio. `None` for
/// anything else (another host, headers `wrap --url` would not send).
fn desktop_url(
    plan: &mut Plan,
    text: &str,
    host: HostKind,
    program: &str,
    m: &jsonc::Member,
) -> Option<String> {
    let entry = &m.value;
    let url = entry.get("url")?;
    let plain = entry.get("headers").is_none() && entry.get("type").is_none();
    if host != HostKind::ClaudeDesktop || url.as_str().is_none() || !plain {
        return None;
    }
    let Kind::Object(members) = &entry.kind else {
        return None;
    };
    let member = members.iter().rev().find(|k| k.key == "url")?;
    let mut args = vec![json("wrap")];
    if let Some(serve_as) = host.serve_as() {
        args.extend([json("--as"), json(&serve_as)]);
    }
    args.extend(name_args(&m.key));
    args.push(json("--url"));
    let args = args.join(", ");
    let with = format!(
        "\"command\": {}, \"args\": [{args}, {}]",
        json(program),
        &text[url.span.clone()]
    );
    plan.edits.push((member.key_span.start..url.span.end, with));
    Some(format!(
        "{}: wrapped (an HTTP entry, relayed by wrap --url)",
        m.key
    ))
}

/// The edits that give every wrapped entry its own command and args back.
fn unwrap_plan(text: &str, host: HostKind, path: &Path) -> Result<Plan, CliError> {
    let mut plan = Plan {
        edits: Vec::new(),
        told: Vec::new(),
    };
    let root = root_of(text, path)?;
    for (prefix, members) in scoped_members(&root, host, path)? {
        for m in members {
            if unwrap_entry(&mut plan, text, m) {
                plan.told.push(format!("{prefix}{}: unwrapped", m.key));
            }
        }
    }
    Ok(plan)
}

/// The edits that unwrap one entry; whether there were any.
fn unwrap_entry(plan: &mut Plan, text: &str, m: &jsonc::Member) -> bool {
    let entry = &m.value;
    let (Some(command), Some(args)) = (entry.get("command"), entry.get("args")) else {
        return false;
    };
    let Kind::Array(items) = &args.kind else {
        return false;
    };
    if !wrapped(entry) {
        return false;
    }
    let Some(at) = separator(items) else {
        return unwrap_url(plan, text, entry, items);
    };
    let Some(own) = items.get(at + 1) else {
        return false;
    };
    let rest: Vec<&str> = items[at + 2..]
        .iter()
        .map(|i| &text[i.span.clone()])
        .collect();
    plan.edits
        .push((command.span.clone(), text[own.span.clone()].to_string()));
    plan.edits
        .push((args.span.clone(), format!("[{}]", rest.join(", "))));
    true
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

/// A `wrap --url` entry made by install (its `command` then its `args`,
/// side by side) back to its `url`.
fn unwrap_url(plan: &mut Plan, text: &str, entry: &Node, items: &[Node]) -> bool {
    let Some(url) = items
        .iter()
        .position(|i| i.as_str() == Some("--url"))
        .and_then(|at| items.get(at + 1))
    else {
        return false;
    };
    let Kind::Object(members) = &entry.kind else {
        return false;
    };
    let pair = members
        .windows(2)
        .find(|w| w[0].key == "command" && w[1].key == "args");
    let Some([command, args]) = pair else {
        return false;
    };
    let between = &text[command.value.span.end..args.key_span.start];
    if between.trim() != "," {
        return false;
    }
    let with = format!("\"url\": {}", &text[url.span.clone()]);
    plan.edits
        .push((command.key_span.start..args.value.span.end, with));
    true
}

/// The config files of every scope of the host that exist (or the one
/// `--host-config` names).
fn config_paths(a: &InstallArgs) -> Result<Vec<PathBuf>, CliError> {
    match &a.host_config {
        Some(p) => Ok(vec![p.clone()]),
        None => {
            let mut all = vec![a.host.default_config()?];
            all.extend(scopes::more_files(a.host));
            scopes::existing(all)
        }
    }
}

fn extras(a: &InstallArgs) -> Extras {
    Extras {
        always_load: a.always_load,
    }
}

fn tell(path: &Path, plan: &Plan) {
    for line in &plan.told {
        crate::emit::emit_line(&format!("{}: {line}", path.display()));
    }
}

pub fn install(a: &InstallArgs) -> Result<ExitCode, CliError> {
    if a.list {
        return list(a);
    }
    for path in config_paths(a)? {
        install_file(a, &path)?;
    }
    crate::emit::emit_line(&scopes::channel(a.host));
    Ok(ExitCode::SUCCESS)
}

pub fn uninstall(a: &InstallArgs) -> Result<ExitCode, CliError> {
    for path in config_paths(a)? {
        uninstall_file(a, &path)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `install --list`: each scope of each config file, its servers and
/// whether each runs under `wrap`.
fn list(a: &InstallArgs) -> Result<ExitCode, CliError> {
    let paths = match &a.host_config {
        Some(p) => vec![p.clone()],
        None => {
            let mut all = vec![a.host.default_config()?];
            all.extend(scopes::more_files(a.host));
            all
        }
    };
    for path in paths {
        if !path.exists() {
            crate::emit::emit_line(&format!("{}: not found", path.display()));
            continue;
        }
        let text = read(&path)?;
        let root = root_of(&text, &path)?;
        let objects = scopes::servers_objects(&root, a.host);
        if objects.is_empty() {
            crate::emit::emit_line(&format!("{}: no servers", path.display()));
        }
        for s in objects {
            let scope = scopes::scope_of(a.host, &path, &s.place);
            let Kind::Object(members) = &s.node.kind else {
                continue;
            };
            for m in members {
                let e = &m.value;
                let how = match (wrapped(e), e.get("command"), e.get("url")) {
                    (true, ..) => "wrapped",
                    (false, Some(_), _) => "stdio, not wrapped",
                    (false, None, Some(_)) => "HTTP, not wrapped",
                    _ => "no command",
                };
                let line = format!(
                    "{}: {scope} ({}): {}: {how}",
                    path.display(),
                    s.place,
                    m.key
                );
                crate::emit::emit_line(&line);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn install_file(a: &InstallArgs, path: &Path) -> Result<(), CliError> {
    let path = path.to_path_buf();
    let text = read(&path)?;
    let program = this_program();
    let plan = wrap_plan(&text, a.host, &path, &program, extras(a))?;
    tell(&path, &plan);
    if plan.edits.is_empty() {
        crate::emit::emit_line(&format!("{}: nothing to change", path.display()));
        return Ok(());
    }
    if a.dry_run {
        let after = jsonc::splice(&text, plan.edits);
        crate::emit::emit(&scopes::diff(&path, &text, &after));
        crate::emit::emit_line(&format!("{}: not written (--dry-run)", path.display()));
        return Ok(());
    }
    let backup = backup_of(&path);
    // A backup of an earlier install stays while the file still has wrapped entries.
    let keep_old = present(&backup) && !unwrap_plan(&text, a.host, &path)?.edits.is_empty();
    if !keep_old {
        write_backup(&backup, &path, &text)?;
        crate::emit::emit_line(&format!("{}: backup written", backup.display()));
    }
    write(&path, &jsonc::splice(&text, plan.edits))?;
    Ok(())
}

fn uninstall_file(a: &InstallArgs, path: &Path) -> Result<(), CliError> {
    let path = path.to_path_buf();
    let text = read(&path)?;
    let backup = backup_of(&path);
    // Only a regular file is a backup install could have made.
    if std::fs::symlink_metadata(&backup).is_ok_and(|m| m.is_file()) {
        let original = read(&backup)?;
        // What install made of the backup, with or without `--always-load`.
        let made = |always_load| -> Result<String, CliError> {
            let extras = Extras { always_load };
            let plan = wrap_plan(&original, a.host, &backup, &this_program(), extras)?;
            Ok(jsonc::splice(&original, plan.edits))
        };
        if made(false)? == text || made(true)? == text {
            write(&path, &original)?;
            remove(&backup);
            crate::emit::emit_line(&format!(
                "{}: restored from {}",
                path.display(),
                backup.display()
            ));
            return Ok(());
        }
    }
    let plan = unwrap_plan(&text, a.host, &path)?;
    tell(&path, &plan);
    if plan.edits.is_empty() {
        crate::emit::emit_line(&format!("{}: nothing to change", path.display()));
        return Ok(());
    }
    crate::emit::emit_line(&format!(
        "{}: changed since install; each wrapped entry unwrapped in place (the rest as it is now)",
        path.display()
    ));
    write(&path, &jsonc::splice(&text, plan.edits))?;
    if present(&backup) {
        remove(&backup);
    }
    Ok(())
}

fn remove(backup: &Path) {
    if let Err(e) = std::fs::remove_file(backup) {
        crate::emit::emit_err(&format!(
            "mcp-preamble: cannot remove {}: {e}",
            backup.display()
        ));
    }
}
