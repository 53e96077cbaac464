//! Skills (`skills/list`, the Skills extension): read off the wire
//! tolerantly, sanitized and de-duplicated, rendered as a labelled index per
//! server in both templates, dropped by the budget after the units below
//! constraints and before constraints, and covered by pins.

use crate::common;

use mcp_preamble::pin::{Lock, OnChange, PinState};
use mcp_preamble::{Assembler, Encoding, Policy, ServerSnapshot, Skill, Template};
use serde_json::json;

fn refunds() -> Skill {
    Skill::new(
        "skill://refunds/SKILL.md",
        "refunds",
        "Process a customer refund per policy.",
    )
    .with_file(
        "skill://refunds/SKILL.md",
        format!("sha256:{}", "a".repeat(64)),
    )
}

fn billing() -> ServerSnapshot {
    ServerSnapshot::new("billing")
        .with_instructions(
            "Billing covers invoices and periods. Always call list_periods before get_invoice.",
        )
        .with_skill(refunds())
        .with_skill(Skill::new(
            "skill://git-workflow/SKILL.md",
            "git-workflow",
            "Follow the team's branch and commit conventions.",
        ))
}

#[test]
fn a_page_reads_tolerantly_and_names_what_it_skipped() {
    let mut s = ServerSnapshot::new("x");
    let page = json!({"jsonrpc": "2.0", "id": 2, "result": {
        "skills": [
            {"uri": "skill://a/SKILL.md", "frontmatter": {"name": "a", "description": "A.", "license": "MIT"},
             "resources": [{"uri": "skill://a/SKILL.md", "digest": "sha256:00", "size": 3}], "extra": 1},
            {"uri": "skill://b/SKILL.md", "frontmatter": {"name": "b", "description": "B."}, "resources": "dynamic"},
            {"uri": "skill://c/SKILL.md", "frontmatter": {"name": "c"}, "resources": []},
            {"uri": "skill://d/SKILL.md", "frontmatter": {"name": "d", "description": "D."}},
            "not an object",
            {"frontmatter": {"name": "e", "description": "E."}, "resources": []}
        ],
        "nextCursor": "p2", "ttlMs": 0, "cacheScope": "private", "resultType": "complete"
    }});
    assert_eq!(s.push_skills_page(&page).unwrap().as_deref(), Some("p2"));
    let names: Vec<&str> = s.skills.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(s.skills[0].frontmatter["license"], "MIT");
    assert_eq!(
        s.skills_skipped,
        [
            "entry 2: skill://c/SKILL.md: frontmatter has no string description",
            "entry 3: skill://d/SKILL.md: resources is neither an array nor \"dynamic\"",
            "entry 4: not a json object",
            "entry 5: no uri",
        ]
    );
    // A page without a skills array, and an error, leave the snapshot as it was.
    let e = s.push_skills_page(&json!({"tools": []})).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid message: skills/list result has no skills array"
    );
    let e = s
        .push_skills_page(
            &json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "no"}}),
        )
        .unwrap_err();
    assert_eq!(e.rpc_error().unwrap().method, "skills/list");
    assert_eq!(s.skills.len(), 2);
    // The report says what was not listed.
    let assembly = Assembler::new().assemble(&[s]).unwrap();
    let json: serde_json::Value = serde_json::from_str(&assembly.to_json()).unwrap();
    let d = &json["servers"][0]["diagnostics"][0];
    assert_eq!(
        (d["code"].as_str(), d["count"].as_u64()),
        (Some("skills_skipped"), Some(4))
    );
}

#[test]
fn both_templates_render_a_labelled_index_and_a_server_of_skills_only_gets_a_block() {
    let md = Assembler::new().assemble(&[billing()]).unwrap();
    assert!(
        md.text().contains(
            "Skills from billing:\n- `refunds`: Process a customer refund per policy. (`skill://refunds/SKILL.md`)\n- `git-workflow`: Follow the team's branch and commit conventions. (`skill://git-workflow/SKILL.md`)"
        ),
        "{}",
        md.text()
    );
    let xml = Assembler::new()
        .template(Template::xml())
        .assemble(&[billing()])
        .unwrap();
    assert!(xml.text().contains(
        "<skills server=\"billing\">\n<skill name=\"refunds\" uri=\"skill://refunds/SKILL.md\">Process a customer refund per policy.</skill>"
    ), "{}", xml.text());
    let only = ServerSnapshot::new("docs").with_skill(refunds());
    let assembly = Assembler::new().assemble(&[only]).unwrap();
    assert!(assembly.servers()[0].included);
    assert!(assembly.text().contains("Skills from docs:"));
    // A server without skills renders as before: no label.
    let plain = ServerSnapshot::new("plain").with_instructions("Hi.");
    assert!(
        !Assembler::new()
            .assemble(&[plain])
            .unwrap()
            .text()
            .contains("Skills")
    );
}

#[test]
fn skills_are_sanitized_and_a_repeated_uri_is_listed_once() {
    let s = ServerSnapshot::new("x")
        .with_instructions("Hi.")
        .with_skill(Skill::new(
            "skill://a/SKILL.md",
            "a\u{200b}b\nc",
            "Line one\n\n### bank\u{202e}\u{e0041}",
        ))
        .with_skill(Skill::new("skill://a/SKILL.md", "again", "Same URI."))
        .with_skill(Skill::new(
            "skill://a\u{200b}/SKILL.md",
            "zw",
            "Same URI once sanitized.",
        ))
        .with_skill(Skill::new(
            "skill://other/a/SKILL.md",
            "ab c",
            "Same name, other URI.",
        ))
        .with_skill(Skill::new("skill://z/SKILL.md", "\u{200b}", "No name."));
    let assembly = Assembler::new().assemble(&[s]).unwrap();
    let text = assembly.text();
    assert!(
        text.contains("- `ab c`: Line one ### bank (`skill://a/SKILL.md`)\n- `ab c`: Same name, other URI. (`skill://other/a/SKILL.md`)\n"),
        "{text}"
    );
    assert!(!text.contains("again") && !text.contains("zw") && !text.contains("No name"));
    let report = &assembly.servers()[0];
    assert!(
        report.hidden_characters.format >= 3,
        "{:?}",
        report.hidden_characters
    );
    assert_eq!(
        report.diagnostics(),
        [
            "3 skill(s) not listed: 1 with a name empty once sanitized; 2 listed under the URI of an earlier skill"
        ]
    );
}

/// The units of `billing()`: a prose sentence and a constraint.
const PROSE: &str = "Billing covers invoices and periods.";
const RULE: &str = "Always call list_periods before get_invoice.";

#[test]
fn the_ladder_drops_prose_then_skills_then_constraints_in_o200k() {
    let assembler = Assembler::new().encoding(Encoding::O200kBase);
    let mut rule_only = billing();
    rule_only.instructions = mcp_preamble::Instructions::from_raw(Some(RULE));
    let shown = |s: &ServerSnapshot, budget: usize| {
        let assembly = assembler
            .clone()
            .budget(budget)
            .assemble(std::slice::from_ref(s))
            .unwrap();
        let report = &assembly.servers()[0];
        if report.included {
            assert!(report.tokens <= budget);
            assert_eq!(common::o200k(&report.text), report.tokens);
        }
        report.text.clone()
    };
    let mut seen = (false, false, false);
    for budget in 8..=120 {
        let text = shown(&billing(), budget);
        let skills = text.matches("(`skill://").count();
        // A skill is never shown while a constraint is left out.
        if skills > 0 {
            assert!(text.contains(RULE), "{budget}: {text}");
        }
        // Prose never costs a skill: with the constraint shown, as many
        // skills as without the prose at all (prose only takes back room no
        // skill fits in).
        if text.contains(RULE) {
            let without = shown(&rule_only, budget).matches("(`skill://").count();
            assert_eq!(skills, without, "{budget}: {text}");
        }
        seen.0 |= skills == 1 && !text.contains(PROSE);
        seen.1 |= skills == 0 && text.contains(RULE);
        seen.2 |= skills == 2 && !text.contains(PROSE);
    }
    // Some budget keeps both skills without the prose, one skill, and the rule alone.
    assert_eq!(seen, (true, true, true));
}

#[test]
fn pins_flag_a_changed_description_or_digest_and_hold_keeps_it_out() {
    let reviewed = billing().with_alias("billing");
    let mut lock = Lock::new();
    lock.pin(&reviewed);
    assert_eq!(lock.check(&reviewed).state, PinState::Same);
    assert!(
        lock.to_json()
            .contains("\"skills\": {\n        \"skill://git-workflow/SKILL.md\": {")
    );

    let mut redescribed = reviewed.clone();
    redescribed.skills[0].description = "Refund anything, no questions.".into();
    let pin = lock.check(&redescribed);
    assert_eq!(pin.state, PinState::Changed);
    assert_eq!(pin.skills_changed, ["skill://refunds/SKILL.md"]);
    assert_eq!(pin.summary(), "skills changed: skill://refunds/SKILL.md");

    let mut redigested = reviewed.clone();
    redigested.skills[0] = refunds().with_file(
        "skill://refunds/evil.sh",
        format!("sha256:{}", "b".repeat(64)),
    );
    assert_eq!(
        lock.check(&redigested).skills_changed,
        ["skill://refunds/SKILL.md"]
    );

    let mut added = reviewed.clone();
    added
        .skills
        .push(Skill::new("skill://new/SKILL.md", "new", "New."));
    added.skills.remove(1);
    let pin = lock.check(&added);
    assert_eq!(
        (pin.skills_added.as_slice(), pin.skills_removed.as_slice()),
        (
            &["skill://new/SKILL.md".to_string()][..],
            &["skill://git-workflow/SKILL.md".to_string()][..]
        )
    );

    // Under hold, the changed skill is not shown; the pinned one stays.
    let held = Assembler::new()
        .lock(lock.clone())
        .policy("billing", Policy::new().on_change(OnChange::Hold))
        .assemble(&[redescribed])
        .unwrap();
    assert!(
        !held.text().contains("refund anything") && !held.text().contains("`refunds`"),
        "{}",
        held.text()
    );
    assert!(held.text().contains("`git-workflow`"));
    // Under drop, a server new to the lock shows no skill at all.
    let stranger = billing().with_alias("stranger");
    let dropped = Assembler::new()
        .lock(lock.clone())
        .on_change(OnChange::Drop)
        .assemble(&[stranger])
        .unwrap();
    assert!(!dropped.text().contains("skill://"), "{}", dropped.text());

    // A version 2 lock pins no skills: the server compares changed.
    let v2 = lock.to_json().replace("\"version\": 4", "\"version\": 2");
    let v2: serde_json::Value = serde_json::from_str(&v2).unwrap();
    let mut v2 = v2;
    v2["servers"]["billing"]
        .as_object_mut()
        .unwrap()
        .remove("skills");
    let old = Lock::from_str(&v2.to_string(), "old.lock").unwrap();
    assert_eq!(old.check(&reviewed).skills_added.len(), 2);
}

/// A skill read off the wire pins its whole frontmatter: a field other
/// than the name and description (its `license`) changed is a changed skill.
#[test]
fn pins_flag_a_changed_frontmatter_field_read_from_the_wire() {
    let read = |license: &str| {
        let page = json!({"skills": [{
            "uri": "skill://refunds/SKILL.md",
            "frontmatter": {"name": "refunds", "description": "Process a refund.", "license": license},
            "resources": [{"uri": "skill://refunds/SKILL.md", "digest": "sha256:00"}]
        }]});
        let mut s = ServerSnapshot::new("billing").with_alias("billing");
        s.push_skills_page(&page).unwrap();
        s
    };
    let mut lock = Lock::new();
    lock.pin(&read("MIT"));
    assert_eq!(lock.check(&read("MIT")).state, PinState::Same);
    let pin = lock.check(&read("Proprietary"));
    assert_eq!(pin.state, PinState::Changed);
    assert_eq!(pin.skills_changed, ["skill://refunds/SKILL.md"]);
    assert!(pin.skills_added.is_empty() && pin.skills_removed.is_empty());
}

/// `mcp.json` in a fresh folder: `tests/servers/skills.mjs` as `docs`, and
/// the invoice server (no skills) as `billing`.
fn live_config(test: &str) -> String {
    use common::gateway::{config, node, scratch};
    let dir = scratch(test, "skills");
    config(
        &dir,
        json!({"docs": node("skills.mjs", json!({})), "billing": node("invoice.mjs", json!({}))}),
    )
}

#[test]
fn a_live_skills_server_through_the_cli() {
    let config = live_config("skills-cli");
    for handshake in ["legacy", "auto"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
            .args([
                "preview",
                "--config",
                &config,
                "--handshake",
                handshake,
                "--json",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let text = json["assembly"]["text"].as_str().unwrap();
        // Three pages of one skill each, in the server's order, under the
        // label of the server that sent them; the invoice server has none.
        let docs = text.split("### docs").nth(1).unwrap();
        assert!(
            docs.contains("Skills from docs:\n- `git-workflow`: Follow the team's branch and commit conventions. (`skill://git-workflow/SKILL.md`)\n- `refunds`: Process a customer refund per policy. (`skill://refunds/SKILL.md`)\n- `reports`: Assemble the daily report from live data. (`skill://reports/SKILL.md`)"),
            "{handshake}: {text}"
        );
        assert_eq!(text.matches("Skills from").count(), 1, "{text}");
    }
}

#[test]
fn a_live_skills_server_through_the_gateway() {
    use common::gateway::Gateway;
    let config = live_config("skills-gateway");
    let mut g = Gateway::spawn(&["--config", &config]);
    let init = g.initialize();
    let caps = &init["result"]["capabilities"];
    assert!(
        caps["extensions"]["io.modelcontextprotocol/skills"].is_object(),
        "{init}"
    );
    assert!(caps["resources"].is_object(), "{init}");
    // Each skill under its upstream's alias, as the section shows it.
    let instructions = init["result"]["instructions"].as_str().unwrap();
    assert!(
        instructions.contains(
            "- `refunds`: Process a customer refund per policy. (`skill://docs/refunds/SKILL.md`)"
        ),
        "{instructions}"
    );
    let list = g.request("skills/list", json!({}));
    let skills = list["result"]["skills"]
        .as_array()
        .unwrap_or_else(|| panic!("{list}"));
    let uris: Vec<&str> = skills.iter().map(|k| k["uri"].as_str().unwrap()).collect();
    assert_eq!(
        uris,
        [
            "skill://docs/git-workflow/SKILL.md",
            "skill://docs/refunds/SKILL.md",
            "skill://docs/reports/SKILL.md"
        ]
    );
    assert_eq!(skills[1]["frontmatter"]["name"], "refunds");
    assert_eq!(
        skills[1]["resources"][1]["uri"],
        "skill://docs/refunds/references/POLICY.md"
    );
    // skills/get goes to the owner under its own URI and comes back renamed.
    let got = g.request(
        "skills/get",
        json!({"uri": "skill://docs/refunds/SKILL.md"}),
    );
    assert_eq!(
        got["result"]["skill"]["uri"], "skill://docs/refunds/SKILL.md",
        "{got}"
    );
    assert_eq!(got["result"]["skill"]["resources"], skills[1]["resources"]);
    // A skill's files are read through the gateway under the URIs it lists.
    for (uri, text) in [
        ("skill://docs/refunds/SKILL.md", "# Refunds"),
        (
            "skill://docs/refunds/references/POLICY.md",
            "Refunds over 100 EUR need a second approval.",
        ),
    ] {
        let read = g.request("resources/read", json!({ "uri": uri }));
        let contents = &read["result"]["contents"][0];
        assert_eq!(contents["uri"], uri, "{read}");
        assert!(contents["text"].as_str().unwrap().contains(text), "{read}");
    }
    // A URI under an upstream's alias that no skill lists is not a skill file.
    let other = g.request(
        "resources/read",
        json!({"uri": "skill://docs/nope/SKILL.md"}),
    );
    assert!(other["error"].is_object(), "{other}");
    // A skill of no upstream, and one the owner does not serve.
    let none = g.request("skills/get", json!({"uri": "skill://nowhere/x/SKILL.md"}));
    assert_eq!(none["error"]["code"], -32602, "{none}");
    let gone = g.request("skills/get", json!({"uri": "skill://docs/nope/SKILL.md"}));
    assert_eq!(gone["error"]["code"], -32602, "{gone}");
    assert_eq!(
        gone["error"]["message"],
        "upstream \"docs\": No skill is served at skill://nope/SKILL.md"
    );
}

#[test]
fn a_capture_file_carries_skills_list_pages_per_era() {
    let init = json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25",
        "capabilities": {"extensions": {"io.modelcontextprotocol/skills": {}}},
        "serverInfo": {"name": "docs", "version": "1"}}});
    let page = |uri: &str, name: &str, next: Option<&str>| {
        json!({"jsonrpc": "2.0", "id": 2, "result": {"skills": [{"uri": uri,
            "frontmatter": {"name": name, "description": "D."}, "resources": "dynamic"}],
            "nextCursor": next}})
    };
    let capture = json!({"server": "docs@1", "sdk": "ts", "captured": "2026-12-02",
        "initialize": init, "tools_list_pages": [{"jsonrpc": "2.0", "id": 3, "result": {"tools": []}}],
        "skills_list_pages": [page("skill://a/SKILL.md", "a", Some("c")), page("skill://b/SKILL.md", "b", None),
            {"jsonrpc": "2.0", "id": 4, "error": {"code": -32603, "message": "boom"}}]});
    let snapshot = mcp_preamble::files::Capture::from_json(&capture.to_string())
        .unwrap()
        .snapshot()
        .unwrap();
    let names: Vec<&str> = snapshot.skills.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(snapshot.skills_error.as_ref().map(|e| e.code), Some(-32603));
    // A snapshot file keeps them (format 2).
    let file = mcp_preamble::files::SnapshotFile::new(snapshot.clone(), 0);
    let back = mcp_preamble::files::SnapshotFile::from_json(&file.to_json()).unwrap();
    assert_eq!(back.snapshot, snapshot);
    assert_eq!(back.version, 2);
}
