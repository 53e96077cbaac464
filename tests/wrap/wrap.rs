//! `mcp-preamble wrap` in front of real servers: the official "everything"
//! server (`@modelcontextprotocol/server-everything`, pinned in
//! tests/servers) compared with a direct connection, byte for byte; a server
//! whose instructions are past Claude Code's cap fitted within it; and
//! upstreams that write garbage, end, or cannot start.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use common::{ensure_npm, servers_dir};

const WITHIN: Duration = Duration::from_secs(30);

/// A peer driven over stdio with raw lines, every line kept as sent.
struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Lines that were not the answer being waited for.
    seen: Vec<String>,
}

impl Raw {
    fn spawn(program: &str, args: &[&str]) -> Raw {
        let mut child = Command::new(program)
            .args(args)
            .current_dir(servers_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let lines = common::gateway::lines_of(stdout);
        Raw {
            child,
            stdin: Some(stdin),
            lines,
            seen: Vec::new(),
        }
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next line for which `wanted` holds, as sent; others are kept in `seen`.
    fn until(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> String {
        let end = Instant::now() + WITHIN;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            let line = (self.lines.recv_timeout(left))
                .unwrap_or_else(|e| panic!("no {what}: {e}; seen {:#?}", self.seen));
            let value: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
            if wanted(&value) {
                return line;
            }
            self.seen.push(line);
        }
    }

    /// Request `id` (a number both connections share), its answer line as sent.
    fn request(&mut self, id: u64, method: &str, params: Value) -> String {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.until(method, |m| {
            m["id"] == json!(id) && m.get("method").is_none()
        })
    }
}

impl Raw {
    /// Closes stdin (the host goes); everything the peer wrote to stderr.
    fn close(&mut self) -> String {
        self.stdin = None;
        let mut log = String::new();
        let mut stderr = self.child.stderr.take().unwrap();
        std::io::Read::read_to_string(&mut stderr, &mut log).unwrap();
        log
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn everything() -> String {
    let path = "node_modules/@modelcontextprotocol/server-everything/dist/index.js";
    assert!(
        servers_dir().join(path).is_file(),
        "npm ci in tests/servers"
    );
    path.to_string()
}

fn parse(line: &str) -> Value {
    serde_json::from_str(line).unwrap()
}

/// Initializes as a host with roots and sampling, answering the server's
/// `roots/list`; the initialize answer as sent.
fn handshake(peer: &mut Raw) -> String {
    let init = peer.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18",
               "capabilities": {"roots": {"listChanged": true}, "sampling": {}},
               "clientInfo": {"name": "wrap-test", "version": "1"}}),
    );
    peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    // The server asks the host for its roots: a server-to-client request.
    let ask = parse(&peer.until("roots/list", |m| m["method"] == "roots/list"));
    let roots = json!({"roots": [{"uri": "file:///work/project", "name": "project"}]});
    peer.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": roots}));
    // It got the answer: it says so in a log message.
    peer.until("the roots' log line", |m| {
        m["method"] == "notifications/message"
            && m["params"]["data"]
                .as_str()
                .is_some_and(|d| d.contains("1 root(s)"))
    });
    init
}

/// The requests compared, each with an id both connections use.
fn requests() -> Vec<(u64, &'static str, Value)> {
    vec![
        (10, "resources/list", json!({})),
        (11, "resources/templates/list", json!({})),
        (
            12,
            "resources/read",
            json!({"uri": "demo://resource/static/document/features.md"}),
        ),
        (13, "prompts/list", json!({})),
        (
            14,
            "prompts/get",
            json!({"name": "args-prompt", "arguments": {"city": "Lyon"}}),
        ),
        (
            15,
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "completable-prompt"},
            "argument": {"name": "department", "value": "E"}}),
        ),
        (16, "logging/setLevel", json!({"level": "error"})),
        (
            17,
            "tools/call",
            json!({"name": "get-sum", "arguments": {"a": 2, "b": 3}}),
        ),
    ]
}

fn utf16(s: &str) -> usize {
    s.encode_utf16().count()
}

#[test]
fn wrap_serves_the_everything_server_as_it_is_but_for_what_the_policy_changes() {
    ensure_npm();
    let server = everything();
    let policy = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/wrap/everything.toml");
    let policy = policy.display().to_string();
    let mut direct = Raw::spawn("node", &[&server, "stdio"]);
    let mut wrapped = Raw::spawn(
        env!("CARGO_BIN_EXE_mcp-preamble"),
        &[
            "wrap",
            "--as",
            "claude-code",
            "--name",
            "everything",
            "--policy",
            &policy,
            "--",
            "node",
            &server,
            "stdio",
        ],
    );
    let (init_direct, init_wrapped) = (handshake(&mut direct), handshake(&mut wrapped));

    // The handshake: only the instructions differ, fitted to Claude Code's cap.
    let (mut a, mut b) = (parse(&init_direct), parse(&init_wrapped));
    let theirs = a["result"]["instructions"].take();
    let ours = b["result"]["instructions"].take();
    assert_eq!(a, b);
    let (theirs, ours) = (theirs.as_str().unwrap(), ours.as_str().unwrap());
    assert!(ours.contains("Session resources are ephemeral"), "{ours}");
    assert!(
        theirs.contains("Session resources are ephemeral"),
        "{theirs}"
    );
    assert!(utf16(ours) <= 2048, "{} units", utf16(ours));
    assert!(ours.contains("### everything"), "{ours}");

    // Without a policy, tools/list passes byte for byte.
    let mut bare = Raw::spawn(
        env!("CARGO_BIN_EXE_mcp-preamble"),
        &[
            "wrap",
            "--name",
            "everything",
            "--",
            "node",
            &server,
            "stdio",
        ],
    );
    handshake(&mut bare);
    let one = direct.request(30, "tools/list", json!({}));
    let two = bare.request(30, "tools/list", json!({}));
    assert_eq!(one, two);

    // Everything the policy does not touch passes byte for byte.
    for (id, method, params) in requests() {
        let one = direct.request(id, method, params.clone());
        let two = wrapped.request(id, method, params);
        assert_eq!(one, two, "{method}");
        assert!(parse(&one).get("result").is_some(), "{method}: {one}");
    }

    // tools/list: the denied tool gone, the overridden description, the rest equal.
    let list = |peer: &mut Raw| {
        parse(&peer.request(20, "tools/list", json!({})))["result"]["tools"].clone()
    };
    let (mut expected, served) = (list(&mut direct), list(&mut wrapped));
    let tools = expected.as_array_mut().unwrap();
    assert!(
        tools
            .iter()
            .any(|t| t["name"] == "trigger-sampling-request")
    );
    tools.retain(|t| t["name"] != "get-env");
    let echo = tools.iter_mut().find(|t| t["name"] == "echo").unwrap();
    echo["description"] = json!("Repeats the message back, prefixed with `Echo: `.");
    assert_eq!(served, expected);

    // A call to the hidden tool is refused here; a sampling request reaches the host and back.
    let refused = parse(&wrapped.request(
        21,
        "tools/call",
        json!({"name": "get-env", "arguments": {}}),
    ));
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("\"get-env\" is not served")
    );
    let call = json!({"jsonrpc": "2.0", "id": 22, "method": "tools/call",
                      "params": {"name": "trigger-sampling-request", "arguments": {"prompt": "hi"}}});
    wrapped.send(&call);
    let ask = parse(&wrapped.until("sampling", |m| m["method"] == "sampling/createMessage"));
    let answer = json!({"role": "assistant", "model": "test-model",
                        "content": {"type": "text", "text": "sampled by the host"}});
    wrapped.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": answer}));
    let done = parse(&wrapped.until("the sampling result", |m| m["id"] == 22));
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("sampled by the host"), "{text}");
}

/// `wrap ARGS…` given `input` on stdin: its exit code, stdout and stderr.
fn run_wrap(args: &[&str], input: &str) -> (Option<i32>, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
        .arg("wrap")
        .args(args)
        .current_dir(servers_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    // The host stays connected: the upstream ends first.
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn an_upstream_that_writes_garbage_ends_or_cannot_start_gets_a_clear_error() {
    ensure_npm();
    // A line that is not JSON-RPC is dropped and logged; the 2026-07-28 handshake goes on.
    let envelope = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}});
    let mut noisy = Raw::spawn(
        env!("CARGO_BIN_EXE_mcp-preamble"),
        &[
            "wrap",
            "--name",
            "billing",
            "--",
            "node",
            "noisy-stdout.mjs",
        ],
    );
    let found = parse(&noisy.request(1, "server/discover", json!({"_meta": envelope})));
    let text = found["result"]["instructions"].as_str().unwrap();
    assert!(
        text.contains("### billing\n\nAlways call list_periods before get_invoice."),
        "{text}"
    );
    let call = json!({"name": "list_periods", "arguments": {}, "_meta": envelope});
    let answer = parse(&noisy.request(2, "tools/call", call));
    assert_eq!(answer["result"]["content"][0]["text"], "2026-07, 2026-08");
    assert!(noisy.seen.is_empty(), "{:?}", noisy.seen);
    let log = noisy.close();
    assert!(
        log.contains(
            "the upstream wrote a line that is not a JSON-RPC message (dropped): this is not json"
        ),
        "{log}"
    );

    // An upstream that dies in the handshake: no answer, exit 1, its stderr and the status in the log.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}});
    let (code, out, err) = run_wrap(
        &["--", "node", "exit-during-handshake.mjs"],
        &format!("{init}\n"),
    );
    assert_eq!((code, out.as_str()), (Some(1), ""), "{err}");
    assert!(err.contains("fatal: config missing"), "{err}");
    assert!(
        err.contains("), at start: node exit-during-handshake.mjs upstream=upstream")
            && err.contains("exited with status 3 upstream=upstream"),
        "{err}"
    );
    assert!(
        err.contains("mcp-preamble wrap: the server ended: exit status: 3"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");

    // A command that does not exist.
    let (code, out, err) = run_wrap(&["--", "/nonexistent/mcp-server"], "");
    assert_eq!((code, out.as_str()), (Some(2), ""), "{err}");
    assert!(
        err.contains("cannot start \"/nonexistent/mcp-server\""),
        "{err}"
    );

    // A URL that is not one, and one where nothing answers: the host's request gets an error.
    let (code, _, err) = run_wrap(&["--url", "ftp://example.com/mcp"], "");
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("\"ftp://example.com/mcp\" is not an http or https URL"),
        "{err}"
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp?key=secret");
    let mut nobody = Raw::spawn(env!("CARGO_BIN_EXE_mcp-preamble"), &["wrap", "--url", &url]);
    let failed = parse(&nobody.request(1, "initialize", json!({})));
    let message = failed["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("cannot reach the upstream: "),
        "{failed}"
    );
    assert!(!message.contains("secret"), "{message}");
}

/// The first answer line of `program ARGS…` (run in `dir`) to `initialize`.
fn initialize_with(dir: &Path, program: &str, args: &[&str]) -> Value {
    let mut child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "host", "version": "1"}}});
    writeln!(stdin, "{init}").unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
}

/// The instructions `billing` (the invoice server) is served with.
fn served(answer: &Value) -> &str {
    let text = answer["result"]["instructions"]
        .as_str()
        .unwrap_or_else(|| panic!("{answer}"));
    assert!(
        text.contains("\n\nAlways call list_periods before get_invoice."),
        "{text}"
    );
    text
}

/// `wrap --as claude-code` in front of a server whose instructions are past
/// Claude Code's 2,048 UTF-16 units (the invoice server given a long text):
/// the host reads them fitted within the cap, not cut, the rule at their
/// end kept.
#[test]
fn wrap_fits_instructions_past_claude_codes_cap() {
    ensure_npm();
    let dir = std::env::temp_dir().join(format!("mcp-preamble-wrap-long-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut text = String::from("# Billing\n\n");
    for n in 1..=40 {
        text.push_str(&format!(
            "Period {n} groups the invoices issued during week {n} of the fiscal year, with their credit notes. "
        ));
    }
    text.push_str("\n\nAlways call list_periods before get_invoice.\n");
    assert!(utf16(&text) > 2048, "{} units", utf16(&text));
    let file = dir.join("long.md");
    std::fs::write(&file, &text).unwrap();
    let env = format!("INSTRUCTIONS_FILE={}", file.display());
    let upstream = ["env", &env, "node", "invoice.mjs"];
    let direct = initialize_with(&servers_dir(), upstream[0], &upstream[1..]);
    assert_eq!(direct["result"]["instructions"], text.as_str());
    let args = [
        &["wrap", "--as", "claude-code", "--name", "billing", "--"],
        &upstream[..],
    ]
    .concat();
    let wrapped = initialize_with(&servers_dir(), env!("CARGO_BIN_EXE_mcp-preamble"), &args);
    let ours = wrapped["result"]["instructions"]
        .as_str()
        .unwrap_or_else(|| panic!("{wrapped}"));
    assert!(utf16(ours) <= 2048, "{} units: {ours}", utf16(ours));
    assert!(ours.contains("### billing"), "{ours}");
    assert!(
        ours.contains("Always call list_periods before get_invoice."),
        "{ours}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The invoice server over Streamable HTTP (`servers/http.mjs`) and its URL.
fn invoice_http() -> (Child, String) {
    let mut child = Command::new("node")
        .args(["http.mjs", "0"])
        .current_dir(servers_dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening ")
        .unwrap_or_else(|| panic!("{line}"));
    (child, url.to_string())
}

/// The README's `wrap` section: each command runs as printed and each
/// host config starts the server as the host would, in a folder whose
/// `server.mjs` is the invoice test server.
#[test]
fn the_readme_wrap_commands_and_configs_run() {
    ensure_npm();
    let bin = env!("CARGO_BIN_EXE_mcp-preamble");
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let section = &readme[readme.find("## `wrap`").unwrap()..];
    let section = &section[..section.find("\n## ").unwrap()];
    let dir = std::env::temp_dir().join(format!("mcp-preamble-wrap-readme-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let invoice = servers_dir().join("invoice.mjs");
    std::fs::write(
        dir.join("server.mjs"),
        format!("import {:?};\n", invoice.display().to_string()),
    )
    .unwrap();
    std::fs::write(dir.join("mcp-preamble.toml"), "version = 1\n").unwrap();
    let config = json!({"mcpServers": {"billing": {"command": "node", "args": ["server.mjs"]}}});
    std::fs::write(dir.join("mcp.json"), config.to_string()).unwrap();
    let pin = Command::new(bin)
        .args(["pin", "--config", "mcp.json", "--lock", "mcp-preamble.lock"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        pin.status.success(),
        "{}",
        String::from_utf8_lossy(&pin.stderr)
    );
    let original = r#"{"mcpServers": {"billing": {"command": "node", "args": ["server.mjs"]}}}"#;
    std::fs::write(dir.join(".mcp.json"), original).unwrap();

    let sh = &section[section.find("```sh\n").unwrap() + 6..];
    let sh = &sh[..sh.find("```").unwrap()];
    for line in sh.lines() {
        let command = line.split("  #").next().unwrap();
        let words: Vec<&str> = command.split_whitespace().collect();
        assert_eq!(words[0], "mcp-preamble", "{line}");
        if words[1] == "wrap" {
            // The README's URL, pointed at the test server's port.
            let mut http = None;
            let mut words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
            if let Some(at) = words.iter().position(|w| w == "--url") {
                let (child, url) = invoice_http();
                words[at + 1] = url;
                http = Some(child);
            }
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            let text = served(&initialize_with(&dir, bin, &words[1..])).to_string();
            let name = words[words.iter().position(|w| *w == "--name").unwrap() + 1];
            assert!(text.contains(&format!("### {name}\n")), "{text}");
            if let Some(mut child) = http {
                let _ = child.kill();
                let _ = child.wait();
            }
            if words.contains(&"claude-code") {
                assert!(text.encode_utf16().count() <= 2048);
            }
            continue;
        }
        let out = Command::new(bin)
            .args(&words[1..])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{line}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let now = std::fs::read_to_string(dir.join(".mcp.json")).unwrap();
        if words[1] == "install" {
            // The installed entry starts the server under wrap.
            let entry = &serde_json::from_str::<Value>(&now).unwrap()["mcpServers"]["billing"];
            let args: Vec<&str> = entry["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap())
                .collect();
            assert_eq!(&args[..4], ["wrap", "--as", "claude-code", "--name"]);
            served(&initialize_with(
                &dir,
                entry["command"].as_str().unwrap(),
                &args,
            ));
        } else {
            assert_eq!(now, original, "{line}");
        }
    }

    let blocks: Vec<&str> = section
        .split("```json\n")
        .skip(1)
        .map(|b| &b[..b.find("```").unwrap()])
        .collect();
    assert_eq!(blocks.len(), 2, "mcpServers hosts and VS Code");
    for block in blocks {
        let config: Value = serde_json::from_str(block).unwrap();
        let servers = config
            .get("mcpServers")
            .or_else(|| config.get("servers"))
            .unwrap();
        let entry = &servers["billing"];
        assert_eq!(entry["command"], "mcp-preamble");
        // VS Code expands `${workspaceFolder}` before it starts the server.
        let folder = dir.display().to_string();
        let args: Vec<String> = (entry["args"].as_array().unwrap().iter())
            .map(|a| a.as_str().unwrap().replace("${workspaceFolder}", &folder))
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        served(&initialize_with(&dir, bin, &args));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `wrap --url` in front of the everything server over Streamable HTTP
/// (sessions, event streams, its GET stream): the same shaping, and the
/// server's own requests to the host and back.
#[test]
fn wrap_url_relays_a_streamable_http_server() {
    ensure_npm();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = Command::new("node")
        .args([&everything(), "streamableHttp"])
        .env("PORT", port.to_string())
        .current_dir(servers_dir())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut log = BufReader::new(server.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("listening on port") {
        line.clear();
        assert!(
            log.read_line(&mut line).unwrap() > 0,
            "the server did not start"
        );
    }
    let policy = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/wrap/everything.toml");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut wrapped = Raw::spawn(
        env!("CARGO_BIN_EXE_mcp-preamble"),
        &[
            "wrap",
            "--as",
            "claude-code",
            "--name",
            "everything",
            "--policy",
            &policy.display().to_string(),
            "--url",
            &url,
        ],
    );
    let init = parse(&handshake(&mut wrapped));
    let text = init["result"]["instructions"].as_str().unwrap();
    assert!(
        utf16(text) <= 2048 && text.contains("### everything"),
        "{text}"
    );
    let tools = parse(&wrapped.request(2, "tools/list", json!({})));
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"echo") && !names.contains(&"get-env"),
        "{names:?}"
    );
    let prompt = parse(&wrapped.request(3, "prompts/get", json!({"name": "simple-prompt"})));
    assert_eq!(
        prompt["result"]["messages"][0]["content"]["text"],
        "This is a simple prompt without arguments."
    );
    let call = json!({"name": "trigger-sampling-request", "arguments": {"prompt": "hi"}});
    wrapped.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": call}));
    let ask = parse(&wrapped.until("sampling", |m| m["method"] == "sampling/createMessage"));
    let answer = json!({"role": "assistant", "model": "m", "content": {"type": "text", "text": "sampled over http"}});
    wrapped.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": answer}));
    let done = parse(&wrapped.until("the sampling result", |m| m["id"] == 4));
    assert!(
        done["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("sampled over http"),
        "{done}"
    );
    let _ = server.kill();
    let _ = server.wait();
}
