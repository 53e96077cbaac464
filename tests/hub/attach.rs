//! A host's own rmcp client, followed by the hub (tests/servers/client-echo.mjs).
#![cfg(feature = "rmcp")]

use crate::common;

use std::time::Duration;

use common::{node_entry, servers_dir};
use mcp_preamble::connect::{ConnectOptions, Handshake, HubHandler, connect_with};
use mcp_preamble::files::McpConfig;
use mcp_preamble::hub::Hub;
use mcp_preamble::rmcp::Peer;
use mcp_preamble::rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
};
use mcp_preamble::rmcp::service::{ClientLifecycleMode, ClientServiceExt, RoleClient};
use mcp_preamble::rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use mcp_preamble::{Assembler, Era};

const T: Duration = Duration::from_secs(30);

/// The host's identity: its own name, and roots.
fn host() -> ClientConfig {
    ClientConfig::new(roots(), Implementation::new("test-host", "9.9.9"))
}

fn roots() -> ClientCapabilities {
    let mut capabilities = ClientCapabilities::default();
    capabilities.roots = Some(Default::default());
    capabilities
}

/// The text of calling `tool` on `peer`.
async fn call(peer: &Peer<RoleClient>, tool: &'static str) -> String {
    let result = peer
        .call_tool(CallToolRequestParams::new(tool))
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    result.content[0].as_text().unwrap().text.clone()
}

/// What client-echo.mjs saw: client names, and whether roots were advertised.
async fn whoami(peer: &Peer<RoleClient>) -> (Vec<String>, bool) {
    let seen: serde_json::Value = serde_json::from_str(&call(peer, "whoami").await).unwrap();
    let names = seen["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect();
    (names, seen["capabilities"].get("roots").is_some())
}

/// Waits until the hub's section satisfies `ok`, or fails after 10 s.
async fn until(hub: &Hub, what: &str, ok: impl Fn(&str) -> bool) {
    let mut rx = hub.subscribe();
    let wait = async {
        loop {
            if ok(rx.borrow_and_update().text()) {
                return;
            }
            rx.changed().await.unwrap();
        }
    };
    if tokio::time::timeout(Duration::from_secs(10), wait)
        .await
        .is_err()
    {
        panic!("{what}: not seen; section:\n{}", hub.section().text());
    }
}

fn echo_command() -> tokio::process::Command {
    common::ensure_npm();
    tokio::process::Command::new("node").configure(|c| {
        c.arg("client-echo.mjs").current_dir(servers_dir());
    })
}

#[tokio::test]
async fn a_client_the_host_built_is_followed_in_both_eras() {
    let lifecycles = [
        (ClientLifecycleMode::Initialize, Era::Legacy),
        (
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
            Era::Modern,
        ),
    ];
    for (lifecycle, era) in lifecycles {
        let hub = Hub::new(Assembler::new()).grace(Duration::ZERO); // closed connections leave at once
        // The host's client, built with rmcp alone; the hub only sees it through the handler.
        let transport = TokioChildProcess::new(echo_command()).unwrap();
        let client = HubHandler::new(host())
            .serve_with_lifecycle(transport, lifecycle)
            .await
            .unwrap();
        let attached = hub.attach("echo", &client).await.unwrap();
        assert_eq!(attached.snapshot().era, era);
        assert!(hub.section().text().contains("### echo"), "{era:?}");

        // The host calls tools on its client while the hub follows it.
        let (names, roots) = whoami(client.peer()).await;
        assert_eq!(names, ["test-host"], "{era:?}");
        assert!(roots, "{era:?}: the host's capabilities reach the server");
        until(&hub, "a tool added later", |t| t.contains("`later`")).await;
        assert_eq!(call(client.peer(), "later").await, "later");
        // Nothing the hub sent named itself.
        assert_eq!(whoami(client.peer()).await.0, ["test-host"], "{era:?}");

        // The host's own handler is still there.
        assert_eq!(client.service().inner().client_info.name, "test-host");

        client.cancel().await.unwrap();
        until(&hub, "closed", |t| !t.contains("### echo")).await;
        assert!(hub.aliases().is_empty());
    }
}

#[tokio::test]
async fn connect_with_a_host_identity_in_both_eras() {
    for (handshake, era) in [
        (Handshake::Legacy, Era::Legacy),
        (Handshake::Auto, Era::Modern),
    ] {
        let hub = Hub::new(Assembler::new()).grace(Duration::ZERO); // closed connections leave at once
        let options = ConnectOptions::new()
            .handshake(handshake)
            .timeout(T)
            .client_info(Implementation::new("test-host", "9.9.9"))
            .capabilities(roots());
        let live = hub
            .connect(&node_entry("echo", "client-echo.mjs", &[]), &options)
            .await
            .unwrap_or_else(|f| panic!("{f}"));
        assert_eq!(live.snapshot().era, era);
        assert_eq!(whoami(&live.peer()).await, (vec!["test-host".into()], true));
        until(&hub, "a tool added later", |t| t.contains("`later`")).await;
        assert_eq!(call(&live.peer(), "later").await, "later");
        live.close().await;
        assert!(hub.aliases().is_empty(), "{era:?}: closed servers leave");
    }
}

#[tokio::test]
async fn a_connection_of_ours_attached_with_the_hosts_handler() {
    let hub = Hub::new(Assembler::new());
    let options = ConnectOptions::new().timeout(T);
    let entry = node_entry("echo", "client-echo.mjs", &[]);
    let connection = connect_with(&entry, &options, HubHandler::new(host()))
        .await
        .unwrap_or_else(|f| panic!("{f}"));
    let attached = hub.attach("echo", &connection.client).await.unwrap();
    assert_eq!(attached.snapshot().era, Era::Modern);
    assert_eq!(whoami(&connection.client).await.0, ["test-host"]);

    // Detaching removes the block; the client stays usable.
    attached.detach().await;
    assert!(hub.aliases().is_empty());
    assert!(!call(&connection.client, "whoami").await.is_empty());
    connection.close().await;
}

#[tokio::test]
async fn dropping_a_live_server_closes_it_and_removes_its_block() {
    let hub = Hub::new(Assembler::new());
    let options = ConnectOptions::new().timeout(T);
    let live = hub
        .connect(&node_entry("billing", "invoice.mjs", &[]), &options)
        .await
        .unwrap_or_else(|f| panic!("{f}"));
    let peer = live.peer();
    assert_eq!(hub.aliases(), ["billing"]);
    drop(live);
    assert!(hub.aliases().is_empty(), "removed at once");
    let closed = async {
        while !peer.is_transport_closed() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(5), closed)
        .await
        .expect("the connection closes");
}

#[tokio::test]
async fn hub_connect_all_keeps_the_good_servers() {
    common::ensure_npm();
    let dir = servers_dir();
    let config = McpConfig::from_json(
        &serde_json::json!({"mcpServers": {
            "billing": {"command": "node", "args": ["invoice.mjs"], "cwd": dir},
            "echo": {"command": "node", "args": ["client-echo.mjs"], "cwd": dir},
            "broken": {"command": "node", "args": ["exit-during-handshake.mjs"], "cwd": dir},
        }})
        .to_string(),
        "test.json",
    )
    .unwrap();
    let hub = Hub::new(Assembler::new()).grace(Duration::ZERO); // closed connections leave at once
    let results = hub
        .connect_all(&config, &ConnectOptions::new().timeout(T))
        .await;
    // Config order is alias order.
    let failure = results[1].as_ref().unwrap_err();
    assert_eq!(failure.alias, "broken");
    let shown = failure.to_string();
    assert!(
        shown.starts_with("server \"broken\": cannot connect: handshake failed: "),
        "{shown}"
    );
    assert!(
        shown.ends_with(" (stderr: fatal: config missing)"),
        "{shown}"
    );
    assert_eq!(hub.aliases(), ["billing", "echo"]);
    let echo = results[2].as_ref().unwrap();
    assert_eq!(whoami(&echo.peer()).await.0, ["mcp-preamble"]);
    assert!(echo.stderr().text().is_empty());
    for live in results.into_iter().flatten() {
        live.close().await;
    }
    assert!(hub.aliases().is_empty());
}
