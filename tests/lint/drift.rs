//! Drift between snapshots of one server: `MCP015` (`initialize` against
//! `server/discover`) and `MCP016` (one connect against the next). Each
//! fires on a minimal case and not on a near miss; a capture with both
//! eras differing (built here in the corpus format) is reported through the
//! library and the CLI; every corpus capture with both eras is checked; the
//! SARIF output with these findings validates; and, live, `lint --connects
//! 2` and `--eras` on the test servers.

use crate::common;

use common::*;
use mcp_preamble::files::Capture;
use mcp_preamble::lint::{Finding, LintCode, Linter, Severity};
use mcp_preamble::{Era, ServerSnapshot, Tool};
use serde_json::{Value, json};

/// A snapshot in an era with instructions and `(name, description)` tools.
fn srv(era: Era, instructions: &str, tools: &[(&str, &str)]) -> ServerSnapshot {
    let mut s = ServerSnapshot::new("invoice").with_instructions(instructions);
    s.era = era;
    for (name, description) in tools {
        s = s.with_tool(Tool::new(*name, *description));
    }
    s
}

const TOOLS: &[(&str, &str)] = &[
    ("list_periods", "List billing periods."),
    ("get_invoice", "Get an invoice by id."),
];

const TEXT: &str = "Always call list_periods before get_invoice.\nInvoice IDs are period scoped.";

/// The drift findings (MCP015, MCP016) of these snapshots, first linted.
fn drift(snapshots: &[ServerSnapshot]) -> Vec<Finding> {
    Linter::new()
        .lint_connects(snapshots)
        .into_iter()
        .filter(|f| matches!(f.code, LintCode::EraDrift | LintCode::UnstableText))
        .collect()
}

fn messages(findings: &[Finding]) -> Vec<String> {
    findings.iter().map(|f| f.message.clone()).collect()
}

// --- MCP015 era-drift --------------------------------------------------------------

#[test]
fn mcp015_fires_when_the_eras_give_different_instructions() {
    let modern = srv(Era::Modern, TEXT, TOOLS);
    let legacy = srv(
        Era::Legacy,
        "Always call list_periods before get_invoice.\nInvoice IDs are stable.",
        TOOLS,
    );
    let found = drift(&[modern, legacy]);
    assert_eq!(
        messages(&found),
        [
            "instructions differ between server/discover and initialize, first at line 2: \"Invoice IDs are period scoped.\" in server/discover, \"Invoice IDs are stable.\" in initialize"
        ]
    );
    let f = &found[0];
    assert_eq!(f.code, LintCode::EraDrift);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(f.line, Some(2));
    assert_eq!(f.tool, None);
    assert_eq!(f.explanation, LintCode::EraDrift.explanation());
    assert_eq!(f.fix, LintCode::EraDrift.fix());
}

#[test]
fn mcp015_shows_the_part_of_a_long_line_that_differs() {
    let long = |word: &str| {
        format!(
            "{} Then call {word}.",
            "Billing data is kept per period. ".repeat(10)
        )
    };
    let found = drift(&[
        srv(Era::Modern, &long("get_invoice"), TOOLS),
        srv(Era::Legacy, &long("list_periods"), TOOLS),
    ]);
    assert_eq!(found.len(), 1);
    let m = &found[0].message;
    // Not the whole text: a window from a little before the difference.
    assert!(
        m.contains("\"…kept per period. Then call get_invoice.\" in server/discover"),
        "{m}"
    );
    assert!(
        m.contains("\"…kept per period. Then call list_periods.\" in initialize"),
        "{m}"
    );
    assert!(m.chars().count() < 300, "{m}");
}

#[test]
fn mcp015_names_tools_only_in_one_era_and_redescribed_tools() {
    let modern = srv(Era::Modern, TEXT, TOOLS).with_tool(Tool::new("export", "Export as CSV."));
    let mut legacy = srv(
        Era::Legacy,
        TEXT,
        &[
            ("list_periods", "List the billing periods you can read."),
            ("get_invoice", "Get an invoice by id."),
            ("legacy_search", "Search."),
        ],
    );
    legacy.tools[1].input_schema =
        json!({"type": "object", "properties": {"id": {"type": "string"}}}).into();
    let found = drift(&[modern, legacy]);
    assert_eq!(
        messages(&found),
        [
            "tool `get_invoice` has a different inputSchema between server/discover and initialize",
            "tool `list_periods` has a different description between server/discover and initialize, first at line 1: \"List billing periods.\" in server/discover, \"List the billing periods you can read.\" in initialize",
            "tools only in initialize: `legacy_search`",
            "tools only in server/discover: `export`",
        ]
    );
    assert!(found.iter().all(|f| f.code == LintCode::EraDrift));
    assert_eq!(found[0].tool.as_deref(), Some("get_invoice"));
    assert_eq!(found[1].tool.as_deref(), Some("list_periods"));
    assert_eq!(found[2].tool, None);
}

#[test]
fn mcp015_reports_invisible_characters_that_sanitizing_hides() {
    let found = drift(&[
        srv(Era::Modern, TEXT, TOOLS),
        srv(Era::Legacy, &format!("{TEXT}\u{200b}\u{e0041}"), TOOLS),
    ]);
    assert_eq!(
        messages(&found),
        [
            "instructions differ between server/discover and initialize only in invisible characters that sanitizing removes (0 in server/discover, 2 in initialize)"
        ]
    );
}

#[test]
fn mcp015_reports_instructions_sent_in_one_era_only() {
    let mut legacy = srv(Era::Legacy, "", TOOLS);
    legacy.instructions = mcp_preamble::Instructions::Absent;
    let found = drift(&[srv(Era::Modern, "Use list_periods first.", TOOLS), legacy]);
    assert_eq!(
        messages(&found),
        [
            "instructions differ between server/discover and initialize: 23 characters in server/discover, 0 characters in initialize"
        ]
    );
}

#[test]
fn mcp015_near_misses() {
    let modern = srv(Era::Modern, TEXT, TOOLS);
    // The same text and tools.
    assert_eq!(drift(&[modern.clone(), srv(Era::Legacy, TEXT, TOOLS)]), []);
    // Only the tool order differs.
    let reversed: Vec<(&str, &str)> = TOOLS.iter().rev().copied().collect();
    assert_eq!(
        drift(&[modern.clone(), srv(Era::Legacy, TEXT, &reversed)]),
        []
    );
    // Only whitespace that sanitizing removes: indentation, trailing spaces,
    // CRLF, blank lines. Every sanitizing host sends the same text, so no finding.
    let spaced = "\n    Always call list_periods before get_invoice.   \r\n    Invoice IDs are period scoped.  \n\n";
    assert_eq!(
        drift(&[modern.clone(), srv(Era::Legacy, spaced, TOOLS)]),
        []
    );
    // A blank line is a difference: it is in the text every host sends.
    let paragraphs = TEXT.replace('\n', "\n\n");
    assert_eq!(
        messages(&drift(&[
            modern.clone(),
            srv(Era::Legacy, &paragraphs, TOOLS)
        ])),
        [
            "instructions differ between server/discover and initialize, first at line 2: \"Invoice IDs are period scoped.\" in server/discover, \"(blank line)\" in initialize"
        ]
    );
    // Schema key order does not matter either.
    let mut a = modern.clone();
    a.tools[0].input_schema = json!({"type": "object", "properties": {}}).into();
    let mut b = srv(Era::Legacy, TEXT, TOOLS);
    b.tools[0].input_schema = json!({"properties": {}, "type": "object"}).into();
    assert_eq!(drift(&[a, b]), []);
    // One snapshot, or none: nothing to compare.
    assert_eq!(drift(std::slice::from_ref(&modern)), []);
    assert!(Linter::new().check_connects(&[], None).is_none());
    assert_eq!(Linter::new().lint_connects(&[]), []);
}

#[test]
fn a_long_list_of_redescribed_tools_is_summed_up() {
    let tools: Vec<(String, String)> = (0..15)
        .map(|i| (format!("tool_{i:02}"), format!("Tool number {i}.")))
        .collect();
    let mut a = srv(Era::Modern, TEXT, &[]);
    let mut b = srv(Era::Legacy, TEXT, &[]);
    for (name, description) in &tools {
        a = a.with_tool(Tool::new(name, description));
        b = b.with_tool(Tool::new(name, format!("{description} Changed.")));
    }
    let found = drift(&[a, b]);
    assert_eq!(found.len(), 11);
    assert!(
        found.iter().any(|f| f.message
            == "5 more tools have a different description or inputSchema between server/discover and initialize: `tool_10`, `tool_11`, `tool_12`, `tool_13`, `tool_14`"),
        "{:#?}",
        messages(&found)
    );
}

#[test]
fn era_drift_findings_redact_secrets_of_the_other_snapshot() {
    // Built here so that no secret scanner mistakes this file for a leak.
    let key = format!("sk-proj-{}", "9fK2mQ7xLp4Rt8Zb3Nc6Vd1Wy5Hs0Ja2");
    let found = drift(&[
        srv(Era::Modern, "Use the invoice tools.", TOOLS),
        srv(
            Era::Legacy,
            &format!("Use the invoice tools with key {key}."),
            TOOLS,
        ),
    ]);
    assert_eq!(found.len(), 1);
    assert!(
        !found[0].message.contains("9fK2mQ7x"),
        "{}",
        found[0].message
    );
    assert!(
        found[0].message.contains("[redacted"),
        "{}",
        found[0].message
    );
}

// --- MCP016 unstable-text -----------------------------------------------------------

#[test]
fn mcp016_fires_when_a_later_connect_differs() {
    let one = srv(Era::Modern, "Use list_periods first. Session 4f3a.", TOOLS);
    let two = srv(Era::Modern, "Use list_periods first. Session 9b2c.", TOOLS);
    let three = srv(
        Era::Modern,
        "Use list_periods first. Session 4f3a.",
        &TOOLS[..1],
    );
    let found = drift(&[one, two, three]);
    assert_eq!(
        messages(&found),
        // Sorted as every finding is: by code, then line (none first).
        [
            "tools only in connect 1: `get_invoice`; this defeats prompt caches",
            "instructions differ between connect 1 and connect 2, first at line 1: \"Use list_periods first. Session 4f3a.\" in connect 1, \"Use list_periods first. Session 9b2c.\" in connect 2; this defeats prompt caches",
        ]
    );
    assert!(
        found
            .iter()
            .all(|f| f.code == LintCode::UnstableText && f.severity == Severity::Warning)
    );
}

#[test]
fn mcp016_near_misses() {
    let one = srv(Era::Modern, TEXT, TOOLS);
    assert_eq!(drift(&[one.clone(), one.clone(), one.clone()]), []);
    let reversed: Vec<(&str, &str)> = TOOLS.iter().rev().copied().collect();
    assert_eq!(
        drift(&[
            one.clone(),
            srv(Era::Modern, &format!("{TEXT}  \n"), &reversed)
        ]),
        []
    );
    // Allowed like any code.
    let changed = srv(Era::Modern, "Other text.", TOOLS);
    let linter = Linter::new().allow(LintCode::UnstableText);
    assert!(
        linter
            .lint_connects(&[one.clone(), changed.clone()])
            .is_empty()
    );
    let linter = Linter::new().severity(LintCode::UnstableText, Severity::Error);
    assert_eq!(
        linter.lint_connects(&[one, changed])[0].severity,
        Severity::Error
    );
}

#[test]
fn text_that_changes_per_connect_is_not_also_called_era_drift() {
    // Two modern connects that differ and one legacy connect that differs
    // from the first the same way: MCP016 only.
    let found = drift(&[
        srv(Era::Modern, "Session 1.", TOOLS),
        srv(Era::Modern, "Session 2.", TOOLS),
        srv(Era::Legacy, "Session 3.", TOOLS),
    ]);
    let codes: Vec<LintCode> = found.iter().map(|f| f.code).collect();
    assert_eq!(codes, [LintCode::UnstableText]);
    // A stable server whose eras differ: MCP015 only.
    let found = drift(&[
        srv(Era::Modern, "New text.", TOOLS),
        srv(Era::Modern, "New text.", TOOLS),
        srv(Era::Legacy, "Old text.", TOOLS),
    ]);
    let codes: Vec<LintCode> = found.iter().map(|f| f.code).collect();
    assert_eq!(codes, [LintCode::EraDrift]);
}

// --- Captures --------------------------------------------------------------------

/// A capture in the corpus format (tests/corpus/README.md) whose eras differ:
/// other instructions and one more tool on `server/discover`.
fn drifting_capture() -> Value {
    let tool = |name: &str, description: &str| json!({"name": name, "description": description, "inputSchema": {"type": "object"}});
    json!({
        "server": "drifting@1.0.0",
        "sdk": "built in tests/lint_drift.rs",
        "captured": "2026-11-29",
        "initialize": {"jsonrpc": "2.0", "id": 1, "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "drifting", "version": "1.0.0"},
            "instructions": "Call list_periods first.\nIDs are global."
        }},
        "tools_list_pages": [{"jsonrpc": "2.0", "id": 2, "result": {"tools": [
            tool("list_periods", "List billing periods."),
        ]}}],
        "discover": {"jsonrpc": "2.0", "id": 1, "result": {
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "instructions": "Call list_periods first.\nIDs are period scoped.",
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "drifting", "version": "1.0.0"}}
        }},
        "discover_tools_list_pages": [{"jsonrpc": "2.0", "id": 2, "result": {"tools": [
            tool("list_periods", "List billing periods."),
            tool("get_invoice", "Get an invoice by id."),
        ], "ttlMs": 0, "cacheScope": "private"}}]
    })
}

#[test]
fn a_capture_whose_eras_differ() {
    let capture = Capture::from_json(&drifting_capture().to_string()).unwrap();
    let eras = capture.era_snapshots().unwrap();
    assert_eq!(eras.len(), 2);
    assert_eq!((eras[0].era, eras[1].era), (Era::Modern, Era::Legacy));
    let found = drift(&eras);
    assert_eq!(
        messages(&found),
        [
            "tools only in server/discover: `get_invoice`",
            "instructions differ between server/discover and initialize, first at line 2: \"IDs are period scoped.\" in server/discover, \"IDs are global.\" in initialize",
        ]
    );
}

#[test]
fn no_corpus_capture_with_both_eras_drifts() {
    let linter = Linter::new();
    let mut both = Vec::new();
    for path in corpus_files() {
        let capture = Capture::from_path(&path).unwrap();
        let eras = capture.era_snapshots().unwrap();
        if eras.len() < 2 {
            continue;
        }
        both.push(stem(&path));
        let found: Vec<String> = linter
            .lint_connects(&eras)
            .into_iter()
            .filter(|f| f.code == LintCode::EraDrift)
            .map(|f| f.message)
            .collect();
        assert_eq!(found, Vec::<String>::new(), "{}", stem(&path));
    }
    // The 17 captures of tests/corpus/README.md whose server/discover succeeded.
    assert_eq!(both.len(), 17, "{both:?}");
}

#[test]
fn sarif_with_drift_findings_validates_and_locates_the_tool() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sarif-schema-2.1.0.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let linter = Linter::new();
    let mut legacy = srv(Era::Legacy, "Other text.", TOOLS);
    legacy.tools[0].description = Some("Changed.".into());
    let era = linter
        .check_connects(&[srv(Era::Modern, TEXT, TOOLS), legacy], Some("drift.json"))
        .unwrap();
    let connects = linter
        .check_connects(
            &[
                srv(Era::Modern, "One.", TOOLS).with_alias("changing"),
                srv(Era::Modern, "Two.", TOOLS).with_alias("changing"),
            ],
            None,
        )
        .unwrap();
    let report = mcp_preamble::lint::LintReport::new(vec![era, connects]);
    let log: Value = serde_json::from_str(&report.to_sarif()).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&log)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "invalid SARIF: {errors:#?}");
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), LintCode::ALL.len());
    assert_eq!(rules[14]["id"], "MCP015");
    assert_eq!(rules[14]["name"], "era-drift");
    assert_eq!(rules[15]["id"], "MCP016");
    assert_eq!(rules[15]["defaultConfiguration"]["level"], "warning");
    let results = run["results"].as_array().unwrap();
    let tool = results
        .iter()
        .find(|r| r["ruleId"] == "MCP015" && r["properties"]["tool"] == "list_periods")
        .unwrap();
    assert_eq!(tool["ruleIndex"], 14);
    let logical = tool["locations"][0]["logicalLocations"].as_array().unwrap();
    assert_eq!(logical[1]["fullyQualifiedName"], "invoice/list_periods");
    assert_eq!(
        tool["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "drift.json"
    );
    let unstable = results.iter().find(|r| r["ruleId"] == "MCP016").unwrap();
    assert_eq!(unstable["ruleIndex"], 15);
    assert!(
        unstable["message"]["text"]
            .as_str()
            .unwrap()
            .ends_with("this defeats prompt caches")
    );
}

// --- The CLI -------------------------------------------------------------------------

#[cfg(feature = "cli")]
mod cli {
    use super::*;
    use std::path::PathBuf;
    use std::process::{Command, Output};

    fn run(args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .arg("lint")
            .args(args)
            .output()
            .unwrap()
    }

    fn stdout(o: &Output) -> String {
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("mcp-preamble-drift-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_capture_file_with_both_eras_is_compared() {
        let dir = temp_dir("capture");
        let path = dir.join("drifting.json");
        std::fs::write(&path, drifting_capture().to_string()).unwrap();
        let out = run(&[path.to_str().unwrap(), "--format", "json"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
        let findings = v["servers"][0]["findings"].as_array().unwrap();
        let codes: Vec<&str> = findings
            .iter()
            .map(|f| f["code"].as_str().unwrap())
            .collect();
        assert_eq!(codes, ["MCP015", "MCP015"]);
        assert_eq!(findings[0]["name"], "era-drift");
        assert_eq!(
            findings[0]["message"],
            "tools only in server/discover: `get_invoice`"
        );
        assert_eq!(findings[1]["line"], 2);
        assert!(
            findings[1]["message"]
                .as_str()
                .unwrap()
                .starts_with("instructions differ")
        );
        // A corpus capture whose eras agree: no finding, as before.
        let same = run(&["tests/corpus/seed-invoice-server.json", "--deny", "note"]);
        assert_eq!(same.status.code(), Some(0));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn connects_and_eras_are_checked() {
        let too_many = run(&["--config", "x.json", "--connects", "11"]);
        assert_eq!(too_many.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&too_many.stderr).contains("11 is not in 1..=10"));
        let zero = run(&["--config", "x.json", "--connects", "0"]);
        assert_eq!(zero.status.code(), Some(2));
        // Files are read once: the flags need --config.
        let no_config = run(&["tests/corpus/seed-invoice-server.json", "--connects", "2"]);
        assert_eq!(no_config.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&no_config.stderr).contains("--config"));
        let no_config = run(&["tests/corpus/seed-invoice-server.json", "--eras"]);
        assert_eq!(no_config.status.code(), Some(2));
    }

    /// A test server of a config: alias, script, environment.
    type Entry<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)]);

    /// A config of test servers.
    fn config(dir: &std::path::Path, servers: &[Entry]) -> String {
        ensure_npm();
        let mut map = serde_json::Map::new();
        for (alias, script, env) in servers {
            let env: serde_json::Map<String, Value> =
                env.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
            map.insert(
                alias.to_string(),
                json!({"command": "node", "args": [servers_dir().join(script)], "env": env}),
            );
        }
        let path = dir.join("mcp.json");
        std::fs::write(&path, json!({ "mcpServers": map }).to_string()).unwrap();
        path.display().to_string()
    }

    /// Live: `changing.mjs` with a session id in its instructions gets
    /// MCP016 naming the change; the invoice server, stable, gets none.
    #[test]
    fn connects_2_reports_text_that_changes_per_connect() {
        let dir = temp_dir("connects");
        let config = config(
            &dir,
            &[
                (
                    "changing",
                    "changing.mjs",
                    &[("INSTRUCTIONS_PER_CONNECT", "1")],
                ),
                ("invoice", "invoice.mjs", &[]),
            ],
        );
        let out = run(&[
            "--config",
            &config,
            "--connects",
            "2",
            "--timeout",
            "20",
            "--format",
            "json",
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
        let servers = v["servers"].as_array().unwrap();
        assert_eq!(servers.len(), 2);
        assert_eq!(servers[0]["server"], "changing");
        let found = servers[0]["findings"].as_array().unwrap();
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0]["code"], "MCP016");
        assert_eq!(found[0]["name"], "unstable-text");
        assert_eq!(found[0]["severity"], "warning");
        let m = found[0]["message"].as_str().unwrap();
        assert!(
            m.starts_with("instructions differ between connect 1 and connect 2, first at line 1: \"Version one. Session "),
            "{m}"
        );
        assert!(
            m.ends_with("in connect 2; this defeats prompt caches"),
            "{m}"
        );
        assert_eq!(servers[1]["server"], "invoice");
        assert_eq!(servers[1]["findings"], json!([]));
        // With one connect (the default), nothing to compare.
        let once = run(&["--config", &config, "--timeout", "20", "--format", "json"]);
        let v: Value = serde_json::from_str(&stdout(&once)).unwrap();
        assert_eq!(v["summary"]["findings"], 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Live: a server that fails its second connect leaves the lint
    /// incomplete (exit 2), named with the connect that failed.
    #[test]
    fn a_failed_later_connect_is_a_failure() {
        let dir = temp_dir("fails");
        let log = dir.join("spawns.log");
        let log = log.to_str().unwrap();
        let config = config(
            &dir,
            &[(
                "once",
                "count-spawns.mjs",
                &[("SPAWN_LOG", log), ("FAIL_AFTER_SPAWNS", "1")],
            )],
        );
        let out = run(&["--config", &config, "--connects", "2", "--timeout", "20"]);
        assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!(
                "mcp-preamble: {config}: server once: connect 2 of 2: cannot connect"
            )),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Live: `--eras` connects once more with `initialize`; a server whose
    /// `initialize` answers other instructions gets MCP015.
    #[test]
    fn eras_reports_instructions_that_differ_by_handshake() {
        let dir = temp_dir("eras");
        let config = config(
            &dir,
            &[
                (
                    "drifting",
                    "changing.mjs",
                    &[("INSTRUCTIONS_LEGACY", "Version zero.")],
                ),
                ("invoice", "invoice.mjs", &[]),
            ],
        );
        let out = run(&["--config", &config, "--eras", "--timeout", "20"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = stdout(&out);
        assert!(
            text.contains("  warning[MCP015] era-drift: instructions differ between server/discover and initialize, first at line 1: \"Version one.\" in server/discover, \"Version zero.\" in initialize\n"),
            "{text}"
        );
        assert!(text.contains("invoice ("), "{text}");
        assert!(text.contains("2 servers, 1 finding"), "{text}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
