//! `budgets`: hostile instructions and tools with per-server budgets, a
//! global budget and sometimes a total budget.
//!
//! Oracles, for both templates:
//! - every included block's `tokens` is at most its report's `budget`, at
//!   most the budget this target gave it (its own, else the global one), and
//!   equals a fresh o200k count of its `text`;
//! - each block's `span` is its `text` in the section;
//! - `total_tokens()` equals a fresh o200k count of `text()`, and is at most
//!   the total budget when one is set.
//!
//! Servers get distinct plain aliases (`s0`..`s3`) so that a budget given
//! with `server_budget` is known to apply to that server; their
//! `serverInfo.name` stays hostile.

use crate::{BudgetInput, MAX_INPUT, MAX_SERVERS};
use mcp_preamble::{Assembler, Encoding, ServerSnapshot, Template, Tiktoken, TokenCounter};

/// Largest per-server budget tried (target's own bound; above it nothing is trimmed).
const MAX_BUDGET: u16 = 700;
/// Largest total budget tried.
const MAX_TOTAL: u16 = 2500;

/// One input of the target (what libFuzzer's `fuzz_target!` passes).
pub fn run(input: BudgetInput) {
    let size: usize = input
        .servers
        .iter()
        .map(|b| {
            let s = &b.server;
            s.name.len()
                + s.instructions.as_ref().map_or(0, String::len)
                + s.tools
                    .iter()
                    .map(|t| t.name.len() + t.description.as_ref().map_or(0, String::len))
                    .sum::<usize>()
        })
        .sum();
    // Target's own bound (the library has no input limit yet).
    if input.servers.is_empty() || size > MAX_INPUT {
        return;
    }
    let flags = input.flags;
    let global = (flags & 8 != 0).then_some(input.budget % (MAX_BUDGET + 1));
    let total = (flags & 4 != 0).then_some(input.total % (MAX_TOTAL + 1));

    let mut assembler = Assembler::new()
        .template(if flags & 1 != 0 {
            Template::xml()
        } else {
            Template::markdown()
        })
        .tool_descriptions(flags & 2 != 0)
        .dedup(flags & 16 == 0);
    if let Some(b) = global {
        assembler = assembler.budget(b.into());
    }
    if let Some(t) = total {
        assembler = assembler.total_budget(t.into());
    }
    let mut servers = Vec::new();
    let mut expected: Vec<Option<usize>> = Vec::new();
    for (i, b) in input.servers.iter().take(MAX_SERVERS).enumerate() {
        let alias = format!("s{i}");
        let mut server: ServerSnapshot = b.server.snapshot();
        server.alias = Some(alias.clone());
        let own = b.budget.map(|x| usize::from(x % (MAX_BUDGET + 1)));
        if let Some(own) = own {
            assembler = assembler.server_budget(alias, own);
        }
        expected.push(own.or(global.map(usize::from)));
        servers.push(server);
    }

    let assembly = assembler
        .assemble(&servers)
        .expect("built-in templates never fail");
    let o200k = Tiktoken::new(Encoding::O200kBase);
    let text = assembly.text();
    assert_eq!(
        assembly.total_tokens(),
        o200k.count(text),
        "total_tokens of the section"
    );
    if let Some(t) = total {
        assert!(
            assembly.total_tokens() <= usize::from(t),
            "section {} tokens > total budget {t}\n{text}",
            assembly.total_tokens()
        );
    }
    for s in assembly.servers() {
        let limit = expected[s.index];
        if !s.included {
            assert!(
                s.text.is_empty() && s.span.is_none(),
                "{}: omitted with text",
                s.name
            );
            continue;
        }
        let (a, b) = s.span.expect("included server has a span");
        assert_eq!(&text[a..b], s.text, "span of {}", s.name);
        assert_eq!(
            s.tokens,
            o200k.count(&s.text),
            "{}: reported tokens",
            s.name
        );
        if let Some(b) = s.budget {
            assert!(
                s.tokens <= b,
                "{}: {} tokens > report budget {b}\n{}",
                s.name,
                s.tokens,
                s.text
            );
        }
        if let Some(limit) = limit {
            let b = s
                .budget
                .unwrap_or_else(|| panic!("{}: budget {limit} not reported", s.name));
            assert!(b <= limit, "{}: report budget {b} > given {limit}", s.name);
            assert!(
                s.tokens <= limit,
                "{}: {} tokens > budget {limit}\n{}",
                s.name,
                s.tokens,
                s.text
            );
        }
    }
}
