//! Secrets (MCP005): credential-shaped values, found by `lint::scan`. Their
//! redaction, which every finding goes through, is in `lint::redact`.

use std::collections::BTreeSet;

use crate::lint::codes::LintCode;
use crate::lint::pass::Pass;
use crate::redact::scan::find_secrets;

impl Pass<'_> {
    pub(super) fn secrets(&mut self, text: &str) {
        let mut seen = BTreeSet::new();
        for secret in find_secrets(text) {
            if !seen.insert(secret.redacted.clone()) {
                continue;
            }
            self.push(
                LintCode::Secret,
                format!(
                    "instructions contain what looks like {} ({})",
                    secret.kind, secret.redacted
                ),
                None,
                None,
                LintCode::Secret.fix().to_string(),
            );
        }
    }
}
