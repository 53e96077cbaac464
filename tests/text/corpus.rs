//! The real captures in tests/corpus/: every file loads, both eras agree,
//! errors are typed, and assembling them keeps the report's invariants.

use crate::common;

use common::*;
use mcp_preamble::files::Capture;
use mcp_preamble::{Assembler, Era, ErrorKind, Instructions, InstructionsState, Order, Template};

#[test]
fn every_capture_loads_in_every_era_it_has() {
    let files = corpus_files();
    assert_eq!(files.len(), 37);
    for path in &files {
        let capture = Capture::from_path(path).unwrap();
        let eras = capture.eras();
        assert!(eras.contains(&Era::Legacy), "{}", path.display());
        for era in eras {
            let s = capture
                .snapshot_in(era)
                .unwrap_or_else(|e| panic!("{} {era:?}: {e}", path.display()));
            assert_eq!(s.era, era);
            assert!(!s.server_info.name.is_empty(), "{}", path.display());
        }
    }
}

#[test]
fn both_handshakes_of_a_server_agree() {
    let mut both = 0;
    for path in corpus_files() {
        let capture = Capture::from_path(&path).unwrap();
        if capture.eras().len() < 2 {
            continue;
        }
        both += 1;
        let legacy = capture.snapshot_in(Era::Legacy).unwrap();
        let modern = capture.snapshot_in(Era::Modern).unwrap();
        let name = path.display();
        assert_eq!(legacy.instructions, modern.instructions, "{name}");
        assert_eq!(legacy.tools, modern.tools, "{name}");
        assert_eq!(legacy.server_info, modern.server_info, "{name}");
        assert_eq!(legacy.protocol_version, "2025-11-25", "{name}");
        assert_eq!(modern.protocol_version, "2026-07-28", "{name}");
        assert!(legacy.cache.is_none());
        assert!(modern.cache.is_some(), "{name}");
    }
    assert_eq!(both, 17);
}

#[test]
fn the_discover_handshake_is_preferred() {
    let s = capture("seed-invoice-server").snapshot().unwrap();
    assert_eq!(s.era, Era::Modern);
    let hints = s.cache.unwrap();
    assert_eq!(hints.ttl_ms, Some(0));
    assert_eq!(hints.cache_scope.as_deref(), Some("private"));
    assert_eq!(s.tools_cache.unwrap().ttl_ms, Some(0));
    let legacy_only = capture("server-everything").snapshot().unwrap();
    assert_eq!(legacy_only.era, Era::Legacy);
}

#[test]
fn failed_discover_is_a_typed_error() {
    for (name, code, message) in [
        ("server-everything", -32601, "Method not found"),
        ("arxiv-mcp-server", -32602, "Invalid request parameters"),
    ] {
        let err = capture(name).snapshot_in(Era::Modern).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::RpcError);
        let rpc = err.rpc_error().unwrap();
        assert_eq!(rpc.method, "server/discover");
        assert_eq!(rpc.code, code);
        assert_eq!(rpc.message, message);
        assert_eq!(
            err.to_string(),
            format!("json-rpc error response: server/discover failed with {code}: {message}")
        );
    }
}

#[test]
fn an_errored_tools_list_is_kept_as_a_diagnostic() {
    let s = capture("supabase-mcp-server-supabase").snapshot().unwrap();
    assert!(s.tools.is_empty());
    let err = s.tools_error.as_ref().unwrap();
    assert_eq!((err.method.as_str(), err.code), ("tools/list", -32603));
    assert_eq!(err.message, "fetch failed");
    let assembly = Assembler::new().assemble(&[s]).unwrap();
    let report = &assembly.servers()[0];
    assert!(report.included, "instructions still render");
    assert_eq!(
        report.diagnostics(),
        vec!["tools/list failed with -32603: fetch failed".to_string()]
    );
}

#[test]
fn the_seed_edge_cases_of_instructions() {
    // Unset and "" are the same on the wire; " " ships.
    assert_eq!(Instructions::from_raw(None), Instructions::Absent);
    assert_eq!(Instructions::from_raw(Some("")), Instructions::Absent);
    assert_eq!(
        Instructions::from_raw(Some(" ")),
        Instructions::Blank(" ".into())
    );
    assert_eq!(
        Instructions::from_raw(Some("Call list_periods first.")).state(),
        InstructionsState::Present
    );
    let init = |instr: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":"2025-11-25","capabilities":{{}},"serverInfo":{{"name":"s","version":"1"}}{instr}}}}}"#
        )
    };
    let state = |extra: &str| {
        mcp_preamble::ServerSnapshot::from_initialize_json(&init(extra))
            .unwrap()
            .instructions
            .state()
    };
    assert_eq!(state(""), InstructionsState::Absent);
    assert_eq!(state(r#","instructions":"""#), InstructionsState::Absent);
    assert_eq!(state(r#","instructions":null"#), InstructionsState::Absent);
    assert_eq!(state(r#","instructions":" ""#), InstructionsState::Blank);

    let capture = capture("synthetic-node-whitespace");
    for era in [Era::Legacy, Era::Modern] {
        let s = capture.snapshot_in(era).unwrap();
        assert_eq!(s.instructions, Instructions::Blank("   ".into()), "{era:?}");
    }
    let assembly = Assembler::new()
        .assemble(&[snapshot("synthetic-node-whitespace")])
        .unwrap();
    let report = &assembly.servers()[0];
    assert_eq!(report.instructions, InstructionsState::Blank);
    assert!(!report.text.contains("   \n"));
    assert!(report.diagnostics()[0].starts_with("instructions are blank"));
}

#[test]
fn python_indented_instructions_are_dedented() {
    let s = snapshot("awslabs-aws-documentation-mcp-server");
    let raw = s.instructions.raw().unwrap();
    assert!(raw.starts_with("\n    # AWS Documentation MCP Server"));
    let assembly = Assembler::new().assemble(&[s]).unwrap();
    let text = &assembly.servers()[0].text;
    assert!(text.contains("\n#### AWS Documentation MCP Server\n"));
    assert!(
        text.lines().all(|l| l == l.trim_end()),
        "no trailing spaces"
    );
    assert!(
        !text.contains("\n    - "),
        "list items are no longer indented"
    );
}

#[test]
fn report_text_is_the_section_substring_and_counts_are_exact() {
    let servers = all_snapshots();
    for template in [Template::markdown(), Template::xml()] {
        let assembly = Assembler::new()
            .template(template.clone())
            .assemble(&servers)
            .unwrap();
        assert_eq!(assembly.total_tokens(), o200k(assembly.text()));
        assert_eq!(assembly.servers().len(), servers.len());
        let mut included = 0;
        for s in assembly.servers() {
            assert_eq!(s.tokens, o200k(&s.text), "{}", s.name);
            match s.span {
                Some((a, b)) => {
                    included += 1;
                    assert_eq!(&assembly.text()[a..b], s.text, "{}", s.name);
                    assert!(s.included);
                }
                None => assert!(!s.included && s.text.is_empty()),
            }
        }
        // Every corpus server has tools or instructions except the errored supabase (which has instructions).
        assert_eq!(included, servers.len(), "{}", template.name());
    }
}

#[test]
fn output_is_deterministic_whatever_the_input_order() {
    let servers = all_snapshots();
    let mut reversed = servers.clone();
    reversed.reverse();
    let a = Assembler::new().assemble(&servers).unwrap();
    let b = Assembler::new().assemble(&reversed).unwrap();
    assert_eq!(a.text(), b.text());
    assert_eq!(a.to_json(), b.to_json());

    let insertion = Assembler::new().order(Order::Insertion);
    let c = insertion.assemble(&reversed).unwrap();
    assert_eq!(c.servers()[0].name, "tavily-mcp");
    assert_eq!(c.text(), insertion.assemble(&reversed).unwrap().text());
}

#[test]
fn cl100k_counts_differ_and_are_exact() {
    let servers = vec![snapshot("synthetic-python-unicode")];
    let o = Assembler::new().assemble(&servers).unwrap();
    let c = Assembler::new()
        .encoding(mcp_preamble::Encoding::Cl100kBase)
        .assemble(&servers)
        .unwrap();
    assert_eq!(c.encoding(), "cl100k_base");
    assert_eq!(
        c.total_tokens(),
        tiktoken_rs::cl100k_base_singleton().count_ordinary(c.text())
    );
    assert_ne!(o.total_tokens(), c.total_tokens());
}

#[test]
fn json_report_has_the_documented_fields() {
    let assembly = Assembler::new()
        .assemble(&[snapshot("seed-invoice-server")])
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&assembly.to_json()).unwrap();
    assert_eq!(v["encoding"], "o200k_base");
    assert_eq!(v["text"], assembly.text());
    assert_eq!(v["total_tokens"], assembly.total_tokens());
    let s = &v["servers"][0];
    for key in [
        "name",
        "text",
        "tokens",
        "instructions",
        "removed",
        "truncated",
        "diagnostics",
    ] {
        assert!(s.get(key).is_some(), "missing {key}");
    }
    assert_eq!(s["instructions"], "present");
    assert_eq!(s["removed"], serde_json::json!([]));
    assert_eq!(s["truncated"], false);
}
