//! Memory and time ceilings for the run. Server data is bounded by the
//! library's `Limits`, but a user template (`--template`, a policy file's
//! `template`) can build values minijinja never charges fuel for: a list
//! or string doubled forty times, or doubled thirty-three times, which
//! stays small enough for the memory ceiling and runs for minutes. The
//! library cannot stop that (minijinja has no allocation or time limit);
//! the CLI can stop itself with a clear error instead of growing until the
//! kernel kills it or running until the user gives up.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Default ceiling of the resident set, in MiB.
const DEFAULT_MAX_RSS_MB: u64 = 4096;

/// Default ceiling of the time spent assembling (rendering templates), in
/// seconds. Connecting is bounded by `--timeout` instead.
const DEFAULT_MAX_SECONDS: u64 = 60;

/// How often the resident set and the clock are read.
const EVERY: Duration = Duration::from_millis(50);

/// When the work the time ceiling bounds began (`None`: no such work now).
static WORK_SINCE: Mutex<Option<Instant>> = Mutex::new(None);

/// A non-negative whole number from the environment, or `default` with a
/// warning when it is not one.
fn env_limit(name: &str, unit: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(n) => n,
            Err(_) => {
                crate::emit::emit_err(&format!(
                    "mcp-preamble: warning: {name}={v:?} is not a number of {unit}; using {default}"
                ));
                default
            }
        },
        Err(_) => default,
    }
}

/// Starts the watchdog. The memory ceiling reads `/proc/self/status`
/// (Linux; elsewhere it does nothing): `MCP_PREAMBLE_MAX_RSS_MB` sets it.
/// The time ceiling bounds each [`timed`] stretch of work:
/// `MCP_PREAMBLE_MAX_SECONDS` sets it. `0` turns either off.
pub fn guard() {
    let mut limit_mb = env_limit("MCP_PREAMBLE_MAX_RSS_MB", "MiB", DEFAULT_MAX_RSS_MB);
    if rss_bytes().is_none() {
        limit_mb = 0;
    }
    let max_seconds = env_limit("MCP_PREAMBLE_MAX_SECONDS", "seconds", DEFAULT_MAX_SECONDS);
    if limit_mb == 0 && max_seconds == 0 {
        return;
    }
    let limit = limit_mb.saturating_mul(1024 * 1024);
    let max_time = Duration::from_secs(max_seconds);
    let spawned = std::thread::Builder::new()
        .name("memory-guard".into())
        .spawn(move || {
            loop {
                std::thread::sleep(EVERY);
                if limit_mb > 0 && rss_bytes().is_some_and(|n| n > limit) {
                    crate::emit::emit_err(&format!(
                        "mcp-preamble: out of memory: the run passed {limit_mb} MiB \
                         (a template that builds huge values?); stopped \
                         (MCP_PREAMBLE_MAX_RSS_MB sets the ceiling)"
                    ));
                    std::process::exit(2);
                }
                let since = *WORK_SINCE.lock().unwrap_or_else(|p| p.into_inner());
                if max_seconds > 0 && since.is_some_and(|t| t.elapsed() > max_time) {
                    crate::emit::emit_err(&format!(
                        "mcp-preamble: out of time: assembling took more than {max_seconds} s \
                         (a template that runs too long?); stopped \
                         (MCP_PREAMBLE_MAX_SECONDS sets the ceiling)"
                    ));
                    std::process::exit(2);
                }
            }
        });
    if spawned.is_err() {
        crate::emit::emit_err(
            "mcp-preamble: warning: no memory or time guard (could not start its thread)",
        );
    }
}

/// Puts the work until the returned value drops under the time ceiling.
pub fn timed() -> Timed {
    *WORK_SINCE.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
    Timed(())
}

/// A stretch of work under the time ceiling; see [`timed`].
pub struct Timed(());

impl Drop for Timed {
    fn drop(&mut self) {
        *WORK_SINCE.lock().unwrap_or_else(|p| p.into_inner()) = None;
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
