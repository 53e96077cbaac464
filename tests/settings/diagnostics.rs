//! Typed diagnostics: what a report says is matched by type (never by its
//! prose), each type's `Display` is the line the report has always had, and
//! the JSON report gives each as an object with its pinned `code`.

use crate::common;

use mcp_preamble::pin::{Lock, PinState};
use mcp_preamble::report::{
    AliasSetting, ConfigDiagnostic, Limit, Omission, PinRendering, PolicyAction, RemovalReason,
    ServerDiagnostic,
};
use mcp_preamble::settings::PolicyFile;
use mcp_preamble::{
    Assembler, Assembly, Limits, Policy, RpcError, ServerReport, ServerSnapshot, Tool,
};

fn billing() -> ServerSnapshot {
    ServerSnapshot::new("invoice-server")
        .with_alias("billing")
        .with_instructions("Always call list_periods first. Be brief.")
        .with_tool(Tool::new("list_periods", "List billing periods."))
}

/// Every report's lines are the `Display` of its notes, in order, and
/// the JSON has one object per note: its code, and its line as `message`.
fn lines_match_notes(assembly: &Assembly) {
    let json: serde_json::Value = serde_json::from_str(&assembly.to_json()).unwrap();
    let objects_match = |json: &serde_json::Value, codes: Vec<&str>, lines: Vec<String>| {
        let objects = json.as_array().unwrap();
        assert_eq!(objects.len(), lines.len(), "{json}");
        for ((object, code), line) in objects.iter().zip(codes).zip(lines) {
            assert_eq!(object["code"], code, "{object}");
            assert_eq!(object["message"], line, "{object}");
        }
    };
    for (k, s) in assembly.servers().iter().enumerate() {
        let lines: Vec<String> = s.notes.iter().map(ToString::to_string).collect();
        assert_eq!(s.diagnostics(), lines, "{}", s.name);
        let codes = s.notes.iter().map(ServerDiagnostic::code).collect();
        objects_match(&json["servers"][k]["diagnostics"], codes, lines);
    }
    let lines: Vec<String> = assembly.notes().iter().map(ToString::to_string).collect();
    assert_eq!(assembly.diagnostics(), lines);
    if lines.is_empty() {
        assert!(
            json.get("diagnostics").is_none(),
            "only when there are some"
        );
    } else {
        let codes = assembly
            .notes()
            .iter()
            .map(ConfigDiagnostic::code)
            .collect();
        objects_match(&json["diagnostics"], codes, lines);
    }
}

/// The codes are a public format: renaming one fails here (and is a
/// change to list in CHANGELOG.md with a new `REPORT_FORMAT_VERSION`).
#[test]
fn the_diagnostic_codes_are_pinned() {
    assert_eq!(
        ServerDiagnostic::CODES,
        [
            "renamed",
            "blank_instructions",
            "tools_list_failed",
            "unnamed_tools",
            "limit_hit",
            "pin",
            "omitted",
            "duplicate_tools",
            "tool_name_over_cap",
            "unmatched_tool_rule",
            "skills_skipped",
        ]
    );
    assert_eq!(ConfigDiagnostic::CODES, ["unknown_alias"]);
    assert_eq!(
        Omission::CODES,
        [
            "excluded",
            "empty",
            "tool_only",
            "over_budget",
            "over_total",
            "render_fuel"
        ]
    );
    assert_eq!(
        PinRendering::CODES,
        [
            "accepted",
            "pending_review",
            "held",
            "nothing_to_hold",
            "dropped"
        ]
    );
    assert_eq!(
        AliasSetting::CODES,
        ["policy", "budget", "visibility", "tool_visibility"]
    );
    assert_eq!(mcp_preamble::report::REPORT_FORMAT_VERSION, 6);
}

fn only(assembly: &Assembly) -> &ServerReport {
    lines_match_notes(assembly);
    &assembly.servers()[0]
}

#[test]
fn a_misspelt_policy_alias_is_matched_by_type() {
    let file = PolicyFile::from_str(
        "version = 1\n[servers.biling]\nexclude = true\n",
        "mcp-preamble.toml",
    )
    .unwrap();
    let assembly = Assembler::from_policy(&file)
        .unwrap()
        .assemble(&[billing()])
        .unwrap();
    lines_match_notes(&assembly);
    match assembly.notes() {
        [
            ConfigDiagnostic::UnknownAlias {
                setting: AliasSetting::Policy,
                alias,
                closest: Some(closest),
            },
        ] => {
            assert_eq!(alias, "biling");
            assert_eq!(closest, "billing");
        }
        other => panic!("expected one unknown policy alias, got {other:?}"),
    }
    // The line is what it always was; the JSON has the fields and the line.
    let line = "policy for \"biling\": no server has this alias (did you mean \"billing\"?)";
    assert_eq!(assembly.diagnostics(), [line]);
    let json: serde_json::Value = serde_json::from_str(&assembly.to_json()).unwrap();
    assert_eq!(json["format"], 6);
    assert_eq!(
        json["diagnostics"],
        serde_json::json!([{
            "code": "unknown_alias",
            "setting": "policy",
            "alias": "biling",
            "closest": "billing",
            "message": line,
        }])
    );
    assert!(
        assembly.servers()[0].included,
        "the misspelt policy applies to nothing"
    );
}

#[test]
fn a_misspelt_budget_alias_is_matched_by_type() {
    let assembly = Assembler::new()
        .server_budget("biling", 50)
        .server_budget("nobody-at-all", 50)
        .assemble(&[billing()])
        .unwrap();
    lines_match_notes(&assembly);
    assert_eq!(
        assembly.notes(),
        [
            ConfigDiagnostic::UnknownAlias {
                setting: AliasSetting::Budget,
                alias: "biling".to_string(),
                closest: Some("billing".to_string()),
            },
            ConfigDiagnostic::UnknownAlias {
                setting: AliasSetting::Budget,
                alias: "nobody-at-all".to_string(),
                closest: None,
            },
        ]
    );
    assert_eq!(
        assembly.diagnostics()[1],
        "budget for \"nobody-at-all\": no server has this alias"
    );
}

#[test]
fn a_known_alias_says_nothing() {
    let assembly = Assembler::new()
        .server_budget("billing", 50)
        .policy("billing", Policy::new().weight(2.0))
        .assemble(&[billing()])
        .unwrap();
    assert!(assembly.notes().is_empty());
    assert!(assembly.diagnostics().is_empty());
}

#[test]
fn a_renamed_server() {
    let a = ServerSnapshot::new("dup").with_instructions("A.");
    let b = ServerSnapshot::new("dup").with_instructions("B.");
    let assembly = Assembler::new().assemble(&[a, b]).unwrap();
    lines_match_notes(&assembly);
    let second = &assembly.servers()[1];
    assert_eq!(
        second.notes,
        [ServerDiagnostic::Renamed {
            original: "dup".to_string(),
            shown: "dup (2)".to_string(),
        }]
    );
    assert_eq!(
        second.diagnostics(),
        ["another server has the name \"dup\"; shown as \"dup (2)\""]
    );
    let json: serde_json::Value = serde_json::from_str(&assembly.to_json()).unwrap();
    assert_eq!(
        json["servers"][1]["diagnostics"][0],
        serde_json::json!({
            "code": "renamed",
            "original": "dup",
            "shown": "dup (2)",
            "message": "another server has the name \"dup\"; shown as \"dup (2)\"",
        })
    );
}

#[test]
fn blank_instructions_a_failed_tools_list_and_unnamed_tools() {
    let mut s = ServerSnapshot::new("x")
        .with_instructions(" \u{200b} ")
        .with_tool(Tool::new("\u{200b}", "A tool with no visible name."))
        .with_tool(Tool::new("t", "A tool."));
    s.tools_error = Some(RpcError {
        method: "tools/list".to_string(),
        code: -32603,
        message: "fetch\nfailed".to_string(),
    });
    let assembly = Assembler::new().assemble(&[s]).unwrap();
    let report = only(&assembly);
    assert_eq!(
        report.notes,
        [
            ServerDiagnostic::BlankInstructions { chars: 3 },
            ServerDiagnostic::ToolsListFailed {
                code: -32603,
                message: "fetch failed".to_string(),
            },
            ServerDiagnostic::UnnamedTools { count: 1 },
        ]
    );
    assert_eq!(
        report.diagnostics()[2],
        "1 tool(s) with an empty name not listed"
    );
    let json: serde_json::Value = serde_json::from_str(&assembly.to_json()).unwrap();
    assert_eq!(
        json["servers"][0]["diagnostics"],
        serde_json::json!([
            {
                "code": "blank_instructions",
                "chars": 3,
                "message": "instructions are blank (3 characters of whitespace or invisible text); not rendered",
            },
            {
                "code": "tools_list_failed",
                "error": {"code": -32603, "message": "fetch failed"},
                "message": "tools/list failed with -32603: fetch failed",
            },
            {
                "code": "unnamed_tools",
                "count": 1,
                "message": "1 tool(s) with an empty name not listed",
            },
        ])
    );
}

#[test]
fn a_limit_hit_carries_the_hit() {
    let a = Assembler::new().limits(Limits::default().tools(1));
    let s = billing().with_tool(Tool::new("get_invoice", "Get an invoice."));
    let assembly = a.assemble(&[s]).unwrap();
    let report = only(&assembly);
    let [ServerDiagnostic::LimitHit(hit)] = report.notes.as_slice() else {
        panic!("{:?}", report.notes);
    };
    assert_eq!((hit.limit, hit.allowed, hit.sent), (Limit::Tools, 1, 2));
    assert_eq!(report.limits, [*hit]);
    let json: serde_json::Value = serde_json::from_str(&assembly.to_json()).unwrap();
    assert_eq!(
        json["servers"][0]["diagnostics"],
        serde_json::json!([{
            "code": "limit_hit",
            "limit": "tools",
            "allowed": 1,
            "sent": 2,
            "count": 1,
            "message": "limit tools reached: 2 tools sent, the first 1 read",
        }])
    );
}

#[test]
fn a_server_new_to_the_lock() {
    let assembly = Assembler::new()
        .lock(Lock::new())
        .assemble(&[billing()])
        .unwrap();
    let report = only(&assembly);
    assert!(
        matches!(
            report.notes.as_slice(),
            [ServerDiagnostic::Pin {
                state: PinState::New,
                rendering: PinRendering::PendingReview,
                ..
            }]
        ),
        "{:?}",
        report.notes
    );
    assert_eq!(
        report.diagnostics(),
        ["pin: not in the lock; rendered as sent; pending review"]
    );
    let json: serde_json::Value = serde_json::from_str(&assembly.to_json()).unwrap();
    assert_eq!(
        json["servers"][0]["diagnostics"],
        serde_json::json!([{
            "code": "pin",
            "state": "new",
            "summary": "not in the lock",
            "rendering": "pending_review",
            "message": "pin: not in the lock; rendered as sent; pending review",
        }])
    );
}

#[test]
fn an_excluded_server_and_its_policy() {
    let assembly = Assembler::new()
        .policy("billing", Policy::new().exclude().weight(2.0))
        .assemble(&[billing()])
        .unwrap();
    let report = only(&assembly);
    assert_eq!(
        report.notes,
        [ServerDiagnostic::Omitted(Omission::Excluded)]
    );
    let policy = report.policy.as_ref().unwrap();
    assert!(policy.excluded());
    assert!(!policy.instructions_replaced());
    assert_eq!(policy.weight(), Some(2.0));
    assert_eq!(
        policy.actions(),
        [PolicyAction::Excluded, PolicyAction::Weight(2.0)]
    );
    // The line, as the field's former `String` had it.
    assert_eq!(policy.to_string(), "excluded; weight 2");
    assert_eq!(report.policy.as_deref(), Some("excluded; weight 2"));
    let json: serde_json::Value = serde_json::from_str(&assembly.to_json()).unwrap();
    assert_eq!(json["servers"][0]["policy"], "excluded; weight 2");
    assert_eq!(
        json["servers"][0]["diagnostics"],
        serde_json::json!([{
            "code": "omitted",
            "reason": "excluded",
            "message": "omitted: excluded by policy",
        }])
    );
}

#[test]
fn a_heading_over_its_budget() {
    let s = ServerSnapshot::new("a-server-with-a-rather-long-name").with_instructions("Hello.");
    let assembly = Assembler::new().budget(3).assemble(&[s]).unwrap();
    let report = only(&assembly);
    assert_eq!(
        report.notes,
        [ServerDiagnostic::Omitted(Omission::OverBudget {
            budget: 3
        })]
    );
    let json: serde_json::Value = serde_json::from_str(&assembly.to_json()).unwrap();
    assert_eq!(
        json["servers"][0]["diagnostics"],
        serde_json::json!([{
            "code": "omitted",
            "reason": "over_budget",
            "budget": 3,
            "message": "omitted: its heading alone is over the budget of 3 tokens",
        }])
    );
}

#[test]
fn removed_units_carry_their_index() {
    // Units: 0 and 2 repeat or restate; the budget takes some of the rest.
    let text = "Always call list_periods first. List billing periods. \
                Always call list_periods first. Never guess an invoice number. \
                Prefer the newest period when the user gives no date at all.";
    let s = billing().with_instructions(text);
    let full = Assembler::new().assemble(std::slice::from_ref(&s)).unwrap();
    let removed = &full.servers()[0].removed;
    let by = |reason| {
        removed
            .iter()
            .filter(|r| r.reason == reason)
            .map(|r| r.unit)
            .collect::<Vec<_>>()
    };
    assert_eq!(by(RemovalReason::RestatesTool), [Some(1)]);
    assert_eq!(by(RemovalReason::Repeated), [Some(2)]);

    let tokens = full.servers()[0].tokens;
    let cut = Assembler::new()
        .budget(tokens - 8)
        .assemble(std::slice::from_ref(&s))
        .unwrap();
    let report = &cut.servers()[0];
    let budget: Vec<_> = report
        .removed
        .iter()
        .filter(|r| r.reason == RemovalReason::Budget && r.unit.is_some())
        .collect();
    assert!(!budget.is_empty(), "{:?}", report.removed);
    for r in budget {
        let k = r.unit.unwrap();
        assert!((3..=4).contains(&k) || k == 0, "{k}: {:?}", r.text);
        assert!(!report.text.contains(&r.text), "{:?}", r.text);
    }
    // Not in the JSON.
    assert!(!cut.to_json().contains("\"unit\""));
}

#[test]
fn lines_and_notes_stay_in_step_through_refits() {
    // A tight total budget refits blocks, taking back and adding omissions.
    let servers = common::all_snapshots();
    for total in [150, 400, 1_500] {
        let assembly = Assembler::new()
            .budget(300)
            .total_budget(total)
            .assemble(&servers)
            .unwrap();
        lines_match_notes(&assembly);
        for s in assembly.servers() {
            let omissions = s
                .notes
                .iter()
                .filter(|n| matches!(n, ServerDiagnostic::Omitted(_)))
                .count();
            assert_eq!(omissions, usize::from(s.omitted.is_some()), "{}", s.name);
        }
    }
}

/// Every per-alias setting is checked the same way: a deferral, a tool
/// pattern or a visibility for an alias no server has is a typed
/// diagnostic with the closest alias, not silently ignored.
#[test]
fn misspelt_visibility_aliases_are_matched_by_type() {
    use mcp_preamble::Visibility;
    let assembly = Assembler::new()
        .defer("biling")
        .defer_tools("bilihg", "get_*")
        .visibility("nobody-at-all", Visibility::Loaded)
        .tool_visibility("billing", "x*", Visibility::Deferred)
        .assemble(&[billing()])
        .unwrap();
    lines_match_notes(&assembly);
    assert_eq!(
        assembly.notes(),
        [
            ConfigDiagnostic::UnknownAlias {
                setting: AliasSetting::Visibility,
                alias: "biling".to_string(),
                closest: Some("billing".to_string()),
            },
            ConfigDiagnostic::UnknownAlias {
                setting: AliasSetting::Visibility,
                alias: "nobody-at-all".to_string(),
                closest: None,
            },
            ConfigDiagnostic::UnknownAlias {
                setting: AliasSetting::ToolVisibility,
                alias: "bilihg".to_string(),
                closest: Some("billing".to_string()),
            },
        ]
    );
    assert_eq!(
        assembly.diagnostics(),
        [
            "visibility for \"biling\": no server has this alias (did you mean \"billing\"?)",
            "visibility for \"nobody-at-all\": no server has this alias",
            "tool visibility for \"bilihg\": no server has this alias (did you mean \"billing\"?)",
        ]
    );
    // One diagnostic per alias: the first setting that names it.
    let assembly = Assembler::new()
        .server_budget("biling", 10)
        .defer("biling")
        .assemble(&[billing()])
        .unwrap();
    assert_eq!(
        assembly.diagnostics(),
        ["budget for \"biling\": no server has this alias (did you mean \"billing\"?)"]
    );
}
