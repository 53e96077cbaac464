//! The JSON-RPC errors of `mcp-preamble serve`, for each request it serves (issue 34, item 6): params that do
//! not read are -32602 naming the field, an unknown tool is -32602 naming it, an unknown method is -32601; the
//! session goes on after each. Over stdio: `--listen` serves the same handler through rmcp's Streamable HTTP
//! service, so its errors are these.
#![cfg(feature = "cli")]

use crate::common;

use common::gateway::{Gateway, config, node, scratch};
use serde_json::{Value, json};

fn error(answer: &Value) -> (i64, String) {
    let code = answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {answer}"));
    let message = answer["error"]["message"].as_str().unwrap().to_string();
    (code, message)
}

fn invoice_gateway(name: &str) -> Gateway {
    let dir = scratch("serve-errors", name);
    let policy = dir.join("policy.toml");
    std::fs::write(
        &policy,
        "version = 1\n\n[servers.billing.tools]\ndeny = [\"get_invoice\"]\n",
    )
    .unwrap();
    let config = config(&dir, json!({"billing": node("invoice.mjs", json!({}))}));
    let log = dir.join("gateway.log");
    Gateway::spawn(&[
        "--config",
        &config,
        "--policy",
        policy.to_str().unwrap(),
        "--log",
        log.to_str().unwrap(),
    ])
}

fn log_of(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!(
        "mcp-preamble-serve-errors-{}-{name}",
        std::process::id()
    ));
    std::fs::read_to_string(dir.join("gateway.log")).unwrap_or_default()
}

#[test]
fn malformed_initialize_is_invalid_params_and_the_host_may_try_again() {
    let mut g = invoice_gateway("initialize");
    let bad = g.request("initialize", json!({"capabilities": {}}));
    assert_eq!(error(&bad).0, -32602, "{bad}");
    let init = g.initialize();
    assert!(init["result"]["serverInfo"].is_object(), "{init}");
}

#[test]
fn malformed_tools_call_params_are_invalid_params_naming_the_field() {
    let mut g = invoice_gateway("call");
    g.initialize();
    let cases = [
        (
            json!({"arguments": {}}),
            "the params of tools/call: \"name\" is missing",
            "name",
        ),
        (
            json!({"name": "billing__list_periods", "arguments": "all"}),
            "the params of tools/call: \"arguments\" must be an object, not a string",
            "arguments",
        ),
        (
            json!({"name": 7}),
            "the params of tools/call: \"name\" must be a string, not a number",
            "name",
        ),
    ];
    for (params, message, field) in cases {
        let answer = g.request("tools/call", params.clone());
        assert_eq!(error(&answer), (-32602, message.to_string()), "{params}");
        assert_eq!(answer["error"]["data"]["field"], field, "{answer}");
    }
    // Params that are not an object are not an MCP request: rmcp's transport answers -32600 (with no id).
    g.send(json!({"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": "billing__list_periods"}));
    // The session goes on.
    let ok = g.call("billing__list_periods", json!({}));
    assert_eq!(ok["result"]["content"][0]["text"], "2026-07, 2026-08");
    let invalid: Vec<&Value> = (g.notes.iter())
        .filter(|m| m["error"]["code"] == -32600)
        .collect();
    assert_eq!(invalid.len(), 1, "{:?}", g.notes);
}

#[test]
fn unknown_hidden_and_reader_tool_errors_are_invalid_params_naming_the_tool() {
    let mut g = invoice_gateway("tools");
    g.initialize();
    let unknown = g.call("billing__nope", json!({}));
    assert_eq!(
        error(&unknown),
        (-32602, "unknown tool \"billing__nope\"".into())
    );
    let hidden = g.call("billing__get_invoice", json!({"id": "1"}));
    let (code, message) = error(&hidden);
    assert_eq!(code, -32602);
    assert!(message.contains("\"billing__get_invoice\""), "{message}");
    let reader = g.call("mcp_preamble__instructions", json!({}));
    let (code, message) = error(&reader);
    assert_eq!(code, -32602);
    assert!(message.contains("`server`"), "{message}");
    // Each refused call is one line of the log.
    let log = log_of("tools");
    assert!(
        log.contains("call refused: unknown tool \"billing__nope\""),
        "{log}"
    );
    assert!(
        log.lines().any(|l| l
            .contains("call refused: tool \"billing__get_invoice\" is not served")
            && l.ends_with("upstream=billing tool=get_invoice")),
        "{log}"
    );
    let reader = g.call("mcp_preamble__instructions", json!({"server": "nobody"}));
    assert_eq!(
        error(&reader),
        (
            -32602,
            "no instructions to read for server \"nobody\"".into()
        )
    );
}

#[test]
fn ping_answers_and_tools_list_serves_one_page_whatever_the_cursor() {
    let mut g = invoice_gateway("list");
    g.initialize();
    assert!(g.request("ping", json!({}))["result"].is_object());
    // The gateway serves every tool on one page: a cursor, whatever it is, is not read.
    let list = g.request("tools/list", json!({"cursor": 5}));
    assert!(list["result"]["nextCursor"].is_null(), "{list}");
    assert!(g.names().contains(&"billing__list_periods".to_string()));
}

#[test]
fn methods_the_gateway_does_not_serve_are_method_not_found() {
    // Every upstream connected first: while one is starting, all is declared.
    let dir = scratch("serve-errors", "methods");
    let config = config(&dir, json!({"billing": node("invoice.mjs", json!({}))}));
    let mut g = Gateway::spawn(&["--config", &config, "--ready-within", "60"]);
    let init = g.initialize();
    let caps = &init["result"]["capabilities"];
    assert!(
        caps["resources"].is_null() && caps["extensions"].is_null(),
        "{init}"
    );
    let answer = g.request("tools/frobnicate", json!({}));
    assert_eq!(
        error(&answer),
        (
            -32601,
            "method not found: the gateway does not serve \"tools/frobnicate\"".into()
        )
    );
    assert_eq!(answer["error"]["data"]["method"], "tools/frobnicate");
    // No upstream has prompts, resources, completions or skills: their methods are not found either.
    let complete = json!({"ref": {"type": "ref/prompt", "name": "billing__x"},
                          "argument": {"name": "a", "value": ""}});
    for (method, params) in [
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("prompts/list", json!({})),
        ("completion/complete", complete),
    ] {
        let answer = g.request(method, params);
        let want = format!("method not found: no upstream of the gateway serves {method:?}");
        assert_eq!(error(&answer), (-32601, want), "{method}: {answer}");
    }
    // rmcp refuses these itself when the capability is not declared.
    let answer = g.request("skills/list", json!({}));
    assert_eq!(error(&answer).0, -32601, "{answer}");
    let answer = g.request("logging/setLevel", json!({"level": "info"}));
    assert_eq!(error(&answer).0, -32601, "{answer}");
    assert!(g.request("ping", json!({}))["result"].is_object());
}

#[test]
fn malformed_skills_resources_and_subscriptions_params_are_invalid_params_naming_the_field() {
    // Upstreams with skills and resources: the gateway serves their methods.
    let dir = scratch("serve-errors", "extensions");
    let config = config(
        &dir,
        json!({"docs": node("library.mjs", json!({"PREFIX": "a"})),
               "skills": node("skills.mjs", json!({}))}),
    );
    let mut g = Gateway::spawn(&["--config", &config, "--ready-within", "60"]);
    let init = g.initialize();
    let caps = &init["result"]["capabilities"];
    assert!(
        caps["resources"]["subscribe"] == true && caps["extensions"].is_object(),
        "{init}"
    );
    let cases = [
        ("skills/get", json!({}), "\"uri\" is missing", "uri"),
        (
            "skills/get",
            json!({"uri": 3}),
            "\"uri\" must be a string, not a number",
            "uri",
        ),
        (
            "resources/subscribe",
            json!({}),
            "\"uri\" is missing",
            "uri",
        ),
        (
            "resources/unsubscribe",
            json!({}),
            "\"uri\" is missing",
            "uri",
        ),
        (
            "resources/unsubscribe",
            json!({"uri": ["book://a/guide"]}),
            "\"uri\" must be a string, not an array",
            "uri",
        ),
        (
            "subscriptions/listen",
            json!({}),
            "\"notifications\" is missing",
            "notifications",
        ),
        (
            "subscriptions/listen",
            json!({"notifications": true}),
            "\"notifications\" must be an object, not a boolean",
            "notifications",
        ),
    ];
    for (method, params, why, field) in cases {
        let answer = g.request(method, params.clone());
        let want = format!("the params of {method}: {why}");
        assert_eq!(error(&answer), (-32602, want), "{method} {params}");
        assert_eq!(answer["error"]["data"]["field"], field, "{answer}");
    }
    // The session goes on: a well-formed skills/get is served.
    let skills = g.request("skills/list", json!({}));
    let uri = skills["result"]["skills"][0]["uri"].clone();
    assert!(uri.is_string(), "{skills}");
    let skill = g.request("skills/get", json!({"uri": uri}));
    assert_eq!(skill["result"]["skill"]["uri"], uri, "{skill}");
}

#[test]
fn skills_get_to_a_hung_upstream_ends_at_the_deadline_as_a_tool_call_does() {
    let dir = scratch("serve-errors", "hung");
    let config = config(
        &dir,
        json!({"skills": node("skills.mjs", json!({"HANG": "1"}))}),
    );
    let mut g = Gateway::spawn(&[
        "--config",
        &config,
        "--ready-within",
        "60",
        "--call-timeout",
        "1",
    ]);
    g.initialize();
    let skills = g.request("skills/list", json!({}));
    let uri = skills["result"]["skills"][0]["uri"].clone();
    assert!(uri.is_string(), "{skills}");
    let started = std::time::Instant::now();
    let call = g.request(
        "tools/call",
        json!({"name": "skills__wait", "arguments": {}}),
    );
    let called = started.elapsed();
    let started = std::time::Instant::now();
    let get = g.request("skills/get", json!({"uri": uri}));
    let got = started.elapsed();
    let within = "within 1 s (the call was cancelled)";
    let (code, message) = error(&call);
    assert_eq!(
        (code, message.as_str()),
        (
            -32603,
            format!("upstream \"skills\" did not answer \"wait\" {within}").as_str()
        )
    );
    let (code, message) = error(&get);
    assert_eq!(
        (code, message.as_str()),
        (
            -32603,
            format!("upstream \"skills\" did not answer skills/get {within}").as_str()
        )
    );
    assert_eq!(call["error"]["data"], get["error"]["data"], "{call} {get}");
    // At the deadline, not at some other bound (a hung skills/get never ended before).
    for took in [called, got] {
        assert!(took >= std::time::Duration::from_millis(900), "{took:?}");
        assert!(took < std::time::Duration::from_secs(10), "{took:?}");
    }
}
