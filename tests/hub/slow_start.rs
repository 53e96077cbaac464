//! `auto` with servers that stay silent before they speak (tests/servers/slow-start.mjs).
#![cfg(feature = "rmcp")]

use crate::common;

use std::time::Duration;

use common::node_entry;
use mcp_preamble::Era;
use mcp_preamble::connect::{ConnectOptions, connect};

/// Connects to slow-start.mjs in `era` under the default handshake (auto),
/// silent `silent_ms`; returns the era it got and how often it was started.
async fn slow(era: &str, silent_ms: &str, options: ConnectOptions) -> (Era, usize) {
    let log = std::env::temp_dir().join(format!(
        "mcp-preamble-slow-{}-{era}-{silent_ms}-{:?}.log",
        std::process::id(),
        options.probe()
    ));
    let _ = std::fs::remove_file(&log);
    let entry = node_entry(
        "slow",
        "slow-start.mjs",
        &[
            ("ERA", era),
            ("SILENT_MS", silent_ms),
            ("SPAWN_LOG", log.to_str().unwrap()),
        ],
    );
    let c = connect(&entry, &options)
        .await
        .unwrap_or_else(|f| panic!("{era}: {f}"));
    assert_eq!(c.snapshot.tools.len(), 2, "{era}");
    assert!(c.snapshot.instructions.raw().is_some(), "{era}");
    let got = c.snapshot.era;
    c.close().await;
    let spawns = std::fs::read_to_string(&log).unwrap().lines().count();
    (got, spawns)
}

#[tokio::test]
async fn silent_for_3_s_past_a_1_s_probe_connects_in_either_era() {
    let probe = || {
        ConnectOptions::new()
            .timeout(Duration::from_secs(20))
            .probe_timeout(Duration::from_secs(1))
    };
    let (legacy, modern, both) = tokio::join!(
        slow("legacy", "3000", probe()),
        slow("modern", "3000", probe()),
        slow("both", "3000", probe()),
    );
    assert_eq!(legacy, (Era::Legacy, 1), "a 2025-only server");
    assert_eq!(modern, (Era::Modern, 1), "a 2026-07-28-only server");
    // Both requests were out: the later initialize decides.
    assert_eq!(both, (Era::Legacy, 1), "a server of both eras");
}

#[tokio::test]
async fn silent_for_3_s_within_the_default_probe_connects_modern() {
    // 30 s timeout: the default probe is 20 s, so discover is answered first.
    let options = ConnectOptions::new();
    assert_eq!(options.probe(), Duration::from_secs(20));
    assert_eq!(slow("both", "3000", options).await, (Era::Modern, 1));
}

#[test]
fn the_default_probe_is_two_thirds_of_the_timeout_up_to_20_s() {
    let probe = |s| {
        ConnectOptions::new()
            .timeout(Duration::from_secs(s))
            .probe()
    };
    assert_eq!(probe(3), Duration::from_secs(2));
    assert_eq!(probe(60), Duration::from_secs(20));
    let set = ConnectOptions::new().probe_timeout(Duration::from_millis(250));
    assert_eq!(set.probe(), Duration::from_millis(250));
}
