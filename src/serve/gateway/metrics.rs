//! The gateway's counters and their Prometheus text exposition (format
//! 0.0.4): forwarded calls, errors and latency per upstream and tool,
//! upstream restarts. Served on `/metrics` with what is read at scrape
//! time (section tokens, pending reviews, sessions; see `ops`).
//!
//! Tool names are the upstream's (server-controlled): label values are
//! escaped, cut to [`MAX_LABEL`] characters, and bounded in number: at most
//! [`MAX_TOOLS`] tools per upstream and [`MAX_SERIES`] in all have series of
//! their own; calls of the others count under the tool `_other`, so an
//! upstream with 10,000 tool names costs a fixed amount of memory.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Duration;

use crate::hub::Hub;
use crate::support::lock;

/// Tools of one upstream with series of their own.
pub const MAX_TOOLS: usize = 256;
/// Call series (upstream, tool) in all.
pub const MAX_SERIES: usize = 4096;
/// The longest label value, in characters.
pub const MAX_LABEL: usize = 128;
/// The tool label of calls past the caps.
pub const OTHER: &str = "_other";

/// Upper bounds of the latency histogram's buckets, in seconds.
const BUCKETS: [f64; 12] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

#[derive(Debug, Default, Clone)]
struct Series {
    calls: u64,
    errors: u64,
    /// Calls within each bucket's bound (not cumulative; summed on render).
    buckets: [u64; BUCKETS.len()],
    seconds: f64,
    /// The same by [`Outcome`], for `mcp_client_operation_duration_seconds`.
    by_outcome: [Histogram; 3],
}

#[derive(Debug, Default, Clone)]
struct Histogram {
    count: u64,
    buckets: [u64; BUCKETS.len()],
    seconds: f64,
}

/// How a forwarded call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// A result.
    Ok,
    /// A result with `isError`.
    ToolError,
    /// A JSON-RPC error (the upstream's, or the gateway's: closed, timed out).
    Error,
}

impl Outcome {
    const ALL: [Outcome; 3] = [Outcome::Ok, Outcome::ToolError, Outcome::Error];

    /// The `outcome` label, and the OpenTelemetry `error.type` when it failed.
    fn labels(self) -> &'static str {
        match self {
            Outcome::Ok => "outcome=\"ok\"",
            Outcome::ToolError => "outcome=\"tool_error\",error_type=\"tool_error\"",
            Outcome::Error => "outcome=\"error\",error_type=\"jsonrpc_error\"",
        }
    }
}

#[derive(Debug, Default)]
struct Calls {
    /// Upstream alias, then tool name.
    by_upstream: HashMap<String, HashMap<String, Series>>,
    series: usize,
    /// Calls counted under [`OTHER`] because a cap was reached.
    folded: u64,
}

/// The gateway's counters (one per gateway, shared by its sessions).
#[derive(Debug, Default)]
pub(crate) struct Metrics {
    calls: Mutex<Calls>,
    /// Restarts per upstream alias (the operator's config names them).
    restarts: Mutex<HashMap<String, u64>>,
}

impl Metrics {
    /// One forwarded call of `tool` on `upstream` that took `took`.
    pub(crate) fn called(&self, upstream: &str, tool: &str, took: Duration, outcome: Outcome) {
        let failed = outcome != Outcome::Ok;
        let mut calls = lock(&self.calls);
        let Calls {
            by_upstream,
            series,
            folded,
        } = &mut *calls;
        if !by_upstream.contains_key(upstream) {
            by_upstream.insert(upstream.to_string(), HashMap::new());
        }
        let Some(tools) = by_upstream.get_mut(upstream) else {
            return;
        };
        let entry = match tools.contains_key(tool) {
            true => tool,
            false if tools.len() < MAX_TOOLS && *series < MAX_SERIES => {
                *series += 1;
                tools.insert(tool.to_string(), Series::default());
                tool
            }
            false => {
                *folded += 1;
                if !tools.contains_key(OTHER) {
                    *series += 1;
                    tools.insert(OTHER.to_string(), Series::default());
                }
                OTHER
            }
        };
        let Some(s) = tools.get_mut(entry) else {
            return;
        };
        s.calls += 1;
        s.errors += u64::from(failed);
        let secs = took.as_secs_f64();
        s.seconds += secs;
        let bucket = BUCKETS.iter().position(|bound| secs <= *bound);
        if let Some(i) = bucket {
            s.buckets[i] += 1;
        }
        let h = &mut s.by_outcome[outcome as usize];
        h.count += 1;
        h.seconds += secs;
        if let Some(i) = bucket {
            h.buckets[i] += 1;
        }
    }

    /// The upstream `alias` was restarted once more.
    pub(crate) fn restarted(&self, alias: &str) {
        *lock(&self.restarts).entry(alias.to_string()).or_default() += 1;
    }

    /// Appends the counters in the text format.
    pub(crate) fn render(&self, out: &mut String) {
        let calls = lock(&self.calls);
        let mut rows: Vec<(&str, &str, &Series)> = calls
            .by_upstream
            .iter()
            .flat_map(|(u, tools)| tools.iter().map(move |(t, s)| (u.as_str(), t.as_str(), s)))
            .collect();
        rows.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        let labels = |u: &str, t: &str| format!("upstream=\"{}\",tool=\"{}\"", label(u), label(t));
        head(
            out,
            "mcp_preamble_tool_calls_total",
            "counter",
            "Forwarded tools/call requests, by upstream and tool.",
        );
        for (u, t, s) in &rows {
            let _ = writeln!(
                out,
                "mcp_preamble_tool_calls_total{{{}}} {}",
                labels(u, t),
                s.calls
            );
        }
        head(
            out,
            "mcp_preamble_tool_call_errors_total",
            "counter",
            "Forwarded calls that failed: a JSON-RPC error or an isError result.",
        );
        for (u, t, s) in &rows {
            let _ = writeln!(
                out,
                "mcp_preamble_tool_call_errors_total{{{}}} {}",
                labels(u, t),
                s.errors
            );
        }
        let name = "mcp_preamble_tool_call_duration_seconds";
        head(
            out,
            name,
            "histogram",
            "Forwarded calls' duration, by upstream and tool.",
        );
        for (u, t, s) in &rows {
            let l = labels(u, t);
            let mut below = 0;
            for (bound, n) in BUCKETS.iter().zip(s.buckets) {
                below += n;
                let _ = writeln!(out, "{name}_bucket{{{l},le=\"{bound}\"}} {below}");
            }
            let _ = writeln!(out, "{name}_bucket{{{l},le=\"+Inf\"}} {}", s.calls);
            let _ = writeln!(out, "{name}_sum{{{l}}} {}", s.seconds);
            let _ = writeln!(out, "{name}_count{{{l}}} {}", s.calls);
        }
        render_otel(out, &rows);
        head(
            out,
            "mcp_preamble_metric_calls_folded_total",
            "counter",
            "Calls counted under the tool _other: their tool passed the label caps.",
        );
        let _ = writeln!(
            out,
            "mcp_preamble_metric_calls_folded_total {}",
            calls.folded
        );
        drop(calls);
        self.render_restarts(out);
    }

    fn render_restarts(&self, out: &mut String) {
        let restarts = lock(&self.restarts);
        let mut rows: Vec<(&String, &u64)> = restarts.iter().collect();
        rows.sort();
        head(
            out,
            "mcp_preamble_upstream_restarts_total",
            "counter",
            "Times the gateway restarted an upstream that ended on its own.",
        );
        for (alias, n) in rows {
            let _ = writeln!(
                out,
                "mcp_preamble_upstream_restarts_total{{upstream=\"{}\"}} {n}",
                label(alias)
            );
        }
    }
}

/// `mcp_client_operation_duration_seconds`: the OpenTelemetry MCP
/// semantic conventions' `mcp.client.operation.duration` (the gateway is
/// the upstreams' client) in Prometheus form, with their attribute names
/// (`mcp_method_name`, `gen_ai_tool_name`, `error_type`) and the upstream
/// and outcome; a series for each outcome a tool had.
fn render_otel(out: &mut String, rows: &[(&str, &str, &Series)]) {
    let name = "mcp_client_operation_duration_seconds";
    head(
        out,
        name,
        "histogram",
        "Forwarded tools/call requests' duration as the gateway saw them (mcp.client.operation.duration), by upstream, tool and outcome.",
    );
    for (u, t, s) in rows {
        for outcome in Outcome::ALL {
            let h = &s.by_outcome[outcome as usize];
            if h.count == 0 {
                continue;
            }
            let l = format!(
                "mcp_method_name=\"tools/call\",upstream=\"{}\",gen_ai_tool_name=\"{}\",{}",
                label(u),
                label(t),
                outcome.labels()
            );
            let mut below = 0;
            for (bound, n) in BUCKETS.iter().zip(h.buckets) {
                below += n;
                let _ = writeln!(out, "{name}_bucket{{{l},le=\"{bound}\"}} {below}");
            }
            let _ = writeln!(out, "{name}_bucket{{{l},le=\"+Inf\"}} {}", h.count);
            let _ = writeln!(out, "{name}_sum{{{l}}} {}", h.seconds);
            let _ = writeln!(out, "{name}_count{{{l}}} {}", h.count);
        }
    }
}

/// When the process started, in seconds since the Unix epoch: marked by
/// the first gateway built.
pub(crate) fn started_at() -> f64 {
    static STARTED: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *STARTED.get_or_init(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64().floor())
    })
}

/// The process's series (Prometheus' conventional `process_*`, read from
/// `/proc` where there is one) and the build's.
fn render_process(out: &mut String) {
    head(
        out,
        "mcp_preamble_build_info",
        "gauge",
        "1, labelled with the build's version.",
    );
    let _ = writeln!(
        out,
        "mcp_preamble_build_info{{version=\"{}\"}} 1",
        env!("CARGO_PKG_VERSION")
    );
    let started = started_at();
    head(
        out,
        "process_start_time_seconds",
        "gauge",
        "Start time of the process since the Unix epoch, in seconds.",
    );
    let _ = writeln!(out, "process_start_time_seconds {started}");
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return;
    };
    // Fields after the command's closing parenthesis: utime and stime
    // are the 12th and 13th, rss the 22nd (pages); ticks are 100 a second
    // and pages 4 KiB on Linux's common configurations.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(Vec::new(), |(_, r)| r.split_whitespace().collect());
    let num = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    head(
        out,
        "process_cpu_seconds_total",
        "counter",
        "User and system CPU time spent, in seconds.",
    );
    let _ = writeln!(
        out,
        "process_cpu_seconds_total {}",
        (num(11) + num(12)) as f64 / 100.0
    );
    head(
        out,
        "process_resident_memory_bytes",
        "gauge",
        "Resident memory size, in bytes.",
    );
    let _ = writeln!(out, "process_resident_memory_bytes {}", num(21) * 4096);
    if let Ok(fds) = std::fs::read_dir("/proc/self/fd") {
        head(out, "process_open_fds", "gauge", "Open file descriptors.");
        let _ = writeln!(out, "process_open_fds {}", fds.count());
    }
}

/// The text of `/metrics` without the HTTP listener's own gauges
/// (`Gateway::metrics_text`): `counters`, and what `hub` holds now.
pub(crate) fn text(hub: &Hub, counters: &Metrics, starting: usize) -> String {
    let mut out = String::new();
    counters.render(&mut out);
    render_process(&mut out);
    let section = hub.section();
    let assembly = section.assembly();
    head(
        &mut out,
        "mcp_preamble_section_tokens",
        "gauge",
        "Tokens of each server's block in the section served now.",
    );
    for server in assembly.servers() {
        let name = server.alias.as_deref().unwrap_or(&server.name);
        let _ = writeln!(
            out,
            "mcp_preamble_section_tokens{{server=\"{}\"}} {}",
            label(name),
            server.tokens
        );
    }
    let gauges = [
        (
            "mcp_preamble_section_total_tokens",
            "Tokens of the whole section served now.",
            assembly.total_tokens(),
        ),
        (
            "mcp_preamble_pending_reviews",
            "Servers whose changed text waits for a review (pin --approve).",
            hub.pending().len(),
        ),
        (
            "mcp_preamble_upstreams_starting",
            "Upstreams still starting without a snapshot to serve from.",
            starting,
        ),
    ];
    for (name, help, value) in gauges {
        head(&mut out, name, "gauge", help);
        let _ = writeln!(out, "{name} {value}");
    }
    head(
        &mut out,
        "mcp_preamble_upstream_connected",
        "gauge",
        "1 for an upstream connected now, 0 for one restarting or gone.",
    );
    for alias in hub.aliases() {
        let up = hub.state(&alias) == crate::hub::ServerState::Connected;
        let _ = writeln!(
            out,
            "mcp_preamble_upstream_connected{{upstream=\"{}\"}} {}",
            label(&alias),
            u8::from(up)
        );
    }
    out
}

/// A metric's `# HELP` and `# TYPE` lines.
pub(crate) fn head(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// `value` as a label value: at most [`MAX_LABEL`] characters, with `\`,
/// `"` and line feeds escaped as the text format asks (and carriage
/// returns, which it does not name, as `\n` too: one sample, one line).
pub(crate) fn label(value: &str) -> String {
    let mut out = String::with_capacity(value.len().min(MAX_LABEL) + 2);
    for c in value.chars().take(MAX_LABEL) {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' | '\r' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_escaped_and_cut() {
        assert_eq!(label("a\"b\\c\nd\re"), "a\\\"b\\\\c\\nd\\ne");
        assert_eq!(label(&"é".repeat(500)).chars().count(), MAX_LABEL);
    }

    #[test]
    fn a_call_is_counted_with_its_latency() {
        let m = Metrics::default();
        m.called(
            "billing",
            "get_invoice",
            Duration::from_millis(30),
            Outcome::Ok,
        );
        m.called(
            "billing",
            "get_invoice",
            Duration::from_secs(60),
            Outcome::Error,
        );
        m.restarted("billing");
        let mut out = String::new();
        m.render(&mut out);
        let l = "upstream=\"billing\",tool=\"get_invoice\"";
        for line in [
            format!("mcp_preamble_tool_calls_total{{{l}}} 2"),
            format!("mcp_preamble_tool_call_errors_total{{{l}}} 1"),
            format!("mcp_preamble_tool_call_duration_seconds_bucket{{{l},le=\"0.025\"}} 0"),
            format!("mcp_preamble_tool_call_duration_seconds_bucket{{{l},le=\"0.05\"}} 1"),
            format!("mcp_preamble_tool_call_duration_seconds_bucket{{{l},le=\"30\"}} 1"),
            format!("mcp_preamble_tool_call_duration_seconds_bucket{{{l},le=\"+Inf\"}} 2"),
            format!("mcp_preamble_tool_call_duration_seconds_count{{{l}}} 2"),
            "mcp_preamble_upstream_restarts_total{upstream=\"billing\"} 1".to_string(),
            "mcp_client_operation_duration_seconds_bucket{mcp_method_name=\"tools/call\",upstream=\"billing\",gen_ai_tool_name=\"get_invoice\",outcome=\"ok\",le=\"0.05\"} 1".to_string(),
            "mcp_client_operation_duration_seconds_count{mcp_method_name=\"tools/call\",upstream=\"billing\",gen_ai_tool_name=\"get_invoice\",outcome=\"error\",error_type=\"jsonrpc_error\"} 1".to_string(),
        ] {
            assert!(out.lines().any(|x| x == line), "{line} not in\n{out}");
        }
    }

    #[test]
    fn ten_thousand_tool_names_cost_a_bounded_number_of_series() {
        let m = Metrics::default();
        for i in 0..10_000 {
            m.called(
                "evil",
                &format!("tool{i}\"}} 1\n"),
                Duration::ZERO,
                Outcome::Ok,
            );
        }
        m.called("good", "ping", Duration::ZERO, Outcome::ToolError);
        let mut out = String::new();
        m.render(&mut out);
        let calls: Vec<&str> = out
            .lines()
            .filter(|l| l.starts_with("mcp_preamble_tool_calls_total{"))
            .collect();
        assert_eq!(calls.len(), MAX_TOOLS + 2, "{}", calls.len());
        let other = format!(
            "mcp_preamble_tool_calls_total{{upstream=\"evil\",tool=\"{OTHER}\"}} {}",
            10_000 - MAX_TOOLS
        );
        assert!(calls.contains(&other.as_str()));
        assert!(
            calls.contains(&"mcp_preamble_tool_calls_total{upstream=\"good\",tool=\"ping\"} 1")
        );
        // Every sample is one line of the format: a name, labels, a value.
        for line in out.lines().filter(|l| !l.starts_with('#')) {
            assert!(
                line.starts_with("mcp_preamble_") || line.starts_with("mcp_client_operation_"),
                "{line}"
            );
            assert!(
                line.rsplit_once(' ')
                    .is_some_and(|(_, v)| v.parse::<f64>().is_ok()),
                "{line}"
            );
        }
        let folded = format!(
            "mcp_preamble_metric_calls_folded_total {}",
            10_000 - MAX_TOOLS
        );
        assert!(out.lines().any(|l| l == folded));
    }
}
