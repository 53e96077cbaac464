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

#[cfg(test)]
pub(super) mod tests {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::{TcpListener, TcpStream};

    /// One HTTP/1.1 request read from `stream`: its first line, its
    /// `mcp-session-id` (empty when none) and its body.
    pub(in crate::connect) fn read_request(stream: &TcpStream) -> (String, String, Vec<u8>) {
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut line = String::new();
        let _ = reader.read_line(&mut line);
        let (mut length, mut session) = (0, String::new());
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                break;
            }
            let lower = header.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
            if let Some(v) = lower.strip_prefix("mcp-session-id:") {
                session = v.trim().to_string();
            }
        }
        let mut body = vec![0; length];
        let _ = reader.read_exact(&mut body);
        (line, session, body)
    }

    /// A server on 127.0.0.1 that answers each request by its path:
    /// `/same` 307 to `/landed`, `/other-host` 307 to `localhost` (another
    /// origin), `/found` 302 to `/landed`, `/landed` 200 with the request's
    /// body and its `mcp-session-id`.
    fn server() -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let (line, session, body) = read_request(&stream);
                let path = line.split(' ').nth(1).unwrap_or("").to_string();
                let (status, location) = match path.as_str() {
                    "/same" => (
                        "307 Temporary Redirect",
                        format!("http://127.0.0.1:{port}/landed"),
                    ),
                    "/other-host" => (
                        "307 Temporary Redirect",
                        format!("http://localhost:{port}/landed"),
                    ),
                    "/found" => ("302 Found", format!("http://127.0.0.1:{port}/landed")),
                    _ => ("200 OK", String::new()),
                };
                let text = format!("{}|{session}", String::from_utf8_lossy(&body));
                let answer = format!(
                    "HTTP/1.1 {status}\r\nLocation: {location}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                    text.len()
                );
                let mut stream = stream;
                let _ = stream.write_all(answer.as_bytes());
            }
        });
        port
    }

    /// A redirect is followed only to the same origin and only when it
    /// keeps the method and body (307, 308): a session id and a message
    /// never go to another host, and a POST never turns into a GET.
    #[tokio::test]
    async fn redirects_are_followed_only_within_the_origin_keeping_the_body() {
        let port = server();
        let client = super::client();
        let post = |path: &str| {
            client
                .post(format!("http://127.0.0.1:{port}{path}"))
                .header("mcp-session-id", "s-1")
                .body("{\"jsonrpc\":\"2.0\"}")
                .send()
        };
        let landed = post("/same").await.unwrap();
        assert_eq!(landed.status(), 200);
        assert_eq!(landed.text().await.unwrap(), "{\"jsonrpc\":\"2.0\"}|s-1");
        assert_eq!(post("/other-host").await.unwrap().status(), 307);
        assert_eq!(post("/found").await.unwrap().status(), 302);
    }
}
