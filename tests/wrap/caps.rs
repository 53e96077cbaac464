//! The host's caps under `wrap --as HOST` (issue 51.3), in process: a fake
//! upstream on one duplex stream, the host on another, `relay_streams`
//! between them.

use mcp_preamble::Assembler;
use mcp_preamble::hosts::Host;
use mcp_preamble::serve::{READER, ServeAs, Wrapper, relay_streams};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, duplex};

/// A description of exactly `units` UTF-16 units: distinct sentences of
/// trivia with one constraint in the middle.
pub fn long_description(units: usize) -> String {
    let mut text = String::new();
    let mut i = 0;
    while text.encode_utf16().count() < units / 2 {
        text.push_str(&format!(
            "Field {i} of an invoice holds an amount in cents. "
        ));
        i += 1;
    }
    text.push_str("Always call list_periods before get_invoice. ");
    while text.encode_utf16().count() < units {
        text.push_str(&format!(
            "Field {i} of an invoice holds an amount in cents. "
        ));
        i += 1;
    }
    let cut: Vec<u16> = text.encode_utf16().take(units - 1).collect();
    let mut text = String::from_utf16(&cut).unwrap().trim_end().to_string();
    while text.encode_utf16().count() < units {
        text.push('.');
    }
    text
}

/// A fake upstream answering `initialize` (with `instructions`) and
/// `tools/list` (with `tools`).
pub async fn upstream(stream: DuplexStream, instructions: String, tools: Value) {
    let (read, mut write) = tokio::io::split(stream);
    let mut lines = BufReader::new(read).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let message: Value = serde_json::from_str(&line).unwrap();
        let Some(id) = message.get("id") else {
            continue;
        };
        let result = match message["method"].as_str() {
            Some("initialize") => json!({"protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}}, "serverInfo": {"name": "billing", "version": "1"},
                "instructions": instructions}),
            Some("tools/list") => tools.clone(),
            _ => json!({}),
        };
        let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
        if write
            .write_all(format!("{answer}\n").as_bytes())
            .await
            .is_err()
        {
            return;
        }
    }
}

/// What a host reads through `wrapper` from that upstream: the
/// `initialize` result and the `tools/list` result.
pub async fn host_reads(wrapper: Wrapper, instructions: String, tools: Value) -> (Value, Value) {
    let (init, list, _) = host_session(wrapper, instructions, tools).await;
    (init, list)
}

/// [`host_reads`], and the answer to a call of the reader tool.
pub async fn host_session(
    wrapper: Wrapper,
    instructions: String,
    tools: Value,
) -> (Value, Value, Value) {
    let (host_side, relay_host) = duplex(1 << 20);
    let (up_side, relay_up) = duplex(1 << 20);
    tokio::spawn(upstream(up_side, instructions, tools));
    let (host_in, host_out) = tokio::io::split(relay_host);
    let (up_out, up_in) = tokio::io::split(relay_up);
    tokio::spawn(async move { relay_streams(&wrapper, host_in, host_out, up_out, up_in).await });
    let (read, mut write) = tokio::io::split(host_side);
    let mut lines = BufReader::new(read).lines();
    let mut ask = async |id: u64, method: &str| -> Value {
        let m = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}});
        write.write_all(format!("{m}\n").as_bytes()).await.unwrap();
        loop {
            let line = lines.next_line().await.unwrap().unwrap();
            let answer: Value = serde_json::from_str(&line).unwrap();
            if answer["id"] == json!(id) {
                return answer["result"].clone();
            }
        }
    };
    let init = ask(1, "initialize").await;
    let list = ask(2, "tools/list").await;
    let m = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": READER, "arguments": {}}});
    write.write_all(format!("{m}\n").as_bytes()).await.unwrap();
    let called = loop {
        let line = lines.next_line().await.unwrap().unwrap();
        let answer: Value = serde_json::from_str(&line).unwrap();
        if answer["id"] == json!(3) {
            break answer;
        }
    };
    (init, list, called)
}

#[tokio::test]
async fn a_3407_unit_description_is_fitted_to_claude_codes_cap_with_its_constraint() {
    let cap = Host::ClaudeCode.profile().description_cap.unwrap();
    let long = long_description(3407);
    assert_eq!(long.encode_utf16().count(), 3407);
    let tools = json!({"tools": [
        {"name": "get_invoice", "description": long, "inputSchema": {"type": "object"}},
        {"name": "list_periods", "description": "List the billing periods.", "inputSchema": {"type": "object"}},
    ]});
    let wrapper = Wrapper::new(Assembler::new(), ServeAs::ClaudeCode).unwrap();
    let (_, list) = host_reads(wrapper, "Use billing.".into(), tools.clone()).await;
    let served = list["tools"][0]["description"].as_str().unwrap();
    assert!(cap.fits(served), "{} units", cap.measure(served));
    assert!(served.contains("Always call list_periods before get_invoice."));
    assert!(served.contains("Shortened to fit"), "{served}");
    // A description within the cap passes as it is.
    assert_eq!(
        list["tools"][1]["description"],
        json!("List the billing periods.")
    );
    // Without a host (`plain`), nothing is cut.
    let plain = Wrapper::new(Assembler::new(), ServeAs::Plain).unwrap();
    let (_, list) = host_reads(plain, "Use billing.".into(), tools).await;
    assert_eq!(list["tools"][0]["description"], json!(long));
}

/// Instructions of distinct sentences, a constraint first.
fn long_instructions(sentences: usize) -> String {
    let mut text = String::from("Always call list_periods before get_invoice. ");
    for i in 0..sentences {
        text.push_str(&format!("Period {i} closes on the last day of its month. "));
    }
    text
}

/// Issue 51.4: Claude Desktop never reads `instructions`; under `--as
/// claude-desktop` the budgeted text is the reader tool's description, and
/// a call of it answers the full text.
#[tokio::test]
async fn a_host_that_reads_no_instructions_gets_them_in_the_reader_description() {
    let text = long_instructions(60);
    let tools = json!({"tools": [{"name": "get_invoice", "description": "One invoice.", "inputSchema": {"type": "object"}}]});
    let desktop: ServeAs = "claude-desktop".parse().unwrap();
    let wrapper = Wrapper::new(Assembler::new().budget(80), desktop).unwrap();
    let (_, list, called) = host_session(wrapper, text.clone(), tools.clone()).await;
    let names: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["get_invoice", READER]);
    let described = list["tools"][1]["description"].as_str().unwrap();
    assert!(
        described.contains("Always call list_periods before get_invoice."),
        "{described}"
    );
    assert!(described.contains("Shortened to fit"), "{described}");
    assert!(described.contains(READER), "{described}");
    assert!(!described.contains("Period 59 closes"), "{described}");
    assert_eq!(
        called["result"]["content"][0]["text"],
        json!(text.trim_end())
    );
    // A host that reads them whole gets no reader tool.
    let whole = Wrapper::new(Assembler::new(), ServeAs::ClaudeCode).unwrap();
    let (init, list) = host_reads(whole, "Use billing.".into(), tools).await;
    assert!(
        init["instructions"]
            .as_str()
            .unwrap()
            .contains("Use billing.")
    );
    assert_eq!(list["tools"].as_array().unwrap().len(), 1);
}

/// Issue 51.3: under `--as claude-code` shortened instructions carry the
/// shortening line naming the reader tool, which is listed and answers.
#[tokio::test]
async fn shortened_instructions_say_so_under_as_and_name_the_reader() {
    let cap = Host::ClaudeCode.profile().cut.cap().unwrap();
    let text = long_instructions(80);
    assert!(!cap.fits(&text));
    let tools = json!({"tools": [{"name": "get_invoice", "description": "One invoice.", "inputSchema": {"type": "object"}}]});
    let wrapper = Wrapper::new(Assembler::new(), ServeAs::ClaudeCode).unwrap();
    let (init, list, called) = host_session(wrapper, text.clone(), tools).await;
    let served = init["instructions"].as_str().unwrap();
    assert!(cap.fits(served));
    assert!(served.contains("Always call list_periods before get_invoice."));
    assert!(
        served.contains("Shortened to fit") && served.contains(READER),
        "{served}"
    );
    assert_eq!(list["tools"][1]["name"], json!(READER));
    assert_eq!(
        called["result"]["content"][0]["text"],
        json!(text.trim_end())
    );
}

/// The host table's rule for where a host's model reads a wrapped
/// server's text, applied to what the wrapper answered: the instructions
/// field cut blindly at the host's cap, or the reader tool's description
/// for a host that reads instructions nowhere.
fn host_receives(host: &str, init: &Value, list: &Value) -> String {
    use mcp_preamble::hosts::{Host, Reads};
    let row = Host::named(host).unwrap().profile();
    match row.reads {
        Reads::Nowhere => list["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == json!(READER))
            .and_then(|t| t["description"].as_str())
            .unwrap_or_default()
            .to_string(),
        _ => {
            let text = init["instructions"].as_str().unwrap_or_default();
            match row.cut.cap() {
                Some(cap) if !cap.fits(text) => {
                    let units: Vec<u16> = text.encode_utf16().take(cap.limit).collect();
                    String::from_utf16_lossy(&units)
                }
                _ => text.to_string(),
            }
        }
    }
}

/// Issue 51.8: `show --host HOST` prints what a host simulation receives
/// from the wrapped server (a corpus server whose text Claude Code would
/// cut; Claude Desktop, which reads it nowhere).
#[tokio::test]
async fn show_prints_what_the_host_receives_through_wrap() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/corpus/basic-memory.json"
    );
    let snapshot = mcp_preamble::files::load_server_file(file).unwrap();
    let tools: Vec<Value> = (snapshot.tools.iter())
        .map(|t| json!({"name": t.name, "description": t.description, "inputSchema": t.input_schema.as_value()}))
        .collect();
    let instructions = snapshot.instructions.raw().unwrap().to_string();
    for host in ["claude-code", "claude-desktop"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
            .args(["show", "--host", host, file])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let printed = String::from_utf8(out.stdout).unwrap();
        let start = printed.find("--- what the model reads ---\n").unwrap() + 29;
        let end = printed.find("\n--- end ---").unwrap();
        let wrapper = Wrapper::new(Assembler::new(), host.parse().unwrap())
            .unwrap()
            .alias("basic-memory");
        let (init, list) = host_reads(wrapper, instructions.clone(), json!({"tools": tools})).await;
        let received = host_receives(host, &init, &list);
        assert!(!received.is_empty(), "{host}");
        assert_eq!(&printed[start..end], received.trim_end(), "{host}");
        // `preview --as HOST` means what `wrap --as HOST` means: the same print.
        let preview = run(&["preview", "--as", host, file]);
        assert_eq!(preview, printed, "{host}");
    }
}

fn run(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `preview --as HOST` fits with preview's own budget, as `wrap --as HOST
/// --policy` would with that budget; it prints text, so `--json` is refused.
#[tokio::test]
async fn preview_as_uses_its_budget_and_refuses_json() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/corpus/basic-memory.json"
    );
    let whole = run(&["preview", "--as", "claude-code", file]);
    let budgeted = run(&["preview", "--as", "claude-code", "--budget", "60", file]);
    let snapshot = mcp_preamble::files::load_server_file(file).unwrap();
    let wrapper = Wrapper::new(Assembler::new().budget(60), "claude-code".parse().unwrap())
        .unwrap()
        .alias("basic-memory");
    let reads = wrapper.model_reads(&snapshot).unwrap();
    assert!(!reads.cut.is_empty());
    assert!(budgeted.contains(&format!("cut: {} units\n", reads.cut.len())));
    assert!(budgeted.contains(reads.text.as_deref().unwrap().trim_end()));
    assert_ne!(whole, budgeted);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
        .args(["preview", "--as", "claude-code", "--json", file])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("'--as <HOST>' cannot be used with '--json'"),
        "{err}"
    );
}
