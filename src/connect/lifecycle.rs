//! The log of an upstream's life: one line per event at `info` (`warn`
//! for an end or a failure), target `mcp_preamble::upstream`, field
//! `upstream` its alias. Each is a sentence a person reads: no Rust type
//! paths, no debug structs.

use std::process::ExitStatus;
use std::time::Duration;

use super::options::Restart;
use crate::model::{Era, ServerSnapshot};

/// Why a server's process is started: the only two. A command comes from
/// the operator's config (or `wrap`'s command line) and nothing else: no
/// request, answer or reload starts one or changes one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cause {
    /// The gateway (or `wrap`) starting.
    Start,
    /// The server ended and the restart policy starts it again.
    Restart,
}

impl Cause {
    fn says(self) -> &'static str {
        match self {
            Cause::Start => "at start",
            Cause::Restart => "a restart after it ended",
        }
    }
}

/// A stdio server's process was spawned: its pid, why, and the command
/// line (secret-shaped values and URL query strings redacted; the
/// environment is never logged).
pub(crate) fn started(alias: &str, pid: Option<u32>, command: &str, args: &[String], cause: Cause) {
    let line = command_line(command, args);
    let cause = cause.says();
    match pid {
        Some(pid) => tracing::info!(
            target: "mcp_preamble::upstream",
            upstream = %alias,
            "started (pid {pid}), {cause}: {line}"
        ),
        None => {
            tracing::info!(target: "mcp_preamble::upstream", upstream = %alias, "started, {cause}: {line}")
        }
    }
}

/// `command` and `args` as a person reads them: each redacted
/// (`redact::printed`), quoted when empty or holding a space or a quote.
pub(crate) fn command_line(command: &str, args: &[String]) -> String {
    let word = |a: &str| {
        let a = crate::redact::printed(a);
        if a.is_empty() || a.contains([' ', '"', '\'', '\t']) {
            format!("{:?}", a.as_ref())
        } else {
            a.into_owned()
        }
    };
    let mut words = vec![word(command)];
    words.extend(args.iter().map(|a| word(a)));
    words.join(" ")
}

/// The handshake and the tool list came in.
pub(super) fn connected(alias: &str, snapshot: &ServerSnapshot, elapsed: Duration) {
    let request = match snapshot.era {
        Era::Legacy => "initialize",
        Era::Modern => "server/discover",
    };
    tracing::info!(
        target: "mcp_preamble::upstream",
        upstream = %alias,
        "connected in {} ms: protocol {} ({request}), {} tools",
        elapsed.as_millis(),
        snapshot.protocol_version,
        snapshot.tools.len()
    );
}

/// How a process ended, as a sentence's predicate: `exited with status
/// 3`, `was killed by signal 9 (SIGKILL)`.
pub(super) fn ending(status: Option<ExitStatus>) -> String {
    let Some(status) = status else {
        return "closed its connection".to_string();
    };
    if let Some(code) = status.code() {
        return format!("exited with status {code}");
    }
    // Unix: "signal: 9 (SIGKILL)".
    let shown = status.to_string();
    match shown.strip_prefix("signal: ") {
        Some(signal) => format!("was killed by signal {signal}"),
        None => format!("ended ({shown})"),
    }
}

/// The connection ended without the host closing it.
pub(crate) fn exited(alias: &str, status: Option<ExitStatus>) {
    tracing::warn!(target: "mcp_preamble::upstream", upstream = %alias, "{}", ending(status));
}

/// One attempt to start the server again is about to wait `pause`.
pub(super) fn restarting(
    alias: &str,
    restart: &Restart,
    recent: u32,
    attempt: u32,
    pause: Duration,
) {
    tracing::info!(
        target: "mcp_preamble::upstream",
        upstream = %alias,
        "restarting in {} ms: restart {} of {} within {} s, attempt {} of {}",
        pause.as_millis(),
        recent.saturating_add(1),
        restart.restarts(),
        restart.restart_window().as_secs(),
        attempt,
        restart.max_attempts
    );
}

/// An attempt to start the server again failed.
pub(super) fn restart_failed(alias: &str, attempt: u32, of: u32, error: &dyn std::fmt::Display) {
    tracing::warn!(
        target: "mcp_preamble::upstream",
        upstream = %alias,
        "restart attempt {attempt} of {of} failed: {error}"
    );
}

/// The server is left to its grace period: no more attempts.
pub(super) fn not_restarted(alias: &str, why: &str) {
    tracing::warn!(target: "mcp_preamble::upstream", upstream = %alias, "not restarted: {why}");
}

/// The restart budget was spent and the server ended once more.
pub(super) fn gave_up(alias: &str, restart: &Restart) {
    if restart.restarts() == 0 {
        tracing::warn!(
            target: "mcp_preamble::upstream",
            upstream = %alias,
            "gave up on the upstream: it ended, and it is not to be restarted; its tools are no longer served"
        );
        return;
    }
    tracing::warn!(
        target: "mcp_preamble::upstream",
        upstream = %alias,
        "gave up on the upstream: it ended again after {} restarts within {} s; its tools are no longer served",
        restart.restarts(),
        restart.restart_window().as_secs()
    );
}

/// rmcp's error texts name Rust types (`Transport [rmcp::transport::…<…>]
/// error: …`): the text without any bracketed Rust path.
pub(crate) fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let Some(len) = rest[open..].find(']') else {
            break;
        };
        let inside = &rest[open + 1..open + len];
        out.push_str(&rest[..open]);
        // A Rust path: `::` and no space.
        let rust = inside.contains("::") && !inside.contains(' ');
        if !rust {
            out.push_str(&rest[open..=open + len]);
        }
        rest = &rest[open + len + 1..];
    }
    out.push_str(rest);
    // "Transport  error" once the type is gone.
    out.split(' ')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_line_is_logged_with_its_secrets_redacted() {
        let key = ["sk-proj-", "9fK2mQ7xLp4Rt8Zb3Nc6Vd1Wy5Hs0Ja2"].concat();
        let args = [
            "-y".to_string(),
            "@acme/server".to_string(),
            format!("--api-key={key}"),
            "https://h/mcp?token=abc".to_string(),
            "two words".to_string(),
        ];
        let line = command_line("npx", &args);
        assert!(!line.contains(&key[8..]), "{line}");
        assert!(
            line.starts_with("npx -y @acme/server \"--api-key=[redacted: sk-p…, 40 characters]\""),
            "{line}"
        );
        assert!(
            line.ends_with(" https://h/mcp?token=[redacted] \"two words\""),
            "{line}"
        );
    }

    #[test]
    fn rust_type_paths_leave_error_texts() {
        assert_eq!(
            plain(
                "handshake failed: Transport [rmcp::transport::worker::WorkerTransport<rmcp::transport::streamable_http_client::StreamableHttpClientWorker<reqwest::Client>>] error: Client error: connection refused"
            ),
            "handshake failed: Transport error: Client error: connection refused"
        );
        assert_eq!(plain("list [a, b] kept"), "list [a, b] kept");
        assert_eq!(plain("open [ bracket"), "open [ bracket");
    }

    #[cfg(unix)]
    #[test]
    fn endings_are_sentences() {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            ending(Some(ExitStatus::from_raw(3 << 8))),
            "exited with status 3"
        );
        assert_eq!(
            ending(Some(ExitStatus::from_raw(9))),
            "was killed by signal 9 (SIGKILL)"
        );
        assert_eq!(ending(None), "closed its connection");
    }
}
