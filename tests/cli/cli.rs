//! The `mcp-preamble` binary against real configs and live SDK servers.
#![cfg(feature = "cli")]

use crate::common;

use common::cli::{run, stderr, stdout};

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{ensure_npm, servers_dir};

/// A scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-preamble-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn node_entry(script: &str, env: &str) -> String {
    let path = servers_dir().join(script);
    format!(
        r#"{{"command": "node", "args": [{:?}], "env": {{{env}}}}}"#,
        path.display().to_string()
    )
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn preview_of_healthy_broken_and_slow_servers() {
    ensure_npm();
    let dir = scratch("mixed");
    let config = write(
        &dir,
        "mcp.json",
        &format!(
            r#"{{"mcpServers": {{"invoice": {}, "dies": {}, "slow": {}, "missing": {{"command": "no-such-program-xyz"}}}}}}"#,
            node_entry("invoice.mjs", ""),
            node_entry("exit-during-handshake.mjs", ""),
            node_entry("never-answers.mjs", r#""IGNORE_EOF": "1""#),
        ),
    );
    let out = run(&["preview", "--config", &config, "--timeout", "3"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("### invoice\n\nAlways call list_periods before get_invoice."),
        "{text}"
    );
    assert!(text.contains("stderr: fatal: config missing"), "{text}");
    assert!(
        text.contains("slow                     timed out: no complete answer within 3000 ms"),
        "{text}"
    );
    assert!(
        text.contains(
            "missing                  cannot connect: cannot start \"no-such-program-xyz\""
        ),
        "{text}"
    );

    let out = run(&["preview", "--config", &config, "--timeout", "3", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let conns = v["connections"].as_array().unwrap();
    assert_eq!(conns.len(), 4);
    let by = |a: &str| conns.iter().find(|c| c["alias"] == a).unwrap();
    assert_eq!(by("invoice")["ok"], true);
    assert_eq!(by("invoice")["source"], "live");
    assert_eq!(by("dies")["ok"], false);
    assert!(
        by("dies")["stderr"]
            .as_str()
            .unwrap()
            .contains("fatal: config missing")
    );
    assert!(
        by("slow")["error"]
            .as_str()
            .unwrap()
            .starts_with("timed out")
    );
    let servers = v["assembly"]["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 1);
    assert_eq!(servers[0]["era"], "modern");
}

#[test]
fn check_fails_only_when_trimming_was_needed() {
    ensure_npm();
    let dir = scratch("check");
    let config = write(
        &dir,
        "mcp.json",
        &format!(
            r#"{{"servers": {{"invoice": {}}}}}"#,
            node_entry("invoice.mjs", "")
        ),
    );
    assert_eq!(
        run(&["preview", "--config", &config, "--check"])
            .status
            .code(),
        Some(0)
    );
    let out = run(&["preview", "--config", &config, "--check", "--budget", "25"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
}

#[test]
fn handshake_modes_reach_the_table() {
    ensure_npm();
    let dir = scratch("modes");
    let config = write(
        &dir,
        "mcp.json",
        &format!(
            r#"{{"mcpServers": {{"invoice": {}}}}}"#,
            node_entry("invoice.mjs", "")
        ),
    );
    for (mode, shown) in [
        ("legacy", "legacy/2025-11-25"),
        ("auto", "modern/2026-07-28"),
        ("2026-07-28", "modern/2026-07-28"),
    ] {
        let out = run(&["preview", "--config", &config, "--handshake", mode]);
        assert_eq!(out.status.code(), Some(0), "{mode}: {}", stderr(&out));
        assert!(stdout(&out).contains(shown), "{mode}: {}", stdout(&out));
    }
    let out = run(&["preview", "--config", &config, "--handshake", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("handshake \"nope\""),
        "{}",
        stderr(&out)
    );
}

/// What tests/servers/handshake-log.mjs was sent, as (method, version)
/// pairs, and the log emptied for the next case.
fn sent(log: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    std::fs::write(log, "").unwrap();
    (text.lines())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let version = v["protocolVersion"].as_str().unwrap_or("none");
            (
                v["method"].as_str().unwrap().to_string(),
                version.to_string(),
            )
        })
        .collect()
}

/// The client keeps the eras strictly, on stdio and over HTTP (issue 50
/// item 4): `auto` goes on to `initialize` when `server/discover` is
/// answered with something that is not a discover result (`{}`) or an
/// error; `legacy` sends `initialize` naming 2025-11-25 (not rmcp's
/// 2026-07-28); a 2025 revision sends `initialize` naming it, and no
/// `server/discover`.
#[test]
fn handshakes_keep_the_eras_strictly() {
    ensure_npm();
    let dir = scratch("eras");
    let log = dir.join("sent.jsonl");
    let mut http = std::process::Command::new("node")
        .args(["handshake-log.mjs", "http"])
        .current_dir(servers_dir())
        .env("LOG", &log)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(http.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let url = line.trim().strip_prefix("listening ").unwrap().to_string();
    let log_env = format!("\"LOG\": {:?}", log.display().to_string());
    let stdio = |discover: &str| {
        node_entry(
            "handshake-log.mjs",
            &format!("{log_env}, \"DISCOVER\": {discover:?}"),
        )
    };
    let remote = format!(r#"{{"url": {url:?}}}"#);
    let discover = ("server/discover", "2026-07-28");
    let initialize = |v: &'static str| ("initialize", v);
    // (--handshake, the server's entry, the version shown, what it is sent)
    type Case<'a> = (&'a str, String, &'a str, Vec<(&'a str, &'a str)>);
    let cases: [Case; 7] = [
        (
            "auto",
            stdio("empty"),
            "2025-11-25",
            vec![discover, initialize("2025-11-25")],
        ),
        (
            "auto",
            remote.clone(),
            "2025-11-25",
            vec![discover, initialize("2025-11-25")],
        ),
        (
            "auto",
            stdio("error"),
            "2025-11-25",
            vec![discover, initialize("2025-11-25")],
        ),
        (
            "legacy",
            stdio("empty"),
            "2025-11-25",
            vec![initialize("2025-11-25")],
        ),
        (
            "legacy",
            remote.clone(),
            "2025-11-25",
            vec![initialize("2025-11-25")],
        ),
        (
            "2025-11-25",
            stdio("empty"),
            "2025-11-25",
            vec![initialize("2025-11-25")],
        ),
        (
            "2025-06-18",
            remote.clone(),
            "2025-06-18",
            vec![initialize("2025-06-18")],
        ),
    ];
    let mut failures = Vec::new();
    for (mode, entry, version, expected) in cases {
        let config = write(
            &dir,
            "mcp.json",
            &format!(r#"{{"mcpServers": {{"s": {entry}}}}}"#),
        );
        let out = run(&["preview", "--config", &config, "--handshake", mode]);
        // `tools/list` (and the 2025 ping) come after the handshake: compare its part.
        let got = sent(&log);
        let handshake: Vec<(&str, &str)> = (got.iter())
            .map(|(m, v)| (m.as_str(), v.as_str()))
            .filter(|(m, _)| matches!(*m, "server/discover" | "initialize"))
            .collect();
        let shown = stdout(&out).contains(&format!("legacy/{version}"));
        if out.status.code() != Some(0) || !shown || handshake != expected {
            failures.push(format!(
                "{mode} {entry}: sent {got:?}\n{}{}",
                stdout(&out),
                stderr(&out)
            ));
        }
    }
    let _ = http.kill();
    let _ = http.wait();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Writes a config of the invoice and whitespace servers under these
/// aliases, runs `snapshot` on it, and returns the config and output paths.
fn snapshot_invoice_and_whitespace(dir: &Path, invoice: &str, ws: &str) -> (String, PathBuf) {
    let config = write(
        dir,
        "mcp.json",
        &format!(
            r#"{{"mcpServers": {{{invoice:?}: {}, {ws:?}: {}}}}}"#,
            node_entry("invoice.mjs", ""),
            node_entry("whitespace.mjs", "")
        ),
    );
    let out_dir = dir.join("snaps");
    let out = run(&[
        "snapshot",
        "--config",
        &config,
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    (config, out_dir)
}

#[test]
fn snapshot_files_preview_like_the_live_servers() {
    ensure_npm();
    let dir = scratch("snapshot");
    let (config, out_dir) = snapshot_invoice_and_whitespace(&dir, "invoice", "ws");
    let file = std::fs::read_to_string(out_dir.join("invoice.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&file).unwrap();
    assert_eq!(v["mcp_preamble_snapshot"], 2);
    assert_eq!(v["snapshot"]["instructions"]["state"], "present");
    assert_eq!(v["snapshot"]["era"], "modern");
    let ws: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("ws.json")).unwrap()).unwrap();
    assert_eq!(
        ws["snapshot"]["instructions"],
        serde_json::json!({"state": "blank", "raw": "   "})
    );

    let live = run(&["preview", "--config", &config]);
    let offline = run(&[
        "preview",
        out_dir.join("invoice.json").to_str().unwrap(),
        out_dir.join("ws.json").to_str().unwrap(),
    ]);
    let section = |o: &Output| stdout(o).split("\n\nserver ").next().unwrap().to_string();
    assert_eq!(section(&live), section(&offline));
}

#[test]
fn bad_configs_name_file_alias_and_field() {
    let dir = scratch("bad");
    let config = write(
        &dir,
        "bad.json",
        r#"{"mcpServers": {"x": {"command": "a", "args": "b"}}}"#,
    );
    let out = run(&["preview", "--config", &config]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out).trim(),
        format!(
            "mcp-preamble: invalid configuration: {config}: server \"x\": \"args\" must be an array of strings"
        )
    );
    let out = run(&[
        "preview",
        "--config",
        &dir.join("none.json").display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot read file"));
}

fn spawns(log: &Path) -> usize {
    std::fs::read_to_string(log).map_or(0, |s| s.lines().count())
}

#[test]
fn the_ttl_cache_reuses_fresh_discover_results() {
    ensure_npm();
    let dir = scratch("cache");
    let log = dir.join("spawns.log");
    let cache = dir.join("cache");
    let entry = |ttl: &str| {
        node_entry(
            "count-spawns.mjs",
            &format!(
                r#""SPAWN_LOG": {:?}, "TTL_MS": "{ttl}""#,
                log.display().to_string()
            ),
        )
    };
    let args = |config: &str| {
        vec![
            "preview".to_string(),
            "--config".into(),
            config.to_string(),
            "--cache-dir".into(),
            cache.display().to_string(),
            "--json".into(),
        ]
    };
    let source = |o: &Output| {
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["connections"][0]["source"].as_str().unwrap().to_string()
    };
    let run_s = |a: Vec<String>| run(&a.iter().map(String::as_str).collect::<Vec<_>>());

    // A positive ttlMs: the second preview does not start the server.
    let fresh = write(
        &dir,
        "fresh.json",
        &format!(r#"{{"mcpServers": {{"c": {}}}}}"#, entry("60000")),
    );
    let first = run_s(args(&fresh));
    assert_eq!(source(&first), "live", "{}", stderr(&first));
    let after_first = spawns(&log);
    assert!(after_first >= 1);
    let second = run_s(args(&fresh));
    assert_eq!(source(&second), "cache");
    assert_eq!(
        spawns(&log),
        after_first,
        "a fresh entry must not spawn the server"
    );
    assert_eq!(
        stdout(&first).contains("Version one."),
        stdout(&second).contains("Version one.")
    );

    // ttlMs 0: never stored, every preview connects.
    let zero = write(
        &dir,
        "zero.json",
        &format!(r#"{{"mcpServers": {{"c": {}}}}}"#, entry("0")),
    );
    let before = spawns(&log);
    assert_eq!(source(&run_s(args(&zero))), "live");
    assert_eq!(source(&run_s(args(&zero))), "live");
    assert!(spawns(&log) >= before + 2);

    // A short ttlMs expires: the next preview reconnects.
    let short = write(
        &dir,
        "short.json",
        &format!(r#"{{"mcpServers": {{"c": {}}}}}"#, entry("300")),
    );
    assert_eq!(source(&run_s(args(&short))), "live");
    std::thread::sleep(std::time::Duration::from_millis(400));
    let before = spawns(&log);
    assert_eq!(source(&run_s(args(&short))), "live");
    assert!(spawns(&log) > before);
}

#[test]
fn bad_timeouts_are_usage_errors() {
    for t in ["inf", "-1", "1e30", "soon"] {
        let arg = format!("--timeout={t}");
        let out = run(&["preview", "--config", "x.json", &arg]);
        assert_eq!(out.status.code(), Some(2), "{t}");
        assert!(stderr(&out).contains("--timeout"), "{t}: {}", stderr(&out));
    }
}

#[test]
fn snapshot_file_names_never_collide() {
    ensure_npm();
    let dir = scratch("collide");
    let (_, out_dir) = snapshot_invoice_and_whitespace(&dir, "a b", "a_b");
    let mut files: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["a_b-2.json", "a_b.json"]);
}

/// Token counts are ASCII digits: `usize::from_str` alone would take `+5`.
#[test]
fn budgets_take_digits_only() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus/seed-invoice-server.json")
        .display()
        .to_string();
    for (arg, shown, flag) in [
        ("--budget=+5", "+5", "--budget <N>"),
        ("--budget=-1", "-1", "--budget <N>"),
        ("--budget= 5", " 5", "--budget <N>"),
        ("--budget=5 ", "5 ", "--budget <N>"),
        ("--budget=", "", "--budget <N>"),
        ("--total-budget=+5", "+5", "--total-budget <N>"),
    ] {
        let out = run(&["preview", &file, arg]);
        assert_eq!(out.status.code(), Some(2), "{arg}");
        assert_eq!(
            stderr(&out),
            format!(
                "error: invalid value '{shown}' for '{flag}': {shown:?} is not a number of tokens\n\nFor more information, try '--help'.\n"
            ),
            "{arg}"
        );
    }
    let out = run(&["preview", &file, "--server-budget=x=+5"]);
    assert_eq!(
        stderr(&out),
        "error: invalid value 'x=+5' for '--server-budget <ALIAS=N>': \"+5\" is not a number of tokens\n\nFor more information, try '--help'.\n"
    );
    let out = run(&["lint", &file, "--max-tokens=+5"]);
    assert_eq!(
        stderr(&out),
        "error: invalid value '+5' for '--max-tokens <N>': \"+5\" is not a number of tokens\n\nFor more information, try '--help'.\n"
    );
    let out = run(&["preview", &file, "--defer-over=-1"]);
    assert_eq!(
        stderr(&out),
        "error: invalid value '-1' for '--defer-over <N>': \"-1\" is not a number of tools\n\nFor more information, try '--help'.\n"
    );
    // A budget of 0 would leave every block empty: refused, as in the policy file.
    let out = run(&["preview", &file, "--budget", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "mcp-preamble: invalid configuration: budget = 0 leaves no room for any text: give 1 or more tokens\n"
    );
    let out = run(&["preview", &file, "--budget=99999999999999999999999"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is too large a number of tokens"));
    assert_eq!(
        run(&["preview", &file, "--budget=0500"]).status.code(),
        Some(0)
    );
}

#[test]
fn unknown_server_budget_aliases_are_warned() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let a = corpus
        .join("seed-invoice-server.json")
        .display()
        .to_string();
    let b = corpus.join("basic-memory.json").display().to_string();
    let plain = run(&["preview", &a, &b]);
    let out = run(&[
        "preview",
        &a,
        &b,
        "--server-budget",
        "nope=10",
        "--server-budget",
        "seed-invoice-server=500",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stderr(&out),
        "mcp-preamble: warning: --server-budget \"nope\": no server has that alias (known: \"basic-memory\", \"seed-invoice-server\")\n"
    );
    assert_eq!(
        stdout(&out).split("\n\nserver ").next(),
        stdout(&plain).split("\n\nserver ").next()
    );
    let out = run(&["preview", &a, "--server-budget", "seed-invoice-server=500"]);
    assert_eq!(stderr(&out), "");
}

#[test]
fn a_policy_file_applies_and_flags_override_it() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let a = corpus
        .join("seed-invoice-server.json")
        .display()
        .to_string();
    let b = corpus.join("basic-memory.json").display().to_string();
    let dir = scratch("policy");
    let policy = dir.join("mcp-preamble.toml");
    std::fs::write(
        &policy,
        "version = 1\n[defaults]\ntemplate = \"xml\"\n[servers.basic-memory]\nexclude = true\n\
         [servers.seed-invoice-server]\ninstructions = \"Invoices only.\"\nlabel = \"ops\"\n\
         [servers.nobody]\nexclude = true\n",
    )
    .unwrap();
    let p = policy.display().to_string();
    let out = run(&["preview", &a, &b, "--policy", &p]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("<server name=\"seed-invoice-server\" source=\"operator\" label=\"ops\">"),
        "{text}"
    );
    assert!(!text.contains("<server name=\"basic-memory\""), "{text}");
    assert_eq!(
        stderr(&out),
        "mcp-preamble: warning: policy for \"nobody\": no server has this alias\n"
    );
    // A flag overrides the file.
    let out = run(&["preview", &a, "--policy", &p, "--template", "markdown"]);
    assert!(
        stdout(&out).contains("### seed-invoice-server\n\nText from the operator: ops\n"),
        "{}",
        stdout(&out)
    );
    // Lint leaves out excluded servers; an unknown alias is a finding (MCP017).
    let out = run(&["lint", &a, &b, "--policy", &p, "--format", "json"]);
    assert!(
        !stdout(&out).contains("\"basic-memory\""),
        "{}",
        stdout(&out)
    );
    assert_eq!(stderr(&out), "");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["policy"]["source"], p.as_str());
    let finding = &json["policy"]["findings"][0];
    assert_eq!(finding["code"], "MCP017");
    assert_eq!(finding["name"], "unknown-policy-alias");
    assert_eq!(finding["server"], "nobody");
    assert_eq!(finding["line"], 9);
    assert_eq!(
        finding["message"],
        "policy for \"nobody\": no server has this alias"
    );
    let out = run(&["lint", &a, &b, "--policy", &p, "--deny", "warning"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains(&format!(
            "policy file {p}: 1 finding\n  warning[MCP017] unknown-policy-alias: policy for \"nobody\": no server has this alias\n    line 9: [servers.nobody]\n"
        )),
        "{}",
        stdout(&out)
    );
    // A typo stops the run with the place and the suggestion.
    std::fs::write(&policy, "version = 1\n[defaults]\nbudgett = 5\n").unwrap();
    for command in ["preview", "lint"] {
        let out = run(&[command, &a, "--policy", &p]);
        assert_eq!(out.status.code(), Some(2), "{command}");
        assert!(
            stderr(&out).contains(&format!(
                "{p}:3:1: unknown key \"budgett\" in [defaults] (did you mean \"budget\"?)"
            )),
            "{command}: {}",
            stderr(&out)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every flag of `preview` that has a policy key lands in the same setting:
/// the flag alone and the key alone give the same report, and it is not the
/// report of neither.
#[test]
fn each_flag_and_its_policy_key_agree() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let a = corpus
        .join("seed-invoice-server.json")
        .display()
        .to_string();
    let b = corpus.join("basic-memory.json").display().to_string();
    let dir = scratch("flag-key");
    let policy = dir.join("mcp-preamble.toml");
    let p = policy.display().to_string();
    let report = |args: &[&str]| {
        let mut all = vec!["preview", a.as_str(), b.as_str(), "--json"];
        all.extend_from_slice(args);
        let out = run(&all);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let servers: Vec<_> = json["assembly"]["servers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["name"].clone(),
                    s["budget"].clone(),
                    s["deferred"].clone(),
                )
            })
            .collect();
        (json["assembly"]["text"].clone(), servers)
    };
    let plain = report(&[]);
    let cases: [(&[&str], &str); 6] = [
        (&["--budget", "60"], "[defaults]\nbudget = 60\n"),
        (&["--total-budget", "90"], "[defaults]\ntotal_budget = 90\n"),
        (
            &["--server-budget", "seed-invoice-server=40"],
            "[servers.seed-invoice-server]\nbudget = 40\n",
        ),
        (
            &["--deferred", "seed-invoice-server"],
            "[servers.seed-invoice-server]\ndeferred = true\n",
        ),
        (&["--defer-over", "1"], "[defaults]\ndefer_over = 1\n"),
        (&["--template", "xml"], "[defaults]\ntemplate = \"xml\"\n"),
    ];
    for (flags, key) in cases {
        std::fs::write(&policy, format!("version = 1\n{key}")).unwrap();
        let by_flag = report(flags);
        assert_ne!(by_flag, plain, "{flags:?} changes nothing");
        assert_eq!(
            by_flag,
            report(&["--policy", &p]),
            "{flags:?} against {key:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A misspelt alias in `--deferred`, `--server-budget` or the policy file
/// is warned about with the closest alias, and fails `--check`.
#[test]
fn misspelt_aliases_warn_with_a_suggestion_and_fail_check() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let a = corpus
        .join("seed-invoice-server.json")
        .display()
        .to_string();
    let b = corpus.join("basic-memory.json").display().to_string();
    let warning = |flag: &str, alias: &str| {
        format!(
            "mcp-preamble: warning: {flag} \"{alias}\": no server has that alias (did you mean \"basic-memory\"?) (known: \"basic-memory\", \"seed-invoice-server\")\n"
        )
    };
    let out = run(&["preview", &a, &b, "--deferred", "basic-memry"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stderr(&out), warning("--deferred", "basic-memry"));
    let out = run(&["preview", &a, &b, "--server-budget", "basic-memroy=10"]);
    assert_eq!(stderr(&out), warning("--server-budget", "basic-memroy"));
    // The misspelt deferral applies to nothing: no tool index appears.
    assert!(!stdout(&out).contains("Deferred tools"), "{}", stdout(&out));
    for args in [
        &["--deferred", "basic-memry"][..],
        &["--server-budget", "basic-memroy=10000"],
    ] {
        let mut all = vec!["preview", a.as_str(), b.as_str(), "--check"];
        all.extend_from_slice(args);
        assert_eq!(run(&all).status.code(), Some(1), "{args:?}");
    }
    assert_eq!(
        run(&["preview", &a, &b, "--check", "--deferred", "basic-memory"])
            .status
            .code(),
        Some(0)
    );
    // A policy table for a misspelt alias: the suggestion, and --check fails.
    let dir = scratch("misspelt");
    let policy = dir.join("mcp-preamble.toml");
    std::fs::write(
        &policy,
        "version = 1\n[servers.basic-memroy]\nexclude = true\n",
    )
    .unwrap();
    let p = policy.display().to_string();
    let out = run(&["preview", &a, &b, "--policy", &p]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stderr(&out),
        "mcp-preamble: warning: policy for \"basic-memroy\": no server has this alias (did you mean \"basic-memory\"?)\n"
    );
    assert_eq!(
        run(&["preview", &a, &b, "--policy", &p, "--check"])
            .status
            .code(),
        Some(1)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The CLI speaks as the host: `--client-name`, `--capabilities` and the
/// policy file's `[client]` reach the server (tests/servers/client-tools.mjs
/// names its tools after them), on every subcommand that connects.
#[test]
fn the_cli_speaks_as_the_host() {
    ensure_npm();
    let dir = scratch("client");
    let config = dir.join("mcp.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"tools": {
            "command": "node", "args": ["client-tools.mjs"], "cwd": servers_dir()
        }}})
        .to_string(),
    )
    .unwrap();
    let config = config.display().to_string();
    let preview = |extra: &[&str]| {
        let mut args = vec!["preview", "--config", &config, "--handshake", "legacy"];
        args.extend_from_slice(extra);
        let out = run(&args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stdout(&out)
    };
    let plain = preview(&[]);
    let me = format!("client-mcp-preamble-{}", env!("CARGO_PKG_VERSION"));
    assert!(plain.contains(&me), "{plain}");
    assert!(!plain.contains("has-"), "{plain}");
    let host = preview(&[
        "--client-name",
        "acme-agent@1.2.0",
        "--capabilities",
        "roots,sampling",
    ]);
    for tool in ["client-acme-agent-1.2.0", "has-roots", "has-sampling"] {
        assert!(host.contains(tool), "{tool}: {host}");
    }
    // roots/list was answered: with no roots.
    assert!(!host.contains("root-") && !host.contains("roots-failed") && !host.contains(&me));
    // The policy file's [client], roots answered; a flag wins over it.
    let policy = dir.join("mcp-preamble.toml");
    std::fs::write(
        &policy,
        "version = 1\n[client]\nname = \"acme-agent\"\nversion = \"2.0\"\n\
         capabilities = [\"roots\"]\nroots = [\"file:///work/project\"]\n",
    )
    .unwrap();
    let p = policy.display().to_string();
    let shared = preview(&["--policy", &p]);
    for tool in ["client-acme-agent-2.0", "has-roots", "root-project"] {
        assert!(shared.contains(tool), "{tool}: {shared}");
    }
    let renamed = preview(&["--policy", &p, "--client-name", "other"]);
    assert!(renamed.contains("client-other-"), "{renamed}");
    assert!(renamed.contains("root-project"), "{renamed}");
    // pin as the host: the lock holds the host's tools.
    let lock = dir.join("lock.json");
    let l = lock.display().to_string();
    let out = run(&[
        "pin",
        "--config",
        &config,
        "--handshake",
        "legacy",
        "--lock",
        &l,
        "--policy",
        &p,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let pinned = std::fs::read_to_string(&lock).unwrap();
    assert!(
        pinned.contains("\"has-roots\"") && pinned.contains("\"root-project\""),
        "{pinned}"
    );
    // A capability the CLI does not know is a usage error.
    let out = run(&[
        "preview",
        "--config",
        &config,
        "--capabilities",
        "roots,telepathy",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unknown capability \"telepathy\""),
        "{}",
        stderr(&out)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn serve_help_and_the_readme_give_the_same_default_log_level() {
    let help = stdout(&run(&["serve", "--help"]));
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(help.contains("default `info,rmcp=warn`"), "{help}");
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let readme = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(readme.contains("`MCP_PREAMBLE_LOG` sets what it says (`debug`, `info,rmcp=debug`; default `info,rmcp=warn`)"));
}

/// A hand-written JSONC config (issue 51, item 5): a byte-order mark, CRLF,
/// comments, trailing commas, `${VAR:-default}` and `${VAR}`, read by
/// `preview` as by `serve` and Python's `connect_config`.
fn jsonc_config(dir: &Path) -> String {
    let servers = servers_dir().display().to_string();
    let text = format!(
        "\u{feff}{{\r\n  // Claude Code's .mcp.json, edited by hand\r\n  \"mcpServers\": {{\r\n    \"invoice\": {{\r\n      \"command\": \"${{MCP_PREAMBLE_TEST_NODE:-node}}\", /* unset: the default */\r\n      \"args\": [\"${{MCP_PREAMBLE_TEST_DIR}}/invoice.mjs\",],\r\n      \"cwd\": \"{servers}\",\r\n    }},\r\n  }},\r\n}}\r\n"
    );
    write(dir, "mcp.json", &text)
}

#[test]
fn preview_reads_jsonc_and_claude_code_variables() {
    ensure_npm();
    let dir = scratch("jsonc");
    let config = jsonc_config(&dir);
    let servers = servers_dir().display().to_string();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
        .args(["preview", "--config", &config, "--timeout", "20"])
        .env("MCP_PREAMBLE_TEST_DIR", &servers)
        .env_remove("MCP_PREAMBLE_TEST_NODE")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("### invoice\n\nAlways call list_periods before get_invoice."),
        "{}",
        stdout(&out)
    );
    // Unset and without a default: the error names the variable.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
        .args(["preview", "--config", &config])
        .env_remove("MCP_PREAMBLE_TEST_DIR")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(
            "server \"invoice\": \"args\" uses ${MCP_PREAMBLE_TEST_DIR}, but that variable is not set"
        ),
        "{}",
        stderr(&out)
    );
}

/// Issue 55: `--model` and an `--encoding` that is not the model's are an
/// error naming both (exit 2), not a silently ignored flag.
#[test]
fn a_model_and_another_encoding_are_an_error() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus/seed-invoice-server.json")
        .display()
        .to_string();
    let out = run(&[
        "preview",
        &file,
        "--model",
        "gpt-4o",
        "--encoding",
        "cl100k_base",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("settings that disagree: model \"gpt-4o\" counts with o200k_base, not encoding \"cl100k_base\""),
        "{err}"
    );
    let out = run(&[
        "preview",
        &file,
        "--model",
        "gpt-4o",
        "--encoding",
        "o200k_base",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
