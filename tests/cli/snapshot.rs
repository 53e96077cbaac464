//! `mcp-preamble snapshot --out DIR`: what is already in DIR is kept unless
//! `--force`, and a symlink there is never followed.
#![cfg(feature = "cli")]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{ensure_npm, servers_dir};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "mcp-preamble-cli-snapshot-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A config of the invoice server (alias `invoice`) in `dir`, and `dir/snaps`.
fn setup(dir: &Path) -> (String, PathBuf) {
    ensure_npm();
    let config = dir.join("mcp.json");
    let server = servers_dir().join("invoice.mjs").display().to_string();
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"invoice": {"command": "node", "args": [server]}}})
            .to_string(),
    )
    .unwrap();
    let out = dir.join("snaps");
    std::fs::create_dir_all(&out).unwrap();
    (config.display().to_string(), out)
}

fn snapshot(config: &str, out: &Path, force: bool) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp-preamble"));
    cmd.args(["snapshot", "--config", config, "--out"]).arg(out);
    if force {
        cmd.arg("--force");
    }
    cmd.output().unwrap()
}

fn is_snapshot(path: &Path) -> bool {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["mcp_preamble_snapshot"] == 2
}

/// Names in `dir`, sorted: no temporary file may be left behind.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn skipped(file: &Path) -> String {
    format!("skipped {}: exists (use --force)\n", file.display())
}

#[test]
fn an_existing_file_is_kept_and_reported() {
    let dir = scratch("exists");
    let (config, out) = setup(&dir);
    let file = out.join("invoice.json");
    std::fs::write(&file, "mine").unwrap();
    let o = snapshot(&config, &out, false);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stderr(&o), skipped(&file));
    assert!(o.stdout.is_empty());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
    assert_eq!(names(&out), ["invoice.json"]);

    let o = snapshot(&config, &out, true);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(is_snapshot(&file));
    assert_eq!(names(&out), ["invoice.json"]);
    // Written by this run, kept by the next one.
    let o = snapshot(&config, &out, false);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), skipped(&file));
    // A forced write keeps the file's mode (an owner-only snapshot stays so).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let o = snapshot(&config, &out, true);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(names(&out), ["invoice.json"]);
    }
}

#[cfg(unix)]
#[test]
fn a_symlink_is_never_followed() {
    let dir = scratch("symlink");
    let (config, out) = setup(&dir);
    let file = out.join("invoice.json");
    let outside = dir.join("outside.txt");
    std::fs::write(&outside, "outside").unwrap();
    std::os::unix::fs::symlink(&outside, &file).unwrap();
    let o = snapshot(&config, &out, false);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stderr(&o), skipped(&file));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "outside");
    assert!(std::fs::symlink_metadata(&file).unwrap().is_symlink());

    // A dangling link: writing through it would create a file outside.
    let missing = dir.join("created-outside.json");
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(&missing, &file).unwrap();
    let o = snapshot(&config, &out, false);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!missing.exists());

    // --force replaces the link itself with a file; the target is untouched.
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(&outside, &file).unwrap();
    let o = snapshot(&config, &out, true);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&file).unwrap().is_file());
    assert!(is_snapshot(&file));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "outside");
    assert_eq!(names(&out), ["invoice.json"]);
}

#[test]
fn a_policy_file_leaves_out_excluded_servers_and_warns_about_unknown_aliases() {
    let dir = scratch("policy");
    let (config, out) = setup(&dir);
    let policy = dir.join("mcp-preamble.toml");
    std::fs::write(
        &policy,
        "version = 1\n[servers.invoice]\nexclude = true\n[servers.invoic]\nbudget = 5\n",
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
        .args(["snapshot", "--config", &config, "--out"])
        .arg(&out)
        .arg("--policy")
        .arg(&policy)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        "mcp-preamble: warning: policy for \"invoic\": no server has this alias (did you mean \"invoice\"?)\n"
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "invoice: excluded by the policy file, not written\n"
    );
    assert!(names(&out).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}
