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
    pub(crate) fn called(&self, upstream: &str, tool: &str, took: Duration, failed: bool) {
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
        if let Some(i) = BUCKETS.iter().position(|bound| secs <= *bound) {
            s.buckets[i] += 1;
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

/// The text of `/metrics` without the HTTP listener's own gauges
/// (`Gateway::metrics_text`): `counters`, and what `hub` holds now.
pub(crate) fn text(hub: &Hub, counters: &Metrics, starting: usize) -> String {
    let mut out = String::new();
    counters.render(&mut out);
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
        m.called("billing", "get_invoice", Duration::from_millis(30), false);
        m.called("billing", "get_invoice", Duration::from_secs(60), true);
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
        ] {
            assert!(out.lines().any(|x| x == line), "{line} not in\n{out}");
        }
    }

    #[test]
    fn ten_thousand_tool_names_cost_a_bounded_number_of_series() {
        let m = Metrics::default();
        for i in 0..10_000 {
            m.called("evil", &format!("tool{i}\"}} 1\n"), Duration::ZERO, false);
        }
        m.called("good", "ping", Duration::ZERO, false);
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
            assert!(line.starts_with("mcp_preamble_"), "{line}");
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
