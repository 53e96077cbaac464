//! `mcp-preamble serve`: a forwarded `tools/call` round trip next to a
//! direct one (1,000 calls each over stdio, to the invoice test server),
//! and the instructions served from the hub's memo next to assembling them
//! per `initialize`. Prints both ratios. Needs node and
//! `npm ci` in tests/servers.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use mcp_preamble::connect::{ConnectOptions, connect};
use mcp_preamble::files::{ServerEntry, ServerTransport};
use mcp_preamble::hub::Hub;
use mcp_preamble::rmcp::model::CallToolRequestParams;
use mcp_preamble::serve::{Gateway, ServeAs, prepare};
use mcp_preamble::{Assembler, ServerSnapshot};

const CALLS: u32 = 1000;

fn servers() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers")
}

fn entry(alias: &str, command: &str, args: Vec<String>) -> ServerEntry {
    ServerEntry {
        alias: alias.into(),
        transport: ServerTransport::Stdio {
            command: command.into(),
            args,
            env: Default::default(),
            cwd: Some(servers()),
        },
    }
}

/// The mean round trip of `tool` over `CALLS` calls (after 20 to warm up).
async fn round_trip(e: &ServerEntry, tool: &str) -> Duration {
    let options = ConnectOptions::new().timeout(Duration::from_secs(60));
    let c = connect(e, &options).await.expect("connects");
    for _ in 0..20 {
        c.client
            .call_tool(CallToolRequestParams::new(tool.to_string()))
            .await
            .unwrap();
    }
    let start = Instant::now();
    for _ in 0..CALLS {
        let r = c
            .client
            .call_tool(CallToolRequestParams::new(tool.to_string()))
            .await
            .unwrap();
        black_box(r);
    }
    let mean = start.elapsed() / CALLS;
    c.close().await;
    mean
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let invoice = servers().join("invoice.mjs").display().to_string();
    let direct = entry("billing", "node", vec![invoice.clone()]);
    let dir = std::env::temp_dir().join(format!("mcp-preamble-bench-serve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("mcp.json");
    let servers =
        serde_json::json!({"mcpServers": {"billing": {"command": "node", "args": [invoice]}}});
    std::fs::write(&config, servers.to_string()).unwrap();
    let gateway = entry(
        "gateway",
        env!("CARGO_BIN_EXE_mcp-preamble"),
        vec![
            "serve".into(),
            "--config".into(),
            config.display().to_string(),
        ],
    );
    let (alone, forwarded) = runtime.block_on(async {
        (
            round_trip(&direct, "list_periods").await,
            round_trip(&gateway, "billing__list_periods").await,
        )
    });
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "tools/call round trip over stdio ({CALLS} calls): direct {alone:?}, through serve {forwarded:?}, overhead {:.2}x (+{:?})",
        forwarded.as_secs_f64() / alone.as_secs_f64(),
        forwarded.saturating_sub(alone)
    );

    // Instructions per `initialize`: read from the memo vs assembled anew.
    let corpus: Vec<ServerSnapshot> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus"))
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .filter_map(|p| {
                let alias = p.file_stem()?.to_string_lossy().into_owned();
                Some(
                    mcp_preamble::files::load_server_file(&p)
                        .ok()?
                        .with_alias(alias),
                )
            })
            .collect();
    let assembler = prepare(Assembler::new(), ServeAs::ClaudeCode).unwrap();
    let hub = Hub::new(assembler.clone());
    hub.upsert_all(corpus.iter().map(|s| (s.alias.clone().unwrap(), s.clone())))
        .unwrap();
    let served = runtime.block_on(async {
        let gateway = Gateway::new(hub, ServeAs::ClaudeCode);
        let n = 10_000u32;
        let start = Instant::now();
        for _ in 0..n {
            black_box(gateway.instructions());
        }
        start.elapsed() / n
    });
    let n = 20u32;
    let start = Instant::now();
    for _ in 0..n {
        black_box(assembler.assemble(&corpus).unwrap());
    }
    let assembled = start.elapsed() / n;
    println!(
        "instructions for one initialize ({} servers, claude-code): from the memo {served:?}, assembled {assembled:?}, {:.0}x",
        corpus.len(),
        assembled.as_secs_f64() / served.as_secs_f64()
    );
}
