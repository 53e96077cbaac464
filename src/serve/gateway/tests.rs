//! The gateway's instructions against each host's cut, on the corpus.

use std::path::Path;

use crate::assemble::Assembler;
use crate::dedup::carries_constraint;

use crate::model::ServerSnapshot;
use crate::serve::{Gateway, NOTE, ServeAs};
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
    let gateway = Gateway::new(Assembler::new(), host).unwrap();
    gateway.hub().upsert_all(servers.iter().cloned()).unwrap();
    gateway
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
    // The reader as Claude Code shows it, behind a gateway named `preamble`.
    let note = NOTE.replace(
        crate::serve::READER,
        "mcp__preamble__mcp_preamble__instructions",
    );
    assert!(text.ends_with(&note), "the reader is announced");
    let section = gateway.hub().section();
    assert_eq!(text, format!("{}{note}", section.text()), "fitted, not cut");
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
    let note = NOTE.replace(
        crate::serve::READER,
        "mcp__preamble__mcp_preamble__instructions",
    );
    assert_eq!(text, format!("{}{note}", section.text()), "fitted, not cut");
}

#[test]
fn the_reader_serves_the_full_text_naming_tools_as_listed() {
    let servers = corpus(&["basic-memory", "seed-invoice-server"]);
    let gateway = gateway(ServeAs::ClaudeCode, &servers);
    let view = gateway.view();
    let full = &view.full["basic-memory"];
    let raw = servers[0].1.instructions.raw().unwrap();
    // Sanitized, and each tool it names as the host shows the name
    // tools/list gives (`mcp__<gateway>__` and that name).
    let shown = "mcp__preamble__basic-memory__write_note";
    assert!(full.contains(shown), "{full}");
    assert!(
        view.tools
            .iter()
            .any(|t| t.name == "basic-memory__write_note")
    );
    assert_eq!(
        full.replace("mcp__preamble__basic-memory__", ""),
        sanitize::text(raw)
    );
    // The assembly's own text, the one the block starts from.
    let section = gateway.hub().section();
    let exposure = section
        .assembly()
        .exposures()
        .iter()
        .find(|e| e.alias.as_deref() == Some("basic-memory"))
        .unwrap();
    assert_eq!(exposure.instructions.as_ref(), Some(full));
    assert!(
        !gateway.instructions().contains(full.as_str()),
        "the budget cut it"
    );
    // Listed: the host read a shortened text.
    let read = gateway.view();
    let listed = view.tools_for(Some(&read));
    assert!(listed.iter().any(|t| t.name == crate::serve::READER));
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
    // Nothing shortened: no note, and no reader for a host that read it.
    assert_eq!(first.instructions, gateway.hub().section().text());
    let listed = first.tools_for(Some(&first));
    assert!(listed.iter().all(|t| t.name != crate::serve::READER));
    let unread = first.tools_for(None);
    assert!(unread.iter().any(|t| t.name == crate::serve::READER));
}

#[test]
fn unknown_hosts_are_refused_with_the_known_ones() {
    let e = "windsurf".parse::<ServeAs>().unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid configuration: unknown host \"windsurf\" (known: plain, claude-code, codex, claude-desktop, generic-4000, none)"
    );
    let e = "cursor".parse::<ServeAs>().unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid configuration: host \"cursor\" has no known cut (fit to one of: plain, claude-code, codex, claude-desktop, generic-4000, none)"
    );
    // A host that reads instructions nowhere is a choice: wrap delivers
    // them through its reader tool.
    let desktop = "claude-desktop".parse::<ServeAs>().unwrap();
    assert_eq!(desktop.cap(), None);
    assert_eq!("claude-ai".parse::<ServeAs>().unwrap(), desktop);
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
        let gateway = Gateway::new(Assembler::from_settings(&settings).unwrap(), host).unwrap();
        gateway.hub().upsert_all(servers.iter().cloned()).unwrap();
        gateway
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
    // Claude Code sends the tools itself: its section has no tool list.
    let claude = gateway(ServeAs::ClaudeCode, &servers).instructions();
    assert!(!claude.contains("\nTools: "), "{claude}");
    // A host that does not gets the list, in the gateway's names.
    let gateway = gateway("generic-4000".parse().unwrap(), &servers);
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

/// Every capture of the corpus, by file name (loaded once).
fn whole_corpus() -> &'static [(String, ServerSnapshot)] {
    static ALL: std::sync::OnceLock<Vec<(String, ServerSnapshot)>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().into_string().unwrap();
                name.strip_suffix(".json").map(str::to_string)
            })
            .collect();
        names.sort();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        corpus(&names)
    })
}

/// What the operator's policy says about one server of a case.
#[derive(Debug, Clone)]
struct Rules {
    /// 0: no filter; 1: deny its first tool; 2: allow tools starting like
    /// its first; 3: deny every tool.
    filter: u8,
    /// An override of one tool (by index): its description (one of
    /// [`DESCRIPTIONS`]) and maybe a title.
    overridden: Option<(usize, usize, bool)>,
    excluded: bool,
    replaced: bool,
}

/// Override descriptions: plain, with markdown and a hidden character,
/// a heading, and one that sanitizes to nothing.
const DESCRIPTIONS: &[&str] = &[
    "One audited invoice.",
    "Read `x` first.\u{200b} Then *more*.",
    "# Heading\n\nSecond line, [a link](http://x).",
    "\u{200b}\u{feff}",
];

fn rules() -> impl proptest::strategy::Strategy<Value = Rules> {
    use proptest::prelude::*;
    (
        0u8..4,
        proptest::option::of((0usize..40, 0..DESCRIPTIONS.len(), any::<bool>())),
        proptest::bool::weighted(0.1),
        proptest::bool::weighted(0.15),
    )
        .prop_map(|(filter, overridden, excluded, replaced)| Rules {
            filter,
            overridden,
            excluded,
            replaced,
        })
}

/// A TOML string.
fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// The policy file of a case, and each server's tool filter.
fn policy(
    servers: &[&(String, ServerSnapshot)],
    rules: &[Rules],
    descriptions: bool,
    budget: Option<usize>,
) -> (String, Vec<crate::tool_policy::ToolFilter>) {
    use crate::tool_policy::ToolFilter;
    let mut toml = format!("version = 1\n[defaults]\ntool_descriptions = {descriptions}\n");
    if let Some(b) = budget {
        toml.push_str(&format!("budget = {b}\n"));
    }
    let mut filters = Vec::new();
    for ((alias, s), r) in servers.iter().map(|p| (&p.0, &p.1)).zip(rules) {
        let key = quoted(alias);
        toml.push_str(&format!("[servers.{key}]\n"));
        if r.excluded {
            toml.push_str("exclude = true\n");
        }
        if r.replaced {
            toml.push_str("instructions = \"Operator text: be brief.\"\n");
        }
        let first = s.tools.first().map(|t| t.name.as_str());
        let filter = match (r.filter, first) {
            (1, Some(f)) => ToolFilter::new().deny(f.replace(['*', '?'], "_")),
            (2, Some(f)) => {
                ToolFilter::new().allow(format!("{}*", f.chars().take(3).collect::<String>()))
            }
            (3, _) => ToolFilter::new().deny("*"),
            _ => ToolFilter::new(),
        };
        if !filter.is_empty() {
            toml.push_str(&format!("[servers.{key}.tools]\n"));
            let list = |v: &[String]| v.iter().map(|p| quoted(p)).collect::<Vec<_>>().join(", ");
            toml.push_str(&format!(
                "allow = [{}]\ndeny = [{}]\n",
                list(&filter.allow),
                list(&filter.deny)
            ));
        }
        filters.push(filter);
        if let Some((k, d, titled)) = r.overridden
            && !s.tools.is_empty()
        {
            let tool = &s.tools[k % s.tools.len()].name;
            toml.push_str(&format!("[servers.{key}.tool.{}]\n", quoted(tool)));
            toml.push_str(&format!("description = {}\n", quoted(DESCRIPTIONS[d])));
            if titled {
                toml.push_str("title = \"Audited\u{200b} tool\"\n");
            }
        }
    }
    (toml, filters)
}

/// The code spans of `line` (a backtick after a backslash is text).
fn code_spans(line: &str) -> Vec<&str> {
    let ticks: Vec<usize> = line
        .match_indices('`')
        .map(|(at, _)| at)
        .filter(|&at| !line[..at].ends_with('\\'))
        .collect();
    ticks
        .chunks_exact(2)
        .map(|pair| &line[pair[0] + 1..pair[1]])
        .collect()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]

    /// The gateway is a view of the assembly: for corpus servers under
    /// random tool filters, overrides, exclusions and replaced
    /// instructions, `tools/list`, the section and the reader tool agree
    /// on every name and description, and each follows the policy.
    #[test]
    fn tools_list_the_section_and_the_reader_agree(
        picked in proptest::sample::subsequence((0..whole_corpus().len()).collect::<Vec<_>>(), 1..=5),
        rules in proptest::collection::vec(rules(), 5),
        descriptions in proptest::prelude::any::<bool>(),
        budget in proptest::option::weighted(0.3, 40usize..400),
        claude in proptest::bool::weighted(0.3),
    ) {
        use crate::settings::Settings;
        use std::collections::{BTreeMap, BTreeSet};

        let servers: Vec<&(String, ServerSnapshot)> = picked.iter().map(|&i| &whole_corpus()[i]).collect();
        let (toml, filters) = policy(&servers, &rules, descriptions, budget);
        let host = if claude { ServeAs::ClaudeCode } else { ServeAs::Plain };
        let settings = Settings::from_str(&toml, "case.toml").unwrap();
        let gateway = Gateway::new(Assembler::from_settings(&settings).unwrap(), host).unwrap();
        gateway.hub().upsert_all(servers.iter().map(|p| (*p).clone())).unwrap();
        let view = gateway.view();
        let section = gateway.hub().section();
        // Everything the section shows in full: no budget, no host cut.
        let whole = budget.is_none() && host == ServeAs::Plain;

        // tools/list: each name once, each tool of a picked, included
        // server that its filter sends and that has a name, with its
        // sanitized (or overridden) description and title.
        let reader = view.names.reader().to_string();
        let mut listed: BTreeMap<String, &rmcp::model::Tool> = BTreeMap::new();
        for t in view.tools.iter().filter(|t| t.name != reader) {
            proptest::prop_assert!(listed.insert(t.name.to_string(), t).is_none(), "{} twice", t.name);
        }
        let mut wanted = BTreeSet::new();
        for (((alias, s), r), filter) in servers.iter().map(|p| (&p.0, &p.1)).zip(&rules).zip(&filters) {
            if r.excluded {
                continue;
            }
            for t in s.tools.iter().filter(|t| filter.sends(&t.name) && !sanitize::line(&t.name).is_empty()) {
                wanted.insert((alias.clone(), t.name.clone()));
            }
        }
        let served: BTreeSet<(String, String)> = listed
            .keys()
            .map(|n| {
                let (a, t) = view.names.upstream(n).unwrap();
                (a.to_string(), t.to_string())
            })
            .collect();
        proptest::prop_assert_eq!(&served, &wanted);
        for (name, wire) in &listed {
            let (alias, own) = view.names.upstream(name).unwrap();
            let (k, (_, s)) = servers.iter().enumerate().find(|(_, p)| p.0 == alias).unwrap();
            let tool = s.tools.iter().find(|t| t.name == own).unwrap();
            let over = rules[k].overridden.filter(|(i, _, _)| s.tools[i % s.tools.len()].name == own);
            let description = match over {
                Some((_, d, _)) => Some(DESCRIPTIONS[d]),
                None => tool.description.as_deref(),
            }
            .map(sanitize::text)
            .filter(|d| !d.is_empty());
            proptest::prop_assert_eq!(wire.description.as_deref(), description.as_deref(), "{}", name);
            let title = match over {
                Some((_, _, true)) => Some("Audited tool".to_string()),
                _ => tool.title.as_deref().map(sanitize::line),
            };
            proptest::prop_assert_eq!(wire.title.as_deref(), title.as_deref(), "{}", name);
        }

        // The section: each block names only tools the gateway serves for
        // that server, with the description it serves; in full, every one.
        let assembly = section.assembly();
        for (report, exposure) in assembly.servers().iter().zip(assembly.exposures()) {
            let alias = exposure.alias.clone().unwrap();
            let Some(block) = section.blocks().get(&alias) else {
                continue;
            };
            let tools_line = block.lines().rev().find(|l| l.starts_with("Tools: ")).unwrap_or("");
            for span in code_spans(tools_line) {
                let upstream = view.names.upstream(span);
                proptest::prop_assert_eq!(upstream.map(|u| u.0), Some(alias.as_str()), "{} in {}", span, block);
            }
            if whole {
                for (name, wire) in listed.iter().filter(|(n, _)| view.names.upstream(n).unwrap().0 == alias) {
                    let shown = match wire.description.as_deref().filter(|_| descriptions) {
                        Some(d) => format!("`{name}` ({})", crate::markdown::md_line(d)),
                        None => format!("`{name}`"),
                    };
                    proptest::prop_assert!(tools_line.contains(&shown), "{} not in {}", shown, tools_line);
                }
            }
            // The reader returns the text the block's instructions come
            // from: whole in the block when nothing was removed from it.
            let read = view.full.get(&alias);
            proptest::prop_assert_eq!(read, exposure.instructions.as_ref());
            if let Some(text) = read
                && report.removed.is_empty()
                && !report.truncated
            {
                proptest::prop_assert!(block.contains(&crate::markdown::md_block(text, 3)), "{}\n---\n{}", text, block);
            }
            for rewrite in &report.rewrites {
                // Claude Code shows a served name with the gateway's prefix.
                let served = match claude {
                    true => rewrite.name.strip_prefix("mcp__preamble__").unwrap_or("?"),
                    false => &rewrite.name,
                };
                proptest::prop_assert!(listed.contains_key(served), "{} is not served", rewrite.name);
                if let Some(text) = read {
                    proptest::prop_assert!(text.contains(&rewrite.name), "{}", rewrite.name);
                }
            }
        }

        // The reader: each server with instructions of its own, and the
        // text the assembly holds; none for excluded or replaced servers.
        for ((alias, s), r) in servers.iter().map(|p| (&p.0, &p.1)).zip(&rules) {
            let args = serde_json::json!({"server": alias});
            let answer = crate::serve::gateway::call::read_instructions(&view.full, args.as_object());
            let own = s.instructions.raw().is_some_and(|t| !sanitize::text(t).is_empty());
            if r.excluded || r.replaced || !own {
                proptest::prop_assert!(answer.is_err(), "{}", alias);
                continue;
            }
            let report = assembly.servers().iter().find(|x| x.alias.as_deref() == Some(alias)).unwrap();
            let Ok(text) = answer else {
                // Only when every unit was about a hidden tool.
                let hidden = crate::report::RemovalReason::MentionsHiddenTool;
                proptest::prop_assert!(!report.removed.is_empty(), "{}", alias);
                proptest::prop_assert!(report.removed.iter().all(|r| r.reason == hidden), "{}", alias);
                continue;
            };
            if report.rewrites.is_empty() && report.hidden_tools.is_empty() {
                proptest::prop_assert_eq!(&text, &sanitize::text(s.instructions.raw().unwrap()));
            }
            // Nothing the section removed for naming a hidden tool comes back.
            let hidden = crate::report::RemovalReason::MentionsHiddenTool;
            for removed in report.removed.iter().filter(|r| r.reason == hidden) {
                proptest::prop_assert!(!text.contains(removed.text.trim()), "{}: {:?} in\n{}", alias, removed.text, text);
            }
        }
        if !view.full.is_empty() {
            proptest::prop_assert!(view.tools_for(None).iter().any(|t| t.name == reader));
        }
    }
}

#[test]
fn a_hub_that_names_tools_plainly_is_named_as_the_gateway_serves() {
    let servers = corpus(&["seed-invoice-server"]);
    // Asked to name tools plainly, the gateway's hub names them as it serves them.
    let plain = Assembler::new().tool_names(crate::tool_names::ToolNames::plain());
    let gateway = Gateway::new(plain, ServeAs::Plain).unwrap();
    gateway.hub().upsert_all(servers.iter().cloned()).unwrap();
    let text = gateway.hub().section().text().to_string();
    assert!(
        text.contains("`seed-invoice-server__list_periods`"),
        "{text}"
    );
    let view = gateway.view();
    assert!(
        view.tools
            .iter()
            .any(|t| t.name == "seed-invoice-server__list_periods")
    );
    // A reload without the scheme is named again at the next look.
    gateway.hub().reconfigure(Assembler::new()).unwrap();
    let view = gateway.view();
    assert!(
        gateway
            .hub()
            .section()
            .text()
            .contains("`seed-invoice-server__list_periods`")
    );
    assert_eq!(
        view.names.upstream("seed-invoice-server__list_periods"),
        Some(("seed-invoice-server", "list_periods"))
    );
}

#[test]
fn a_new_schema_is_served_at_the_next_look_though_the_text_stands() {
    use crate::model::Tool;
    let servers = corpus(&["seed-invoice-server"]);
    let gateway = gateway(ServeAs::Plain, &servers);
    let before = gateway.view();
    let mut tools = servers[0].1.tools.clone();
    let schema =
        serde_json::json!({"type": "object", "properties": {"period": {"type": "string"}}});
    tools[0] = Tool {
        input_schema: schema.clone().into(),
        ..tools[0].clone()
    };
    let name = format!("seed-invoice-server__{}", tools[0].name);
    gateway
        .hub()
        .update_tools("seed-invoice-server", tools)
        .unwrap();
    assert_eq!(gateway.hub().section().text(), before.section.text());
    let old = before.tools.iter().find(|t| t.name == name).unwrap();
    assert_ne!(
        serde_json::Value::Object((*old.input_schema).clone()),
        schema
    );
    let after = gateway.view();
    let served = after.tools.iter().find(|t| t.name == name).unwrap();
    assert_eq!(
        serde_json::Value::Object((*served.input_schema).clone()),
        schema
    );
}
