//! One forwarded `tools/call` inside the gateway, with no process
//! (`serve::forward_in_process`, what the instruction guard counts): the
//! host's name mapped to the upstream's own tool, the host's arguments and
//! id kept, the upstream's result or error mapped back to the host's id.
#![cfg(feature = "serve")]

use mcp_preamble::serve::{GatewayNames, READER, forward_in_process};
use serde_json::{Value, json};

fn names() -> GatewayNames {
    GatewayNames::new([("billing", "get_invoice"), ("a b", "x.y")], READER)
}

fn call(name: &str, id: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": {"id": "INV-7"}, "_meta": {"progressToken": 3}}})
    .to_string()
}

fn forward(host: &str, answer: Value) -> Option<(Value, Value)> {
    let [sent, back] = forward_in_process(&names(), host, &answer.to_string())?;
    Some((
        serde_json::from_str(&sent).unwrap(),
        serde_json::from_str(&back).unwrap(),
    ))
}

#[test]
fn a_call_reaches_the_upstreams_own_tool_and_its_result_the_host() {
    let result = json!({"content": [{"type": "text", "text": "invoice INV-7"}], "isError": false});
    let answer = json!({"jsonrpc": "2.0", "id": 0, "result": result});
    let (sent, back) = forward(&call("billing__get_invoice", json!("h-1")), answer).unwrap();
    assert_eq!(sent["method"], "tools/call");
    assert_eq!(sent["params"]["name"], "get_invoice");
    assert_eq!(sent["params"]["arguments"], json!({"id": "INV-7"}));
    // The host's progress token is the host's: the upstream gets its own.
    assert_eq!(sent["params"].pointer("/_meta/progressToken"), None);
    assert_eq!(
        back,
        json!({"jsonrpc": "2.0", "id": "h-1", "result": result})
    );

    let (sent, _) = forward(
        &call("a_b__x_y", json!(9)),
        json!({"jsonrpc": "2.0", "id": 1, "result": result}),
    )
    .unwrap();
    assert_eq!(sent["params"]["name"], "x.y");
}

#[test]
fn an_upstream_error_reaches_the_host_as_sent() {
    let error = json!({"code": -32602, "message": "no invoice INV-7"});
    let answer = json!({"jsonrpc": "2.0", "id": 0, "error": error});
    let (_, back) = forward(&call("billing__get_invoice", json!(5)), answer).unwrap();
    assert_eq!(back, json!({"jsonrpc": "2.0", "id": 5, "error": error}));
}

#[test]
fn only_a_call_of_a_named_tool_is_forwarded() {
    let ok = json!({"jsonrpc": "2.0", "id": 0, "result": {"content": []}});
    for host in [
        call("billing__nope", json!(1)),
        call(READER, json!(1)),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string(),
        "not json".to_string(),
    ] {
        assert_eq!(forward(&host, ok.clone()), None, "{host}");
    }
    assert_eq!(
        forward(&call("billing__get_invoice", json!(1)), json!("x")),
        None
    );
}

// The instruction-count guard of one forwarded call, in the profile the
// tests build (opt-level 0): its baseline is tests/data/forward-instructions.json,
// re-saved in the same change with
// `MCP_PREAMBLE_SAVE_BASELINE=1 cargo test --all-features --test serve forward::`.
// The release counts (`cargo run --release -p mcp-preamble-guard --features
// forward`) need a release build of the gateway that CI does not make; this
// one shares the test build.

#[path = "../../benches/callgrind/mod.rs"]
mod callgrind;

/// Calls counted after one outside the count (as each call after a
/// gateway's first).
const COUNTED_CALLS: u64 = 50;
/// How much growth over the baseline is tolerated.
const TOLERANCE: f64 = 0.10;
const BASELINE: &str = "tests/data/forward-instructions.json";

/// The gateway's names for 300 tools of 30 upstreams, a host's call of one
/// with arguments, and its upstream's answer.
fn scenario() -> (GatewayNames, String, String) {
    let pairs: Vec<(String, String)> = (0..300)
        .map(|i| (format!("server{}", i / 10), format!("tool_{i}")))
        .collect();
    let names = GatewayNames::new(pairs.iter().map(|(a, t)| (a.as_str(), t.as_str())), READER);
    let exposed = names.exposed("server14", "tool_147").expect("a named tool");
    let host = json!({"jsonrpc": "2.0", "id": 17, "method": "tools/call",
        "params": {"name": exposed, "arguments": {"owner": "octo", "repo": "hello-world", "state": "open", "perPage": 30}}});
    let answer = json!({"jsonrpc": "2.0", "id": 4,
        "result": {"content": [{"type": "text", "text": "[{\"number\": 1347, \"title\": \"Found a bug\"}]"}], "isError": false}});
    (names, host.to_string(), answer.to_string())
}

/// The only function callgrind counts in.
#[inline(never)]
fn measured_forward(names: &GatewayNames, host: &str, answer: &str) -> usize {
    let mut bytes = 0;
    for _ in 0..COUNTED_CALLS {
        let [sent, back] = forward_in_process(names, std::hint::black_box(host), answer)
            .expect("a forwarded call");
        bytes += sent.len() + back.len();
    }
    bytes
}

#[test]
#[ignore = "the child that one_forwarded_call_stays_within_its_instruction_baseline runs under callgrind"]
fn callgrind_child_forward() {
    let (names, host, answer) = scenario();
    assert!(forward_in_process(&names, &host, &answer).is_some());
    std::hint::black_box(measured_forward(&names, &host, &answer));
}

#[test]
fn one_forwarded_call_stays_within_its_instruction_baseline() {
    let Some(version) = callgrind::version() else {
        assert!(
            !callgrind::required(),
            "valgrind is required (CI or MCP_PREAMBLE_REQUIRE_VALGRIND=1) but not installed"
        );
        eprintln!("SKIPPED: valgrind is not installed (apt-get install valgrind)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("mcp-preamble-forward-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let preload = callgrind::fixed_seed(&dir).ok();
    let args = [
        // The child's path in the folded test crate (`--exact` with the bare
        // name matched no test: the child ran nothing and counted 0).
        "--exact",
        "forward::callgrind_child_forward",
        "--ignored",
        "--test-threads=1",
        "--quiet",
    ];
    let total = callgrind::count(&args, "*measured_forward*", &[], preload.as_deref())
        .unwrap_or_else(|e| panic!("{e}"));
    let _ = std::fs::remove_dir_all(&dir);
    let per_call = total / COUNTED_CALLS;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(BASELINE);
    if std::env::var("MCP_PREAMBLE_SAVE_BASELINE").is_ok_and(|v| v == "1") {
        let saved = json!({"forward_per_call": per_call, "profile": "test", "valgrind": version});
        std::fs::write(&path, serde_json::to_string_pretty(&saved).unwrap() + "\n").unwrap();
        eprintln!("wrote {}: {per_call} instructions a call", path.display());
        return;
    }
    let base: Value = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| {
            panic!("no baseline in {BASELINE}; save one with MCP_PREAMBLE_SAVE_BASELINE=1")
        });
    let then = base["forward_per_call"].as_u64().expect("a baseline count");
    let ratio = per_call as f64 / then as f64;
    eprintln!("forward: {per_call} instructions a call, {ratio:.3}x the baseline ({then})");
    assert!(
        ratio <= 1.0 + TOLERANCE,
        "one forwarded call takes {per_call} instructions, {ratio:.3}x the baseline {then}: \
         more than 10% over; if intended, re-save it in the same change \
         (MCP_PREAMBLE_SAVE_BASELINE=1 cargo test --all-features --test serve forward::)"
    );
}
