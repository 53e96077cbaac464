//! [`LintReport::to_json`]: the report for scripts.

use serde_json::{Value, json};

use crate::lint::{LintReport, Severity};

impl LintReport {
    /// The report as pretty JSON: `{"servers": [ServerLint…], "failures":
    /// [{"source", "error"}…], "summary": {"servers", "findings", "error",
    /// "warning", "note"}}`; a finding has `code`, `name`, `severity`,
    /// `server`, `message`, `excerpt`, `line`, `tool`, `explanation`, `fix`.
    /// With [`LintReport::add_policy`], also `"policy": {"source",
    /// "findings"}` (there `server` is the table's alias and `line` its
    /// line in the policy file).
    pub fn to_json(&self) -> String {
        let servers: Vec<Value> = self
            .servers()
            .iter()
            .map(|s| {
                let mut v = serde_json::to_value(s).unwrap_or(Value::Null);
                if let Some(list) = v.get_mut("findings").and_then(Value::as_array_mut) {
                    for (item, f) in list.iter_mut().zip(&s.findings) {
                        if let Some(obj) = item.as_object_mut() {
                            obj.insert("name".into(), json!(f.code.name()));
                        }
                    }
                }
                v
            })
            .collect();
        let count = |s: Severity| self.findings().filter(|f| f.severity == s).count();
        let mut report = json!({
            "servers": servers,
            "failures": self.failures().iter().map(|(source, error)| json!({"source": source, "error": error})).collect::<Vec<_>>(),
            "summary": {
                "servers": self.servers().len(),
                "findings": self.findings().count(),
                "error": count(Severity::Error),
                "warning": count(Severity::Warning),
                "note": count(Severity::Note),
            },
        });
        if let Some(source) = self.policy_source() {
            let findings: Vec<Value> = self
                .policy_findings()
                .iter()
                .map(|f| {
                    let mut v = serde_json::to_value(f).unwrap_or(Value::Null);
                    if let Some(obj) = v.as_object_mut() {
                        obj.insert("name".into(), json!(f.code.name()));
                    }
                    v
                })
                .collect();
            report["policy"] = json!({"source": source, "findings": findings});
        }
        serde_json::to_string_pretty(&report).unwrap_or_default()
    }
}
