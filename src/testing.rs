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
//! free functions use a default [`Assembler`] (markdown, `o200k_base`), and
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
//! was removed and why (the reasons of [`Removal`]: `budget`,
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
//!     - budget: \"Always call list_periods before get_invoice.\"
//!   block as rendered (16 tokens):
//!     | ### invoice
//!     |
//!     | Invoice IDs are period scoped.
//!     |
//!     | Tools: 2, not listed");
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
//! [`assert_lint_clean`] fails when the [lint](crate::Linter) finds anything
//! at or above a severity, listing the findings.

use std::fmt;
use std::path::Path;

use crate::assemble::Assembler;
use crate::lint::{Finding, Linter, Severity};
use crate::model::{Instructions, ServerSnapshot, Tool};
use crate::report::{Assembly, Removal, ServerReport};
use crate::sanitize;
use crate::text;

#[doc(hidden)]
pub use insta as __insta;

/// A server built in a test: `server("invoice").instructions("…").tool("list_periods", "List billing periods.")`.
///
/// Use it where a [`ServerSnapshot`] is expected with `&builder` (the kit's
/// functions take `&impl AsRef<ServerSnapshot>`), or turn it into one with
/// [`ServerBuilder::build`] or `.into()`.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerBuilder(ServerSnapshot);

/// Starts a [`ServerBuilder`] for a server with this `serverInfo.name`.
pub fn server(name: impl Into<String>) -> ServerBuilder {
    ServerBuilder(ServerSnapshot::new(name))
}

impl ServerBuilder {
    /// Sets the host's alias (the name the section shows).
    pub fn alias(mut self, alias: impl Into<String>) -> ServerBuilder {
        self.0.alias = Some(alias.into());
        self
    }

    /// Sets the instructions, raw as the server sends them.
    pub fn instructions(mut self, raw: impl AsRef<str>) -> ServerBuilder {
        self.0.instructions = Instructions::from_raw(Some(raw.as_ref()));
        self
    }

    /// Adds a tool with a name and a description.
    pub fn tool(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> ServerBuilder {
        self.0.tools.push(Tool::new(name, description));
        self
    }

    /// Adds a tool as you built it (title, schema, annotations).
    pub fn with_tool(mut self, tool: Tool) -> ServerBuilder {
        self.0.tools.push(tool);
        self
    }

    /// Sets `serverInfo.version`.
    pub fn version(mut self, version: impl Into<String>) -> ServerBuilder {
        self.0.server_info.version = version.into();
        self
    }

    /// The snapshot.
    pub fn build(self) -> ServerSnapshot {
        self.0
    }
}

impl From<ServerBuilder> for ServerSnapshot {
    fn from(b: ServerBuilder) -> ServerSnapshot {
        b.0
    }
}

impl AsRef<ServerSnapshot> for ServerBuilder {
    fn as_ref(&self) -> &ServerSnapshot {
        &self.0
    }
}

impl AsRef<ServerSnapshot> for ServerSnapshot {
    fn as_ref(&self) -> &ServerSnapshot {
        self
    }
}

/// Loads a capture (the `tests/corpus/` format) or a snapshot file, aliased
/// by its file stem unless the file sets an alias.
///
/// # Panics
///
/// With `cannot load server file <path>: <error>` when the file cannot be
/// read or parsed: in a test, that is the failure to report.
pub fn load(path: impl AsRef<Path>) -> ServerSnapshot {
    let path = path.as_ref();
    match crate::wire::load_server_file(path) {
        Ok(mut s) => {
            if s.alias.is_none() {
                s.alias = path.file_stem().map(|n| n.to_string_lossy().into_owned());
            }
            s
        }
        Err(e) => panic!("cannot load server file {}: {e}", path.display()),
    }
}

/// Loads every `.json` file of a directory with [`load`], sorted by file name.
///
/// # Panics
///
/// With `cannot read directory <path>: <error>`, or as [`load`] does.
pub fn load_dir(dir: impl AsRef<Path>) -> Vec<ServerSnapshot> {
    let dir = dir.as_ref();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => panic!("cannot read directory {}: {e}", dir.display()),
    };
    let mut files: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files.iter().map(load).collect()
}

/// Why a check failed: [`Display`](fmt::Display) is the documented message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    message: String,
}

impl Failure {
    /// The message (the same text as `to_string()`).
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}

/// Budget checks with one [`Assembler`]: the one your host uses.
///
/// The free functions of this module are `Check::default()`'s methods.
#[derive(Debug, Clone, Default)]
pub struct Check {
    assembler: Assembler,
}

impl Check {
    /// Checks with a default assembler (markdown template, `o200k_base`).
    pub fn new() -> Check {
        Check::default()
    }

    /// Checks with this assembler: its template, encoding, policies and
    /// total budget apply; the budget a check names replaces the server's own.
    pub fn with(assembler: Assembler) -> Check {
        Check { assembler }
    }

    /// Whether the server's block fits `budget` tokens as rendered without
    /// any budget trimming (de-duplication may still remove restatements;
    /// they are listed if it fails). Returns the server's report.
    pub fn fits(
        &self,
        server: &impl AsRef<ServerSnapshot>,
        budget: usize,
    ) -> Result<ServerReport, Failure> {
        let server = server.as_ref();
        let name = server.display_name();
        let (full, _) = self.one(server, usize::MAX)?;
        if !full.included {
            return Err(Failure {
                message: format!(
                    "server {name:?} has no block to fit: {}",
                    why_omitted(&full)
                ),
            });
        }
        let (report, assembly) = self.one(server, budget)?;
        let trimmed = !report.included || report.trimmed();
        if !trimmed {
            return Ok(report);
        }
        let mut message = format!(
            "server {name:?} does not fit {budget} tokens without trimming: it needs {} tokens\n",
            full.tokens
        );
        message.push_str(&budget_line(budget, &assembly));
        message.push_str(&details(&report));
        Err(Failure { message })
    }

    /// Whether `sentence` (as written in the instructions) is still whole in
    /// the server's block under `budget` tokens. Returns the server's report.
    pub fn keeps(
        &self,
        server: &impl AsRef<ServerSnapshot>,
        budget: usize,
        sentence: &str,
    ) -> Result<ServerReport, Failure> {
        let server = server.as_ref();
        let name = server.display_name();
        let wanted = text::one_line(&sanitize::text(sentence));
        let instructions = server
            .instructions
            .raw()
            .map(sanitize::text)
            .unwrap_or_default();
        if wanted.is_empty() || !text::one_line(&instructions).contains(&wanted) {
            let mut message = format!(
                "sentence {wanted:?} is not in the instructions of server {name:?}\n  instructions:\n"
            );
            message.push_str(&quoted_block(&instructions));
            return Err(Failure {
                message: message.trim_end().to_string(),
            });
        }
        let (full, _) = self.one(server, usize::MAX)?;
        let (report, assembly) = self.one(server, budget)?;
        let rendered = text::one_line(&report.text);
        let escaped = text::one_line(&text::xml_text(&wanted));
        if report.included && (rendered.contains(&wanted) || rendered.contains(&escaped)) {
            return Ok(report);
        }
        let mut message = format!(
            "sentence {wanted:?} of server {name:?} does not survive a budget of {budget} tokens\n"
        );
        message.push_str(&budget_line(budget, &assembly));
        if full.included {
            message.push_str(&format!("  untrimmed: {} tokens\n", full.tokens));
        }
        message.push_str(&details(&report));
        Err(Failure { message })
    }

    /// Whether the section for these servers, as the assembler builds it,
    /// is at most `limit` tokens. Returns the assembly.
    pub fn section_within<S: AsRef<ServerSnapshot>>(
        &self,
        servers: &[S],
        limit: usize,
    ) -> Result<Assembly, Failure> {
        let servers: Vec<ServerSnapshot> = servers.iter().map(|s| s.as_ref().clone()).collect();
        let assembly = self.assembler.assemble(&servers).map_err(assemble_failed)?;
        if assembly.total_tokens() <= limit {
            return Ok(assembly);
        }
        let mut message = format!(
            "section of {} {} is {} tokens, over {limit}\n  {}, {} template\n  servers:\n",
            servers.len(),
            if servers.len() == 1 {
                "server"
            } else {
                "servers"
            },
            assembly.total_tokens(),
            assembly.encoding(),
            assembly.template(),
        );
        for s in assembly.servers() {
            message.push_str(&format!("    - {}: {}\n", s.name, server_summary(s)));
        }
        let removed: Vec<(&str, &Removal)> = assembly
            .servers()
            .iter()
            .flat_map(|s| s.removed.iter().map(move |r| (s.name.as_str(), r)))
            .collect();
        if !removed.is_empty() {
            message.push_str("  removed:\n");
            for (server, r) in removed {
                message.push_str(&format!("    - {server}: {}\n", removal_line(r)));
            }
        }
        message.push_str(&format!(
            "  section as rendered ({} tokens):\n",
            assembly.total_tokens()
        ));
        message.push_str(&quoted_block(assembly.text()));
        Err(Failure {
            message: message.trim_end().to_string(),
        })
    }

    /// [`Check::fits`], panicking with the failure's message.
    #[track_caller]
    pub fn assert_fits(&self, server: &impl AsRef<ServerSnapshot>, budget: usize) -> ServerReport {
        match self.fits(server, budget) {
            Ok(v) => v,
            Err(f) => panic!("{f}"),
        }
    }

    /// [`Check::keeps`], panicking with the failure's message.
    #[track_caller]
    pub fn assert_keeps(
        &self,
        server: &impl AsRef<ServerSnapshot>,
        budget: usize,
        sentence: &str,
    ) -> ServerReport {
        match self.keeps(server, budget, sentence) {
            Ok(v) => v,
            Err(f) => panic!("{f}"),
        }
    }

    /// [`Check::section_within`], panicking with the failure's message.
    #[track_caller]
    pub fn assert_section_within<S: AsRef<ServerSnapshot>>(
        &self,
        servers: &[S],
        limit: usize,
    ) -> Assembly {
        match self.section_within(servers, limit) {
            Ok(v) => v,
            Err(f) => panic!("{f}"),
        }
    }

    /// One server assembled alone with `budget` as its own budget.
    fn one(
        &self,
        server: &ServerSnapshot,
        budget: usize,
    ) -> Result<(ServerReport, Assembly), Failure> {
        let assembly = self
            .assembler
            .clone()
            .server_budget(server.display_name(), budget)
            .assemble(std::slice::from_ref(server))
            .map_err(assemble_failed)?;
        let report = assembly.servers().first().cloned().ok_or_else(|| Failure {
            message: "the assembler returned no report".to_string(),
        })?;
        Ok((report, assembly))
    }
}

/// [`Check::fits`] with a default assembler.
pub fn fits(server: &impl AsRef<ServerSnapshot>, budget: usize) -> Result<ServerReport, Failure> {
    Check::new().fits(server, budget)
}

/// [`Check::keeps`] with a default assembler.
pub fn keeps(
    server: &impl AsRef<ServerSnapshot>,
    budget: usize,
    sentence: &str,
) -> Result<ServerReport, Failure> {
    Check::new().keeps(server, budget, sentence)
}

/// [`Check::section_within`] with a default assembler.
pub fn section_within<S: AsRef<ServerSnapshot>>(
    servers: &[S],
    limit: usize,
) -> Result<Assembly, Failure> {
    Check::new().section_within(servers, limit)
}

/// Asserts that the server's block fits `budget` tokens without trimming.
///
/// # Panics
///
/// With the [documented message](self#failure-messages) when it does not.
#[track_caller]
pub fn assert_fits(server: &impl AsRef<ServerSnapshot>, budget: usize) -> ServerReport {
    match fits(server, budget) {
        Ok(v) => v,
        Err(f) => panic!("{f}"),
    }
}

/// Asserts that `sentence` survives whole in the server's block under `budget` tokens.
///
/// # Panics
///
/// With the [documented message](self#failure-messages) when it does not.
#[track_caller]
pub fn assert_keeps(
    server: &impl AsRef<ServerSnapshot>,
    budget: usize,
    sentence: &str,
) -> ServerReport {
    match keeps(server, budget, sentence) {
        Ok(v) => v,
        Err(f) => panic!("{f}"),
    }
}

/// Asserts that the section for these servers is at most `limit` tokens.
///
/// # Panics
///
/// With the [documented message](self#failure-messages) when it is not.
#[track_caller]
pub fn assert_section_within<S: AsRef<ServerSnapshot>>(servers: &[S], limit: usize) -> Assembly {
    match section_within(servers, limit) {
        Ok(v) => v,
        Err(f) => panic!("{f}"),
    }
}

/// The server's lint findings at or above `deny` (default [`Linter`]); a
/// failure lists them.
pub fn lint_clean(server: &impl AsRef<ServerSnapshot>, deny: Severity) -> Result<(), Failure> {
    let server = server.as_ref();
    let found: Vec<Finding> = Linter::new()
        .lint(server)
        .into_iter()
        .filter(|f| f.severity >= deny)
        .collect();
    if found.is_empty() {
        return Ok(());
    }
    let mut message = format!(
        "server {:?} has {} lint {} at or above {deny}\n",
        server.display_name(),
        found.len(),
        if found.len() == 1 {
            "finding"
        } else {
            "findings"
        }
    );
    for f in &found {
        message.push_str(&format!(
            "  - {}[{}] {}\n",
            f.severity,
            f.code.code(),
            f.message
        ));
        if let (Some(excerpt), Some(line)) = (&f.excerpt, f.line) {
            message.push_str(&format!("    line {line}: {excerpt}\n"));
        }
    }
    Err(Failure {
        message: message.trim_end().to_string(),
    })
}

/// Asserts that the lint finds nothing at or above `deny` in the server.
///
/// # Panics
///
/// With `server "<name>" has <k> lint findings at or above <deny>` and the findings.
#[track_caller]
pub fn assert_lint_clean(server: &impl AsRef<ServerSnapshot>, deny: Severity) {
    if let Err(f) = lint_clean(server, deny) {
        panic!("{f}");
    }
}

/// An assembly as a golden file: the section text, then
/// `--- <encoding>, <template> template: <n> tokens ---`, then per server
/// `<name>: <tokens> tokens` (with `of <budget>` and `, truncated` when they
/// apply) or `<name>: not included`, each followed by its removals
/// (`  removed (<reason>[ <tool or server>]): <text>`) and diagnostics.
pub fn golden(assembly: &Assembly) -> String {
    let mut out = String::new();
    out.push_str(assembly.text());
    if !assembly.text().is_empty() && !assembly.text().ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!(
        "--- {}, {} template: {} tokens ---\n",
        assembly.encoding(),
        assembly.template(),
        assembly.total_tokens()
    ));
    for s in assembly.servers() {
        if s.included {
            out.push_str(&format!("{}: {} tokens", s.name, s.tokens));
            if let Some(b) = s.budget {
                out.push_str(&format!(" of {b}"));
            }
            if s.truncated {
                out.push_str(", truncated");
            }
            out.push('\n');
        } else {
            out.push_str(&format!("{}: not included\n", s.name));
        }
        for r in &s.removed {
            let by = r
                .tool
                .as_deref()
                .or(r.server.as_deref())
                .map(|x| format!(" {x}"))
                .unwrap_or_default();
            out.push_str(&format!(
                "  removed ({}{by}): {}\n",
                r.reason,
                text::one_line(&r.text)
            ));
        }
        for d in &s.diagnostics {
            out.push_str(&format!("  {d}\n"));
        }
    }
    out
}

/// Asserts an [`Assembly`] against an [insta](https://docs.rs/insta)
/// snapshot of its [`golden`](crate::testing::golden) text, stored next to
/// the calling test (feature `testing`).
///
/// `assert_section_snapshot!(assembly)` names the snapshot after the test;
/// `assert_section_snapshot!("name", assembly)` names it. Review and accept
/// changes as with any insta snapshot (`INSTA_UPDATE=always`, or `cargo insta review`).
#[macro_export]
macro_rules! assert_section_snapshot {
    ($assembly:expr $(,)?) => {
        $crate::testing::__insta::assert_snapshot!(
            ::core::option::Option::<&str>::None,
            $crate::testing::golden(&$assembly),
            ::core::stringify!($assembly)
        )
    };
    ($name:expr, $assembly:expr $(,)?) => {
        $crate::testing::__insta::assert_snapshot!(
            $name,
            $crate::testing::golden(&$assembly),
            ::core::stringify!($assembly)
        )
    };
}

fn assemble_failed(e: crate::Error) -> Failure {
    Failure {
        message: format!("cannot assemble: {e}"),
    }
}

fn budget_line(budget: usize, assembly: &Assembly) -> String {
    format!(
        "  budget: {budget} tokens ({}, {} template)\n",
        assembly.encoding(),
        assembly.template()
    )
}

/// Removals and the block as rendered, indented under a headline.
fn details(report: &ServerReport) -> String {
    let mut out = String::new();
    if !report.removed.is_empty() {
        out.push_str("  removed:\n");
        for r in &report.removed {
            out.push_str(&format!("    - {}\n", removal_line(r)));
        }
    }
    if report.included {
        out.push_str(&format!(
            "  block as rendered ({} tokens):\n",
            report.tokens
        ));
        out.push_str(&quoted_block(&report.text));
    } else {
        out.push_str(&format!(
            "  block as rendered: none ({})\n",
            why_omitted(report)
        ));
    }
    out.trim_end().to_string()
}

/// `budget: "text"`, `restates_tool (list_periods): "text"`.
fn removal_line(r: &Removal) -> String {
    let by = r
        .tool
        .as_deref()
        .or(r.server.as_deref())
        .map(|x| format!(" ({x})"))
        .unwrap_or_default();
    format!(
        "{}{by}: {:?}",
        r.reason,
        text::cut_chars(&text::one_line(&r.text), 100)
    )
}

/// `45 tokens of 64, 2 removed`, `not included (omitted: …)`.
fn server_summary(s: &ServerReport) -> String {
    if !s.included {
        return format!("not included ({})", why_omitted(s));
    }
    let mut out = format!("{} tokens", s.tokens);
    if let Some(b) = s.budget {
        out.push_str(&format!(" of {b}"));
    }
    if !s.removed.is_empty() {
        out.push_str(&format!(", {} removed", s.removed.len()));
    }
    if s.truncated {
        out.push_str(", truncated");
    }
    out
}

fn why_omitted(report: &ServerReport) -> String {
    report
        .omitted
        .map_or_else(|| "omitted".to_string(), |why| why.to_string())
}

/// Every line of `text` as `    | line` (blank lines as `    |`).
fn quoted_block(text: &str) -> String {
    let mut out = String::new();
    for line in text.trim_end_matches('\n').split('\n') {
        if line.is_empty() {
            out.push_str("    |\n");
        } else {
            out.push_str("    | ");
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}
