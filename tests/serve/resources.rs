//! Prompts and resources through the aggregate gateway (issue 34, item 3), against two instances of
//! tests/servers/library.mjs (`a` and `b`, both listing `book://shared/index`): prompts namespaced as tools are
//! and `prompts/get` routed to the owner under its own name, resources and templates routed by URI with the
//! upstream's own answer, a URI both list served by neither and told in the log, completions routed, a
//! subscribed host told of updates, and the prompts' and resources' `list_changed` forwarded.
#![cfg(feature = "cli")]

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use common::gateway::{Gateway, config, node, scratch, wait_until};
use serde_json::{Value, json};

/// `library.mjs` with PREFIX `prefix`, both listing the shared URI.
fn library(prefix: &str) -> Value {
    node("library.mjs", json!({"PREFIX": prefix, "SHARED": "1"}))
}

/// A gateway in front of libraries `a` and `b` logging to a file, once both have joined: it, its `initialize`
/// answer and its log's path.
fn gateway(test: &str) -> (Gateway, Value, std::path::PathBuf) {
    let dir = scratch("serve-resources", test);
    let log = dir.join("gateway.log");
    let config = config(&dir, json!({"a": library("a"), "b": library("b")}));
    let mut g = Gateway::spawn(&["--config", &config, "--log", log.to_str().unwrap()]);
    let init = g.initialize();
    wait_until("both libraries joined", Duration::from_secs(30), || {
        prompt_names(&mut g).len() == 2
    });
    (g, init, log)
}

fn prompt_names(g: &mut Gateway) -> Vec<String> {
    let list = g.request("prompts/list", json!({}));
    let prompts = list["result"]["prompts"]
        .as_array()
        .unwrap_or_else(|| panic!("{list}"));
    prompts
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect()
}

/// The library `prefix` connected directly, as a 2025 host would.
struct Direct {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Direct {
    fn start(prefix: &str) -> Direct {
        common::ensure_npm();
        let mut child = Command::new("node")
            .arg(common::servers_dir().join("library.mjs"))
            .env("PREFIX", prefix)
            .env("SHARED", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut d = Direct {
            child,
            stdin,
            stdout,
            next: 1,
        };
        d.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "direct", "version": "1"}}),
        );
        writeln!(
            d.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        .unwrap();
        d
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the library closed its stdout"
            );
            let answer: Value = serde_json::from_str(&line).unwrap();
            if answer["id"] == json!(id) {
                return answer["result"].clone();
            }
        }
    }
}

impl Drop for Direct {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn prompts_and_resources_of_two_upstreams_reach_the_host_and_a_shared_uri_is_served_by_neither() {
    let (mut g, init, log) = gateway("forward");
    let caps = &init["result"]["capabilities"];
    assert_eq!(caps["prompts"]["listChanged"], json!(true), "{init}");
    assert_eq!(caps["resources"]["subscribe"], json!(true), "{init}");
    assert!(caps["completions"].is_object(), "{init}");

    // Prompts: namespaced as tools are, text as sent (nothing hidden in it), the owner's own answer.
    let list = g.request("prompts/list", json!({}));
    let prompts = list["result"]["prompts"].as_array().unwrap();
    let names: Vec<&str> = prompts
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a__a_brief", "b__b_brief"]);
    for (prefix, name) in [("a", "a__a_brief"), ("b", "b__b_brief")] {
        let mut direct = Direct::start(prefix);
        let own = &direct.request("prompts/list", json!({}))["prompts"][0];
        let served = prompts.iter().find(|p| p["name"] == name).unwrap();
        let mut renamed = own.clone();
        renamed["name"] = json!(name);
        assert_eq!(*served, renamed);
        let args = json!({"topic": "tides"});
        let got = g.request("prompts/get", json!({"name": name, "arguments": args}));
        let want = direct.request(
            "prompts/get",
            json!({"name": format!("{prefix}_brief"), "arguments": args}),
        );
        assert_eq!(got["result"], want, "{got}");
        assert_eq!(
            got["result"]["messages"][0]["content"]["text"],
            format!("{prefix} brief on tides")
        );

        // Resources: listed and read as the owner answers, by URI and through its template.
        let own = direct.request("resources/list", json!({}));
        let guide = format!("book://{prefix}/guide");
        let listed = g.request("resources/list", json!({}));
        let served = listed["result"]["resources"].as_array().unwrap();
        let own_guide = own["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["uri"] == guide)
            .unwrap();
        assert!(served.contains(own_guide), "{listed}");
        for uri in [guide, format!("book://{prefix}/chapters/2")] {
            let got = g.request("resources/read", json!({"uri": uri}));
            assert_eq!(
                got["result"],
                direct.request("resources/read", json!({"uri": uri})),
                "{got}"
            );
        }
    }
    let listed = g.request("resources/list", json!({}));
    let uris: Vec<&str> = listed["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, ["book://a/guide", "book://b/guide"]);
    let templates = g.request("resources/templates/list", json!({}));
    let templates: Vec<&str> = templates["result"]["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["uriTemplate"].as_str().unwrap())
        .collect();
    assert_eq!(
        templates,
        ["book://a/chapters/{n}", "book://b/chapters/{n}"]
    );

    // The URI both list: served by neither, told once in the log naming both.
    let shared = g.request("resources/read", json!({"uri": "book://shared/index"}));
    assert_eq!(shared["error"]["code"], json!(-32602), "{shared}");
    assert_eq!(
        shared["error"]["data"]["upstreams"],
        json!(["a", "b"]),
        "{shared}"
    );
    let told = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = told
        .lines()
        .filter(|l| l.contains("book://shared/index"))
        .collect();
    assert_eq!(lines.len(), 1, "{told}");
    assert!(
        lines[0].contains(r#"claimed by upstreams "a" and "b": served by neither"#),
        "{}",
        lines[0]
    );

    // Completions go to the owner: of a prompt by its exposed name, of a template by its URI.
    let done = g.request("completion/complete", json!({"ref": {"type": "ref/prompt", "name": "a__a_brief"}, "argument": {"name": "topic", "value": "al"}}));
    assert_eq!(
        done["result"]["completion"]["values"],
        json!(["alpha"]),
        "{done}"
    );
    let done = g.request("completion/complete", json!({"ref": {"type": "ref/resource", "uri": "book://b/chapters/{n}"}, "argument": {"name": "n", "value": ""}}));
    assert_eq!(
        done["result"]["completion"]["values"],
        json!(["1", "2", "3"]),
        "{done}"
    );

    // Malformed params are invalid params naming the field; an unknown name or URI is refused.
    for (method, params, field) in [
        ("prompts/get", json!({"arguments": {}}), "name"),
        ("resources/read", json!({"uri": 5}), "uri"),
        ("resources/subscribe", json!({}), "uri"),
        (
            "completion/complete",
            json!({"argument": {"name": "n", "value": ""}}),
            "ref",
        ),
    ] {
        let e = g.request(method, params);
        assert_eq!(e["error"]["code"], json!(-32602), "{method}: {e}");
        assert_eq!(e["error"]["data"]["field"], json!(field), "{method}: {e}");
    }
    let e = g.request("prompts/get", json!({"name": "a__nothing"}));
    assert_eq!(
        e["error"]["message"],
        json!("unknown prompt \"a__nothing\""),
        "{e}"
    );
    let e = g.request("resources/read", json!({"uri": "book://c/guide"}));
    assert_eq!(e["error"]["code"], json!(-32602), "{e}");
}

#[test]
fn a_subscribed_host_hears_of_updates_also_after_a_restart_and_of_new_prompts_and_resources() {
    let (mut g, _, _) = gateway("notify");
    let ok = g.request("resources/subscribe", json!({"uri": "book://a/guide"}));
    assert_eq!(ok["result"], json!({}), "{ok}");
    g.call("a__touch", json!({"uri": "book://a/guide"}));
    wait_until(
        "the update reached the host",
        Duration::from_secs(10),
        || {
            let _ = g.request("ping", json!({}));
            (g.notes.iter()).any(|n| {
                n["method"] == "notifications/resources/updated"
                    && n["params"]["uri"] == "book://a/guide"
            })
        },
    );

    g.notes.clear();
    g.call("a__grow", json!({}));
    wait_until(
        "both list_changed reached the host",
        Duration::from_secs(10),
        || {
            let _ = g.request("ping", json!({}));
            [
                "notifications/prompts/list_changed",
                "notifications/resources/list_changed",
            ]
            .iter()
            .all(|m| g.notes.iter().any(|n| n["method"] == *m))
        },
    );
    assert_eq!(
        prompt_names(&mut g),
        ["a__a_brief", "a__a_extra", "b__b_brief"]
    );
    let read = g.request("resources/read", json!({"uri": "book://a/extra"}));
    assert_eq!(
        read["result"]["contents"][0]["text"],
        json!("extra"),
        "{read}"
    );

    // The upstream killed and restarted: the gateway subscribes its new process again.
    let pid = |g: &mut Gateway| g.call("a__pid", json!({}))["result"]["content"][0]["text"].clone();
    let before = pid(&mut g);
    let killed = std::process::Command::new("kill")
        .args(["-9", before.as_str().unwrap()])
        .status()
        .unwrap();
    assert!(killed.success());
    wait_until("a restarted", Duration::from_secs(20), || {
        let now = pid(&mut g);
        now.is_string() && now != before
    });
    g.notes.clear();
    wait_until(
        "an update after the restart",
        Duration::from_secs(10),
        || {
            g.call("a__touch", json!({"uri": "book://a/guide"}));
            (g.notes.iter()).any(|n| n["method"] == "notifications/resources/updated")
        },
    );

    let ok = g.request("resources/unsubscribe", json!({"uri": "book://a/guide"}));
    assert_eq!(ok["result"], json!({}), "{ok}");
}

/// `params` with the 2026-07-28 envelope every request of such a host carries.
fn modern(mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    params
}

#[test]
fn a_2026_host_subscribes_through_listen_to_upstreams_of_the_2025_era() {
    let dir = scratch("serve-resources", "modern");
    let config = config(&dir, json!({"a": library("a"), "b": library("b")}));
    // The upstreams are spoken to in the 2025 era (resources/subscribe), the host in the 2026 one.
    let mut g = Gateway::spawn(&["--config", &config, "--handshake", "legacy"]);
    let discover = g.request("server/discover", modern(json!({})));
    let caps = &discover["result"]["capabilities"];
    assert_eq!(caps["resources"]["subscribe"], json!(true), "{discover}");
    let mut prompts = || {
        let list = g.request("prompts/list", modern(json!({})));
        list["result"]["prompts"].as_array().map_or(0, Vec::len)
    };
    wait_until("both libraries joined", Duration::from_secs(30), || {
        prompts() == 2
    });
    let filter = json!({"notifications": {"promptsListChanged": true, "resourcesListChanged": true,
                                          "resourceSubscriptions": ["book://a/guide"]}});
    let _listen = g.ask("subscriptions/listen", modern(filter));
    let heard = |g: &mut Gateway, method: &str| {
        let _ = g.request("tools/list", modern(json!({})));
        (g.notes.iter()).any(|n| n["method"] == method)
    };
    wait_until(
        "the subscription acknowledged",
        Duration::from_secs(10),
        || heard(&mut g, "notifications/subscriptions/acknowledged"),
    );
    // As a host would, it read the list first (the gateway knows the URI's owner). An update the upstream
    // sends between the acknowledgment and the gateway's own subscription is not seen: touch until one is.
    let _ = g.request("resources/list", modern(json!({})));
    wait_until(
        "the update reached the host",
        Duration::from_secs(10),
        || {
            let touch = json!({"name": "a__touch", "arguments": {"uri": "book://a/guide"}});
            let touched = g.request("tools/call", modern(touch));
            assert!(touched["result"].is_object(), "{touched}");
            heard(&mut g, "notifications/resources/updated")
        },
    );
    let update = g
        .notes
        .iter()
        .find(|n| n["method"] == "notifications/resources/updated")
        .unwrap();
    assert_eq!(update["params"]["uri"], json!("book://a/guide"), "{update}");
    g.request(
        "tools/call",
        modern(json!({"name": "b__grow", "arguments": {}})),
    );
    wait_until(
        "prompts list_changed through the subscription",
        Duration::from_secs(10),
        || heard(&mut g, "notifications/prompts/list_changed"),
    );
}
