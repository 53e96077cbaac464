//! Close means close, state events, supervision, and the hub's start-up
//! helpers, against the live test servers (tests/servers).
#![cfg(feature = "rmcp")]

use crate::common;

use std::time::{Duration, Instant};

use common::{node_entry, servers_dir};
use mcp_preamble::connect::{ConnectOptions, HubHandler, Restart, connect, connect_with};
use mcp_preamble::files::{McpConfig, ServerEntry};
use mcp_preamble::hub::{Hub, ServerState, StateChange, StateReason};
use mcp_preamble::rmcp::model::ClientConfig;
use mcp_preamble::{Assembler, ServerSnapshot, Template};
use tokio::sync::broadcast;

const T: Duration = Duration::from_secs(30);

fn options() -> ConnectOptions {
    ConnectOptions::new().timeout(T)
}

/// The next state change of `alias`, within 20 s.
async fn next_of(rx: &mut broadcast::Receiver<StateChange>, alias: &str) -> StateChange {
    let wait = async {
        loop {
            let change = rx.recv().await.expect("the hub is alive");
            if change.alias == alias {
                return change;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(20), wait)
        .await
        .unwrap_or_else(|_| panic!("no state change of {alias}"))
}

#[tokio::test]
async fn closing_an_attached_connection_removes_its_block_at_once() {
    // The default 30 s grace period: only a server that goes away on its own gets it.
    let hub = Hub::new(Assembler::new());
    let mut states = hub.subscribe_states();
    let entry = node_entry("billing", "invoice.mjs", &[]);
    let connection = connect_with(&entry, &options(), HubHandler::new(ClientConfig::default()))
        .await
        .unwrap_or_else(|f| panic!("{f}"));
    assert!(connection.process_id.is_some());
    let _attached = hub.attach("billing", &connection.client).await.unwrap();
    let connected = next_of(&mut states, "billing").await;
    assert_eq!(
        (connected.state, connected.reason),
        (ServerState::Connected, StateReason::Connected)
    );
    let before = hub.revision();
    let started = Instant::now();
    connection.close().await;
    let gone = next_of(&mut states, "billing").await;
    assert_eq!(
        (gone.state, gone.reason),
        (ServerState::Gone, StateReason::Closed)
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "not the grace period"
    );
    assert_eq!(hub.revision(), before + 1, "one revision");
    assert_eq!(gone.revision, before + 1);
    assert!(hub.aliases().is_empty());
}

#[tokio::test]
async fn dropping_an_attached_connection_removes_its_block_at_once() {
    let hub = Hub::new(Assembler::new());
    let mut states = hub.subscribe_states();
    let entry = node_entry("billing", "invoice.mjs", &[]);
    let connection = connect_with(&entry, &options(), HubHandler::new(ClientConfig::default()))
        .await
        .unwrap_or_else(|f| panic!("{f}"));
    let _attached = hub.attach("billing", &connection.client).await.unwrap();
    next_of(&mut states, "billing").await;
    drop(connection);
    let gone = next_of(&mut states, "billing").await;
    assert_eq!(
        (gone.state, gone.reason),
        (ServerState::Gone, StateReason::Closed)
    );
    assert_eq!(hub.section().text(), "");
}

#[tokio::test]
async fn detaching_and_closing_a_live_server_are_one_revision_each() {
    let hub = Hub::new(Assembler::new());
    let entry = node_entry("billing", "invoice.mjs", &[]);
    let connection = connect_with(&entry, &options(), HubHandler::new(ClientConfig::default()))
        .await
        .unwrap_or_else(|f| panic!("{f}"));
    let attached = hub.attach("billing", &connection.client).await.unwrap();
    let before = hub.revision();
    attached.detach().await;
    assert_eq!(hub.revision(), before + 1);
    assert_eq!(hub.state("billing"), ServerState::Gone);
    connection.close().await;

    let mut states = hub.subscribe_states();
    let live = hub.connect(&entry, &options()).await.unwrap();
    assert!(live.process_id().is_some());
    let before = hub.revision();
    live.close().await;
    assert_eq!(hub.revision(), before + 1);
    let events: Vec<_> = std::iter::from_fn(|| states.try_recv().ok())
        .map(|c| (c.state, c.reason))
        .collect();
    assert_eq!(
        events,
        [
            (ServerState::Connected, StateReason::Connected),
            (ServerState::Gone, StateReason::Closed)
        ]
    );
}

#[tokio::test]
async fn a_server_that_exits_is_reconnecting_with_its_exit_status() {
    let hub = Hub::new(Assembler::new());
    let mut states = hub.subscribe_states();
    let entry = node_entry(
        "brief",
        "exit-after.mjs",
        &[("EXIT_AFTER_MS", "2500"), ("EXIT_CODE", "3")],
    );
    let live = hub.connect(&entry, &options()).await.unwrap();
    let revision = hub.revision();
    assert_eq!(
        next_of(&mut states, "brief").await.state,
        ServerState::Connected
    );
    let lost = next_of(&mut states, "brief").await;
    assert_eq!(
        (lost.state, lost.reason),
        (ServerState::Reconnecting, StateReason::ConnectionLost)
    );
    assert_eq!(lost.exit_status.and_then(|s| s.code()), Some(3), "{lost}");
    assert!(
        lost.to_string()
            .starts_with("brief: reconnecting (connection_lost, ")
    );
    assert_eq!(hub.revision(), revision, "the block is kept");
    // The host closing it now removes it at once.
    drop(live);
    let gone = next_of(&mut states, "brief").await;
    assert_eq!(
        (gone.state, gone.reason),
        (ServerState::Gone, StateReason::Closed)
    );
}

#[tokio::test]
async fn a_supervised_server_is_restarted_with_the_same_bytes() {
    let hub = Hub::new(Assembler::new()).grace(Duration::from_secs(20));
    let mut states = hub.subscribe_states();
    let entry = node_entry("brief", "exit-after.mjs", &[("EXIT_AFTER_MS", "2500")]);
    let restart = Restart::new().first_pause(Duration::from_millis(100));
    let live = hub
        .connect(&entry, &options().restart(restart))
        .await
        .unwrap();
    let first_pid = live.process_id();
    let section = hub.section();
    assert_eq!(
        next_of(&mut states, "brief").await.state,
        ServerState::Connected
    );
    let lost = next_of(&mut states, "brief").await;
    assert_eq!(lost.state, ServerState::Reconnecting);
    let back = next_of(&mut states, "brief").await;
    assert_eq!(
        (back.state, back.reason),
        (ServerState::Connected, StateReason::Restarted)
    );
    // Byte-identical block: the same revision and digest.
    assert_eq!(hub.revision(), section.revision());
    assert_eq!(hub.section().digest(), section.digest());
    assert_ne!(live.process_id(), first_pid, "a new process");
    // The new connection is usable through the LiveServer.
    let tools = live.peer().list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "list_periods"));
    live.close().await;
    assert!(hub.aliases().is_empty());
}

#[tokio::test]
async fn restarts_stop_after_the_attempts_and_the_grace_removes_it() {
    let hub = Hub::new(Assembler::new()).grace(Duration::from_secs(8));
    let mut states = hub.subscribe_states();
    let dir = std::env::temp_dir().join(format!("mcp-preamble-restarts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("spawns.log");
    let _ = std::fs::remove_file(&log);
    let log_text = log.display().to_string();
    // Refuses every start after the first.
    let entry = node_entry(
        "flaky",
        "count-spawns.mjs",
        &[("SPAWN_LOG", &log_text), ("FAIL_AFTER_SPAWNS", "1")],
    );
    let restart = Restart::new()
        .max_attempts(2)
        .first_pause(Duration::from_millis(50));
    let live = hub
        .connect(&entry, &options().restart(restart))
        .await
        .unwrap();
    assert_eq!(
        next_of(&mut states, "flaky").await.state,
        ServerState::Connected
    );
    // Kill it from outside: it ended on its own, as far as the host knows.
    let pid = live.process_id().unwrap();
    std::process::Command::new("kill")
        .arg(pid.to_string())
        .status()
        .unwrap();
    let lost = next_of(&mut states, "flaky").await;
    assert_eq!(lost.state, ServerState::Reconnecting);
    let gone = next_of(&mut states, "flaky").await;
    assert_eq!(
        (gone.state, gone.reason),
        (ServerState::Gone, StateReason::GraceExpired)
    );
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 1);
    // Both attempts ran and were refused; their stderr joins the tail.
    let tail = live.stderr().text();
    assert_eq!(tail.matches("refused spawn 2").count(), 2, "{tail}");
    drop(live);
}

#[test]
fn restart_pauses_back_off_with_jitter_within_bounds() {
    let r = Restart::new()
        .first_pause(Duration::from_millis(100))
        .max_pause(Duration::from_millis(1000));
    assert_eq!(r.pause(0, 0.0), Duration::from_millis(50));
    assert_eq!(r.pause(0, 1.0), Duration::from_millis(100));
    assert_eq!(r.pause(1, 0.5), Duration::from_millis(150));
    assert_eq!(r.pause(3, 0.0), Duration::from_millis(400));
    // Capped, and no overflow however many attempts.
    assert_eq!(r.pause(10, 1.0), Duration::from_millis(1000));
    assert_eq!(r.pause(u32::MAX, 0.0), Duration::from_millis(500));
}

#[tokio::test]
async fn attach_all_publishes_one_revision_for_many() {
    let hub = Hub::new(Assembler::new());
    let mut connections = Vec::new();
    for alias in ["a", "b", "c"] {
        let entry = node_entry(alias, "invoice.mjs", &[]);
        let c = connect_with(&entry, &options(), HubHandler::new(ClientConfig::default()))
            .await
            .unwrap_or_else(|f| panic!("{f}"));
        connections.push((alias, c));
    }
    let before = hub.revision();
    let attached = hub
        .attach_all(connections.iter().map(|(a, c)| (a.to_string(), &c.client)))
        .await
        .unwrap();
    assert_eq!(attached.len(), 3);
    assert_eq!(hub.revision(), before + 1, "one revision for three");
    assert_eq!(hub.aliases(), ["a", "b", "c"]);
    for (_, c) in connections {
        c.close().await;
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while !hub.aliases().is_empty() {
        assert!(Instant::now() < deadline, "{:?}", hub.aliases());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[test]
fn upsert_all_is_one_revision_and_template_matches_the_section() {
    let hub = Hub::new(Assembler::new().template(Template::xml()));
    let sent = hub.revision();
    let r = hub
        .upsert_all([
            (
                "a".to_string(),
                ServerSnapshot::new("a").with_instructions("Use a."),
            ),
            (
                "b".to_string(),
                ServerSnapshot::new("b").with_instructions("Use b."),
            ),
        ])
        .unwrap();
    assert_eq!(r, sent + 1);
    let message = hub
        .changes_since(sent)
        .render(&hub.template())
        .unwrap()
        .unwrap();
    assert!(message.starts_with("<mcp_server_changes>"), "{message}");
    assert!(!message.contains("## MCP"), "{message}");
}

#[tokio::test]
async fn connect_all_starts_a_few_at_a_time() {
    common::ensure_npm();
    let dir = servers_dir();
    let servers: serde_json::Map<String, serde_json::Value> = (0..3)
        .map(|i| {
            let entry = serde_json::json!({"command": "node", "args": ["slow-start.mjs"],
                "cwd": dir, "env": {"SILENT_MS": "500"}});
            (format!("s{i}"), entry)
        })
        .collect();
    let config = McpConfig::from_json(
        &serde_json::json!({ "mcpServers": servers }).to_string(),
        "t.json",
    )
    .unwrap();
    // One at a time: each waits for the one before (a lower bound, so load cannot fail it).
    let started = Instant::now();
    let results = mcp_preamble::connect::connect_all(&config, &options().concurrency(1)).await;
    assert!(started.elapsed() >= Duration::from_millis(1500));
    assert!(results.iter().all(Result::is_ok));
    assert_eq!(ConnectOptions::DEFAULT_CONCURRENCY, 8);
}

#[tokio::test]
async fn a_missing_cwd_is_reported_as_such() {
    let entry = ServerEntry::stdio("x", "node", ["invoice.mjs"]).cwd("/no/such/dir/mcp-preamble");
    let failure = connect(&entry, &options()).await.unwrap_err();
    let shown = failure.to_string();
    assert!(
        shown.contains("the working directory \"/no/such/dir/mcp-preamble\" does not exist"),
        "{shown}"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn servers_get_a_short_environment_plus_their_own() {
    // Cargo sets this in the test process: it must not reach the server.
    assert!(std::env::var_os("CARGO_PKG_NAME").is_some());
    let entry = ServerEntry::stdio("env", "sh", ["-c", "env >&2; exit 3"]).env("MINE", "1");
    let failure = connect(&entry, &options()).await.unwrap_err();
    let names: Vec<&str> = failure
        .stderr
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k))
        .collect();
    assert!(names.contains(&"MINE"), "{names:?}");
    assert!(names.contains(&"PATH"), "{names:?}");
    for name in &names {
        assert!(
            *name == "MINE"
                || *name == "PWD"
                || *name == "SHLVL"
                || *name == "_"
                || mcp_preamble::connect::INHERITED_ENV.contains(name),
            "{name} leaked: {names:?}"
        );
    }
}
