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
