use serde_json::json;

use super::*;
use crate::limits::Limit;

/// One of each variant, in declaration order, with its JSON object.
fn one_of_each() -> Vec<(ServerDiagnostic, serde_json::Value)> {
    let hit = LimitHit::new(Limit::Tools, 1, 2);
    vec![
        (
            ServerDiagnostic::Renamed {
                original: "dup".into(),
                shown: "dup (2)".into(),
            },
            json!({"code": "renamed", "original": "dup", "shown": "dup (2)",
                   "message": "another server has the name \"dup\"; shown as \"dup (2)\""}),
        ),
        (
            ServerDiagnostic::BlankInstructions { chars: 3 },
            json!({"code": "blank_instructions", "chars": 3,
                   "message": "instructions are blank (3 characters of whitespace or invisible text); not rendered"}),
        ),
        (
            ServerDiagnostic::ToolsListFailed {
                code: -32603,
                message: "fetch failed".into(),
            },
            json!({"code": "tools_list_failed", "error": {"code": -32603, "message": "fetch failed"},
                   "message": "tools/list failed with -32603: fetch failed"}),
        ),
        (
            ServerDiagnostic::UnnamedTools { count: 2 },
            json!({"code": "unnamed_tools", "count": 2,
                   "message": "2 tool(s) with an empty name not listed"}),
        ),
        (
            ServerDiagnostic::LimitHit(hit),
            json!({"code": "limit_hit", "limit": "tools", "allowed": 1, "sent": 2, "count": 1,
                   "message": "limit tools reached: 2 tools sent, the first 1 read"}),
        ),
        (
            ServerDiagnostic::Pin {
                state: PinState::New,
                summary: "not in the lock".into(),
                rendering: PinRendering::PendingReview,
            },
            json!({"code": "pin", "state": "new", "summary": "not in the lock",
                   "rendering": "pending_review",
                   "message": "pin: not in the lock; rendered as sent; pending review"}),
        ),
        (
            ServerDiagnostic::Omitted(Omission::OverBudget { budget: 3 }),
            json!({"code": "omitted", "reason": "over_budget", "budget": 3,
                   "message": "omitted: its heading alone is over the budget of 3 tokens"}),
        ),
        (
            ServerDiagnostic::DuplicateTools {
                count: 2,
                names: vec!["x".into(), "y".into()],
            },
            json!({"code": "duplicate_tools", "count": 2, "names": ["x", "y"],
                   "message": "2 tool(s) with the name of an earlier tool not listed: \"x\", \"y\""}),
        ),
        (
            ServerDiagnostic::ToolNameOverCap {
                tool: "settle".into(),
                name: "mcp__ledger__settle".into(),
                chars: 70,
                cap: 64,
            },
            json!({"code": "tool_name_over_cap", "tool": "settle", "name": "mcp__ledger__settle",
                   "chars": 70, "cap": 64,
                   "message": "tool \"settle\" is sent as \"mcp__ledger__settle\", 70 characters, past the host's cap of 64: the model API rejects every request with it"}),
        ),
        (
            ServerDiagnostic::UnmatchedToolRule {
                rule: ToolRuleKind::Deny,
                pattern: "get-roots-list".into(),
                closest: Some("get-root-list".into()),
            },
            json!({"code": "unmatched_tool_rule", "rule": "deny", "pattern": "get-roots-list",
                   "closest": "get-root-list",
                   "message": "tools deny \"get-roots-list\" matches no tool the server lists (did you mean \"get-root-list\"?); the name is still left out of the instructions"}),
        ),
        (
            ServerDiagnostic::SkillsSkipped {
                count: 1,
                reasons: vec!["entry 2: skill://a/SKILL.md: no frontmatter object".into()],
            },
            json!({"code": "skills_skipped", "count": 1,
                   "reasons": ["entry 2: skill://a/SKILL.md: no frontmatter object"],
                   "message": "1 skill(s) not listed: entry 2: skill://a/SKILL.md: no frontmatter object"}),
        ),
    ]
}

/// The variant's place in declaration order: a new variant does not
/// compile here until it is given one (and then a sample and a code).
fn place(d: &ServerDiagnostic) -> usize {
    match d {
        ServerDiagnostic::Renamed { .. } => 0,
        ServerDiagnostic::BlankInstructions { .. } => 1,
        ServerDiagnostic::ToolsListFailed { .. } => 2,
        ServerDiagnostic::UnnamedTools { .. } => 3,
        ServerDiagnostic::LimitHit(_) => 4,
        ServerDiagnostic::Pin { .. } => 5,
        ServerDiagnostic::Omitted(_) => 6,
        ServerDiagnostic::DuplicateTools { .. } => 7,
        ServerDiagnostic::ToolNameOverCap { .. } => 8,
        ServerDiagnostic::SkillsSkipped { .. } => 10,
        ServerDiagnostic::UnmatchedToolRule { .. } => 9,
    }
}

#[test]
fn every_server_diagnostic_has_its_code_and_its_object() {
    let all = one_of_each();
    let places: Vec<usize> = all.iter().map(|(d, _)| place(d)).collect();
    assert_eq!(
        places,
        (0..ServerDiagnostic::CODES.len()).collect::<Vec<_>>()
    );
    let codes: Vec<&str> = all.iter().map(|(d, _)| d.code()).collect();
    assert_eq!(codes, ServerDiagnostic::CODES);
    for (d, object) in &all {
        assert_eq!(serde_json::to_value(d).unwrap(), *object, "{d:?}");
        // `code` first, `message` last, in the pretty JSON too.
        let text = serde_json::to_string(d).unwrap();
        assert!(
            text.starts_with(&format!("{{\"code\":\"{}\",", d.code())),
            "{text}"
        );
        let message = serde_json::to_string(&d.to_string()).unwrap();
        assert!(
            text.ends_with(&format!(",\"message\":{message}}}")),
            "{text}"
        );
    }
}

#[test]
fn every_config_diagnostic_has_its_code_and_its_object() {
    let with = ConfigDiagnostic::unknown_alias(AliasSetting::ToolVisibility, "note", ["notes"]);
    assert_eq!(
        serde_json::to_value(&with).unwrap(),
        json!({"code": "unknown_alias", "setting": "tool_visibility", "alias": "note",
               "closest": "notes",
               "message": "tool visibility for \"note\": no server has this alias (did you mean \"notes\"?)"})
    );
    let without = ConfigDiagnostic::unknown_alias(AliasSetting::Budget, "zzz", ["notes"]);
    assert_eq!(
        serde_json::to_value(&without).unwrap(),
        json!({"code": "unknown_alias", "setting": "budget", "alias": "zzz",
               "message": "budget for \"zzz\": no server has this alias"})
    );
    // Exhaustive: a new variant does not compile here without a place.
    let place = match &with {
        ConfigDiagnostic::UnknownAlias { .. } => 0,
    };
    assert_eq!(place, 0);
    let codes: Vec<&str> = [with].iter().map(ConfigDiagnostic::code).collect();
    assert_eq!(codes, ConfigDiagnostic::CODES);
}

#[test]
fn the_codes_of_the_fields_follow_their_variants() {
    let omissions = [
        Omission::Excluded,
        Omission::Empty,
        Omission::ToolOnly,
        Omission::OverBudget { budget: 1 },
        Omission::OverTotal,
        Omission::RenderFuel,
    ];
    for (k, o) in omissions.iter().enumerate() {
        // Exhaustive: a new omission does not compile here without a place.
        let place = match o {
            Omission::Excluded => 0,
            Omission::Empty => 1,
            Omission::ToolOnly => 2,
            Omission::OverBudget { .. } => 3,
            Omission::OverTotal => 4,
            Omission::RenderFuel => 5,
        };
        assert_eq!(place, k);
    }
    let codes: Vec<&str> = omissions.iter().map(Omission::code).collect();
    assert_eq!(codes, Omission::CODES);

    let renderings = [
        PinRendering::Accepted,
        PinRendering::PendingReview,
        PinRendering::Held,
        PinRendering::NothingToHold,
        PinRendering::Dropped,
    ];
    for (k, r) in renderings.iter().enumerate() {
        let place = match r {
            PinRendering::Accepted => 0,
            PinRendering::PendingReview => 1,
            PinRendering::Held => 2,
            PinRendering::NothingToHold => 3,
            PinRendering::Dropped => 4,
        };
        assert_eq!(place, k);
    }
    let codes: Vec<&str> = renderings.iter().map(PinRendering::code).collect();
    assert_eq!(codes, PinRendering::CODES);

    let settings = [
        AliasSetting::Policy,
        AliasSetting::Budget,
        AliasSetting::Visibility,
        AliasSetting::ToolVisibility,
    ];
    for (k, s) in settings.iter().enumerate() {
        let place = match s {
            AliasSetting::Policy => 0,
            AliasSetting::Budget => 1,
            AliasSetting::Visibility => 2,
            AliasSetting::ToolVisibility => 3,
        };
        assert_eq!(place, k);
    }
    let codes: Vec<&str> = settings.iter().map(AliasSetting::code).collect();
    assert_eq!(codes, AliasSetting::CODES);
}
