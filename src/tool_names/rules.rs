//! Each host's own rules: characters, prefixes, and what happens past
//! the 64-character cap (sources in the module docs).

use super::name::{ExposedName, Fit, MAX_LEN, PATTERN_HASH, Part};
use crate::support::hash::{sha1_hex, sha256_hex};

pub(super) fn flush(text: &mut String, parts: &mut Vec<Part>) {
    if !text.is_empty() {
        parts.push(Part::Text(std::mem::take(text)));
    }
}

/// The parts of a pattern, and the range of them in `[ ]` (a prefix given
/// only on collision); the error says why the pattern does not read.
pub(super) fn parse_pattern(
    pattern: &str,
) -> Result<(Vec<Part>, Option<std::ops::Range<usize>>), &'static str> {
    let mut parts = Vec::new();
    let mut rest = pattern;
    let mut text = String::new();
    let (mut open, mut group) = (None, None);
    while !rest.is_empty() {
        let (part, after) = if let Some(after) = rest.strip_prefix("{server}") {
            (Some(Part::Server), after)
        } else if let Some(after) = rest.strip_prefix("{tool}") {
            (Some(Part::Tool), after)
        } else {
            let c = rest.chars().next().unwrap_or_default();
            let after = &rest[c.len_utf8()..];
            match c {
                '[' if open.is_none() && group.is_none() => {
                    flush(&mut text, &mut parts);
                    open = Some(parts.len());
                }
                ']' if open.is_some() => {
                    flush(&mut text, &mut parts);
                    group = open.take().map(|start| start..parts.len());
                }
                '[' | ']' => return Err("may have one [ ] pair only"),
                c if allowed(c) => text.push(c),
                _ => {
                    return Err(
                        "may hold only {server}, {tool}, one [ ] and the characters A-Z a-z 0-9 _ -",
                    );
                }
            }
            (None, after)
        };
        if let Some(part) = part {
            flush(&mut text, &mut parts);
            if parts.contains(&part) {
                return Err(match part {
                    Part::Server => "has {server} twice",
                    _ => "has {tool} twice",
                });
            }
            parts.push(part);
        }
        rest = after;
    }
    flush(&mut text, &mut parts);
    if open.is_some() {
        return Err("has a [ without its ]");
    }
    Ok((parts, group))
}

pub(super) fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// `base` cut to leave room for `_` and 8 hex digits of SHA-256 of `key`.
pub(super) fn hashed(base: &str, key: &str, max: usize) -> String {
    let hex = sha256_hex(key.as_bytes());
    let keep = max.min(MAX_LEN).saturating_sub(PATTERN_HASH + 1);
    let head: String = base.chars().take(keep).collect();
    format!("{head}_{}", &hex[..PATTERN_HASH])
}

pub(super) fn capped_or_over(name: String) -> ExposedName {
    let fit = if name.chars().count() <= MAX_LEN {
        Fit::Whole
    } else {
        Fit::OverCap
    };
    ExposedName { name, fit }
}

/// JavaScript's `s.replace(/[^a-zA-Z0-9_-]/g, '_')`: per UTF-16 unit, so a
/// character outside the BMP becomes `__`.
pub(super) fn js_safe(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if allowed(c) {
            out.push(c);
        } else {
            for _ in 0..c.len_utf16() {
                out.push('_');
            }
        }
    }
    out
}

/// Each character outside `[A-Za-z0-9_]` (and `-` when `dash`) as `_`.
pub(super) fn rust_safe(s: &str, dash: bool) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || (dash && c == '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// VS Code's prefix for `server`, the `n`th server with that prefix (from 1).
pub(super) fn vscode_prefix(server: &str, n: usize) -> String {
    const PREFIX: &str = "mcp_";
    const MAX_PREFIX: usize = 18;
    let mut safe = String::new();
    let mut in_run = false;
    for c in server.to_lowercase().chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '.' | '-') {
            safe.push(c);
            in_run = false;
        } else if !in_run {
            safe.push('_');
            in_run = true;
        }
    }
    let suffix = if n == 1 {
        "_".to_string()
    } else {
        format!("{n}_")
    };
    let room = MAX_PREFIX - PREFIX.len() - suffix.len();
    let safe: String = safe.chars().take(room).collect();
    format!("{PREFIX}{safe}{suffix}")
}

/// VS Code's `(prefix + tool).replaceAll('.', '_').slice(0, 64)` (UTF-16 units).
pub(super) fn vscode(prefix: &str, tool: &str) -> ExposedName {
    let whole = format!("{prefix}{tool}").replace('.', "_");
    let mut name = String::new();
    let mut units = 0;
    for c in whole.chars() {
        units += c.len_utf16();
        if units > MAX_LEN {
            return ExposedName {
                name,
                fit: Fit::Cut,
            };
        }
        name.push(c);
    }
    ExposedName {
        name,
        fit: Fit::Whole,
    }
}

/// Codex's qualified name: sanitized, and past 64 bytes the first 24 then
/// SHA-1 of the unsanitized name.
pub(super) fn codex(server: &str, tool: &str) -> ExposedName {
    let raw = format!("mcp__{server}__{tool}");
    let name = rust_safe(&raw, false);
    if name.len() <= MAX_LEN {
        return ExposedName {
            name,
            fit: Fit::Whole,
        };
    }
    let sha1 = sha1_hex(raw.as_bytes());
    ExposedName {
        name: format!("{}{sha1}", &name[..MAX_LEN - sha1.len()]),
        fit: Fit::Hashed,
    }
}
