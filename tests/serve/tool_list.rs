//! What only the section carries comes first (issue 39, item 5): the tool
//! list line goes before any instruction unit and is left out for hosts
//! that send the tools themselves; a tool name past a host's cap is
//! reported and linted.

#![cfg(feature = "serve")]

use crate::common;

use common::*;
use mcp_preamble::hosts::Host;
use mcp_preamble::lint::{HostProfile, LintCode, Linter};
use mcp_preamble::report::ServerDiagnostic;
use mcp_preamble::serve::ServeAs;
use mcp_preamble::{Assembler, ServerSnapshot, Tool, ToolNames};

const RULE: &str = "Always call list_periods before get_invoice.";

#[test]
fn the_rule_is_kept_over_the_tool_list_at_small_budgets() {
    let seed = snapshot("seed-invoice-server");
    // The block with the rule alone: from this budget on the rule fits.
    let alone = ServerSnapshot::new("seed-invoice-server").with_instructions(RULE);
    let fits = Assembler::new().assemble(&[alone]).unwrap().servers()[0].tokens;
    let mut with_tools = 0;
    for budget in 4..=60 {
        let a = Assembler::new()
            .budget(budget)
            .assemble(std::slice::from_ref(&seed))
            .unwrap();
        let text = &a.servers()[0].text;
        if budget >= fits {
            assert!(text.contains(RULE), "{budget}: {text}");
        }
        if text.contains("Tools:") {
            with_tools += 1;
            assert!(
                text.contains(RULE),
                "{budget}: the tool list over the rule\n{text}"
            );
        }
    }
    assert!(
        with_tools > 0,
        "the tool names never came back into room left"
    );
    // The case: the billing block at 14 o200k tokens.
    let a = Assembler::new()
        .budget(14)
        .assemble(&[seed.with_alias("billing")])
        .unwrap();
    assert!(
        a.servers()[0].text.contains(RULE),
        "{}",
        a.servers()[0].text
    );
}

#[test]
fn hosts_that_send_the_tools_get_no_tool_list() {
    let seed = snapshot("seed-invoice-server");
    let tools_only = ServerSnapshot::new("tools-only").with_tool(Tool::new("ping", "Ping."));
    let plain = Assembler::new()
        .assemble(&[seed.clone(), tools_only.clone()])
        .unwrap();
    assert!(
        plain
            .text()
            .contains("Tools: `list_periods`, `get_invoice`")
    );
    assert!(plain.servers().iter().all(|s| s.included));
    for host in Host::all() {
        let Some(serve_as) = ServeAs::host(host) else {
            continue;
        };
        let a = serve_as
            .fit(Assembler::new(), 0)
            .unwrap()
            .assemble(&[seed.clone(), tools_only.clone()])
            .unwrap();
        let sends = host.profile().sends_tools;
        assert_eq!(!a.text().contains("Tools:"), sends, "{host}: {}", a.text());
        assert!(a.text().contains(RULE), "{host}");
        // A server with only tools has nothing else to say.
        assert_eq!(a.servers()[1].included, !sends, "{host}");
    }
    assert!(Host::ClaudeCode.profile().sends_tools);
    let off = Assembler::new().tool_list(false).assemble(&[seed]).unwrap();
    assert!(!off.text().contains("Tools:") && off.text().contains(RULE));
}

fn ledger(tool_len: usize) -> ServerSnapshot {
    let name: String = "settle_"
        .chars()
        .chain(std::iter::repeat('x'))
        .take(tool_len)
        .collect();
    ServerSnapshot::new("ledger-server")
        .with_alias("ledger")
        .with_instructions("Settle invoices with care.")
        .with_tool(Tool::new(name, "Settles."))
}

#[test]
fn a_tool_name_past_the_hosts_cap_is_reported() {
    // `mcp__ledger__` is 13 characters: a 60-character tool is 73.
    let a = Assembler::new()
        .tool_names(ToolNames::host(Host::ClaudeCode))
        .assemble(&[ledger(60)])
        .unwrap();
    let over: Vec<_> = a.servers()[0]
        .notes
        .iter()
        .filter_map(|n| match n {
            ServerDiagnostic::ToolNameOverCap {
                name, chars, cap, ..
            } => Some((name, *chars, *cap)),
            _ => None,
        })
        .collect();
    assert_eq!(over.len(), 1);
    assert_eq!((over[0].1, over[0].2), (73, 64));
    assert!(over[0].0.starts_with("mcp__ledger__settle_"));
    let json: serde_json::Value = serde_json::from_str(&a.to_json()).unwrap();
    let d = &json["servers"][0]["diagnostics"][0];
    assert_eq!(d["code"], "tool_name_over_cap");
    assert_eq!(d["chars"], 73);
    // Near misses: 64 characters exactly; a host that cuts; the plain names.
    for (names, len) in [
        (ToolNames::host(Host::ClaudeCode), 51),
        (ToolNames::host(Host::Vscode), 60),
        (ToolNames::host(Host::Codex), 60),
        (ToolNames::plain(), 60),
    ] {
        let a = Assembler::new()
            .tool_names(names)
            .assemble(&[ledger(len)])
            .unwrap();
        assert!(
            a.servers()[0].notes.is_empty(),
            "{:?}",
            a.servers()[0].notes
        );
    }
}

#[test]
fn a_tool_name_past_the_hosts_cap_is_a_lint_finding_for_that_host() {
    let codes = |hosts: &str, len: usize| -> Vec<LintCode> {
        let hosts = HostProfile::parse_list(hosts, 256).unwrap();
        Linter::new()
            .hosts(hosts)
            .lint(&ledger(len))
            .into_iter()
            .map(|f| f.code)
            .filter(|c| *c == LintCode::ToolNameOverHostCap)
            .collect()
    };
    assert_eq!(codes("claude-code", 60), [LintCode::ToolNameOverHostCap]);
    // Near misses: within the cap; a host that shortens names; no hosts.
    assert!(codes("claude-code", 51).is_empty());
    assert!(codes("codex", 60).is_empty());
    assert!(
        Linter::new()
            .lint(&ledger(60))
            .iter()
            .all(|f| f.code != LintCode::ToolNameOverHostCap)
    );
}

/// Behind a gateway, Claude Code shows `mcp__<gateway>__<served name>`: the
/// gateway serves names short enough for that prefix (issue 34, item 4),
/// so the 60-character tool that is over the cap when connected directly
/// is within it behind `preamble`, and the section names it as shown.
#[test]
fn behind_a_gateway_the_served_names_leave_room_for_the_hosts_prefix() {
    use mcp_preamble::serve::{prepare_named, scheme_for};
    let tool = ledger(60).tools[0].name.clone();
    let a = prepare_named(Assembler::new(), ServeAs::ClaudeCode, "preamble")
        .unwrap()
        .assemble(&[ledger(60).with_instructions(format!("Call {tool} with care."))])
        .unwrap();
    assert!(
        a.servers()[0].notes.is_empty(),
        "{:?}",
        a.servers()[0].notes
    );
    let served = scheme_for(ServeAs::ClaudeCode, "preamble")
        .exposed("ledger", &tool)
        .into_string();
    // `mcp__preamble__` is 15 characters.
    assert_eq!(served.chars().count(), 64 - 15);
    assert!(served.starts_with("ledger__settle_x"), "{served}");
    let shown = format!("mcp__preamble__{served}");
    assert!(
        a.text().contains(&format!("Call {shown} with care.")),
        "{}",
        a.text()
    );
    // A name that fits keeps the plain gateway scheme's name.
    assert_eq!(
        scheme_for(ServeAs::ClaudeCode, "preamble")
            .exposed("ledger", "settle")
            .as_str(),
        "ledger__settle"
    );
    // Hosts that do not rename tools get the full 64 characters.
    let plain = scheme_for(ServeAs::Plain, "preamble").exposed("ledger", &"x".repeat(80));
    assert_eq!(plain.as_str().chars().count(), 64);
}
