//! An agent loop whose host owns its MCP client while the hub follows it.
//!
//! ```text
//! cargo run --example agent_loop --features rmcp
//! ```
//!
//! (It runs `npm ci` in `tests/servers` the first time: Node.js is needed.)
//!
//! The host starts the seed's invoice server (on the official TypeScript
//! SDK) with its own client: its own name in `clientInfo`, its own handler.
//! It attaches that client to a [`Hub`], and runs five turns with a
//! stand-in model. On each turn the host calls a tool on its client, and
//! rebuilds its system prompt only when the section changed, so a
//! provider's prompt cache stays warm. Meanwhile the server adds a tool; the
//! hub follows `notifications/tools/list_changed` on the host's connection,
//! and the next turn's prompt shows it.

use std::time::Duration;

use mcp_preamble::Assembler;
use mcp_preamble::connect::{ConnectOptions, HubHandler, connect_with};
use mcp_preamble::files::ServerEntry;
use mcp_preamble::hub::Hub;
use mcp_preamble::rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation,
};
use serde_json::json;

const BASE_PROMPT: &str = "You are a billing assistant.";

/// Stands in for a model call: picks the last tool the prompt lists.
fn stand_in_model(system: &str) -> String {
    system
        .lines()
        .find_map(|l| l.strip_prefix("Tools: "))
        .and_then(|tools| tools.split(", ").last())
        .unwrap_or("`list_periods`")
        .trim_matches('`')
        .to_string()
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers");
    if !dir.join("node_modules").is_dir() {
        println!("installing the SDK server once (npm ci in tests/servers)…");
        let status = std::process::Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir)
            .status()?;
        anyhow::ensure!(status.success(), "npm ci failed in tests/servers");
    }
    let entry = ServerEntry::stdio("billing", "node", ["invoice-growing.mjs"])
        .env("GROW_AFTER_MS", "1200")
        .cwd(dir);

    // The host's own client: its name, its capabilities, its handler (a
    // ClientConfig answers nothing; a real host brings a ClientHandler that
    // does sampling or elicitation). HubHandler lets the hub hear the server.
    let me = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("billing-agent", "0.3.0"),
    );
    let connection = connect_with(&entry, &ConnectOptions::new(), HubHandler::new(me)).await?;
    let client = &connection.client;

    let hub = Hub::new(Assembler::new().budget(300));
    let following = hub.attach("billing", client).await?;
    println!(
        "attached: {} ({:?} era), as {:?}\n",
        following.alias(),
        following.snapshot().era,
        client.service().inner().client_info.name
    );

    let questions = [
        "Which periods exist?",
        "Show invoice 42.",
        "Pay invoice 42.",
        "Pay invoice 43 too.",
        "Anything else?",
    ];
    let mut sent_digest: Option<String> = None;
    let mut system = String::new();
    for (turn, user) in questions.iter().enumerate() {
        // Before every model request: an Arc clone, assembled when the server changed.
        let section = hub.section();
        // The digest changes exactly when the section's bytes do: a new
        // system prompt (and a prompt-cache miss) only then.
        if sent_digest.as_deref() != Some(section.digest()) {
            system = format!("{BASE_PROMPT}\n\n{}", section.text());
            sent_digest = Some(section.digest().to_string());
            println!(
                "--- turn {}: new system prompt (revision {}, {} section tokens)\n{system}",
                turn + 1,
                section.revision(),
                section.assembly().total_tokens()
            );
        } else {
            println!("--- turn {}: system prompt unchanged", turn + 1);
        }
        // An Anthropic-style request body (an OpenAI-style one has a system message instead).
        let request = json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 1024,
            "system": system,
            "messages": [{"role": "user", "content": user}],
        });
        println!("user: {}", request["messages"][0]["content"]);

        // The model asks for a tool; the host calls it on its own client.
        let tool = stand_in_model(&system);
        let mut call = CallToolRequestParams::new(tool.clone());
        if tool != "list_periods" {
            let args = json!({"id": "42"});
            call = call.with_arguments(args.as_object().cloned().unwrap_or_default());
        }
        let result = client.call_tool(call).await?;
        let text: Vec<&str> = result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
            .collect();
        println!("tool {tool} -> {text:?}\n");

        // The stand-in model "thinks" for a while; the server may change meanwhile.
        tokio::time::sleep(Duration::from_millis(900)).await;
    }

    // Closing the host's connection takes the server out of the section
    // at once, with one new revision (a server that exits on its own would
    // keep its block for the hub's grace period instead).
    let mut changes = hub.subscribe();
    changes.borrow_and_update();
    let before = hub.revision();
    connection.close().await;
    tokio::time::timeout(Duration::from_secs(2), changes.changed()).await??;
    anyhow::ensure!(hub.revision() == before + 1, "one revision for the close");
    println!("closed: the section is now {:?}", hub.section().text());
    Ok(())
}
