//! Finding credential-shaped values in text: private keys, cloud keys,
//! tokens, passwords in URLs. The lint reports them (MCP005, MCP013), and
//! [`secrets`](super::secrets) redacts them from everything printed.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::LazyLock;

use regex::{Regex, RegexSet};

pub(crate) struct Secret {
    pub(crate) kind: &'static str,
    /// The span a redaction replaces.
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// The secret itself, where no slice of it may be printed: a url's
    /// password, a key's base64 lines, a whole token.
    pub(crate) parts: Vec<Range<usize>>,
    pub(crate) redacted: String,
}

/// How a pattern's match is told from a placeholder or prose.
#[derive(Clone, Copy)]
enum Check {
    /// A token in a published format: its random part is generated (see
    /// [`generated`]) and spans at least this many character classes
    /// (upper, lower, digit).
    Format(usize),
    /// A value found by a label or a loose shape: generated, with a digit
    /// and a letter.
    Loose,
    /// A url's password: not a placeholder such as `password` or `${PASS}`.
    Password,
    /// A PEM body: base64 lines, long enough, not `...` or `<your key>`.
    PrivateKey,
    /// A JWT: the header decodes to a JOSE header (`alg`), the signature is generated.
    Jwt,
}

struct SecretPattern {
    kind: &'static str,
    regex: Regex,
    /// The capture group of the secret itself (0: the whole match); the
    /// whole match is what a redaction replaces.
    value: usize,
    /// The capture group whose randomness is checked.
    random: usize,
    check: Check,
    /// The match may not follow a letter or digit (set where the prefix is
    /// common inside words); `_` and `-` before it are fine: tokens turn up
    /// inside identifiers, `get_sk_live_…`.
    bounded: bool,
}

const PRIVATE_KEY: &str = "a private key";
const AWS_KEY_ID: &str = "an aws access key id";
const AWS_SECRET: &str = "an aws secret access key";
const URL_PASSWORD: &str = "a password in a url";

/// A PEM private key's BEGIN line (PKCS#1/#8, OpenSSH, EC, encrypted, PGP).
const BEGIN_KEY: &str = r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----";

/// What may sit between a key's base64 lines: whitespace, `\n` written
/// out, quotes and commas of a string literal, `>`/`-`/`*` of markdown.
const SEP: &str = r#"\s|\\[nr]|[>*"',]|-\s"#;

static SECRET_PATTERNS: LazyLock<Vec<SecretPattern>> = LazyLock::new(|| {
    let p = |kind, re: &str, value, random, check, bounded| SecretPattern {
        kind,
        regex: Regex::new(re).expect("static regex"),
        value,
        random,
        check,
        bounded,
    };
    use Check::*;
    vec![
        // Up to its END line; a body cannot run into another marker.
        p(
            PRIVATE_KEY,
            &format!(
                r"{BEGIN_KEY}((?:[^-]|-[^-])*?)-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            ),
            1,
            1,
            PrivateKey,
            false,
        ),
        // Without an END line: the base64 lines that follow (newlines
        // possibly written as `\n`, lines possibly quoted or listed).
        p(
            PRIVATE_KEY,
            &format!(
                r#"{BEGIN_KEY}((?:{SEP})*[A-Za-z0-9+/=]{{16,}}(?:(?:{SEP})+[A-Za-z0-9+/=]{{16,}})*(?:(?:{SEP})+[A-Za-z0-9+/=]{{1,15}})?)"#
            ),
            1,
            1,
            PrivateKey,
            false,
        ),
        p(
            "a json web token",
            r"eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{2,}\.([A-Za-z0-9_\-]{16,})",
            0,
            1,
            Jwt,
            true,
        ),
        // AWS key ids: a four-letter prefix by kind, 16 more of [A-Z0-9].
        p(
            AWS_KEY_ID,
            r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])([A-Z0-9]{16})",
            0,
            1,
            Format(1),
            true,
        ),
        p(
            AWS_SECRET,
            r#"(?i)secret[_\-. ]?access[_\-. ]?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+]{40})"#,
            1,
            1,
            Format(2),
            false,
        ),
        // GitHub: ghp_ (classic), gho_ (OAuth), ghu_/ghs_ (app), ghr_
        // (refresh): 36 base62; fine-grained github_pat_: 82.
        p(
            "a github token",
            r"gh[pousr]_([A-Za-z0-9]{36})",
            0,
            1,
            Format(2),
            false,
        ),
        p(
            "a github token",
            r"github_pat_([A-Za-z0-9_]{82})",
            0,
            1,
            Format(2),
            false,
        ),
        p(
            "a gitlab token",
            r"glpat-([A-Za-z0-9_\-]{20,})",
            0,
            1,
            Format(2),
            false,
        ),
        // Slack: bot, user, app, refresh, legacy workspace and session
        // tokens, numeric ids, then a random part; app-level tokens; webhooks.
        p(
            "a slack token",
            r"xox[abposre]-(?:[0-9]+-)*([A-Za-z0-9]{16,})",
            0,
            1,
            Format(2),
            false,
        ),
        p(
            "a slack token",
            r"xapp-[0-9]+-[A-Za-z0-9]+-[0-9]+-([A-Za-z0-9]{16,})",
            0,
            1,
            Format(2),
            false,
        ),
        p(
            "a slack webhook url",
            r"hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Za-z0-9]+/[A-Za-z0-9]+/([A-Za-z0-9]{16,})",
            1,
            1,
            Format(2),
            false,
        ),
        p(
            "a google api key",
            r"AIza([0-9A-Za-z_\-]{35})",
            0,
            1,
            Format(2),
            true,
        ),
        p(
            "a stripe secret key",
            r"(?:sk|rk)_(?:live|test)_([A-Za-z0-9]{16,})",
            0,
            1,
            Format(2),
            false,
        ),
        p(
            "an npm token",
            r"npm_([A-Za-z0-9]{36})",
            0,
            1,
            Format(2),
            true,
        ),
        p(
            "a hugging face token",
            r"hf_([A-Za-z0-9]{30,})",
            0,
            1,
            Format(2),
            true,
        ),
        // `scheme://user:password@host`; the password may hold `@` and `:`
        // (the last `@` before the path ends it).
        p(
            URL_PASSWORD,
            r#"[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@?#`'"<>]*:([^\s/`'"<>]+)@[^\s/@?#`'"<>]+"#,
            1,
            1,
            Password,
            false,
        ),
        p(
            "an api key",
            r"sk-(?:[a-z]+-)*[A-Za-z0-9_\-]{20,}",
            0,
            0,
            Loose,
            true,
        ),
        p(
            "a bearer token",
            r"(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{20,}=*)",
            1,
            1,
            Loose,
            false,
        ),
        p(
            "a credential",
            r#"(?i)(?:api[_\-. ]?key|secret[_\-. ]?key|client[_\-. ]?secret|access[_\-. ]?token|auth[_\-. ]?token|refresh[_\-. ]?token|secret|password|passwd)["']?\s*[:=]\s*["']?([A-Za-z0-9_\-./+=]{16,})"#,
            1,
            1,
            Loose,
            false,
        ),
    ]
});

/// An unlabelled 40-character run: an AWS secret access key when an access
/// key id is within [`AWS_NEAR`] bytes.
static AWS_SECRET_SHAPE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z0-9/+]{40,}").expect("static regex"));

const AWS_NEAR: usize = 256;

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
    // A run of four equal characters ("xxxx", "0000") or a typed sequence
    // ("1234", "abcd", "WXYZ"): a random run like that is rare.
    let chars: Vec<char> = value.chars().collect();
    chars.windows(4).any(|w| {
        let class = |c: char| {
            (
                c.is_ascii_digit(),
                c.is_ascii_lowercase(),
                c.is_ascii_uppercase(),
            )
        };
        let steps = |d: i32| w.windows(2).all(|p| p[1] as i32 - p[0] as i32 == d);
        w.iter().all(|c| *c == w[0])
            || (w
                .iter()
                .all(|c| c.is_ascii_alphanumeric() && class(*c) == class(w[0]))
                && (steps(1) || steps(-1)))
    })
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

/// Upper case, lower case and digits: how many of the three `s` has.
fn classes(s: &str) -> usize {
    [
        s.chars().any(|c| c.is_ascii_uppercase()),
        s.chars().any(|c| c.is_ascii_lowercase()),
        s.chars().any(|c| c.is_ascii_digit()),
    ]
    .into_iter()
    .filter(|x| *x)
    .count()
}

/// Whether a value looks generated rather than written: no placeholder,
/// enough character classes, and the entropy of a random string (under 20
/// characters a random string repeats more, so the bar is lower).
fn generated(value: &str, min_classes: usize) -> bool {
    let body = value.trim_end_matches('=');
    let floor = if body.chars().count() < 20 { 2.75 } else { 3.0 };
    !is_placeholder(body) && classes(body) >= min_classes && entropy(body) >= floor
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
        || !p.chars().any(char::is_alphanumeric)
        || p.chars().all(|c| c == p.chars().next().unwrap_or('*'))
}

/// The base64 lines of a PEM body (`body`, a range of `text`), if it is a
/// real one: lines of 16 or more in two character classes, generated
/// together, none cut short with `...`. What lies between them (header
/// lines, quotes, markdown, a sentence) is no part of the key.
fn key_lines(text: &str, body: Range<usize>) -> Option<Vec<Range<usize>>> {
    static TOKEN: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?:\\[nr])*([A-Za-z0-9+/=]+)").expect("static regex"));
    let tokens: Vec<Range<usize>> = TOKEN
        .captures_iter(&text[body.clone()])
        .filter_map(|c| c.get(1))
        .map(|m| body.start + m.start()..body.start + m.end())
        .collect();
    let mut lines: Vec<Range<usize>> = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let token = &text[t.clone()];
        if text[t.end..].starts_with("...") || text[t.end..].starts_with('…') {
            return None;
        }
        // The last line of a body may be short.
        let last = i + 1 == tokens.len() && !lines.is_empty() && token.len() >= 4;
        if (token.len() >= 16 && classes(token) >= 2) || last {
            lines.push(t.clone());
        }
    }
    let joined: String = lines.iter().map(|r| &text[r.clone()]).collect();
    let bare = joined.trim_end_matches('=');
    (bare.len() >= 20 && classes(bare) >= 2 && entropy(bare) >= 3.0).then_some(lines)
}

/// Base64 or base64url, decoded as far as it is valid.
fn base64_decode(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            _ => break,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

/// Whether a JWT's first part is a JOSE header: a JSON object with `alg`.
fn jose_header(token: &str) -> bool {
    let header = token.split('.').next().unwrap_or("");
    serde_json::from_slice::<serde_json::Value>(&base64_decode(header))
        .is_ok_and(|v| v.get("alg").is_some_and(serde_json::Value::is_string))
}

/// Whether the character before `at` is an ASCII letter or digit.
fn alnum_before(text: &str, at: usize) -> bool {
    text[..at]
        .chars()
        .next_back()
        .is_some_and(|c| c.is_ascii_alphanumeric())
}

/// Whether the character at `at` is an ASCII letter or digit.
fn alnum_at(text: &str, at: usize) -> bool {
    text[at..]
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric())
}

/// `AKIA…, 20 characters`: four characters and a length.
fn shown(value: &str) -> String {
    let head: String = value.chars().take(4).collect();
    format!("{head}…, {} characters", value.chars().count())
}

/// Every secret pattern in one automaton: which of them match at all, in
/// one pass over the text. Most text printed (a log line, a report) holds
/// no secret, and each pattern's own search costs a pass of its own.
static SECRET_SET: LazyLock<RegexSet> = LazyLock::new(|| {
    RegexSet::new(SECRET_PATTERNS.iter().map(|p| p.regex.as_str())).expect("static regexes")
});

pub(crate) fn find_secrets(text: &str) -> Vec<Secret> {
    let mut out: Vec<Secret> = Vec::new();
    let overlaps = |out: &[Secret], start: usize, end: usize| {
        out.iter().any(|s| s.start < end && start < s.end)
    };
    let matching = SECRET_SET.matches(text);
    if !matching.matched_any() {
        return out;
    }
    for (i, p) in SECRET_PATTERNS.iter().enumerate() {
        // A pattern the set saw no match of has no captures either.
        if !matching.matched(i) {
            continue;
        }
        for caps in p.regex.captures_iter(text) {
            let (Some(whole), Some(value), Some(random)) =
                (caps.get(0), caps.get(p.value), caps.get(p.random))
            else {
                continue;
            };
            let w = whole.as_str();
            // Not inside a longer word or token.
            if (p.bounded
                && w.starts_with(|c: char| c.is_ascii_alphanumeric())
                && alnum_before(text, whole.start()))
                || (w.ends_with(|c: char| c.is_ascii_alphanumeric()) && alnum_at(text, whole.end()))
            {
                continue;
            }
            let r = random.as_str();
            let key = match p.check {
                Check::PrivateKey => key_lines(text, random.range()),
                _ => None,
            };
            let real = match p.check {
                Check::Format(min) => generated(r, min),
                Check::Loose => {
                    generated(r, 1)
                        && r.chars().any(|c| c.is_ascii_digit())
                        && r.chars().any(|c| c.is_ascii_alphabetic())
                }
                Check::Password => !is_placeholder_password(r),
                Check::PrivateKey => key.is_some(),
                Check::Jwt => jose_header(w) && generated(r, 2),
            };
            // One secret, one finding: the first pattern that claims a span wins.
            if !real || overlaps(&out, whole.start(), whole.end()) {
                continue;
            }
            let v = value.as_str();
            let parts = key.unwrap_or_else(|| vec![value.range()]);
            let redacted = match p.kind {
                URL_PASSWORD => {
                    let at = value.start() - whole.start();
                    format!("{}****{}", &w[..at], &w[at + v.len()..])
                }
                PRIVATE_KEY => format!(
                    "{}, {} characters",
                    w[..value.start() - whole.start()].trim(),
                    parts.iter().map(Range::len).sum::<usize>()
                ),
                _ => shown(v),
            };
            out.push(Secret {
                kind: p.kind,
                start: whole.start(),
                end: whole.end(),
                parts,
                redacted,
            });
        }
    }
    let aws = aws_secrets_near_ids(text, &out);
    out.extend(aws);
    out.sort_by_key(|s| s.start);
    out
}

/// Unlabelled AWS secret access keys: an AWS secret has no prefix, so a
/// 40-character base64 run counts only next to an access key id.
fn aws_secrets_near_ids(text: &str, found: &[Secret]) -> Vec<Secret> {
    let ids: Vec<(usize, usize)> = found
        .iter()
        .filter(|s| s.kind == AWS_KEY_ID)
        .map(|s| (s.start, s.end))
        .collect();
    let mut out = Vec::new();
    if ids.is_empty() {
        return out;
    }
    for m in AWS_SECRET_SHAPE.find_iter(text) {
        // Secrets already found are cut out of the run: `AKIA…/secret` is
        // one run of the base64 alphabet, and the `/` between belongs to neither.
        let mut pieces = vec![m.range()];
        for s in found {
            pieces = pieces
                .into_iter()
                .flat_map(|r| {
                    if s.end <= r.start || r.end <= s.start {
                        return vec![r];
                    }
                    let mut left = vec![r.start..s.start.max(r.start), s.end.min(r.end)..r.end];
                    left.retain(|p| !p.is_empty());
                    left
                })
                .collect();
        }
        for mut r in pieces {
            if r.len() == 41 {
                if r.start != m.start() && text[r.clone()].starts_with(['/', '+']) {
                    r.start += 1;
                } else if r.end != m.end() && text[r.clone()].ends_with(['/', '+']) {
                    r.end -= 1;
                }
            }
            let v = &text[r.clone()];
            let near = ids
                .iter()
                .any(|&(s, e)| r.start < e + AWS_NEAR && s < r.end + AWS_NEAR);
            if v.len() != 40
                || (r.end == m.end() && text[r.end..].starts_with('='))
                || !near
                || classes(v) < 3
                || is_placeholder(v)
                || entropy(v) < 4.0
            {
                continue;
            }
            out.push(Secret {
                kind: AWS_SECRET,
                start: r.start,
                end: r.end,
                parts: vec![r.clone()],
                redacted: shown(v),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::secrets as redact;

    #[test]
    fn redaction_hides_secrets() {
        let t = "Use key sk-proj-9fK2mQ7xLp4Rt8Zb3Nc6Vd1Wy5Hs0Ja2 now.";
        assert_eq!(redact(t), "Use key [redacted: sk-p…, 40 characters] now.");
    }

    #[test]
    fn placeholders_are_typed_runs_and_words() {
        for p in [
            "xxxxxxxx",
            "1234abcd",
            "AKIAABCDQ",
            "your-key",
            "a9876b",
            "0000",
        ] {
            assert!(is_placeholder(p), "{p}");
        }
        for p in ["UJZDEGXDNCF32EPF", "AbCdEfGh", "a8f5f167f44f"] {
            assert!(!is_placeholder(p), "{p}");
        }
    }

    #[test]
    fn the_set_sees_a_match_of_a_pattern_exactly_when_the_pattern_does() {
        let secrets = [
            ["sk-proj-", "9fK2mQ7xLp4Rt8Zb3Nc6Vd1Wy5Hs0Ja2"].concat(),
            ["ghp_", "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"].concat(),
            ["sk_live_", "ZYW2mZp0zVZomHFwUbbYrEqm"].concat(),
            ["AKIA", "IOSFODNN7EXAMPLQ"].concat(),
            ["xoxb-", "2911-51234-a8f5f167f44fX"].concat(),
            ["AIza", "SyD4-k3Jm9Qw2Er7Ty8Ui1Op5As6Df0Gh3J"].concat(),
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlMTIz".to_string(),
            "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD9\n-----END RSA PRIVATE KEY-----"
                .to_string(),
            "password=Tr0ub4dor&3x".to_string(),
            "https://user:p4ssw0rdQ9@example.com/mcp".to_string(),
            "Bearer 8c2f1d9e7a6b5c4d3e2f1a0b9c8d7e6f".to_string(),
        ];
        let mut texts = vec![
            String::new(),
            "INFO serve: POST /mcp 200 tools/call billing__list_periods 1.2 ms".to_string(),
            "nothing here, not even a key: your-key".to_string(),
        ];
        for (i, a) in secrets.iter().enumerate() {
            texts.push(format!("stderr: token={a} and more"));
            texts.push(format!("{a} {}", secrets[(i + 1) % secrets.len()]));
        }
        for text in &texts {
            let set = SECRET_SET.matches(text);
            for (i, p) in SECRET_PATTERNS.iter().enumerate() {
                assert_eq!(
                    set.matched(i),
                    p.regex.is_match(text),
                    "pattern {i} on {text:?}"
                );
            }
        }
        // And the set is not idle: most of these texts hold a secret it sees.
        let seen = texts.iter().filter(|t| SECRET_SET.is_match(t)).count();
        assert!(seen >= 2 * secrets.len() - 2, "{seen}");
    }

    #[test]
    fn jwt_headers_decode() {
        assert_eq!(base64_decode("eyJhbGciOiJub25lIn0"), br#"{"alg":"none"}"#);
        assert!(jose_header("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.e.s"));
        assert!(!jose_header("eyJmb28iOiJiYXIifQ.e.s"));
        assert!(!jose_header("eyJ!.e.s"));
    }
}
