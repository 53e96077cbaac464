//! [`LintReport::to_sarif`]: the report for code-scanning tools.

use serde_json::{Value, json};

use crate::lint::{Finding, LintCode, LintReport, ServerLint};

impl LintReport {
    /// The report as a SARIF 2.1.0 log (the format code-scanning tools
    /// ingest): one run of the `mcp-preamble` driver with a rule per code,
    /// one result per finding located at its source file (when known) and
    /// at the server as a logical location (and at the tool, for a finding
    /// in a tool description or a tool defined differently in two snapshots:
    /// `kind` `function`, `fullyQualifiedName` `server/tool`); a policy
    /// file's findings at the file and line; and servers that could not be
    /// linted as tool execution notifications.
    pub fn to_sarif(&self) -> String {
        let rules: Vec<Value> = LintCode::ALL
            .iter()
            .map(|c| {
                json!({
                    "id": c.code(),
                    "name": c.name(),
                    "shortDescription": {"text": c.summary()},
                    "fullDescription": {"text": c.explanation()},
                    "help": {"text": c.fix()},
                    "defaultConfiguration": {"level": c.default_severity().as_str()},
                })
            })
            .collect();
        let mut results = Vec::new();
        for s in self.servers() {
            results.extend(s.findings.iter().map(|f| server_result(s, f)));
        }
        if let Some(source) = self.policy_source() {
            results.extend(
                self.policy_findings()
                    .iter()
                    .map(|f| policy_result(source, f)),
            );
        }
        let notifications: Vec<Value> = self
            .failures()
            .iter()
            .map(|(source, error)| {
                json!({
                    "level": "error",
                    "message": {"text": format!("{source}: not linted: {error}")},
                    "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri_reference(source)}}}],
                })
            })
            .collect();
        let log = json!({
            "$schema": "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
            "version": "2.1.0",
            "runs": [{
                "tool": {"driver": {
                    "name": "mcp-preamble",
                    "version": env!("CARGO_PKG_VERSION"),
                    "rules": rules,
                }},
                "invocations": [{
                    "executionSuccessful": self.failures().is_empty(),
                    "toolExecutionNotifications": notifications,
                }],
                "results": results,
            }],
        });
        serde_json::to_string_pretty(&log).unwrap_or_default()
    }
}

/// The index of a finding's rule in the run's `rules`.
fn rule_index(code: LintCode) -> usize {
    LintCode::ALL.iter().position(|c| *c == code).unwrap_or(0)
}

/// One finding of a server, located at its source file (when known), the
/// server and, for a tool description, the tool.
fn server_result(s: &ServerLint, f: &Finding) -> Value {
    let mut logical = vec![json!({"name": s.server, "kind": "module"})];
    // A finding in a tool description is located at the tool too.
    if let Some(tool) = f.tool.as_ref().filter(|_| f.code.about_tool_description()) {
        logical.push(json!({
            "name": tool,
            "fullyQualifiedName": format!("{}/{tool}", s.server),
            "kind": "function",
        }));
    }
    let mut location = json!({"logicalLocations": logical});
    if let Some(source) = &s.source {
        location["physicalLocation"] = json!({"artifactLocation": {"uri": uri_reference(source)}});
    }
    let mut properties = json!({"server": s.server, "fix": f.fix});
    if let Some(excerpt) = &f.excerpt {
        properties["excerpt"] = json!(excerpt);
    }
    if let Some(tool) = &f.tool {
        properties["tool"] = json!(tool);
    }
    if let Some(line) = f.line {
        properties["instructionsLine"] = json!(line);
    }
    json!({
        "ruleId": f.code.code(),
        "ruleIndex": rule_index(f.code),
        "level": f.severity.as_str(),
        "message": {"text": f.message},
        "locations": [location],
        "properties": properties,
    })
}

/// One finding of the policy file, at its line.
fn policy_result(source: &str, f: &Finding) -> Value {
    let mut physical = json!({"artifactLocation": {"uri": uri_reference(source)}});
    if let Some(line) = f.line {
        physical["region"] = json!({"startLine": line});
    }
    json!({
        "ruleId": f.code.code(),
        "ruleIndex": rule_index(f.code),
        "level": f.severity.as_str(),
        "message": {"text": f.message},
        "locations": [{"physicalLocation": physical}],
        "properties": {"server": f.server, "fix": f.fix},
    })
}

/// A path as a relative URI reference: `/` separators, and every byte
/// outside the unreserved set (and `/`) percent-encoded.
fn uri_reference(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.replace('\\', "/").bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_references_are_encoded() {
        assert_eq!(uri_reference("a b/c#d.json"), "a%20b/c%23d.json");
        assert_eq!(uri_reference(r"dir\x.json"), "dir/x.json");
    }
}
