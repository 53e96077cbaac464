//! Token counting through the trait: custom counters, memoized counts.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_preamble::{Assembler, ServerSnapshot, TokenCounter, Tool};

/// Counts characters, and how often it was asked.
#[derive(Clone, Default)]
struct Chars(Arc<AtomicUsize>);

impl TokenCounter for Chars {
    fn name(&self) -> &str {
        "chars"
    }
    fn count(&self, text: &str) -> usize {
        self.0.fetch_add(1, Ordering::SeqCst);
        text.chars().count()
    }
}

fn servers() -> Vec<ServerSnapshot> {
    vec![
        ServerSnapshot::new("a")
            .with_instructions("Always call first_tool first. It is a long sentence of prose here.")
            .with_tool(Tool::new("first_tool", "Does a thing.")),
        ServerSnapshot::new("b").with_instructions("Never delete anything without asking."),
    ]
}

#[test]
fn a_custom_counter_is_used_for_budgets() {
    let counter = Chars::default();
    let a = Assembler::new()
        .token_counter(counter.clone())
        .budget(60)
        .assemble(&servers())
        .unwrap();
    assert_eq!(a.encoding(), "chars");
    assert_eq!(a.total_tokens(), a.text().chars().count());
    for s in a.servers() {
        assert_eq!(s.tokens, s.text.chars().count());
        assert!(s.tokens <= 60, "{}", s.text);
    }
}

#[test]
fn unchanged_strings_are_not_counted_again() {
    let counter = Chars::default();
    let assembler = Assembler::new().token_counter(counter.clone()).budget(60);
    let first = assembler.assemble(&servers()).unwrap();
    let calls = counter.0.load(Ordering::SeqCst);
    assert!(calls > 0);
    let second = assembler.clone().assemble(&servers()).unwrap();
    assert_eq!(
        counter.0.load(Ordering::SeqCst),
        calls,
        "all counts came from the memo"
    );
    assert_eq!(first.text(), second.text());

    // One server changes: only its strings (and the section) are counted.
    let mut changed = servers();
    changed[1] = ServerSnapshot::new("b").with_instructions("Never drop tables.");
    assembler.assemble(&changed).unwrap();
    let more = counter.0.load(Ordering::SeqCst) - calls;
    assert!(
        more > 0 && more < calls,
        "{more} new counts vs {calls} cold"
    );
}

mod splitting {
    use mcp_preamble::{Encoding, Tiktoken, TokenCounter};
    use proptest::prelude::*;

    /// Text cut right after a newline, before a character that is neither
    /// whitespace nor `/`, counts the same in pieces as whole: the property
    /// the assembler relies on to count an unchanged block from its memo.
    fn pieces() -> impl Strategy<Value = Vec<String>> {
        let piece = prop_oneof![
            any::<String>(),
            "[ -~]{0,30}",
            Just("`".to_string()),
            Just("```".to_string()),
            Just("]]".to_string()),
            Just("  ".to_string()),
            Just("\r\n".to_string()),
            Just("'s".to_string()),
            Just("123".to_string()),
            Just("日本円".to_string()),
        ];
        proptest::collection::vec(
            proptest::collection::vec(piece, 1..5).prop_map(|v| v.concat()),
            1..6,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn counts_add_up_across_newline_cuts(chunks in pieces(), heads in proptest::collection::vec("[#<A-Za-z0-9`*-]", 6)) {
            for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
                let t = Tiktoken::new(encoding);
                prop_assert!(t.splits_after_newline());
                // Each chunk after the first starts with a non-space, non-slash
                // character and follows a newline.
                let mut parts = Vec::new();
                for (i, c) in chunks.iter().enumerate() {
                    let mut part = if i == 0 { String::new() } else { heads[i % heads.len()].clone() };
                    part.push_str(c);
                    part.push('\n');
                    parts.push(part);
                }
                let whole: String = parts.concat();
                let sum: usize = parts.iter().map(|p| t.count(p)).sum();
                prop_assert_eq!(t.count(&whole), sum, "{:?}", parts);
            }
        }
    }
}
