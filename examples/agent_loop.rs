//! An agent loop that reads the live section before every model request.
//!
//! ```text
//! cargo run --example agent_loop --features rmcp
//! ```
//!
//! (It runs `npm ci` in `tests/servers` the first time: Node.js is needed.)
//!
//! It starts the seed's invoice server (on the official TypeScript SDK),
//! registers it with a [`Hub`], and runs a few turns with a stand-in model.
//! Each turn builds the request body for an OpenAI-style chat API (a system
//! message) and for an Anthropic-style API (a `system` field). Meanwhile the
//! server adds a tool; the next request shows it, with no code of ours
//! asking: the hub follows `notifications/tools/list_changed`.

use std::collections::BTreeMap;
use std::time::Duration;

use mcp_preamble::connect::ConnectOptions;
use mcp_preamble::hub::Hub;
use mcp_preamble::{Assembler, ServerEntry, ServerTransport};
use serde_json::json;

const BASE_PROMPT: &str = "You are a billing assistant.";

/// Stands in for a model call: answers from the prompt it was given.
fn stand_in_model(system: &str, user: &str) -> String {
    let tools = system
        .lines()
        .find(|l| l.starts_with("Tools:"))
        .unwrap_or("Tools: none");
    format!(
        "(stand-in) to {user:?} I would use {}",
        tools.trim_start_matches("Tools: ")
    )
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers");
    if !dir.join("node_modules").is_dir() {
        println!("installing the SDK server once (npm ci in tests/servers)…");
        let status = std::process::Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir)
            .status()
            .map_err(|e| format!("npm is needed to start the example server: {e}"))?;
        if !status.success() {
            return Err("npm ci failed in tests/servers".into());
        }
    }
    let entry = ServerEntry {
        alias: "billing".into(),
        transport: ServerTransport::Stdio {
            command: "node".into(),
            args: vec!["invoice-growing.mjs".into()],
            env: BTreeMap::from([("GROW_AFTER_MS".into(), "1200".into())]),
            cwd: Some(dir),
        },
    };

    let hub = Hub::new(Assembler::new().budget(300));
    let server = hub.connect(&entry, &ConnectOptions::new()).await?;
    println!(
        "connected: {} ({:?} era)\n",
        server.alias(),
        server.snapshot().era
    );

    let questions = [
        "Which periods exist?",
        "Show invoice 42.",
        "Pay invoice 42.",
    ];
    for (turn, user) in questions.iter().enumerate() {
        // Before every model request: nearly free when nothing changed.
        let section = hub.section();
        let system = format!("{BASE_PROMPT}\n\n{}", section.text());

        let openai = json!({
            "model": "gpt-4o",
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
        });
        let anthropic = json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 1024,
            "system": system,
            "messages": [{"role": "user", "content": user}],
        });
        println!(
            "--- turn {} (revision {}, {} section tokens)",
            turn + 1,
            section.revision(),
            section.assembly().total_tokens()
        );
        println!(
            "OpenAI-style request:\n{}",
            serde_json::to_string_pretty(&openai)?
        );
        println!(
            "Anthropic-style request:\n{}",
            serde_json::to_string_pretty(&anthropic)?
        );
        println!("model: {}\n", stand_in_model(&system, user));

        // The stand-in model "thinks" for a while; the server may change meanwhile.
        tokio::time::sleep(Duration::from_millis(900)).await;
    }

    server.close().await;
    println!("closed: the section is now {:?}", hub.section().text());
    Ok(())
}
