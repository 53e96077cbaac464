//! A memory ceiling for the whole run. Server data is bounded by the
//! library's `Limits`, but a user template (`--template`, a policy file's
//! `template`) can build values minijinja never charges fuel for: a list
//! or string doubled forty times. The library cannot stop that (minijinja
//! has no allocation limit); the CLI can stop itself with a clear error
//! instead of growing until the kernel kills it.

use std::time::Duration;

/// Default ceiling of the resident set, in MiB.
const DEFAULT_MAX_RSS_MB: u64 = 4096;

/// How often the resident set is read.
const EVERY: Duration = Duration::from_millis(50);

/// Starts the watchdog (Linux: reads `/proc/self/status`; elsewhere it does
/// nothing). `MCP_PREAMBLE_MAX_RSS_MB` sets the ceiling; `0` turns it off.
pub fn guard() {
    let limit_mb = match std::env::var("MCP_PREAMBLE_MAX_RSS_MB") {
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(n) => n,
            Err(_) => {
                crate::emit::emit_err(&format!(
                    "mcp-preamble: warning: MCP_PREAMBLE_MAX_RSS_MB={v:?} is not a number of MiB; using {DEFAULT_MAX_RSS_MB}"
                ));
                DEFAULT_MAX_RSS_MB
            }
        },
        Err(_) => DEFAULT_MAX_RSS_MB,
    };
    if limit_mb == 0 || rss_bytes().is_none() {
        return;
    }
    let limit = limit_mb.saturating_mul(1024 * 1024);
    let spawned = std::thread::Builder::new()
        .name("memory-guard".into())
        .spawn(move || {
            loop {
                std::thread::sleep(EVERY);
                if rss_bytes().is_some_and(|n| n > limit) {
                    crate::emit::emit_err(&format!(
                        "mcp-preamble: out of memory: the run passed {limit_mb} MiB \
                         (a template that builds huge values?); stopped \
                         (MCP_PREAMBLE_MAX_RSS_MB sets the ceiling)"
                    ));
                    std::process::exit(2);
                }
            }
        });
    if spawned.is_err() {
        crate::emit::emit_err(
            "mcp-preamble: warning: no memory guard (could not start its thread)",
        );
    }
}

/// The resident set of this process, in bytes (`VmRSS`, which the kernel
/// gives in kB whatever the page size).
fn rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
