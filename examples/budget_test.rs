//! A server author's prompt-budget check, as a program: what the
//! instructions cost, whether they fit, which rule survives a tight budget,
//! and what the lint finds. In a test suite, use the `assert_*` functions.
//!
//! ```sh
//! cargo run --example budget_test --features testing
//! ```

use mcp_preamble::lint::Severity;
use mcp_preamble::testing::{fits, keeps, lint_clean, load, section_within, server};

fn main() {
    // The server as its handshake describes it.
    let invoice = server("invoice")
        .instructions(
            "Always call list_periods before get_invoice. \
             Invoice IDs are period scoped and are not stable across periods.",
        )
        .tool("list_periods", "List billing periods.")
        .tool("get_invoice", "Get an invoice by id.");
    // Another server the same host runs (a captured handshake).
    let docs = load("tests/corpus/context7-mcp.json");

    let checks = [
        (
            "fits 64 tokens without trimming",
            fits(&invoice, 64).map(drop),
        ),
        (
            "the ordering rule survives 24 tokens",
            keeps(&invoice, 24, "Always call list_periods before get_invoice.").map(drop),
        ),
        (
            "the section with context7 stays within 250 tokens",
            section_within(&[invoice.clone().build(), docs], 250).map(drop),
        ),
        ("no lint warnings", lint_clean(&invoice, Severity::Warning)),
    ];
    let mut failed = 0;
    for (what, result) in checks {
        match result {
            Ok(()) => println!("ok    {what}"),
            Err(f) => {
                failed += 1;
                println!("FAIL  {what}\n{f}\n");
            }
        }
    }
    std::process::exit(if failed == 0 { 0 } else { 1 });
}
