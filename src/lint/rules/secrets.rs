//! Secrets (MCP005): credential-shaped values. Their redaction, which
//! every finding goes through, is in `lint::redact`.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use crate::lint::LintCode;
use crate::lint::pass::Pass;

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

pub(in crate::lint) struct Secret {
    kind: &'static str,
    /// The span a redaction replaces.
    pub(in crate::lint) start: usize,
    pub(in crate::lint) end: usize,
    /// The secret itself: a url's password, a key's body, a whole token.
    pub(in crate::lint) value: Range<usize>,
    pub(in crate::lint) redacted: String,
}

struct SecretPattern {
    kind: &'static str,
    regex: Regex,
    /// Which capture group holds the secret value (0: the whole match).
    group: usize,
    /// Check the value's randomness and reject placeholders.
    random: bool,
}

static SECRET_PATTERNS: LazyLock<Vec<SecretPattern>> = LazyLock::new(|| {
    let p = |kind, re: &str, group, random| SecretPattern {
        kind,
        regex: Regex::new(re).expect("static regex"),
        group,
        random,
    };
    vec![
        p(
            "a private key",
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----\s*([A-Za-z0-9+/=\s]{20,})",
            1,
            false,
        ),
        p(
            "an aws access key id",
            r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
            0,
            true,
        ),
        p(
            "a github token",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b",
            0,
            true,
        ),
        p("a gitlab token", r"\bglpat-[A-Za-z0-9_\-]{20,}", 0, true),
        p(
            "a slack token",
            r"\bxox[abposr]-[A-Za-z0-9\-]{20,}",
            0,
            true,
        ),
        p("a google api key", r"\bAIza[0-9A-Za-z_\-]{35}\b", 0, true),
        p(
            "a stripe secret key",
            r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b",
            0,
            true,
        ),
        p("an npm token", r"\bnpm_[A-Za-z0-9]{36}\b", 0, true),
        p("a hugging face token", r"\bhf_[A-Za-z0-9]{30,}\b", 0, true),
        p(
            "an api key",
            r"\bsk-(?:[a-z]+-)*[A-Za-z0-9_\-]{20,}",
            0,
            true,
        ),
        p(
            "a json web token",
            r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",
            0,
            false,
        ),
        p(
            "a bearer token",
            r"(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{20,}=*)",
            1,
            true,
        ),
        p(
            "a password in a url",
            r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@`]*:([^\s/@`]+)@[^\s/`]+",
            1,
            false,
        ),
        p(
            "a credential",
            r#"(?i)\b(?:api[_\-]?key|secret(?:[_\-]?key)?|access[_\-]?token|auth[_\-]?token|client[_\-]?secret|password|passwd)\b["']?\s*[:=]\s*["']?([A-Za-z0-9_\-./+=]{16,})"#,
            1,
            true,
        ),
    ]
});

/// Words that mark an example value, not a real one.
const PLACEHOLDER_WORDS: &[&str] = &[
    "your",
    "example",
    "placeholder",
    "redacted",
    "sample",
    "dummy",
    "fake",
    "changeme",
    "insert",
    "replace",
    "here",
    "xxxx",
    "****",
    "....",
    "1234",
    "abcd",
    "token",
    "secret",
    "password",
    "apikey",
    "api_key",
    "api-key",
    "key_",
    "_key",
    "mytoken",
];

fn is_placeholder(value: &str) -> bool {
    let lower = value.to_lowercase();
    if value.starts_with(['$', '<', '{', '[', '%', '*'])
        || PLACEHOLDER_WORDS.iter().any(|w| lower.contains(w))
    {
        return true;
    }
    // A run of four equal characters: "xxxx", "0000".
    let chars: Vec<char> = value.chars().collect();
    chars.windows(4).any(|w| w.iter().all(|c| *c == w[0]))
}

/// Shannon entropy in bits per character.
fn entropy(s: &str) -> f64 {
    let mut counts: BTreeMap<char, usize> = BTreeMap::new();
    let mut n = 0usize;
    for c in s.chars() {
        *counts.entry(c).or_default() += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    counts
        .values()
        .map(|&k| {
            let p = k as f64 / n as f64;
            -p * p.log2()
        })
        .sum()
}

/// Whether a key-shaped value looks generated rather than written.
fn looks_random(value: &str) -> bool {
    let body = value.trim_end_matches('=');
    !is_placeholder(body)
        && body.chars().any(|c| c.is_ascii_digit())
        && body.chars().any(|c| c.is_ascii_alphabetic())
        && entropy(body) >= 3.0
}

fn is_placeholder_password(p: &str) -> bool {
    const WORDS: &[&str] = &[
        "password",
        "pass",
        "passwd",
        "pwd",
        "pw",
        "p",
        "secret",
        "changeme",
        "mypassword",
        "yourpassword",
        "your_password",
        "your-password",
        "xxx",
        "user",
        "token",
        "pat",
    ];
    let lower = p.to_lowercase();
    WORDS.contains(&lower.as_str())
        || is_placeholder(p)
        || p.chars().all(|c| c == p.chars().next().unwrap_or('*'))
}

pub(in crate::lint) fn find_secrets(text: &str) -> Vec<Secret> {
    let mut out: Vec<Secret> = Vec::new();
    for p in SECRET_PATTERNS.iter() {
        for caps in p.regex.captures_iter(text) {
            let (Some(whole), Some(value)) = (caps.get(0), caps.get(p.group)) else {
                continue;
            };
            let v = value.as_str();
            let real = match p.kind {
                "a password in a url" => !is_placeholder_password(v),
                "a private key" => v.chars().filter(|c| !c.is_whitespace()).count() >= 20,
                _ if p.random => looks_random(v),
                _ => !is_placeholder(v),
            };
            // One secret, one finding: the first pattern that claims a span wins.
            if !real
                || out
                    .iter()
                    .any(|s| s.start < whole.end() && whole.start() < s.end)
            {
                continue;
            }
            let redacted = match p.kind {
                "a password in a url" => {
                    let w = whole.as_str();
                    let at = value.start() - whole.start();
                    format!("{}****{}", &w[..at], &w[at + v.len()..])
                }
                "a private key" => format!(
                    "{}, {} characters",
                    whole.as_str()[..value.start() - whole.start()].trim(),
                    v.chars().filter(|c| !c.is_whitespace()).count()
                ),
                _ => {
                    let shown: String = v.chars().take(4).collect();
                    format!("{shown}…, {} characters", v.chars().count())
                }
            };
            out.push(Secret {
                kind: p.kind,
                start: whole.start(),
                end: whole.end(),
                value: value.range(),
                redacted,
            });
        }
    }
    out.sort_by_key(|s| s.start);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::redact::redact;

    #[test]
    fn redaction_hides_secrets() {
        let t = "Use key sk-proj-9fK2mQ7xLp4Rt8Zb3Nc6Vd1Wy5Hs0Ja2 now.";
        assert_eq!(redact(t), "Use key [redacted: sk-p…, 40 characters] now.");
    }
}
