//! The checks: a block fits, a sentence survives, the section stays within a
//! limit, the lint is clean.

use super::format::{
    Failure, assemble_failed, budget_line, details, quoted_block, removal_line, server_summary,
    why_omitted,
};
use crate::assemble::Assembler;
use crate::lint::{Finding, Linter, Severity};
use crate::model::ServerSnapshot;
use crate::report::{Assembly, Removal, ServerReport};
use crate::sanitize;
use crate::text;

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
/// With the [documented message](crate::testing#failure-messages) when it does not.
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
/// With the [documented message](crate::testing#failure-messages) when it does not.
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
/// With the [documented message](crate::testing#failure-messages) when it is not.
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
