//! Tasks and input-required results through `serve` (2026-07-28): task ids
//! and `requestState` values sealed to the upstream that issued them, the
//! host's follow-ups routed by them, foreign ones refused; what upstreams
//! are told per host; `roots/list` of a 2025 upstream relayed to the host.
//! Upstreams: tests/servers/tasks.mjs.

use crate::common;

use common::gateway::*;
use serde_json::{Value, json};

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// `params` with the 2026-07-28 envelope, the host declaring `declared`.
fn modern(mut params: Value, declared: &Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": declared,
    });
    params
}

/// A gateway in front of two tasks.mjs upstreams, `a` and `b`.
fn two(test: &str, extra: &[&str]) -> Gateway {
    let dir = scratch("serve-tasks", test);
    let upstream = |prefix: &str| node("tasks.mjs", json!({"PREFIX": prefix}));
    let config = config(&dir, json!({"a": upstream("a"), "b": upstream("b")}));
    let args = [&["--config", &config, "--ready-within", "60"], extra].concat();
    Gateway::spawn(&args)
}

fn error_of(answer: &Value) -> (i64, String) {
    let code = answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("{answer}"));
    (
        code,
        answer["error"]["message"].as_str().unwrap().to_string(),
    )
}

fn text(answer: &Value) -> &str {
    let result = &answer["result"];
    (result["content"][0]["text"].as_str())
        .or(result["result"]["content"][0]["text"].as_str())
        .unwrap_or_else(|| panic!("{answer}"))
}

#[test]
fn tasks_and_input_required_results_go_back_to_their_upstream_each_told_of_its_host() {
    // One gateway for both halves (each gateway and its upstreams take about 1.5 s to start).
    let mut g = two("routed", &["--capabilities", "sampling"]);
    routed(&mut g);
    told(&mut g);
}

/// Task ids and request states, sealed to their upstream, routed back by them.
fn routed(g: &mut Gateway) {
    let host = json!({"extensions": {TASKS: {}}, "elicitation": {}});
    let discover = g.request("server/discover", modern(json!({}), &host));
    let caps = &discover["result"]["capabilities"];
    assert_eq!(caps["extensions"][TASKS], json!({}), "{discover}");
    let ask =
        |g: &mut Gateway, method: &str, params: Value| g.request(method, modern(params, &host));

    // Both upstreams number their tasks t1, t2…: the host gets ids that cannot collide.
    let started: Vec<String> = ["a__start", "b__start"]
        .iter()
        .map(|tool| {
            let answer = ask(g, "tools/call", json!({"name": tool, "arguments": {}}));
            assert_eq!(answer["result"]["resultType"], "task", "{answer}");
            answer["result"]["taskId"].as_str().unwrap().to_string()
        })
        .collect();
    let (a, b) = (&started[0], &started[1]);
    assert!(a.starts_with("a.") && a.ends_with(".t1"), "{a}");
    assert!(b.starts_with("b.") && b.ends_with(".t1"), "{b}");
    for (id, done) in [(a, "a t1 done"), (b, "b t1 done")] {
        let got = ask(g, "tasks/get", json!({"taskId": id}));
        assert_eq!(got["result"]["taskId"], json!(id), "{got}");
        assert_eq!(got["result"]["status"], "completed", "{got}");
        assert_eq!(text(&got), done);
    }
    // Listened to over stdio (rmcp's parser drops `taskIds`; the front
    // reads them): each upstream's status arrives under the host's id.
    let filter = json!({"notifications": {"taskIds": [a, b]}});
    let listen = g.ask("subscriptions/listen", modern(filter, &host));
    let mut pushed = Vec::new();
    let end = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while pushed.len() < 2 {
        let left = end.saturating_duration_since(std::time::Instant::now());
        let line = g.lines.recv_timeout(left).expect("two task statuses");
        let m: Value = serde_json::from_str(&line).unwrap();
        if m["method"] == "notifications/tasks" {
            let p = &m["params"];
            assert_eq!(
                p["_meta"]["io.modelcontextprotocol/subscriptionId"], listen,
                "{m}"
            );
            pushed.push((
                p["taskId"].as_str().unwrap().to_string(),
                text(&json!({"result": p})).to_string(),
            ));
        }
    }
    pushed.sort();
    assert_eq!(
        pushed,
        [
            (a.clone(), "a t1 done".to_string()),
            (b.clone(), "b t1 done".to_string())
        ]
    );
    let why = json!({"requestId": listen, "reason": "done"});
    g.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": why}));
    let responses = json!({"name": {"action": "accept", "content": {"name": "Ann"}}});
    let updated = ask(
        g,
        "tasks/update",
        json!({"taskId": b, "inputResponses": responses}),
    );
    assert_eq!(updated["result"]["resultType"], "complete", "{updated}");
    let got = ask(g, "tasks/get", json!({"taskId": b}));
    assert_eq!(text(&got), "b t1 done for Ann");
    let cancelled = ask(g, "tasks/cancel", json!({"taskId": a}));
    assert!(cancelled.get("result").is_some(), "{cancelled}");
    let got = ask(g, "tasks/get", json!({"taskId": a}));
    assert_eq!(got["result"]["status"], "cancelled", "{got}");

    // An id the gateway did not hand out reaches no upstream.
    let moved = format!("b{}", &a[1..]);
    let mut tampered = a.clone().into_bytes();
    let last = a.len() - 4;
    tampered[last] = if tampered[last] == b'0' { b'1' } else { b'0' };
    let tampered = String::from_utf8(tampered).unwrap();
    for foreign in ["t1", moved.as_str(), &tampered, "a..t1", ""] {
        for method in ["tasks/get", "tasks/cancel"] {
            let refused = ask(g, method, json!({"taskId": foreign}));
            let (code, message) = error_of(&refused);
            assert_eq!(code, -32602, "{method} {foreign:?}: {refused}");
            assert!(message.starts_with("unknown task id"), "{message}");
        }
    }

    // An input-required round trip: the state sealed to `a`, the retry routed back to it.
    let first = ask(g, "tools/call", json!({"name": "a__ask", "arguments": {}}));
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let asked = &first["result"]["inputRequests"]["name"];
    assert_eq!(asked["method"], "elicitation/create", "{first}");
    let state = first["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        state.starts_with("a.") && state.ends_with(".a-state-1"),
        "{state}"
    );
    let retry = |tool: &str, state: &str| json!({"name": tool, "arguments": {}, "requestState": state, "inputResponses": responses});
    let done = ask(g, "tools/call", retry("a__ask", &state));
    assert_eq!(text(&done), "a got a-state-1 from Ann", "{done}");
    // Not to another upstream, sealed or rewritten; nor as a task id.
    let forged = format!("b{}", &state[1..]);
    let cases = [
        ("b__ask", state.as_str(), "was issued by upstream \"a\""),
        ("b__ask", &forged, "unknown requestState"),
        ("a__ask", "a-state-1", "unknown requestState"),
        ("a__ask", a.as_str(), "unknown requestState"),
    ];
    for (tool, state, why) in cases {
        let refused = ask(g, "tools/call", retry(tool, state));
        let (code, message) = error_of(&refused);
        assert_eq!(code, -32602, "{tool} {state:?}: {refused}");
        assert!(message.contains(why), "{message}");
    }
    let refused = ask(g, "tasks/get", json!({"taskId": state}));
    assert!(
        error_of(&refused).1.starts_with("unknown task id"),
        "{refused}"
    );

    // `prompts/get` and `resources/read` alike.
    let with = |params: &Value, state: &str| {
        let mut params = params.clone();
        params["requestState"] = json!(state);
        params["inputResponses"] = responses.clone();
        params
    };
    let surfaces = [
        (
            "prompts/get",
            json!({"name": "a__ask"}),
            json!({"name": "b__ask"}),
            "a-state-2",
        ),
        (
            "resources/read",
            json!({"uri": "ask://a"}),
            json!({"uri": "ask://b"}),
            "a-state-3",
        ),
    ];
    for (method, of_a, of_b, own) in surfaces {
        let first = ask(g, method, of_a.clone());
        assert_eq!(first["result"]["resultType"], "input_required", "{first}");
        let state = first["result"]["requestState"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            state.starts_with("a.") && state.ends_with(&format!(".{own}")),
            "{state}"
        );
        let done = ask(g, method, with(&of_a, &state));
        let said = format!("a got {own} from Ann");
        assert!(done.to_string().contains(&said), "{method}: {done}");
        let refused = ask(g, method, with(&of_b, &state));
        let (code, message) = error_of(&refused);
        assert_eq!(code, -32602, "{method}: {refused}");
        assert!(
            message.contains("was issued by upstream \"a\""),
            "{message}"
        );
    }
}

/// What a 2026-07-28 upstream is told of each host.
fn told(g: &mut Gateway) {
    let bare = json!({});
    let told = |g: &mut Gateway, declared: &Value| {
        let answer = g.request(
            "tools/call",
            modern(json!({"name": "a__told", "arguments": {}}), declared),
        );
        serde_json::from_str::<Value>(text(&answer)).unwrap()
    };
    let cases = [
        // The gateway's --capabilities are not what a 2026-07-28 upstream is told of a host.
        (json!({}), json!({})),
        (
            json!({"elicitation": {}, "extensions": {TASKS: {}}, "experimental": {"x": {}}}),
            json!({"elicitation": {}, "extensions": {TASKS: {}}}),
        ),
        (
            json!({"sampling": {}, "roots": {}}),
            json!({"sampling": {}, "roots": {}}),
        ),
    ];
    for (declared, expected) in cases {
        assert_eq!(told(g, &declared), expected, "declared {declared}");
    }
    // A host that did not declare tasks gets no task handle.
    let answer = g.request(
        "tools/call",
        modern(json!({"name": "a__start", "arguments": {}}), &bare),
    );
    assert_eq!(error_of(&answer).0, -32021, "{answer}");
}

#[test]
fn roots_list_of_a_2025_upstream_reaches_the_host_and_no_tasks_are_declared() {
    let dir = scratch("serve-tasks", "roots");
    let config = config(
        &dir,
        json!({"r": node("tasks.mjs", json!({"PREFIX": "r"}))}),
    );
    let args = [
        "--config",
        &config,
        "--handshake",
        "legacy",
        "--capabilities",
        "roots",
    ];
    let mut g = Gateway::spawn(&[&args[..], &["--ready-within", "60"]].concat());
    let init = g.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {"roots": {}},
               "clientInfo": {"name": "rooted", "version": "1"}}),
    );
    // No upstream has tasks: the gateway does not declare them.
    assert!(
        init["result"]["capabilities"]["extensions"][TASKS].is_null(),
        "{init}"
    );
    g.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let id = g.ask("tools/call", json!({"name": "r__roots", "arguments": {}}));
    let asked = loop {
        let line = g
            .lines
            .recv_timeout(std::time::Duration::from_secs(30))
            .unwrap();
        let m: Value = serde_json::from_str(&line).unwrap();
        if m["method"] == "roots/list" && m.get("id").is_some() {
            break m;
        }
        assert_ne!(m["id"], json!(id), "answered before roots/list: {m}");
    };
    let roots = json!({"roots": [{"uri": "file:///work/one"}, {"uri": "file:///work/two"}]});
    g.send(json!({"jsonrpc": "2.0", "id": asked["id"], "result": roots}));
    let done = g.answer(id, std::time::Duration::from_secs(30));
    assert_eq!(text(&done), "file:///work/one\nfile:///work/two", "{done}");
    let refused = g.request("tasks/get", json!({"taskId": "r.00.t1"}));
    assert_eq!(error_of(&refused).0, -32601, "{refused}");
}
