//! A test kit for prompt budgets (feature `testing`): build or load
//! servers, assert that they fit their token budgets, and keep golden files
//! of rendered sections.
//!
//! It is for two kinds of tests: a host's, which should fail when a
//! server's block outgrows its budget, and a server author's, which should
//! fail before release when the instructions cost too much, lose a rule
//! under a tight budget, or have lint findings.
//!
//! ```toml
//! [dev-dependencies]
//! mcp-preamble = { version = "0.1", features = ["testing"] }
//! ```
//!
//! ## A budget test
//!
//! ```
//! use mcp_preamble::testing::{assert_fits, assert_keeps, assert_section_within, load, server};
//!
//! // A server from its instructions and tools (what it sends in its handshake)…
//! let invoice = server("invoice")
//!     .instructions("Always call list_periods before get_invoice. Invoice IDs are period scoped.")
//!     .tool("list_periods", "List billing periods.")
//!     .tool("get_invoice", "Get an invoice by id.");
//! // …or from a capture or snapshot file (`mcp-preamble snapshot` writes those).
//! let docs = load("tests/corpus/context7-mcp.json");
//!
//! // The block fits 150 tokens as rendered, with nothing trimmed.
//! assert_fits(&invoice, 150);
//! // This rule survives even a 32-token budget (the tool list goes first).
//! assert_keeps(&invoice, 32, "Always call list_periods before get_invoice.");
//! // The whole section stays within 400 tokens with both servers.
//! assert_section_within(&[invoice.build(), docs], 400);
//! ```
//!
//! `examples/budget_test.rs` runs the same checks as a program.
//!
//! Each `assert_*` has a twin without the prefix ([`fits`], [`keeps`],
//! [`section_within`], [`lint_clean`]) that returns a [`Failure`] instead of panicking; the
//! free functions use a default [`Assembler`](crate::Assembler) (markdown, `o200k_base`), and
//! [`Check::with`] takes yours, so the test measures what your host renders:
//!
//! ```
//! use mcp_preamble::testing::{Check, server};
//! use mcp_preamble::{Assembler, Template};
//!
//! let check = Check::with(Assembler::new().template(Template::xml()));
//! let memory = server("memory").instructions("Search notes before writing a new one.");
//! let report = check.assert_fits(&memory, 64);
//! assert!(report.text.starts_with(r#"<server name="memory">"#));
//! ```
//!
//! ## Failure messages
//!
//! A failing assertion panics with a message that shows the block as
//! rendered (each line after `| `), its token count, the budget, and what
//! was removed and why (the reasons of [`Removal`](crate::report::Removal): `budget`,
//! `restates_tool`, `repeated`, `same_as_server`, `policy`). For example:
//!
//! ```
//! use mcp_preamble::testing::{fits, server};
//!
//! let invoice = server("invoice")
//!     .instructions("Always call list_periods before get_invoice. Invoice IDs are period scoped.")
//!     .tool("list_periods", "List billing periods.")
//!     .tool("get_invoice", "Get an invoice by id.");
//! let failure = fits(&invoice, 20).unwrap_err();
//! assert_eq!(failure.to_string(), "\
//! server \"invoice\" does not fit 20 tokens without trimming: it needs 29 tokens
//!   budget: 20 tokens (o200k_base, markdown template)
//!   removed:
//!     - budget: \"list_periods, get_invoice\"
//!   block as rendered (18 tokens):
//!     | ### invoice
//!     |
//!     | Always call list_periods before get_invoice. Invoice IDs are period scoped.");
//! ```
//!
//! The first line says what failed:
//!
//! - `server "<name>" does not fit <budget> tokens without trimming: it needs <n> tokens`
//! - `server "<name>" has no block to fit: <why it was omitted>`
//! - `sentence "<sentence>" of server "<name>" does not survive a budget of <budget> tokens`
//! - `sentence "<sentence>" is not in the instructions of server "<name>"` (then the instructions)
//! - `section of <k> servers is <n> tokens, over <limit>` (then each server, and the section)
//! - `server "<name>" has <k> lint findings at or above <severity>` (then the findings)
//!
//! and the lines after it give the budget with the encoding and template
//! (for a sentence, also the block's untrimmed size), the removals (`- <reason> (<tool or server>): "<text>"`, texts on one
//! line and cut at 100 characters), and the block as rendered with its
//! token count (`block as rendered: none (<why>)` when the server was left
//! out).
//!
//! ## Golden files
//!
//! [`golden`] renders an assembly as text for a snapshot: the section, then
//! a line with the encoding, template and total tokens, then each server's
//! tokens, budget and removals. [`assert_section_snapshot!`](crate::assert_section_snapshot)
//! hands it to [insta](https://docs.rs/insta), so the file lands next to
//! your test in `snapshots/`:
//!
//! ```no_run
//! use mcp_preamble::{Assembler, assert_section_snapshot};
//! use mcp_preamble::testing::load;
//!
//! let assembly = Assembler::new()
//!     .budget(128)
//!     .assemble(&[load("tests/corpus/basic-memory.json")])
//!     .unwrap();
//! assert_section_snapshot!("basic_memory_128", assembly);
//! ```
//!
//! ## Lint in tests
//!
//! [`assert_lint_clean`] fails when the [lint](crate::lint::Linter) finds anything
//! at or above a severity, listing the findings.

mod build;
mod check;
mod format;
mod golden;

pub use build::{ServerBuilder, load, load_dir, server};
pub use check::{
    Check, assert_fits, assert_keeps, assert_lint_clean, assert_section_within, fits, keeps,
    lint_clean, section_within,
};
pub use format::Failure;
pub use golden::golden;

#[doc(hidden)]
pub use insta as __insta;
