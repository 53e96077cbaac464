//! An upstream's own requests through `serve`: sampling and elicitation
//! reach the host whose call the upstream answers, when that host declared
//! them, and its answer goes back; 2025-era upstreams are told what the
//! stdio host declared in its `initialize` (read before they start),
//! 2026-07-28 ones what the calling host declared with each request. A 2025-era host of a 2026-07-28 upstream
//! is asked the upstream's input requests as requests, and its log level
//! is told with each call.

use crate::common;

use std::time::{Duration, Instant};

use common::gateway::*;
use serde_json::{Value, json};

/// A gateway in front of tests/servers/conformance.mjs (2025 era, where
/// servers may ask their client), told `capabilities`, and a host that
/// declared `declared`.
fn host(test: &str, declared: Value, capabilities: Option<&str>) -> Gateway {
    host_of(test, declared, capabilities, "legacy")
}

/// The same, the upstream connected with `handshake`.
fn host_of(test: &str, declared: Value, capabilities: Option<&str>, handshake: &str) -> Gateway {
    let dir = scratch("serve-asking", test);
    let config = config(&dir, json!({"ref": node("conformance.mjs", json!({}))}));
    let mut args = vec![
        "--config",
        &config,
        "--handshake",
        handshake,
        "--ready-within",
        "60",
    ];
    if let Some(c) = capabilities {
        args.extend(["--capabilities", c]);
    }
    let mut g = Gateway::spawn(&args);
    let init = g.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": declared,
               "clientInfo": {"name": "asked", "version": "1"}}),
    );
    assert!(init["result"]["serverInfo"].is_object(), "{init}");
    g.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    g
}

/// The next message of the gateway within 30 s.
fn next(g: &mut Gateway) -> Value {
    let line = g.lines.recv_timeout(Duration::from_secs(30)).unwrap();
    serde_json::from_str(&line).unwrap()
}

/// The next request the gateway sends the host (notifications skipped).
fn asked(g: &mut Gateway) -> Value {
    loop {
        let m = next(g);
        if m.get("method").is_some() && m.get("id").is_some() {
            return m;
        }
    }
}

/// The answer to the host's request `id` (requests to the host fail the test).
fn answer(g: &mut Gateway, id: u64) -> Value {
    let end = Instant::now() + Duration::from_secs(30);
    while Instant::now() < end {
        let m = next(g);
        assert!(
            m.get("method").is_none() || m.get("id").is_none(),
            "asked: {m}"
        );
        if m.get("method").is_none() && m["id"] == json!(id) {
            return m;
        }
    }
    panic!("no answer to {id}")
}

fn text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

#[test]
fn sampling_and_elicitation_reach_the_host_and_its_answers_go_back() {
    let declared = json!({"sampling": {}, "elicitation": {}});
    let mut g = host("both", declared, Some("sampling,elicitation"));
    let id = g.ask(
        "tools/call",
        json!({"name": "ref__test_sampling", "arguments": {"prompt": "Hi there"}}),
    );
    let request = asked(&mut g);
    assert_eq!(request["method"], "sampling/createMessage", "{request}");
    assert_eq!(
        request["params"]["messages"][0]["content"]["text"],
        "Hi there"
    );
    let said = json!({"role": "assistant", "content": {"type": "text", "text": "Hello from the host"},
                      "model": "m", "stopReason": "endTurn"});
    g.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": said}));
    let done = answer(&mut g, id);
    assert_eq!(text(&done), "LLM response: Hello from the host", "{done}");

    // Every SEP-1330 enum shape reaches the host as the upstream sent it.
    let id = g.ask(
        "tools/call",
        json!({"name": "ref__test_elicitation_sep1330_enums", "arguments": {}}),
    );
    let request = asked(&mut g);
    assert_eq!(request["method"], "elicitation/create", "{request}");
    let props = &request["params"]["requestedSchema"]["properties"];
    assert_eq!(
        props["untitledSingle"]["enum"],
        json!(["option1", "option2", "option3"])
    );
    assert_eq!(
        props["titledSingle"]["oneOf"][0],
        json!({"const": "value1", "title": "First Option"})
    );
    assert_eq!(props["legacyEnum"]["enumNames"][1], "Option Two");
    assert_eq!(props["untitledMulti"]["items"]["enum"][2], "option3");
    assert_eq!(
        props["titledMulti"]["items"]["anyOf"][2]["title"],
        "Third Choice"
    );
    let chosen = json!({"action": "accept", "content": {"untitledSingle": "option2", "untitledMulti": ["option1"]}});
    g.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": chosen}));
    let done = answer(&mut g, id);
    assert!(
        text(&done).contains("action=accept")
            && text(&done).contains(r#""untitledSingle":"option2""#),
        "{done}"
    );

    // SEP-1034 defaults too.
    let id = g.ask(
        "tools/call",
        json!({"name": "ref__test_elicitation_sep1034_defaults", "arguments": {}}),
    );
    let request = asked(&mut g);
    let props = &request["params"]["requestedSchema"]["properties"];
    assert_eq!(props["score"]["default"], json!(95.5));
    assert_eq!(props["status"]["default"], "active");
    assert_eq!(props["verified"]["default"], true);
    g.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "decline"}}));
    assert!(text(&answer(&mut g, id)).contains("action=decline"));
}

#[test]
fn a_host_that_did_not_declare_sampling_gets_upstreams_not_told_it() {
    // The gateway was given `sampling`, the host did not declare it: over
    // stdio the upstream starts after the host's `initialize` and is told
    // what the host declared: its connection was not told it may ask.
    let mut g = host("undeclared", json!({}), Some("sampling"));
    let id = g.ask(
        "tools/call",
        json!({"name": "ref__test_sampling", "arguments": {"prompt": "x"}}),
    );
    let done = answer(&mut g, id);
    assert_eq!(done["result"]["isError"], true, "{done}");
    assert_eq!(
        text(&done),
        r#"sampling refused: upstream "ref" was not told it may ask"#,
        "{done}"
    );
}

#[test]
fn upstreams_are_told_what_their_stdio_host_declared() {
    // No `--capabilities`: the host's `initialize` is what the upstream hears.
    let mut g = host("told", json!({"sampling": {}}), None);
    let id = g.ask(
        "tools/call",
        json!({"name": "ref__test_sampling", "arguments": {"prompt": "Hi"}}),
    );
    let request = asked(&mut g);
    assert_eq!(request["method"], "sampling/createMessage", "{request}");
    let said = json!({"role": "assistant", "content": {"type": "text", "text": "told"},
                      "model": "m", "stopReason": "endTurn"});
    g.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": said}));
    let done = answer(&mut g, id);
    assert_eq!(text(&done), "LLM response: told", "{done}");
}

#[test]
fn a_2025_host_is_asked_what_a_2026_upstream_asks_and_told_only_what_it_declared() {
    // The upstream speaks 2026-07-28 (the default handshake): it asks
    // through input-required results, which this host cannot read.
    let mut g = host_of("modern", json!({"elicitation": {}}), None, "auto");
    let id = g.ask(
        "tools/call",
        json!({"name": "ref__test_elicitation_sep1330_enums", "arguments": {}}),
    );
    let request = asked(&mut g);
    assert_eq!(request["method"], "elicitation/create", "{request}");
    let props = &request["params"]["requestedSchema"]["properties"];
    assert_eq!(props["legacyEnum"]["enumNames"][1], "Option Two");
    let chosen = json!({"action": "accept", "content": {"untitledSingle": "option3"}});
    g.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": chosen}));
    let done = answer(&mut g, id);
    assert!(
        text(&done).contains(r#"action=accept, content={"untitledSingle":"option3"}"#),
        "{done}"
    );
    // prompts/get and resources/read take the same rounds.
    for (method, params) in [
        ("prompts/get", json!({"name": "ref__test_prompt_asking"})),
        ("resources/read", json!({"uri": "test://asking"})),
    ] {
        let id = g.ask(method, params);
        let request = asked(&mut g);
        assert_eq!(request["method"], "elicitation/create", "{request}");
        let said = json!({"action": "accept", "content": {"word": "plum"}});
        g.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": said}));
        let done = answer(&mut g, id);
        let got = done["result"]["messages"][0]["content"]["text"].as_str();
        let got = got.or(done["result"]["contents"][0]["text"].as_str());
        assert_eq!(got, Some("The word: plum"), "{method}: {done}");
        assert!(done["result"].get("resultType").is_none(), "{done}");
    }
    // Sampling it did not declare: the upstream was not told it may ask,
    // and the host is not asked (`answer` fails on a request to the host).
    let id = g.ask(
        "tools/call",
        json!({"name": "ref__test_sampling", "arguments": {"prompt": "x"}}),
    );
    // The upstream's own refusal: its client (for this host) has no sampling.
    let done = answer(&mut g, id);
    assert_eq!(done["error"]["code"], -32021, "{done}");
    assert_eq!(
        done["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}}),
        "{done}"
    );
    // Its log level (setLevel) goes with each call: the upstream's three
    // info messages reach it before the answer, nothing below warning after.
    for (level, heard) in [("info", 3), ("warning", 0)] {
        let set = g.request("logging/setLevel", json!({"level": level}));
        assert_eq!(set["result"], json!({}), "{set}");
        let id = g.ask(
            "tools/call",
            json!({"name": "ref__test_tool_with_logging", "arguments": {}}),
        );
        let mut logged = Vec::new();
        let done = loop {
            let m = next(&mut g);
            match m["method"].as_str() {
                Some("notifications/message") => logged.push(m["params"]["data"].clone()),
                Some(_) => {}
                None if m["id"] == json!(id) => break m,
                None => {}
            }
        };
        assert_eq!(text(&done), "Logging done.", "{done}");
        assert_eq!(logged.len(), heard, "at {level}: {logged:?}");
    }
}
