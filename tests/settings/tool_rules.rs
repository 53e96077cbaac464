//! Tool rules that match nothing are reported, and a denied name leaves
//! the instructions whether or not the server lists it (issue 39, item 2).

use crate::common;

use std::process::Command;

use common::*;
use mcp_preamble::report::{ServerDiagnostic, ToolRuleKind};
use mcp_preamble::settings::{ToolFilter, ToolOverride};
use mcp_preamble::{Assembler, Policy, ServerSnapshot, Tool};

fn everything_denied() -> Assembler {
    Assembler::new().policy(
        "server-everything",
        Policy::new().tools(ToolFilter::new().deny("toggle-*").deny("get-roots-list")),
    )
}

fn unmatched(notes: &[ServerDiagnostic]) -> Vec<(ToolRuleKind, String, Option<String>)> {
    notes
        .iter()
        .filter_map(|n| match n {
            ServerDiagnostic::UnmatchedToolRule {
                rule,
                pattern,
                closest,
            } => Some((*rule, pattern.clone(), closest.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn an_unlisted_denied_name_leaves_the_prose_at_every_budget() {
    // The capture's client had roots; a client without them is not sent
    // `get-roots-list` (the server registers it only for such clients).
    let mut s = snapshot("server-everything");
    s.tools.retain(|t| t.name != "get-roots-list");
    let whole = Assembler::new().assemble(std::slice::from_ref(&s)).unwrap();
    assert!(
        whole.text().contains("get-roots-list"),
        "the near miss: no rule, it stays"
    );
    for budget in [None, Some(400), Some(200), Some(100), Some(60)] {
        let mut a = everything_denied();
        if let Some(b) = budget {
            a = a.budget(b);
        }
        let a = a.assemble(std::slice::from_ref(&s)).unwrap();
        assert!(
            !a.text().contains("get-roots-list"),
            "{budget:?}: {}",
            a.text()
        );
        assert!(!a.text().contains("toggle-"), "{budget:?}");
        let r = &a.servers()[0];
        assert_eq!(
            unmatched(&r.notes),
            [(ToolRuleKind::Deny, "get-roots-list".to_string(), None)]
        );
    }
    let a = everything_denied().assemble(&[s]).unwrap();
    let removed: Vec<_> = a.servers()[0]
        .removed
        .iter()
        .filter(|r| r.tool.as_deref() == Some("get-roots-list"))
        .collect();
    assert_eq!(removed.len(), 2, "{removed:?}");
    let json: serde_json::Value = serde_json::from_str(&a.to_json()).unwrap();
    let d = json["servers"][0]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "unmatched_tool_rule")
        .unwrap()
        .clone();
    assert_eq!(d["rule"], "deny");
    assert_eq!(d["pattern"], "get-roots-list");
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("matches no tool the server lists")
    );
}

#[test]
fn each_kind_of_rule_that_matches_nothing_is_reported_with_the_closest_tool() {
    let s = ServerSnapshot::new("billing")
        .with_instructions("Call get_invoice.")
        .with_tool(Tool::new("get_invoice", "Get one."))
        .with_tool(Tool::new("void_invoice", "Void one."));
    let policy = Policy::new()
        .tools(
            ToolFilter::new()
                .allow("get_*")
                .allow("list_*")
                .deny("void_invoce"),
        )
        .tool("get_invoices", ToolOverride::new().description("x"))
        .tool("get_invoice", ToolOverride::new().description("Fetch one."));
    let a = Assembler::new()
        .policy("billing", policy)
        .assemble(std::slice::from_ref(&s))
        .unwrap();
    assert_eq!(
        unmatched(&a.servers()[0].notes),
        [
            (ToolRuleKind::Allow, "list_*".to_string(), None),
            (
                ToolRuleKind::Deny,
                "void_invoce".to_string(),
                Some("void_invoice".to_string())
            ),
            (
                ToolRuleKind::Override,
                "get_invoices".to_string(),
                Some("get_invoice".to_string())
            ),
        ]
    );
    // Near misses: rules that match (a tool the filter hides included) say nothing.
    let policy = Policy::new().tools(ToolFilter::new().allow("get_*").deny("void_*"));
    let a = Assembler::new()
        .policy("billing", policy)
        .assemble(&[s])
        .unwrap();
    assert!(unmatched(&a.servers()[0].notes).is_empty());
}

#[test]
fn check_exits_1_on_a_rule_that_matches_nothing() {
    let dir = std::env::temp_dir().join(format!("mcp-preamble-tool-rules-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let capture = corpus_dir().join("server-everything.json");
    let run = |deny: &str, check: bool| {
        let policy = dir.join(format!("{}.toml", deny.replace('*', "x")));
        std::fs::write(
            &policy,
            format!("version = 1\n[servers.server-everything.tools]\ndeny = [{deny:?}]\n"),
        )
        .unwrap();
        let mut args = vec![
            "preview".to_string(),
            capture.display().to_string(),
            "--policy".into(),
            policy.display().to_string(),
        ];
        if check {
            args.push("--check".into());
        }
        let out = Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
            .args(&args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, out) = run("get-roots-lst", true);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains(
            "tools deny \"get-roots-lst\" matches no tool the server lists (did you mean \"get-roots-list\"?)"
        ),
        "{out}"
    );
    // Without --check it is reported, not an exit code; a rule that matches is neither.
    assert_eq!(run("get-roots-lst", false).0, Some(0));
    let (code, out) = run("toggle-*", true);
    assert_eq!(code, Some(0), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}
