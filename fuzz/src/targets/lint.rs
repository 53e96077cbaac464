//! `lint`: hostile servers (instructions, tools with names and
//! descriptions) through `Linter` and the three renderers.
//!
//! Oracles: the JSON and SARIF reports parse as JSON (serde_json); the SARIF
//! log is version 2.1.0 with one run holding one result per finding, each
//! with a `ruleId` the driver lists; the text report renders.

use crate::{LintInput, MAX_INPUT, MAX_SERVERS};
use mcp_preamble::lint::{LintReport, Linter};
use serde_json::Value;

/// One input of the target (what libFuzzer's `fuzz_target!` passes).
pub fn run(input: LintInput) {
    let size: usize = input
        .servers
        .iter()
        .map(|l| {
            let s = &l.server;
            s.name.len()
                + s.instructions.as_ref().map_or(0, String::len)
                + s.tools
                    .iter()
                    .map(|t| t.name.len() + t.description.as_ref().map_or(0, String::len))
                    .sum::<usize>()
        })
        .sum();
    // Target's own bound (the library has no input limit yet).
    if size > MAX_INPUT {
        return;
    }
    // Structure, not counts: a stand-in counter (tiktoken took most of each run).
    let mut linter = Linter::new().token_counter(crate::QuarterCounter);
    if input.max_tokens != 0 {
        linter = linter.max_tokens(input.max_tokens.into());
    }
    let lints = input
        .servers
        .iter()
        .take(MAX_SERVERS)
        .map(|l| linter.check(&l.server.snapshot(), l.source.as_deref()))
        .collect();
    let mut report = LintReport::new(lints);
    for f in input.failures.iter().take(4) {
        report.add_failure(f.source.clone(), f.error.clone());
    }
    let findings = report.findings().count();

    let text = report.to_text();
    assert!(!text.is_empty());

    let json = report.to_json();
    serde_json::from_str::<Value>(&json)
        .unwrap_or_else(|e| panic!("lint JSON does not parse: {e}\n{json}"));

    let sarif = report.to_sarif();
    let log: Value = serde_json::from_str(&sarif)
        .unwrap_or_else(|e| panic!("SARIF does not parse: {e}\n{sarif}"));
    assert_eq!(log["version"], "2.1.0");
    let runs = log["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1);
    let results = runs[0]["results"].as_array().expect("results");
    assert_eq!(results.len(), findings, "one SARIF result per finding");
    let rules: Vec<&Value> = runs[0]["tool"]["driver"]["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .map(|r| &r["id"])
        .collect();
    for r in results {
        let index = r["ruleIndex"].as_u64().expect("ruleIndex") as usize;
        assert_eq!(
            rules.get(index),
            Some(&&r["ruleId"]),
            "ruleIndex names its rule"
        );
    }
}
