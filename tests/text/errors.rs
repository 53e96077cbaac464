//! Every public error type goes through `?` into anyhow and keeps its message.

use mcp_preamble::{ErrorKind, ServerSnapshot};

const NOT_FOUND: &str =
    r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#;

fn error() -> anyhow::Result<()> {
    ServerSnapshot::from_discover_json(NOT_FOUND)?;
    Ok(())
}

fn rpc_error() -> anyhow::Result<()> {
    let e = ServerSnapshot::from_discover_json(NOT_FOUND).unwrap_err();
    Err(e.rpc_error().cloned().unwrap())?;
    Ok(())
}

#[test]
fn error_and_rpc_error() {
    let e = error().unwrap_err();
    assert_eq!(
        e.to_string(),
        "json-rpc error response: server/discover failed with -32601: Method not found"
    );
    let kind = e.downcast_ref::<mcp_preamble::Error>().unwrap().kind();
    assert_eq!(kind, ErrorKind::RpcError);
    assert_eq!(
        rpc_error().unwrap_err().to_string(),
        "server/discover failed with -32601: Method not found"
    );
}

#[cfg(feature = "testing")]
#[test]
fn testing_failure() {
    fn check() -> anyhow::Result<()> {
        let text: String = (0..50)
            .map(|i| format!("Step {i} must run before step {}. ", i + 1))
            .collect();
        let s = mcp_preamble::testing::server("big").instructions(text);
        mcp_preamble::testing::fits(&s, 10)?;
        Ok(())
    }
    let shown = check().unwrap_err().to_string();
    assert!(
        shown.starts_with("server \"big\" does not fit 10 tokens"),
        "{shown}"
    );
}

#[cfg(feature = "rmcp")]
#[tokio::test]
async fn connect_failure() {
    use mcp_preamble::connect::{ConnectOptions, connect};
    async fn run() -> anyhow::Result<()> {
        let entry = mcp_preamble::files::ServerEntry {
            alias: "nowhere".into(),
            transport: mcp_preamble::files::ServerTransport::Stdio {
                command: "/nonexistent/mcp-server".into(),
                args: vec![],
                env: Default::default(),
                cwd: None,
            },
        };
        connect(&entry, &ConnectOptions::new()).await?;
        Ok(())
    }
    let e = run().await.unwrap_err();
    assert!(
        e.to_string().starts_with(
            "server \"nowhere\": cannot connect: cannot start \"/nonexistent/mcp-server\": "
        ),
        "{e}"
    );
    // The cause is the next link of the chain, not a repeat of the message.
    let chain: Vec<String> = e.chain().map(|c| c.to_string()).collect();
    assert!(chain.len() <= 2, "{chain:?}");
}

/// The phrase a message repeats, if any: its parts (split at `": "` and
/// line ends, trimmed, at least 8 characters) each appear once.
fn repeated_phrase(message: &str) -> Option<String> {
    // anyhow's `{:?}` ends with a backtrace when RUST_BACKTRACE asks.
    let message = message.split("\n\nStack backtrace:").next().unwrap();
    let mut seen = std::collections::HashSet::new();
    message
        .split('\n')
        .flat_map(|line| line.split(": "))
        .map(str::trim)
        .filter(|part| part.chars().count() >= 8)
        .find(|part| !seen.insert(*part))
        .map(str::to_string)
}

#[test]
fn repeated_phrases_are_found() {
    assert_eq!(
        repeated_phrase(
            "cannot read file: /x.toml: No such file or directory (os error 2): No such file or directory (os error 2)"
        )
        .as_deref(),
        Some("No such file or directory (os error 2)")
    );
    assert_eq!(repeated_phrase("invalid json: line 1: eof"), None);
}

/// Each kind of error the crate returns, made through the public API.
fn every_error() -> Vec<(&'static str, anyhow::Error)> {
    use mcp_preamble::settings::{PolicyFile, Settings};
    use mcp_preamble::{Assembler, Encoding, Template};
    let dir = std::env::temp_dir().join(format!("mcp-preamble-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad_template = dir.join("bad.j2");
    std::fs::write(&bad_template, "{% for %}").unwrap();
    let mut with_bad_template = Settings::new();
    with_bad_template.defaults.template = Some(bad_template.display().to_string());
    with_bad_template.origin = "p.toml".into();
    let mut with_missing_template = with_bad_template.clone();
    with_missing_template.defaults.template = Some(dir.join("missing.j2").display().to_string());
    let drift = Assembler::new()
        .lock(mcp_preamble::pin::Lock::new())
        .on_change(mcp_preamble::pin::OnChange::Fail)
        .assemble(&[ServerSnapshot::new("x").with_instructions("Be brief.")]);
    let errors: Vec<(&str, mcp_preamble::Error)> = vec![
        (
            "invalid json",
            ServerSnapshot::from_discover_json("{").unwrap_err(),
        ),
        (
            "invalid message",
            ServerSnapshot::from_discover_json(r#"{"jsonrpc":"2.0","id":1,"result":5}"#)
                .unwrap_err(),
        ),
        (
            "rpc error",
            ServerSnapshot::from_discover_json(NOT_FOUND).unwrap_err(),
        ),
        (
            "io",
            PolicyFile::from_path(dir.join("missing.toml")).unwrap_err(),
        ),
        (
            "template",
            Template::from_source("t.j2", "{% for %}").unwrap_err(),
        ),
        (
            "template file",
            Template::from_path(&bad_template).unwrap_err(),
        ),
        ("unknown template", Template::builtin("html").unwrap_err()),
        ("unknown encoding", Encoding::from_name("nope").unwrap_err()),
        (
            "policy typo",
            PolicyFile::from_str("version = 1\n[defaults]\nbudgett = 5\n", "p.toml").unwrap_err(),
        ),
        (
            "policy value",
            PolicyFile::from_str("version = 1\n[defaults]\norder = \"random\"\n", "p.toml")
                .unwrap_err(),
        ),
        (
            "policy syntax",
            PolicyFile::from_str("version = 1\n[defaults\n", "p.toml").unwrap_err(),
        ),
        (
            "policy weight",
            PolicyFile::from_str("version = 1\n[servers.a]\nweight = -1.0\n", "p.toml")
                .unwrap_err(),
        ),
        (
            "config json",
            mcp_preamble::files::McpConfig::from_json("{", "mcp.json").unwrap_err(),
        ),
        (
            "policy template",
            Assembler::from_settings(&with_bad_template).unwrap_err(),
        ),
        (
            "policy template missing",
            Assembler::from_settings(&with_missing_template).unwrap_err(),
        ),
        ("drift", drift.unwrap_err()),
    ];
    std::fs::remove_dir_all(&dir).unwrap();
    let mut all: Vec<(&str, anyhow::Error)> = errors
        .into_iter()
        .map(|(k, e)| (k, anyhow::Error::new(e)))
        .collect();
    let rpc = ServerSnapshot::from_discover_json(NOT_FOUND).unwrap_err();
    all.push(("rpc error type", rpc.rpc_error().cloned().unwrap().into()));
    all
}

#[test]
fn every_error_says_each_thing_once() {
    let all = every_error();
    for (what, e) in &all {
        for shown in [format!("{e:#}"), format!("{e:?}"), format!("{e}")] {
            assert_eq!(repeated_phrase(&shown), None, "{what}: {shown}");
        }
        // A policy error is one line, whichever way it is printed.
        if what.starts_with("policy") {
            assert!(!format!("{e:#}").contains('\n'), "{what}: {e:#}");
        }
    }
    let kinds: std::collections::HashSet<ErrorKind> = all
        .iter()
        .filter_map(|(_, e)| e.downcast_ref::<mcp_preamble::Error>().map(|e| e.kind()))
        .collect();
    // Connect and Timeout are below (live); the rest are all here.
    assert_eq!(kinds.len(), 9, "{kinds:?}");
    let missing = &all.iter().find(|(w, _)| *w == "io").unwrap().1;
    assert!(
        format!("{missing:#}").ends_with("missing.toml: No such file or directory (os error 2)"),
        "{missing:#}"
    );
}

#[cfg(feature = "testing")]
#[test]
fn a_testing_failure_says_each_thing_once() {
    let s = mcp_preamble::testing::server("x").instructions("Be brief. ".repeat(40));
    // Its message lists the removed sentences (which may repeat): it has
    // no source to say them again.
    let e = anyhow::Error::new(mcp_preamble::testing::fits(&s, 3).unwrap_err());
    assert_eq!(e.chain().count(), 1);
    assert_eq!(format!("{e:#}"), e.to_string());
}

#[cfg(feature = "rmcp")]
#[tokio::test]
async fn connect_and_timeout_say_each_thing_once() {
    use mcp_preamble::connect::{ConnectOptions, connect};
    use mcp_preamble::files::{ServerEntry, ServerTransport};
    let entry = |command: &str, args: &[&str]| ServerEntry {
        alias: "a".into(),
        transport: ServerTransport::Stdio {
            command: command.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            env: Default::default(),
            cwd: None,
        },
    };
    let options = ConnectOptions::new().timeout(std::time::Duration::from_millis(300));
    let mut kinds = Vec::new();
    for e in [
        entry("/nonexistent/mcp-server", &[]),
        entry("sleep", &["5"]),
    ] {
        let failure = connect(&e, &options).await.unwrap_err();
        kinds.push(failure.error.kind());
        let inner = anyhow::Error::new(failure.error);
        for shown in [format!("{inner:#}"), format!("{inner:?}")] {
            assert_eq!(repeated_phrase(&shown), None, "{shown}");
        }
    }
    assert_eq!(kinds, [ErrorKind::Connect, ErrorKind::Timeout]);
    let failure = anyhow::Error::new(
        connect(&entry("/nonexistent/x", &[]), &options)
            .await
            .unwrap_err(),
    );
    for shown in [format!("{failure:#}"), format!("{failure:?}")] {
        assert_eq!(repeated_phrase(&shown), None, "{shown}");
    }
}
