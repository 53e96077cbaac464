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
