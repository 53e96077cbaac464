//! Live servers on the official TypeScript SDK 2.x (tests/servers/), reached
//! through rmcp. The tests install the pinned SDK with `npm ci` when needed.
#![cfg(feature = "rmcp")]

use crate::common;

use std::time::Duration;

use common::node_entry;

use mcp_preamble::connect::{ConnectOptions, Handshake, connect};
use mcp_preamble::files::ServerEntry;
use mcp_preamble::report::Limit;
use mcp_preamble::{Era, ErrorKind, Instructions};

fn node(alias: &str, script: &str) -> ServerEntry {
    node_entry(alias, script, &[])
}

const SEED: &str = "Always call list_periods before get_invoice. Invoice IDs are period scoped and are not stable across periods.";
const T: Duration = Duration::from_secs(30);

fn opts(handshake: &Handshake) -> ConnectOptions {
    ConnectOptions::new()
        .handshake(handshake.clone())
        .timeout(T)
}

#[tokio::test]
async fn the_seed_server_in_all_three_handshakes() {
    let entry = node("invoice", "invoice.mjs");
    let cases = [
        (Handshake::Legacy, Era::Legacy, "2025-11-25"),
        (Handshake::Auto, Era::Modern, "2026-07-28"),
        (
            Handshake::Pinned("2026-07-28".into()),
            Era::Modern,
            "2026-07-28",
        ),
    ];
    for (handshake, era, version) in cases {
        let c = connect(&entry, &opts(&handshake))
            .await
            .unwrap_or_else(|f| panic!("{handshake:?}: {} / {}", f.error, f.stderr));
        let s = &c.snapshot;
        assert_eq!(s.alias.as_deref(), Some("invoice"));
        assert_eq!(s.era, era, "{handshake:?}");
        assert_eq!(s.protocol_version, version);
        assert_eq!(s.instructions, Instructions::Present(SEED.into()));
        assert_eq!(s.server_info.name, "invoice-server");
        let names: Vec<&str> = s.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["list_periods", "get_invoice"]);
        if era == Era::Modern {
            let hints = s.cache.as_ref().unwrap();
            assert_eq!(hints.ttl_ms, Some(0));
            assert_eq!(hints.cache_scope.as_deref(), Some("private"));
        } else {
            assert!(s.cache.is_none());
        }
        c.close().await;
    }
}

#[tokio::test]
async fn whitespace_instructions_are_blank() {
    let c = connect(&node("ws", "whitespace.mjs"), &opts(&Handshake::Auto))
        .await
        .unwrap_or_else(|f| panic!("{}", f.error));
    assert_eq!(c.snapshot.instructions, Instructions::Blank("   ".into()));
    c.close().await;
}

#[tokio::test]
async fn a_server_that_exits_reports_its_stderr() {
    let f = connect(
        &node("dies", "exit-during-handshake.mjs"),
        &opts(&Handshake::Auto),
    )
    .await
    .unwrap_err();
    assert_eq!(f.error.kind(), ErrorKind::Connect, "{}", f.error);
    assert!(f.stderr.contains("fatal: config missing"), "{:?}", f.stderr);
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_alone() {
    let silent = node_entry("silent", "never-answers.mjs", &[("IGNORE_EOF", "1")]);
    let invoice = node("invoice", "invoice.mjs");
    let short = Duration::from_secs(3);
    let (short_options, options) = (ConnectOptions::new().timeout(short), opts(&Handshake::Auto));
    let (a, b) = tokio::join!(
        connect(&silent, &short_options),
        connect(&invoice, &options)
    );
    let f = a.unwrap_err();
    assert_eq!(f.error.kind(), ErrorKind::Timeout);
    assert_eq!(
        f.error.to_string(),
        "timed out: no complete answer within 3000 ms"
    );
    assert!(f.elapsed < Duration::from_secs(10), "{:?}", f.elapsed);
    let ok = b.unwrap_or_else(|f| panic!("{}", f.error));
    assert_eq!(ok.snapshot.tools.len(), 2);
    ok.close().await;
}

#[tokio::test]
async fn a_non_json_line_on_stdout_before_the_answer() {
    let r = connect(&node("noisy", "noisy-stdout.mjs"), &opts(&Handshake::Auto)).await;
    match r {
        Ok(c) => {
            assert_eq!(c.snapshot.instructions, Instructions::Present(SEED.into()));
            c.close().await;
        }
        Err(f) => panic!("noisy server failed: {} / {}", f.error, f.stderr),
    }
}

/// The invoice server over Streamable HTTP (`servers/http.mjs`) on a free
/// port, and its URL.
#[cfg(feature = "http")]
async fn http_invoice() -> (tokio::process::Child, String) {
    use common::{ensure_npm, servers_dir};

    ensure_npm();
    let mut child = tokio::process::Command::new("node")
        .args(["http.mjs", "0"])
        .current_dir(servers_dir())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
    let line = tokio::time::timeout(T, lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let url = line.strip_prefix("listening ").unwrap().to_string();
    (child, url)
}

#[cfg(feature = "http")]
#[tokio::test]
async fn streamable_http_on_localhost() {
    use mcp_preamble::files::ServerTransport;
    use std::collections::BTreeMap;

    let (mut child, url) = http_invoice().await;
    let entry = ServerEntry {
        alias: "remote".into(),
        transport: ServerTransport::Http {
            url,
            headers: BTreeMap::new(),
        },
    };
    for (handshake, era) in [
        (Handshake::Auto, Era::Modern),
        (Handshake::Legacy, Era::Legacy),
    ] {
        let c = connect(&entry, &opts(&handshake))
            .await
            .unwrap_or_else(|f| panic!("{handshake:?}: {}", f.error));
        assert_eq!(c.snapshot.era, era);
        assert_eq!(c.snapshot.instructions, Instructions::Present(SEED.into()));
        assert_eq!(c.snapshot.tools.len(), 2);
        c.close().await;
    }
    child.kill().await.ok();
}

/// A Streamable HTTP connection keeps its TCP connections alive: rmcp's
/// own client opens one per message (measured: one connect per forwarded
/// call in `benches/serve.rs`).
#[cfg(feature = "http")]
#[tokio::test]
async fn streamable_http_calls_reuse_their_tcp_connections() {
    use mcp_preamble::rmcp::model::CallToolRequestParams;

    let (mut child, url) = http_invoice().await;
    let counter = url.replace("/mcp", "/connections");
    let entry = ServerEntry::http("remote", url);
    let c = connect(&entry, &opts(&Handshake::Auto))
        .await
        .unwrap_or_else(|f| panic!("{}", f.error));
    let calls = 30;
    for _ in 0..calls {
        c.client
            .peer()
            .call_tool(CallToolRequestParams::new("list_periods"))
            .await
            .expect("a call");
    }
    let opened: usize = reqwest::get(&counter)
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The handshake, the tool list and 30 calls: a few connections, not one each.
    assert!(opened <= 4, "{opened} tcp connections for {calls} calls");
    c.close().await;
    child.kill().await.ok();
}

#[tokio::test]
async fn endless_tools_list_paging_stops_at_the_limits() {
    let limits = mcp_preamble::Limits::default();
    for (mode, limit) in [("same", Limit::ToolPages), ("new", Limit::Tools)] {
        let entry = node_entry("endless", "endless-pages.mjs", &[("MODE", mode)]);
        let c = connect(&entry, &opts(&Handshake::Legacy))
            .await
            .unwrap_or_else(|f| panic!("{mode}: {} / {}", f.error, f.stderr));
        let s = &c.snapshot;
        assert_eq!(s.limits.len(), 1, "{mode}: {:?}", s.limits);
        assert_eq!(s.limits[0].limit, limit, "{mode}");
        match limit {
            Limit::ToolPages => assert_eq!(s.tools.len(), limits.max_tool_pages()),
            _ => assert_eq!(s.tools.len(), limits.max_tools()),
        }
        // The limit is reported with the server's block, which still renders.
        let a = mcp_preamble::Assembler::new()
            .assemble(std::slice::from_ref(s))
            .unwrap();
        assert!(a.text().contains("Call t0 first."));
        assert_eq!(a.servers()[0].limits, s.limits);
        c.close().await;
    }
}
