//! An exact count the host supplies: a provider's token-count endpoint
//! behind `HostCounter`, with a cache by block digest, a timeout and a
//! fallback to the Claude estimate that the report shows.
//!
//! The "endpoint" here is a local stand-in (a thread that sleeps, then
//! counts with o200k × 1.25): the library itself makes no network calls,
//! and a host would call its provider (e.g. Anthropic's
//! `/v1/messages/count_tokens`) in the closure instead.
//!
//! `cargo run --example host_counter`

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_preamble::tokens::{ClaudeEstimate, ClaudeGeneration, HostCounter};
use mcp_preamble::{Assembler, ServerSnapshot, Tool};

fn main() -> Result<(), mcp_preamble::Error> {
    let calls = Arc::new(AtomicUsize::new(0));
    let slow = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (seen, lag) = (calls.clone(), slow.clone());
    // The stand-in endpoint: 20 ms a call, or 500 ms while `slow` is set.
    let endpoint = move |text: &str| -> Result<usize, String> {
        seen.fetch_add(1, Ordering::SeqCst);
        let wait = if lag.load(Ordering::SeqCst) { 500 } else { 20 };
        std::thread::sleep(Duration::from_millis(wait));
        let o200k = tiktoken_rs::o200k_base_singleton().count_ordinary(text);
        Ok((o200k as f64 * 1.25).ceil() as usize)
    };
    let counter = HostCounter::new("claude-sonnet-4 (count_tokens)", endpoint)
        .timeout(Duration::from_millis(200))
        .fallback(ClaudeEstimate::new(
            "claude-sonnet-4",
            ClaudeGeneration::Before4_7,
        ));
    let assembler = Assembler::new().token_counter(counter).budget(120);
    let server = |name: &str, text: &str| {
        ServerSnapshot::new(name)
            .with_instructions(text)
            .with_tool(Tool::new(format!("{name}_list"), "Lists things."))
    };
    let mut servers = vec![
        server(
            "billing",
            "Always call billing_list before reading an invoice.",
        ),
        server(
            "calendar",
            "Times are UTC. Never book over an existing event.",
        ),
    ];

    let first = assembler.assemble(&servers)?;
    let after_first = calls.load(Ordering::SeqCst);
    println!(
        "first assembly: {} tokens, exact: {}, {after_first} calls",
        first.total_tokens(),
        first.counting().exact
    );

    // Nothing changed: every count comes from the cache.
    let again = assembler.assemble(&servers)?;
    let after_again = calls.load(Ordering::SeqCst);
    println!(
        "same servers again: {} tokens, {} new calls",
        again.total_tokens(),
        after_again - after_first
    );
    assert_eq!(
        after_again, after_first,
        "an unchanged section costs no call"
    );
    assert_eq!(again.text(), first.text());

    // One server changes while the endpoint is slow: its new texts fall
    // back to the estimate, and the report says so.
    slow.store(true, Ordering::SeqCst);
    servers[1] = server("calendar", "Times are UTC. Ask before booking anything.");
    let slow_run = assembler.assemble(&servers)?;
    let c = slow_run.counting();
    println!(
        "one change, slow endpoint: {} tokens, exact: {}, {} counts by {}",
        slow_run.total_tokens(),
        c.exact,
        c.fallbacks,
        c.fallback.as_deref().unwrap_or("-")
    );
    assert!(!c.exact && c.fallbacks > 0);

    // The late answers land in the cache; the next assembly is exact again.
    slow.store(false, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(700));
    let later = assembler.assemble(&servers)?;
    println!(
        "later: {} tokens, exact: {}",
        later.total_tokens(),
        later.counting().exact
    );
    assert!(later.counting().exact);
    Ok(())
}
