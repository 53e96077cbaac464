//! Wire ingestion: bare and enveloped results, pages, and exact error messages.

use mcp_preamble::files::Capture;
use mcp_preamble::{Era, ErrorKind, InstructionsState, ServerSnapshot};
use serde_json::json;

fn err_of(r: mcp_preamble::Result<impl std::fmt::Debug>) -> (ErrorKind, String) {
    let e = r.unwrap_err();
    (e.kind(), e.to_string())
}

#[test]
fn initialize_bare_and_enveloped_agree() {
    let bare = json!({
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "serverInfo": {"name": "s", "version": "", "title": "S"},
        "instructions": "Hi."
    });
    let wrapped = json!({"jsonrpc": "2.0", "id": 7, "result": bare.clone()});
    let a = ServerSnapshot::from_initialize(&bare).unwrap();
    let b = ServerSnapshot::from_initialize(&wrapped).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.protocol_version, "2025-06-18");
    assert_eq!(a.server_info.title.as_deref(), Some("S"));
    assert_eq!(a.era, Era::Legacy);
}

#[test]
fn discover_reads_meta_versions_and_cache_hints() {
    let s = ServerSnapshot::from_discover(&json!({
        "supportedVersions": ["2025-11-25", "2026-07-28"],
        "capabilities": {},
        "ttlMs": 60000,
        "cacheScope": "public",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "m", "version": "2"}}
    }))
    .unwrap();
    assert_eq!(s.protocol_version, "2026-07-28");
    assert_eq!(s.server_info.name, "m");
    let hints = s.cache.unwrap();
    assert_eq!(hints.ttl_ms, Some(60000));
    assert_eq!(hints.cache_scope.as_deref(), Some("public"));
    assert_eq!(s.instructions.state(), InstructionsState::Absent);
}

#[test]
fn tools_pages_follow_cursors_and_keep_the_shortest_ttl() {
    let mut s = ServerSnapshot::new("s");
    let next = s
        .push_tools_page(&json!({"jsonrpc": "2.0", "id": 2, "result": {
            "tools": [{"name": "a", "inputSchema": {}, "annotations": {"readOnlyHint": true}}],
            "nextCursor": "p2", "ttlMs": 5000, "cacheScope": "private"
        }}))
        .unwrap();
    assert_eq!(next.as_deref(), Some("p2"));
    let next = s
        .push_tools_page(
            &json!({"tools": [{"name": "b", "title": "B", "description": "d"}], "ttlMs": 1000}),
        )
        .unwrap();
    assert_eq!(next, None);
    let names: Vec<&str> = s.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(
        s.tools[0].annotations.as_ref().unwrap().read_only_hint,
        Some(true)
    );
    assert_eq!(s.tools_cache.as_ref().unwrap().ttl_ms, Some(1000));
    assert_eq!(
        s.tools_cache.as_ref().unwrap().cache_scope.as_deref(),
        Some("private")
    );
}

#[test]
fn rpc_errors_name_method_code_and_message() {
    let e =
        json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32603, "message": "fetch failed"}});
    let mut s = ServerSnapshot::new("s");
    let err = s.push_tools_page(&e).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::RpcError);
    assert_eq!(
        err.to_string(),
        "json-rpc error response: tools/list failed with -32603: fetch failed"
    );
    let rpc = err.rpc_error().unwrap();
    assert_eq!((rpc.method.as_str(), rpc.code), ("tools/list", -32603));
    assert_eq!(
        err_of(ServerSnapshot::from_initialize(&e)).1,
        "json-rpc error response: initialize failed with -32603: fetch failed"
    );
}

#[test]
fn malformed_messages_are_typed_errors() {
    let cases = [
        (
            json!([]),
            "invalid message: initialize response is not a json object",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1}),
            "invalid message: initialize response has neither result nor error",
        ),
        (
            json!({"result": 3}),
            "invalid message: initialize result is not a json object",
        ),
        (
            json!({"serverInfo": {"name": "x"}}),
            "invalid message: initialize result has no protocolVersion",
        ),
        (
            json!({"protocolVersion": 1}),
            "invalid message: initialize result.protocolVersion is not a string",
        ),
        (
            json!({"protocolVersion": "v"}),
            "invalid message: initialize result has no serverInfo",
        ),
        (
            json!({"protocolVersion": "v", "serverInfo": []}),
            "invalid message: initialize result serverInfo is not a json object",
        ),
        (
            json!({"protocolVersion": "v", "serverInfo": {"name": 1}}),
            "invalid message: initialize result serverInfo.name is not a string",
        ),
        (
            json!({"protocolVersion": "v", "serverInfo": {}, "instructions": ["x"]}),
            "invalid message: initialize result.instructions is not a string",
        ),
    ];
    for (msg, expected) in cases {
        let (kind, text) = err_of(ServerSnapshot::from_initialize(&msg));
        assert_eq!(kind, ErrorKind::InvalidMessage);
        assert_eq!(text, expected);
    }
    assert_eq!(
        err_of(ServerSnapshot::from_discover(
            &json!({"supportedVersions": []})
        ))
        .1,
        "invalid message: server/discover result has an empty supportedVersions"
    );
    assert_eq!(
        err_of(ServerSnapshot::from_discover(
            &json!({"supportedVersions": ["x"], "ttlMs": -1, "_meta": {}})
        ))
        .1,
        "invalid message: server/discover result has no serverInfo"
    );
    let mut s = ServerSnapshot::new("s");
    assert_eq!(
        err_of(s.push_tools_page(&json!({"tools": [{"description": "no name"}]}))).1,
        "invalid message: tools/list result tools[0] has no name"
    );
    assert_eq!(
        err_of(ServerSnapshot::from_initialize_json("{")).0,
        ErrorKind::InvalidJson
    );
}

#[test]
fn capture_errors() {
    assert_eq!(
        err_of(Capture::from_json("{}")).1,
        "invalid message: capture has neither initialize nor discover"
    );
    assert_eq!(
        err_of(Capture::from_json(
            r#"{"initialize": {}, "tools_list_pages": {}}"#
        ))
        .1,
        "invalid message: capture.tools_list_pages is not an array"
    );
    let deep = format!(
        "{{\"initialize\":{}{}}}",
        "[".repeat(5000),
        "]".repeat(5000)
    );
    assert_eq!(err_of(Capture::from_json(&deep)).0, ErrorKind::InvalidJson);
    let only_legacy = Capture::from_json(
        r#"{"initialize": {"result": {"protocolVersion": "v", "serverInfo": {"name": "n"}}}}"#,
    )
    .unwrap();
    assert_eq!(only_legacy.eras(), vec![Era::Legacy]);
    assert_eq!(
        err_of(only_legacy.snapshot_in(Era::Modern)).1,
        "invalid message: capture has no modern handshake"
    );
}

mod arbitrary_json {
    use mcp_preamble::ServerSnapshot;
    use mcp_preamble::files::Capture;
    use proptest::prelude::*;
    use serde_json::Value;

    /// Arbitrary JSON, biased toward the keys the readers look for.
    fn json() -> impl Strategy<Value = Value> {
        let key = prop_oneof![
            Just("result".to_string()),
            Just("error".to_string()),
            Just("jsonrpc".to_string()),
            Just("protocolVersion".to_string()),
            Just("serverInfo".to_string()),
            Just("instructions".to_string()),
            Just("supportedVersions".to_string()),
            Just("_meta".to_string()),
            Just("io.modelcontextprotocol/serverInfo".to_string()),
            Just("tools".to_string()),
            Just("name".to_string()),
            Just("ttlMs".to_string()),
            Just("annotations".to_string()),
            Just("initialize".to_string()),
            Just("discover".to_string()),
            Just("tools_list_pages".to_string()),
            "[a-z]{1,6}",
        ];
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
            any::<String>().prop_map(Value::from),
        ];
        leaf.prop_recursive(5, 64, 6, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::btree_map(key.clone(), inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn readers_never_panic(v in json()) {
            let _ = ServerSnapshot::from_initialize(&v);
            let _ = ServerSnapshot::from_discover(&v);
            let _ = ServerSnapshot::new("s").push_tools_page(&v);
            if let Ok(c) = Capture::from_json(&v.to_string()) {
                let _ = c.snapshot();
            }
        }
    }
}

#[cfg(unix)]
#[test]
fn files_are_read_up_to_the_size_cap() {
    let err = Capture::from_path("/dev/zero").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io);
    assert_eq!(
        err.to_string(),
        format!(
            "cannot read file: /dev/zero: over the limit of {} bytes",
            mcp_preamble::files::MAX_FILE_BYTES
        )
    );
}

#[test]
fn a_capture_may_start_with_a_byte_order_mark() {
    let text = std::fs::read_to_string("tests/corpus/seed-invoice-server.json").unwrap();
    let path = std::env::temp_dir().join(format!("mcp-preamble-bom-{}.json", std::process::id()));
    std::fs::write(&path, format!("\u{feff}{text}")).unwrap();
    let with_bom = Capture::from_path(&path).unwrap().snapshot().unwrap();
    let _ = std::fs::remove_file(&path);
    let plain = Capture::from_path("tests/corpus/seed-invoice-server.json")
        .unwrap()
        .snapshot()
        .unwrap();
    assert_eq!(with_bom, plain);
}

/// A capture given as a FIFO (`<(curl …)`, a pipe from another tool) is read
/// once (issue 54): the packages' `Server.from_capture` / `fromCapture` read
/// it through `load_server_eras`, which read the path twice and hung on the
/// second, writerless, open.
#[cfg(unix)]
#[test]
fn a_capture_is_read_once_so_a_fifo_works() {
    let dir = std::env::temp_dir().join(format!("mcp-preamble-fifo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("capture.json");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipped: no mkfifo");
        return;
    }
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus/seed-invoice-server.json");
    let text = std::fs::read(&corpus).unwrap();
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(&fifo, text).unwrap())
    };
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = fifo.clone();
    std::thread::spawn(move || {
        let _ = tx.send(mcp_preamble::files::load_server_eras(&reader));
    });
    let (snapshot, _) = rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("read within 10 s, not waiting for a second writer")
        .unwrap();
    assert_eq!(snapshot.alias.as_deref(), Some("capture"));
    assert!(!snapshot.tools.is_empty());
    writer.join().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
