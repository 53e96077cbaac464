//! The HTTP client of one Streamable HTTP connection.
//!
//! rmcp's own client keeps no idle connection (`pool_max_idle_per_host(0)`),
//! so each message it posts opens a TCP connection and closes it: measured
//! in `benches/serve.rs`, one connect per forwarded call. This one keeps
//! connections alive per host and writes without Nagle's delay, which is
//! the stall rmcp avoids by not pooling.

use std::time::Duration;

use reqwest::redirect::{Attempt, Policy};

/// Redirects followed for one request at most.
const MAX_REDIRECTS: usize = 10;

/// A client for one connection: pooled, no Nagle, redirects only within
/// the origin (a 307 or 308, which keep the method and body: a POST's
/// message arrives whole, and no session id or header goes to another
/// host). One per connection, not one per process: a pooled connection
/// belongs to the runtime that opened it, and a host may run several.
pub(super) fn client() -> reqwest::Client {
    let built = reqwest::Client::builder()
        .tcp_nodelay(true)
        .pool_idle_timeout(Duration::from_secs(30))
        .redirect(Policy::custom(same_origin))
        .build();
    // Building fails only when the platform's TLS or resolver cannot
    // start; rmcp's own default client is the fallback then.
    built.unwrap_or_else(|e| {
        tracing::debug!(error = %e, "the pooled http client did not build");
        reqwest::Client::new()
    })
}

fn same_origin(attempt: Attempt<'_>) -> reqwest::redirect::Action {
    let first = attempt.previous().first();
    let same = first.is_some_and(|from| {
        let to = attempt.url();
        from.scheme() == to.scheme()
            && from.host_str() == to.host_str()
            && from.port_or_known_default() == to.port_or_known_default()
    });
    let kept = matches!(attempt.status().as_u16(), 307 | 308);
    if same && kept && attempt.previous().len() <= MAX_REDIRECTS {
        attempt.follow()
    } else {
        attempt.stop()
    }
}
