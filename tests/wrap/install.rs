//! `mcp-preamble install` / `uninstall` on config files in each host's own
//! format (tests/data/hosts/): Claude Desktop, Claude Code's `.mcp.json`,
//! Cursor, and VS Code's JSONC with comments and trailing commas.

use crate::common;

use std::path::{Path, PathBuf};

use common::cli::run;

use serde_json::{Value, json};

/// (host, fixture, the servers key, stdio entries, entries left alone)
type Case = (
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
);

const HOSTS: &[Case] = &[
    (
        "claude-desktop",
        "claude_desktop_config.json",
        "mcpServers",
        &["filesystem", "github", "billing"],
        &[],
    ),
    (
        "claude-code",
        "claude-code.mcp.json",
        "mcpServers",
        &["billing", "memory"],
        &["sentry"],
    ),
    (
        "cursor",
        "cursor-mcp.json",
        "mcpServers",
        &["billing", "time"],
        &["context7"],
    ),
    (
        "vscode",
        "vscode-mcp.json",
        "servers",
        &["billing", "perplexity", "fetch"],
        &["github"],
    ),
];

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/hosts")
        .join(name)
}

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "mcp-preamble-install-{test}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// JSONC as JSON: the fixtures' comments and trailing commas removed.
fn json_of(text: &str) -> Value {
    let block = regex::Regex::new(r"(?s)/\*.*?\*/").unwrap();
    let line = regex::Regex::new(r#"(?m)^((?:[^"/\n]|"(?:[^"\\\n]|\\.)*")*)//.*$"#).unwrap();
    let trailing = regex::Regex::new(r",(\s*[}\]])").unwrap();
    let text = block.replace_all(text, "");
    let text = line.replace_all(&text, "$1");
    let text = trailing.replace_all(&text, "$1");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn program() -> String {
    Path::new(env!("CARGO_BIN_EXE_mcp-preamble"))
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}

#[test]
fn install_twice_is_install_once_and_uninstall_gives_back_the_original_bytes() {
    let dir = scratch("round-trip");
    for (host, file, key, stdio, alone) in HOSTS {
        let original = std::fs::read(fixture(file)).unwrap();
        let path = dir.join(file);
        std::fs::write(&path, &original).unwrap();
        let p = path.display().to_string();
        let out = run(&["install", "--host", host, "--host-config", &p]);
        assert!(out.status.success(), "{host}: {}", text(&out.stderr));
        let installed = std::fs::read_to_string(&path).unwrap();
        let before = json_of(&text(&original));
        let after = json_of(&installed);
        for name in *stdio {
            let (was, is) = (&before[key][name], &after[key][name]);
            assert_eq!(is["command"], json!(program()), "{host} {name}");
            let mut args = vec![json!("wrap")];
            // The hosts whose row `wrap --as` takes: a cap, or instructions read nowhere.
            if ["claude-code", "claude-desktop"].contains(host) {
                args.extend([json!("--as"), json!(host)]);
            }
            args.extend([
                json!("--name"),
                json!(name),
                json!("--"),
                was["command"].clone(),
            ]);
            args.extend(was["args"].as_array().cloned().unwrap_or_default());
            assert_eq!(is["args"], Value::Array(args), "{host} {name}");
            // Every other key as it was.
            let others = |v: &Value| {
                let mut v = v.clone();
                let o = v.as_object_mut().unwrap();
                o.remove("command");
                o.remove("args");
                v
            };
            assert_eq!(others(is), others(was), "{host} {name}");
        }
        for name in *alone {
            assert_eq!(after[key][name], before[key][name], "{host} {name}");
            let told = text(&out.stdout);
            assert!(
                told.contains(&format!("{name}: left alone (an HTTP (url) entry")),
                "{told}"
            );
        }
        // Everything outside the servers (and the comments) unchanged.
        let (mut b, mut a) = (before.clone(), after.clone());
        b[key] = json!(null);
        a[key] = json!(null);
        assert_eq!(a, b, "{host}");
        if *host == "vscode" {
            for comment in [
                "// Inputs are prompted",
                "/* The invoice server",
                "// a trailing comma",
                "// No args at all.",
            ] {
                assert!(installed.contains(comment), "{comment}");
            }
        }
        let backup = dir.join(format!("{file}.mcp-preamble.bak"));
        assert_eq!(
            std::fs::read(&backup).unwrap(),
            original,
            "{host}: the backup"
        );

        // Twice is once.
        let again = run(&["install", "--host", host, "--host-config", &p]);
        assert!(again.status.success());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), installed, "{host}");
        assert!(
            text(&again.stdout).contains("nothing to change"),
            "{}",
            text(&again.stdout)
        );

        let out = run(&["uninstall", "--host", host, "--host-config", &p]);
        assert!(out.status.success(), "{host}: {}", text(&out.stderr));
        assert_eq!(
            std::fs::read(&path).unwrap(),
            original,
            "{host}: byte for byte"
        );
        assert!(!backup.exists(), "{host}: the backup is gone");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_config_changed_after_install_is_unwrapped_in_place() {
    let dir = scratch("changed");
    let path = dir.join("mcp.json");
    std::fs::copy(fixture("cursor-mcp.json"), &path).unwrap();
    let p = path.display().to_string();
    assert!(
        run(&["install", "--host", "cursor", "--host-config", &p])
            .status
            .success()
    );
    // The user adds a key by hand.
    let edited = std::fs::read_to_string(&path).unwrap().replacen(
        "\"mcpServers\"",
        "\"theme\": 1,\n  \"mcpServers\"",
        1,
    );
    std::fs::write(&path, &edited).unwrap();
    let out = run(&["uninstall", "--host", "cursor", "--host-config", &p]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("changed since install; each wrapped entry unwrapped in place")
    );
    let now = json_of(&std::fs::read_to_string(&path).unwrap());
    let mut expected = json_of(&std::fs::read_to_string(fixture("cursor-mcp.json")).unwrap());
    expected["theme"] = json!(1);
    assert_eq!(now, expected);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn malformed_or_missing_configs_are_clear_errors() {
    let dir = scratch("bad");
    let cases = [
        (
            "broken.json",
            "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"\n  }\n",
            "does not read as JSON: line 5, column 1: expected `,` or `}`",
        ),
        ("list.json", "[1, 2]", "is not a JSON object"),
        (
            "servers.json",
            "{\"mcpServers\": [1]}",
            "\"mcpServers\" is not an object",
        ),
    ];
    for (file, body, says) in cases {
        let path = dir.join(file);
        std::fs::write(&path, body).unwrap();
        let out = run(&[
            "install",
            "--host",
            "cursor",
            "--host-config",
            &path.display().to_string(),
        ]);
        assert_eq!(out.status.code(), Some(2), "{file}");
        let err = text(&out.stderr);
        assert!(err.contains(says), "{file}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            body,
            "left as it was"
        );
    }
    let missing = dir.join("none.json").display().to_string();
    let out = run(&["uninstall", "--host", "vscode", "--host-config", &missing]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(&format!("cannot read {missing}")),
        "{}",
        text(&out.stderr)
    );
    let out = run(&["install", "--host", "zed"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("claude-desktop, claude-code, cursor, vscode"),
        "{}",
        text(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn install_at(verb: &str, host: &str, path: &Path) -> std::process::Output {
    run(&[
        verb,
        "--host",
        host,
        "--host-config",
        &path.display().to_string(),
    ])
}

/// A project can ship `.mcp.json.mcp-preamble.bak` as a link to any file of
/// the user's: install refuses it, names it, and writes nothing through it.
#[cfg(unix)]
#[test]
fn a_backup_link_planted_by_a_project_is_refused_never_written_through() {
    let dir = scratch("planted");
    let path = dir.join(".mcp.json");
    std::fs::copy(fixture("claude-code.mcp.json"), &path).unwrap();
    let original = std::fs::read(&path).unwrap();
    let victim = dir.join("authorized_keys");
    std::fs::write(&victim, "ssh-ed25519 AAAA user\n").unwrap();
    let backup = dir.join(".mcp.json.mcp-preamble.bak");
    std::os::unix::fs::symlink(&victim, &backup).unwrap();
    let out = install_at("install", "claude-code", &path);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!(
            "cannot write the backup: {}: already there (a file or a symlink); not replaced, not followed",
            backup.display()
        )),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "ssh-ed25519 AAAA user\n"
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        original,
        "the config as it was"
    );
    // A dangling link is refused too (writing through it would create the file).
    std::fs::remove_file(&backup).unwrap();
    let missing = dir.join("created-elsewhere");
    std::os::unix::fs::symlink(&missing, &backup).unwrap();
    assert_eq!(
        install_at("install", "claude-code", &path).status.code(),
        Some(2)
    );
    assert!(!missing.exists());
    // A config that is itself a link is not read through.
    let link = dir.join("link.json");
    std::os::unix::fs::symlink(&path, &link).unwrap();
    let out = install_at("install", "claude-code", &link);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("a symlink, not followed"),
        "{}",
        text(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The backup of a `0600` config (API keys in its env) is `0600` too, and
/// the rewritten config keeps its mode.
#[cfg(unix)]
#[test]
fn the_backup_of_an_owner_only_config_is_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("mode");
    let path = dir.join("claude_desktop_config.json");
    std::fs::copy(fixture("claude_desktop_config.json"), &path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = install_at("install", "claude-desktop", &path);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(
        mode(&dir.join("claude_desktop_config.json.mcp-preamble.bak")),
        0o600
    );
    assert_eq!(mode(&path), 0o600);
    let out = install_at("uninstall", "claude-desktop", &path);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(mode(&path), 0o600);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Servers keyed `--` and `-v` (issue 51 item 7): wrapped with `--name=KEY`,
/// unwrapped back byte for byte, also when the file changed since.
#[test]
fn keys_that_begin_with_a_dash_are_wrapped_and_unwrapped() {
    let dir = scratch("dashes");
    let path = dir.join("mcp.json");
    let original = r#"{"mcpServers": {"--": {"command": "node", "args": ["a.js", "--"]}, "-v": {"command": "uvx", "args": ["-v"]}}}"#;
    std::fs::write(&path, original).unwrap();
    let out = install_at("install", "cursor", &path);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let after = json_of(&std::fs::read_to_string(&path).unwrap());
    assert_eq!(
        after["mcpServers"]["--"]["args"],
        json!(["wrap", "--name=--", "--", "node", "a.js", "--"])
    );
    assert_eq!(
        after["mcpServers"]["-v"]["args"],
        json!(["wrap", "--name=-v", "--", "uvx", "-v"])
    );
    // Changed since install: each entry unwrapped in place, read as wrap reads it.
    let installed = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, installed.replacen('{', "{\"theme\": 1, ", 1)).unwrap();
    let out = install_at("uninstall", "cursor", &path);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut expected = json_of(original);
    expected["theme"] = json!(1);
    assert_eq!(json_of(&std::fs::read_to_string(&path).unwrap()), expected);
    // An entry installed before keys were quoted (`--name -- --`) reads back too.
    let old = format!(
        r#"{{"mcpServers": {{"--": {{"command": {}, "args": ["wrap", "--name", "--", "--", "node", "a.js"]}}}}}}"#,
        json!(program())
    );
    std::fs::write(&path, &old).unwrap();
    assert!(install_at("uninstall", "cursor", &path).status.success());
    assert_eq!(
        json_of(&std::fs::read_to_string(&path).unwrap())["mcpServers"]["--"],
        json!({"command": "node", "args": ["a.js"]})
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `install` again from a new binary path points the wrapped entries at it;
/// uninstall still restores the original bytes.
#[test]
fn install_again_from_a_new_path_updates_the_wrapped_entries() {
    let dir = scratch("moved");
    let path = dir.join("mcp.json");
    std::fs::copy(fixture("cursor-mcp.json"), &path).unwrap();
    let original = std::fs::read(&path).unwrap();
    assert!(install_at("install", "cursor", &path).status.success());
    let installed = std::fs::read_to_string(&path).unwrap();
    let moved = installed.replace(&json!(program()).to_string(), "\"/old/bin/mcp-preamble\"");
    assert_ne!(moved, installed);
    std::fs::write(&path, &moved).unwrap();
    let out = install_at("install", "cursor", &path);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("billing: wrapped, now by "),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), installed);
    assert!(install_at("uninstall", "cursor", &path).status.success());
    assert_eq!(std::fs::read(&path).unwrap(), original);
    let _ = std::fs::remove_dir_all(&dir);
}

/// An empty `XDG_CONFIG_HOME` is unset: Claude Desktop's config is found
/// under `$HOME/.config`, not in the current directory.
#[cfg(all(unix, not(target_os = "macos")))]
#[test]
fn an_empty_xdg_config_home_is_unset() {
    let dir = scratch("xdg");
    let config = dir.join(".config/Claude");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::copy(
        fixture("claude_desktop_config.json"),
        config.join("claude_desktop_config.json"),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
        .args(["install", "--host", "claude-desktop"])
        .env("HOME", &dir)
        .env("XDG_CONFIG_HOME", "")
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let installed = std::fs::read_to_string(config.join("claude_desktop_config.json")).unwrap();
    assert_eq!(
        json_of(&installed)["mcpServers"]["billing"]["args"][0],
        json!("wrap")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `install` as a host user runs it: HOME at a scratch folder, in a project
/// folder, no `--host-config`.
fn run_at(home: &Path, cwd: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
        .args(args)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .current_dir(cwd)
        .output()
        .unwrap()
}

/// Issue 51.2: `claude mcp add` saves to the project scope of
/// `~/.claude.json` by default; install wraps it, the user scope and the
/// project's `.mcp.json`, lists each scope, and uninstall gives every file
/// back byte for byte.
#[test]
fn claude_code_user_and_project_scopes_are_wrapped_and_restored() {
    let home = scratch("claude-scopes");
    let project = home.join("tracker");
    std::fs::create_dir_all(&project).unwrap();
    let user = std::fs::read(fixture("claude.json")).unwrap();
    let shared = std::fs::read(fixture("claude-code.mcp.json")).unwrap();
    let (user_path, shared_path) = (home.join(".claude.json"), project.join(".mcp.json"));
    std::fs::write(&user_path, &user).unwrap();
    std::fs::write(&shared_path, &shared).unwrap();

    let listed = text(
        &run_at(
            &home,
            &project,
            &["install", "--host", "claude-code", "--list"],
        )
        .stdout,
    );
    for line in [
        "/.claude.json: user (mcpServers): memory: stdio, not wrapped",
        "/.claude.json: project /home/me/tracker (local) (projects[\"/home/me/tracker\"].mcpServers): billing: stdio, not wrapped",
        "/.claude.json: project /home/me/tracker (local) (projects[\"/home/me/tracker\"].mcpServers): sentry: HTTP, not wrapped",
        ".mcp.json: project (shared, .mcp.json) (mcpServers): billing: stdio, not wrapped",
    ] {
        assert!(listed.contains(line), "{line}\n{listed}");
    }

    // A dry run prints the diff and writes nothing.
    let dry = run_at(
        &home,
        &project,
        &["install", "--host", "claude-code", "--dry-run"],
    );
    assert!(dry.status.success(), "{}", text(&dry.stderr));
    let shown = text(&dry.stdout);
    assert!(
        shown.contains("-          \"command\": \"node\","),
        "{shown}"
    );
    assert!(shown.contains("not written (--dry-run)"), "{shown}");
    assert_eq!(std::fs::read(&user_path).unwrap(), user);
    assert_eq!(std::fs::read(&shared_path).unwrap(), shared);
    assert!(!home.join(".claude.json.mcp-preamble.bak").exists());

    let out = run_at(
        &home,
        &project,
        &["install", "--host", "claude-code", "--always-load"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let told = text(&out.stdout);
    assert!(
        told.contains("project /home/me/tracker (local): billing: wrapped"),
        "{told}"
    );
    let after = json_of(&std::fs::read_to_string(&user_path).unwrap());
    let billing = &after["projects"]["/home/me/tracker"]["mcpServers"]["billing"];
    let memory = &after["mcpServers"]["memory"];
    for (name, entry) in [("billing", billing), ("memory", memory)] {
        assert_eq!(entry["command"], json!(program()), "{name}");
        let args = entry["args"].as_array().unwrap();
        assert_eq!(
            args[..5],
            [
                json!("wrap"),
                json!("--as"),
                json!("claude-code"),
                json!("--name"),
                json!(name)
            ]
        );
        assert_eq!(entry["alwaysLoad"], json!(true), "{name}");
        assert_eq!(entry["type"], json!("stdio"), "{name}");
    }
    // The HTTP entry stays: Claude Code runs it itself.
    let sentry = &after["projects"]["/home/me/tracker"]["mcpServers"]["sentry"];
    assert_eq!(sentry["url"], json!("https://mcp.sentry.dev/mcp"));
    let listed = text(
        &run_at(
            &home,
            &project,
            &["install", "--host", "claude-code", "--list"],
        )
        .stdout,
    );
    assert!(
        listed.contains("(projects[\"/home/me/tracker\"].mcpServers): billing: wrapped"),
        "{listed}"
    );
    assert!(listed.contains("(mcpServers): memory: wrapped"), "{listed}");

    let out = run_at(&home, &project, &["uninstall", "--host", "claude-code"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read(&user_path).unwrap(), user);
    assert_eq!(std::fs::read(&shared_path).unwrap(), shared);
}

/// Claude Desktop skips HTTP entries: install relays one through `wrap
/// --url` (stdio); uninstall gives its `url` back.
#[test]
fn claude_desktop_http_entries_become_wrap_url() {
    let dir = scratch("desktop-url");
    let path = dir.join("claude_desktop_config.json");
    let original = "{\n  \"mcpServers\": {\n    \"docs\": {\n      \"url\": \"https://example.com/mcp\"\n    },\n    \"keyed\": {\"url\": \"https://example.com/k\", \"headers\": {\"X\": \"1\"}}\n  }\n}\n";
    std::fs::write(&path, original).unwrap();
    let p = path.display().to_string();
    let out = run(&["install", "--host", "claude-desktop", "--host-config", &p]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Install names the channel the host's model reads (issue 51.4).
    assert!(
        text(&out.stdout).contains(
            "claude-desktop: its model reads no instructions: wrap lists a `mcp_preamble__instructions` tool whose description carries them"
        ),
        "{}",
        text(&out.stdout)
    );
    let after = json_of(&std::fs::read_to_string(&path).unwrap());
    let docs = &after["mcpServers"]["docs"];
    assert_eq!(docs["command"], json!(program()));
    assert_eq!(
        docs["args"],
        json!([
            "wrap",
            "--as",
            "claude-desktop",
            "--name",
            "docs",
            "--url",
            "https://example.com/mcp"
        ])
    );
    assert!(docs.get("url").is_none());
    // Headers `wrap --url` would not send: left alone, and said so.
    assert_eq!(
        after["mcpServers"]["keyed"]["url"],
        json!("https://example.com/k")
    );
    assert!(text(&out.stdout).contains("keyed: left alone (an HTTP (url) entry"));
    // Changed since install: unwrapped in place, the url back.
    let edited = std::fs::read_to_string(&path)
        .unwrap()
        .replace("\"keyed\"", "\"keyed2\"");
    std::fs::write(&path, &edited).unwrap();
    let out = run(&["uninstall", "--host", "claude-desktop", "--host-config", &p]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let back = std::fs::read_to_string(&path).unwrap();
    assert_eq!(back, original.replace("\"keyed\"", "\"keyed2\""));
}

/// VS Code's user `settings.json` holds servers under `mcp.servers`.
#[test]
fn vscode_settings_json_mcp_servers_are_wrapped() {
    let dir = scratch("vscode-settings");
    let path = dir.join("settings.json");
    let original = "{\n  // editor\n  \"editor.fontSize\": 13,\n  \"mcp\": {\n    \"servers\": {\n      \"time\": {\"command\": \"uvx\", \"args\": [\"mcp-server-time\"]},\n    },\n  },\n}\n";
    std::fs::write(&path, original).unwrap();
    let p = path.display().to_string();
    let out = run(&["install", "--host", "vscode", "--host-config", &p]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("user settings.json: time: wrapped"),
        "{}",
        text(&out.stdout)
    );
    let after = json_of(&std::fs::read_to_string(&path).unwrap());
    assert_eq!(after["mcp"]["servers"]["time"]["args"][0], json!("wrap"));
    assert_eq!(after["editor.fontSize"], json!(13));
    let out = run(&["uninstall", "--host", "vscode", "--host-config", &p]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
}
