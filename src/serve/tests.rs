//! The gateway's instructions against each host's cut, on the corpus.

use std::path::Path;

use super::{Gateway, NOTE, ServeAs};
use crate::assemble::Assembler;
use crate::dedup::carries_constraint;
use crate::hub::Hub;
use crate::model::ServerSnapshot;
use crate::settings::Settings;
use crate::tokens::{Encoding, Tiktoken, TokenCounter};
use crate::{sanitize, segment};

/// The corpus's servers with the longest instructions.
const LONGEST: &[&str] = &[
    "basic-memory",
    "awslabs-aws-documentation-mcp-server",
    "awslabs-amazon-bedrock-agentcore-mcp-server",
    "server-everything",
    "supabase-mcp-server-supabase",
    "synthetic-python-unicode",
    "context7-mcp",
    "awslabs-cloudwatch-mcp-server",
];

fn corpus(names: &[&str]) -> Vec<(String, ServerSnapshot)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    names
        .iter()
        .map(|n| {
            let s = crate::wire::load_server_file(dir.join(format!("{n}.json"))).unwrap();
            (n.to_string(), s)
        })
        .collect()
}

fn gateway(host: ServeAs, servers: &[(String, ServerSnapshot)]) -> Gateway {
    let assembler = super::prepare(Assembler::new(), host).unwrap();
    let hub = Hub::new(assembler);
    hub.upsert_all(servers.iter().cloned()).unwrap();
    Gateway::new(hub, host)
}

/// The constraint sentences of a server's instructions.
fn constraints(snapshot: &ServerSnapshot) -> Vec<String> {
    let text = sanitize::text(snapshot.instructions.raw().unwrap_or_default());
    segment::units(&text)
        .iter()
        .map(|u| u.text(&text).trim().to_string())
        .filter(|u| carries_constraint(u))
        .collect()
}

#[test]
fn claude_code_gets_every_server_with_its_constraints_within_2048_units() {
    let servers = corpus(LONGEST);
    // What Claude Code would make of the same servers behind a plain
    // concatenating gateway: the first 2,048 units, the rest lost.
    let plain: String = servers
        .iter()
        .filter_map(|(_, s)| s.instructions.raw())
        .collect::<Vec<_>>()
        .join("\n\n");
    let cut: String =
        String::from_utf16_lossy(&plain.encode_utf16().take(2048).collect::<Vec<_>>());
    let gateway = gateway(ServeAs::ClaudeCode, &servers);
    let text = gateway.instructions();
    assert!(
        text.encode_utf16().count() <= 2048,
        "{} units",
        text.encode_utf16().count()
    );
    assert!(text.ends_with(NOTE), "the reader is announced");
    let section = gateway.hub().section();
    assert_eq!(text, format!("{}{NOTE}", section.text()), "fitted, not cut");
    let mut lost_by_plain = 0;
    for (alias, snapshot) in &servers {
        let wanted = constraints(snapshot);
        if wanted.is_empty() {
            continue;
        }
        let block = section
            .blocks()
            .get(alias)
            .unwrap_or_else(|| panic!("{alias} has a block"));
        assert!(text.contains(block.as_str()));
        // A sentence the ladder shortened keeps its start.
        let start = |c: &String| c.chars().take(24).collect::<String>();
        let kept = wanted.iter().filter(|c| block.contains(&start(c))).count();
        assert!(kept > 0, "{alias} keeps a constraint sentence:\n{block}");
        if !wanted.iter().any(|c| cut.contains(c.as_str())) {
            lost_by_plain += 1;
        }
    }
    assert!(lost_by_plain > 0, "the host's own cut loses whole servers");
}

#[test]
fn codex_gets_its_512_characters() {
    let servers = corpus(&["seed-invoice-server", "awslabs-amazon-neptune-mcp-server"]);
    let gateway = gateway(ServeAs::Codex, &servers);
    let text = gateway.instructions();
    assert!(
        text.chars().count() <= 512,
        "{} chars",
        text.chars().count()
    );
    assert!(text.contains("### seed-invoice-server"), "{text}");
    let section = gateway.hub().section();
    assert_eq!(text, format!("{}{NOTE}", section.text()), "fitted, not cut");
}

#[test]
fn the_reader_serves_the_full_sanitized_text() {
    let servers = corpus(&["basic-memory", "seed-invoice-server"]);
    let gateway = gateway(ServeAs::ClaudeCode, &servers);
    let view = gateway.view();
    let full = &view.full["basic-memory"];
    let raw = servers[0].1.instructions.raw().unwrap();
    assert_eq!(full, &sanitize::text(raw));
    assert!(
        !gateway.instructions().contains(full.as_str()),
        "the budget cut it"
    );
    assert!(view.tools.iter().any(|t| t.name == super::READER));
}

#[test]
fn instructions_are_the_memo_not_a_new_assembly() {
    let servers = corpus(&["seed-invoice-server"]);
    let gateway = gateway(ServeAs::Plain, &servers);
    let first = gateway.view();
    let again = gateway.view();
    assert!(
        std::sync::Arc::ptr_eq(&first, &again),
        "no work while the section stands"
    );
    assert_eq!(
        first.instructions,
        format!("{}{NOTE}", gateway.hub().section().text())
    );
}

#[test]
fn unknown_hosts_are_refused_with_the_known_ones() {
    let e = "cursor".parse::<ServeAs>().unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid configuration: unknown host \"cursor\" (known: plain, claude-code, codex, generic-4000)"
    );
    let e = "none".parse::<ServeAs>().unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid configuration: host \"none\" forwards no instructions (fit to one of: plain, claude-code, codex, generic-4000)"
    );
    assert!(
        "vscode"
            .parse::<ServeAs>()
            .unwrap_err()
            .to_string()
            .contains("has no known cut")
    );
    for host in ServeAs::all() {
        assert_eq!(host.as_str().parse::<ServeAs>().unwrap(), host);
    }
    // The older name of the lint's profile.
    assert_eq!("chatgpt".parse::<ServeAs>().unwrap(), ServeAs::Codex);
}

/// Under `--as claude-code`, a policy's budgets stay in the model's tokens
/// (o200k, the assembler's counter) while the whole text also fits Claude
/// Code's cap in UTF-16 units: both hold at once.
#[test]
fn claude_code_keeps_token_budgets_in_tokens_and_the_text_in_2048_units() {
    let policy = "version = 1\n[defaults]\nbudget = 256\n[servers.context7-mcp]\nbudget = 64\n";
    let settings = Settings::from_str(policy, "mcp-preamble.toml").unwrap();
    let servers = corpus(&[
        "basic-memory",
        "context7-mcp",
        "awslabs-aws-documentation-mcp-server",
    ]);
    let serve = |host: ServeAs| {
        let assembler = super::prepare(Assembler::from_settings(&settings).unwrap(), host).unwrap();
        let hub = Hub::new(assembler);
        hub.upsert_all(servers.iter().cloned()).unwrap();
        Gateway::new(hub, host)
    };
    let utf16 = |t: &str| t.encode_utf16().count();
    // Under the token budgets alone the text is over the cap, so the cap binds.
    let plain = serve(ServeAs::Plain);
    assert!(utf16(&plain.instructions()) > 2048);

    let gateway = serve(ServeAs::ClaudeCode);
    let text = gateway.instructions();
    assert!(utf16(&text) <= 2048, "{} units", utf16(&text));
    let o200k = Tiktoken::new(Encoding::O200kBase);
    let section = gateway.hub().section();
    let mut over_its_budget_in_units = 0;
    for report in section.assembly().servers() {
        let alias = report.alias.as_deref().unwrap();
        let budget = if alias == "context7-mcp" { 64 } else { 256 };
        let block = &section.blocks()[alias];
        assert!(text.contains(block.as_str()), "{alias} is served");
        // The report counts the model's tokens, and so does the budget.
        assert_eq!(report.tokens, o200k.count(block), "{alias}");
        assert!(report.tokens <= budget, "{alias}: {} tokens", report.tokens);
        assert!(report.budget.unwrap() <= budget, "{alias}");
        if utf16(block) > budget {
            over_its_budget_in_units += 1;
        }
    }
    // A budget read as UTF-16 units would have held every block to it.
    assert!(over_its_budget_in_units > 0);
    assert!(section.assembly().servers().iter().all(|s| s.included));
}

#[test]
fn the_section_names_tools_as_the_gateway_lists_them() {
    let servers = corpus(&["seed-invoice-server", "server-everything"]);
    let gateway = gateway(ServeAs::ClaudeCode, &servers);
    let text = gateway.instructions();
    let view = gateway.view();
    assert!(
        text.contains("`seed-invoice-server__list_periods`"),
        "{text}"
    );
    // Every code span on a `Tools:` line is a tool the gateway lists.
    let mut seen = 0;
    for line in text.lines().filter(|l| l.starts_with("Tools: ")) {
        for (i, span) in line.split('`').enumerate() {
            if i % 2 == 1 {
                seen += 1;
                assert!(view.names.upstream(span).is_some(), "{span} in {line}");
                assert!(view.tools.iter().any(|t| t.name == span), "{span}");
            }
        }
    }
    assert!(seen >= 2, "{text}");
}
