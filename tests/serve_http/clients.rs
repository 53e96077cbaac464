//! The official SDK clients against `mcp-preamble serve` over stdio (and
//! both over Streamable HTTP, `--listen`), in both eras and in each SDK's default mode, against upstreams of both eras: the TypeScript SDK's `Client` (`@modelcontextprotocol/client`,
//! tests/clients/ts-client.mjs) and the Python SDK's (`mcp` on PyPI,
//! tests/clients/py_client.py). Each reads the instructions, lists the
//! tools, calls one tool on each of two upstreams, sees an upstream's
//! progress through its own progress callback, and sees the list change
//! when an upstream adds a tool.
//!
//! The clients are installed on first use (`npm ci`, `pip install --user`);
//! with `MCP_PREAMBLE_REQUIRE_CLIENTS=1` (as `.ci/run` sets) a client that
//! cannot be installed fails the test instead of skipping it.
#![cfg(feature = "cli")]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use common::{ensure_npm, servers_dir};
use serde_json::{Value, json};

fn clients_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients")
}

/// Whether `program args…` runs and exits 0.
fn runs(program: &str, args: &[&str], dir: &Path) -> bool {
    Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The clients are there, installed now if need be; `false` (said loudly)
/// when one cannot be installed and CI does not require it.
pub(crate) fn clients_ready(which: &str) -> bool {
    static TS: OnceLock<bool> = OnceLock::new();
    static PY: OnceLock<bool> = OnceLock::new();
    let dir = clients_dir();
    let ready = if which == "ts" {
        *TS.get_or_init(|| {
            dir.join("node_modules/@modelcontextprotocol/client")
                .is_dir()
                || runs("npm", &["ci", "--no-audit", "--no-fund"], &dir)
        })
    } else {
        *PY.get_or_init(|| {
            let import = ["-c", "import mcp.client.client"];
            runs("python3", &import, &dir)
                || (runs(
                    "python3",
                    &[
                        "-m",
                        "pip",
                        "install",
                        "--quiet",
                        "--user",
                        "-r",
                        "requirements.txt",
                    ],
                    &dir,
                ) && runs("python3", &import, &dir))
        })
    };
    if !ready {
        let required = std::env::var_os("MCP_PREAMBLE_REQUIRE_CLIENTS").is_some();
        assert!(!required, "the {which} SDK client cannot be installed");
        eprintln!("SKIPPED: the {which} SDK client cannot be installed here (see tests/clients)");
    }
    ready
}

/// Every upstream waited for before the host is served (the clients call
/// each at once), the state beside the config.
fn state_args(config: &Path) -> [String; 4] {
    let state = config.with_extension("state").display().to_string();
    [
        "--ready-within".into(),
        "30".into(),
        "--state-dir".into(),
        state,
    ]
}

/// A gateway serving Streamable HTTP on a free loopback port, and its URL
/// (read from its log).
fn listening(config: &Path) -> (std::process::Child, String) {
    let mut args = vec!["--config".to_string(), config.display().to_string()];
    args.extend(state_args(config));
    common::gateway::serve_listening(&args)
}

/// Over Streamable HTTP many hosts share a gateway: a 2025-era upstream
/// (which hears of its client once, at its handshake) is told per host what
/// that host declared. Its shared connection is told `--capabilities`; a
/// host that declared otherwise has its calls carried by a connection told
/// its own set. Two TypeScript SDK hosts, one declaring `sampling`, one
/// nothing, call the same tool, with and without `--capabilities sampling`.
#[test]
fn each_http_host_gets_2025_upstreams_told_what_it_declared() {
    if !clients_ready("ts") {
        return;
    }
    ensure_npm();
    for given in [None, Some("sampling")] {
        let dir = std::env::temp_dir().join(format!(
            "mcp-preamble-serve-told-{}-{}",
            std::process::id(),
            given.is_some()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let upstream = json!({"command": "node", "args": [servers_dir().join("conformance.mjs")]});
        let config_path = dir.join("mcp.json");
        std::fs::write(
            &config_path,
            json!({"mcpServers": {"ref": upstream}}).to_string(),
        )
        .unwrap();
        let mut args = vec!["--config".to_string(), config_path.display().to_string()];
        args.extend(["--handshake".to_string(), "legacy".to_string()]);
        args.extend(state_args(&config_path));
        if let Some(given) = given {
            args.extend(["--capabilities".to_string(), given.to_string()]);
        }
        let (mut child, url) = common::gateway::serve_listening(&args);
        let asked = |declared: &str| -> Value {
            let out = Command::new("node")
                .args(["ts-asked.mjs", &url, declared, "ref__test_sampling"])
                .current_dir(clients_dir())
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{declared}: {stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap()
        };
        let declaring = asked("sampling");
        let silent = asked("none");
        let _ = child.kill();
        let _ = child.wait();
        let _ = std::fs::remove_dir_all(&dir);
        // The host that declared sampling is asked, and its answer goes back.
        assert_eq!(
            declaring["sampled"],
            json!(["from sampling"]),
            "{given:?}: {declaring}"
        );
        assert_eq!(
            declaring["text"], "LLM response: sampled by sampling",
            "{given:?}: {declaring}"
        );
        // The other's call went to a connection not told it may ask.
        assert_eq!(silent["isError"], true, "{given:?}: {silent}");
        assert_eq!(
            silent["text"], r#"sampling refused: upstream "ref" was not told it may ask"#,
            "{given:?}: {silent}"
        );
    }
}

/// Runs one client in one era against a gateway in front of `billing`
/// (the invoice server), `echo` (which adds the tool `later` 3 s, over
/// HTTP 6 s, after the gateway first lists its tools), `job` (progress),
/// and the invoice server with a tool with an `outputSchema` as a 2025-only
/// upstream (`old`) and a 2026-07-28-only one (`new`).
/// With `http`, the gateway serves Streamable HTTP (`--listen`) and the
/// client connects to its URL.
fn run_on(client: &str, era: &str, http: bool) -> Value {
    ensure_npm();
    let dir = std::env::temp_dir().join(format!(
        "mcp-preamble-serve-clients-{}-{client}-{era}-{http}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let node = |script: &str, env: Value| json!({"command": "node", "args": [servers_dir().join(script)], "env": env});
    // Counted from the client's call of `whoami`, after which it subscribes
    // (counted from the gateway's start, 6 s was too short for the Python
    // client at a load average of 11).
    let config = json!({"mcpServers": {
        "billing": node("invoice.mjs", json!({})),
        "echo": node("client-echo.mjs", json!({"ADD_AFTER": "whoami", "ADD_AFTER_MS": "1500"})),
        "job": node("progress.mjs", json!({})),
        "old": node("slow-start.mjs", json!({"ERA": "legacy", "SILENT_MS": "0", "TOTALS": "1"})),
        "new": node("slow-start.mjs", json!({"ERA": "modern", "SILENT_MS": "0", "TOTALS": "1"})),
    }});
    let config_path = dir.join("mcp.json");
    std::fs::write(&config_path, config.to_string()).unwrap();
    let mut spec = json!({
        "command": env!("CARGO_BIN_EXE_mcp-preamble"),
        "args": ["serve", "--config", config_path, "--ready-within", "30", "--state-dir", config_path.with_extension("state")],
        "calls": ["billing__list_periods", "echo__whoami", "old__list_periods", "old__totals", "new__totals"],
        "waitFor": "echo__later",
        "progress": {"name": "job__steps", "arguments": {"n": 3, "label": "sdk"}},
    });
    let gateway = http.then(|| listening(&config_path));
    if let Some((_, url)) = &gateway {
        spec["url"] = json!(url);
    }
    let spec_path = dir.join("spec.json");
    std::fs::write(&spec_path, spec.to_string()).unwrap();
    let (program, script) = match client {
        "ts" => ("node", "ts-client.mjs"),
        _ => ("python3", "py_client.py"),
    };
    let out = Command::new(program)
        .args([script, era, spec_path.to_str().unwrap()])
        .current_dir(clients_dir())
        .output()
        .unwrap();
    if let Some((mut child, _)) = gateway {
        let _ = child.kill();
        let _ = child.wait();
    }
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{client} {era}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{client} {era}: {e}: {stdout}"))
}

fn check(client: &str, era: &str) {
    check_on(client, era, false);
}

fn check_on(client: &str, era: &str, http: bool) {
    if !clients_ready(client) {
        return;
    }
    let out = run_on(client, era, http);
    let names = |key: &str| -> Vec<&str> {
        out[key]
            .as_array()
            .unwrap_or_else(|| panic!("{key}: {out}"))
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect()
    };
    // The era the client asked for is the one it got.
    let protocol = if era == "modern" {
        "2026-07-28"
    } else {
        "2025-11-25"
    };
    match client {
        "ts" => assert_eq!(out["era"], era, "{out}"),
        _ => assert_eq!(out["protocol"], protocol, "{out}"),
    }
    let instructions = out["instructions"]
        .as_str()
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        instructions.starts_with("## MCP server instructions"),
        "{instructions}"
    );
    // Its prose names the tools as the gateway exposes them (issue 23's rewriting).
    assert!(
        instructions.contains(
            "### billing\n\nAlways call billing__list_periods before billing__get_invoice."
        ),
        "{instructions}"
    );
    // The section's tool list names the tools as the gateway lists them.
    assert!(
        instructions.contains("Tools: `billing__list_periods`, `billing__get_invoice`"),
        "{instructions}"
    );
    assert!(instructions.contains("### echo"), "{instructions}");
    // Nothing was shortened: no note, and no reader tool (issue 34).
    assert!(
        !instructions.contains(mcp_preamble::serve::READER),
        "{instructions}"
    );
    let tools = names("tools");
    assert!(
        !tools.contains(&mcp_preamble::serve::READER),
        "the host read every text whole: {tools:?}"
    );
    for tool in [
        "billing__list_periods",
        "billing__get_invoice",
        "echo__whoami",
    ] {
        assert!(tools.contains(&tool), "{tools:?}");
    }
    assert!(
        !tools.contains(&"echo__later"),
        "added after the first list: {tools:?}"
    );
    assert_eq!(
        out["calls"]["billing__list_periods"]["text"], "2026-07, 2026-08",
        "{out}"
    );
    eras_kept(&out);
    let whoami = out["calls"]["echo__whoami"]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{out}"));
    // The upstream sees the gateway, not the host.
    assert!(whoami.contains("\"mcp-preamble\""), "{whoami}");
    // The upstream's progress reaches the client's own callback, as sent.
    assert_eq!(out["progress"]["text"], "sdk done", "{out}");
    let seen: Vec<(f64, f64, &str)> = out["progress"]["seen"]
        .as_array()
        .unwrap_or_else(|| panic!("{out}"))
        .iter()
        .map(|p| {
            let (progress, total) = (p["progress"].as_f64(), p["total"].as_f64());
            (
                progress.unwrap(),
                total.unwrap(),
                p["message"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (1.0, 3.0, "sdk 1/3"),
            (2.0, 3.0, "sdk 2/3"),
            (3.0, 3.0, "sdk 3/3")
        ],
        "{out}"
    );
    let changed = names("changed");
    assert!(changed.contains(&"echo__later"), "{changed:?}");
    assert_eq!(changed.len(), tools.len() + 1, "{changed:?}");
}

/// Whatever era the client and each upstream speak: the calls of a 2025
/// and a 2026-07-28 upstream answer (a 2026-07-28 client refuses a result
/// without `resultType`), with their structured content, and `tools/list`
/// keeps each tool's `outputSchema` (which the SDKs check results against).
fn eras_kept(out: &Value) {
    for call in ["old__list_periods", "old__totals", "new__totals"] {
        assert_eq!(out["calls"][call]["isError"], json!(false), "{call}: {out}");
    }
    assert_eq!(
        out["calls"]["old__list_periods"]["text"], "2026-07, 2026-08",
        "{out}"
    );
    for call in ["old__totals", "new__totals"] {
        assert_eq!(
            out["calls"][call]["structured"],
            json!({"total": 42}),
            "{call}: {out}"
        );
        let schema = &out["outputSchemas"][call];
        assert_eq!(schema["type"], "object", "{call}: {out}");
        let total = &schema["properties"]["total"];
        assert_eq!(total["type"], "number", "{call}: {out}");
        assert_eq!(
            total["description"], "The total, in cents.",
            "{call}: {out}"
        );
    }
    let listed = out["outputSchemas"].as_object().unwrap();
    assert_eq!(listed.len(), 2, "only the totals tools have one: {out}");
}

#[test]
fn typescript_sdk_client_2025_era() {
    check("ts", "legacy");
}

#[test]
fn typescript_sdk_client_2026_era() {
    check("ts", "modern");
}

#[test]
fn typescript_sdk_client_over_streamable_http_default_mode() {
    check_on("ts", "legacy", true);
}

#[test]
fn python_sdk_client_2025_era() {
    check("py", "legacy");
}

#[test]
fn python_sdk_client_2026_era() {
    check("py", "modern");
}

#[test]
fn python_sdk_client_over_streamable_http_2025_era() {
    check_on("py", "legacy", true);
}

#[test]
fn python_sdk_client_over_streamable_http_2026_era() {
    check_on("py", "modern", true);
}

#[test]
fn the_gateway_listens_past_loopback_only_with_authentication_and_tls() {
    for addr in ["0.0.0.0:0", "192.0.2.1:8080", "[::]:0"] {
        let out = Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
            .args(["serve", "--config", "no-such-mcp.json", "--listen", addr])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{addr}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!(
                "cannot listen on {addr}, not a loopback address, without authentication (--auth-tokens or --oauth-issuer) and tls (--tls-cert and --tls-key) or --behind-proxy"
            )),
            "{addr}: {err}"
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn the_http_gateway_answers_raw_json_rpc_and_refuses_foreign_host_headers() {
    use std::io::{Read, Write};
    ensure_npm();
    let dir = std::env::temp_dir().join(format!(
        "mcp-preamble-serve-clients-{}-host",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("mcp.json");
    let billing = json!({"command": "node", "args": [servers_dir().join("invoice.mjs")]});
    std::fs::write(
        &config,
        json!({"mcpServers": {"billing": billing}}).to_string(),
    )
    .unwrap();
    let (mut child, url) = listening(&config);
    let authority = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let post = |host: &str| -> String {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}})
        .to_string();
        let mut s = std::net::TcpStream::connect(&authority).unwrap();
        write!(
            s,
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        answer
    };
    let ok = post(&authority);
    let foreign = post("attacker.example");
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    assert!(
        ok.contains("\"serverInfo\":{\"name\":\"mcp-preamble\""),
        "{ok}"
    );
    assert!(ok.contains("billing__list_periods"), "{ok}");
    assert!(!foreign.starts_with("HTTP/1.1 200"), "{foreign}");
    assert!(!foreign.contains("serverInfo"), "{foreign}");
}

/// The TypeScript SDK client, in `era`, against a gateway in front of two
/// library servers: what tests/clients/ts-library.mjs printed.
fn library_run(era: &str) -> Value {
    let dir = std::env::temp_dir().join(format!(
        "mcp-preamble-serve-clients-{}-library-{era}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let library = |prefix: &str| {
        json!({"command": "node", "args": [servers_dir().join("library.mjs")],
               "env": {"PREFIX": prefix, "SHARED": "1"}})
    };
    let config_path = dir.join("mcp.json");
    let config = json!({"mcpServers": {"a": library("a"), "b": library("b")}});
    std::fs::write(&config_path, config.to_string()).unwrap();
    let spec = json!({
        "command": env!("CARGO_BIN_EXE_mcp-preamble"),
        "args": ["serve", "--config", config_path, "--ready-within", "30", "--state-dir", config_path.with_extension("state")],
        "prompt": "b__b_brief",
        "arguments": {"topic": "tides"},
        "reads": ["book://a/guide", "book://b/chapters/2", "book://shared/index"],
    });
    let spec_path = dir.join("spec.json");
    std::fs::write(&spec_path, spec.to_string()).unwrap();
    let out = Command::new("node")
        .args(["ts-library.mjs", era, spec_path.to_str().unwrap()])
        .current_dir(clients_dir())
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{era}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{era}: {e}: {stdout}"))
}

#[test]
fn typescript_sdk_client_gets_prompts_and_resources_through_the_gateway_in_both_eras() {
    ensure_npm();
    if !clients_ready("ts") {
        return;
    }
    for era in ["legacy", "modern"] {
        let out = library_run(era);
        assert_eq!(out["era"], era, "{out}");
        assert_eq!(
            out["capabilities"]["resources"]["subscribe"],
            json!(true),
            "{out}"
        );
        assert_eq!(out["prompts"], json!(["a__a_brief", "b__b_brief"]), "{out}");
        assert_eq!(out["messages"], json!(["b brief on tides"]), "{out}");
        assert_eq!(
            out["resources"],
            json!(["book://a/guide", "book://b/guide"]),
            "{out}"
        );
        let templates = json!(["book://a/chapters/{n}", "book://b/chapters/{n}"]);
        assert_eq!(out["templates"], templates, "{out}");
        let reads = &out["reads"];
        assert_eq!(reads["book://a/guide"]["text"], "a guide text", "{out}");
        assert_eq!(reads["book://b/chapters/2"]["text"], "b chapter 2", "{out}");
        let refused = reads["book://shared/index"]["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{out}"));
        assert!(
            refused.contains("more than one upstream claims it"),
            "{out}"
        );
    }
}

/// Whether process `pid` runs (a zombie does not).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat.rsplit_once(')')?.1.trim_start().chars().next()?;
            Some(state != 'Z')
        })
        .unwrap_or(false)
}

/// The SDK's close sequence (tests/clients/close.*) against `wrap` and a
/// stdio `serve` in front of `servers/linger.mjs` (which ignores its stdin's
/// end and starts a child): the close ends before the SDK's SIGTERM (2 s),
/// and neither the server nor its child runs 3 s later (issue 51).
fn close_leaves_nothing(client: &str) {
    if !clients_ready(client) {
        return;
    }
    ensure_npm();
    let dir = common::gateway::scratch("sdk-close", client);
    let linger = servers_dir().join("linger.mjs").display().to_string();
    let wrap_pids = dir.join("wrap-pids").display().to_string();
    let serve_pids = dir.join("serve-pids");
    let entry = json!({"command": "node", "args": [linger],
                       "env": {"PID_FILE": serve_pids.display().to_string()}});
    let config = common::gateway::config(&dir, json!({"s": entry}));
    let bin = env!("CARGO_BIN_EXE_mcp-preamble");
    let runs: [(&[&str], &str, &str); 2] = [
        (
            &[
                "wrap",
                "--",
                "env",
                &format!("PID_FILE={wrap_pids}"),
                "node",
                &linger,
            ],
            "ping",
            &wrap_pids,
        ),
        (
            &["serve", "--config", &config, "--ready-within", "10"],
            "s__ping",
            serve_pids.to_str().unwrap(),
        ),
    ];
    let (program, script) = match client {
        "ts" => ("node", "close.mjs"),
        _ => ("python3", "close.py"),
    };
    for (args, tool, pid_file) in runs {
        let out = Command::new(program)
            .arg(script)
            .arg(bin)
            .args(args)
            .current_dir(clients_dir())
            .stderr(Stdio::null())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let seen: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
            .unwrap_or_else(|e| panic!("{client} {args:?}: {e}: {stdout}"));
        assert_eq!(seen["tools"], json!([tool]), "{client} {args:?}");
        let close_ms = seen["close_ms"].as_u64().unwrap();
        assert!(
            close_ms < 2000,
            "{client} {args:?}: the close took {close_ms} ms"
        );
        let pids: Vec<u32> = std::fs::read_to_string(pid_file)
            .unwrap()
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect();
        assert_eq!(pids.len(), 2);
        let end = std::time::Instant::now() + std::time::Duration::from_secs(3);
        while pids.iter().any(|&p| alive(p)) && std::time::Instant::now() < end {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let left: Vec<u32> = pids.iter().copied().filter(|&p| alive(p)).collect();
        for p in &left {
            let _ = Command::new("kill").args(["-9", &p.to_string()]).status();
        }
        assert!(left.is_empty(), "{client} {args:?}: still running {left:?}");
    }
}

#[test]
fn typescript_sdk_close_sequence_leaves_no_process_behind() {
    close_leaves_nothing("ts");
}

#[test]
fn python_sdk_close_sequence_leaves_no_process_behind() {
    close_leaves_nothing("py");
}
