//! The values the command line's flags take: each parser gives clap the
//! message a user reads when a value is refused.

use std::time::Duration;

use mcp_preamble::connect::Handshake;
use mcp_preamble::settings::Capability;

pub fn parse_severity(s: &str) -> Result<mcp_preamble::lint::Severity, String> {
    s.parse().map_err(|e: mcp_preamble::Error| e.to_string())
}

pub fn parse_lint_code(s: &str) -> Result<mcp_preamble::lint::LintCode, String> {
    s.parse().map_err(|e: mcp_preamble::Error| e.to_string())
}

pub fn parse_timeout(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !(0.0..=86_400.0).contains(&secs) {
        return Err(format!("{s} is outside 0 to 86400 seconds"));
    }
    Duration::try_from_secs_f64(secs).map_err(|e| e.to_string())
}

/// `N/s` (or `N`): requests a second, more than 0.
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let n: f64 = (s.strip_suffix("/s").unwrap_or(s).parse().ok())
        .filter(|n: &f64| *n > 0.0 && n.is_finite())
        .ok_or_else(|| format!("{s:?} is not a rate such as 20/s"))?;
    Ok(n)
}

/// A replica's name: 1 to 64 letters, digits, `-`, `_` or `.` (a header
/// value and a cookie value as it is).
pub fn parse_replica_id(s: &str) -> Result<String, String> {
    let fits = (1..=64).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    match fits {
        true => Ok(s.to_string()),
        false => Err(format!(
            "{s:?} is not a replica name (1 to 64 letters, digits, '-', '_' or '.')"
        )),
    }
}

/// A session id's lifetime: more than 0, at most 30 days.
pub fn parse_ttl(s: &str) -> Result<Duration, String> {
    let secs: u64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a whole number of seconds"))?;
    if !(1..=30 * 86_400).contains(&secs) {
        return Err(format!("{s} is outside 1 to 2592000 seconds (30 days)"));
    }
    Ok(Duration::from_secs(secs))
}

/// A timeout that may not be zero (zero would close every connection).
pub fn parse_positive_timeout(s: &str) -> Result<Duration, String> {
    let t = parse_timeout(s)?;
    if t.is_zero() {
        return Err(format!(
            "{s} seconds would close every connection; give more than 0"
        ));
    }
    Ok(t)
}

pub fn parse_serve_as(s: &str) -> Result<mcp_preamble::serve::ServeAs, String> {
    s.parse().map_err(|e: mcp_preamble::Error| e.to_string())
}

pub fn parse_prefix(s: &str) -> Result<mcp_preamble::serve::Prefix, String> {
    s.parse().map_err(|e: mcp_preamble::Error| e.to_string())
}

pub fn parse_capability(s: &str) -> Result<Capability, String> {
    s.parse().map_err(|e: mcp_preamble::Error| e.to_string())
}

pub fn parse_handshake(s: &str) -> Result<Handshake, String> {
    s.parse().map_err(|e: mcp_preamble::Error| e.to_string())
}

pub fn parse_server_budget(s: &str) -> Result<(String, usize), String> {
    let (alias, n) = s
        .rsplit_once('=')
        .ok_or_else(|| format!("expected ALIAS=N, got {s:?}"))?;
    Ok((alias.to_string(), parse_tokens(n)?))
}

/// A token count: ASCII digits only (`usize::from_str` also takes `+5`);
/// the library's check, which the Python package's keywords share.
pub fn parse_tokens(s: &str) -> Result<usize, String> {
    mcp_preamble::settings::parse_count(s, "tokens").map_err(|e| e.detail().to_string())
}

/// A number of tools, checked as token counts are.
pub fn parse_tools(s: &str) -> Result<usize, String> {
    mcp_preamble::settings::parse_count(s, "tools").map_err(|e| e.detail().to_string())
}

pub fn parse_tool_names(s: &str) -> Result<mcp_preamble::ToolNames, String> {
    s.parse().map_err(|e: mcp_preamble::Error| e.to_string())
}
