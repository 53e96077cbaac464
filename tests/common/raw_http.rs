//! One HTTP/1.1 request on its own connection (`Connection: close`), written
//! and read by hand: the tests see the gateway's bytes as they are (status,
//! every header, a chunked or event-stream body).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::Value;

/// An answer, read whole.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    /// The first header named `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        (self.headers.iter())
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC messages of a JSON or event-stream body.
    pub fn messages(&self) -> Vec<Value> {
        let json = |d: &str| serde_json::from_str::<Value>(d.trim()).ok();
        match self.body.trim_start().starts_with('{') {
            true => json(&self.body).into_iter().collect(),
            false => (self.body.lines())
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(json)
                .collect(),
        }
    }

    /// The `result` of the answer's response, if it has one.
    pub fn result(&self) -> Option<Value> {
        (self.messages().into_iter()).find_map(|m| m.get("result").cloned())
    }

    /// The `result`, which the test needs.
    pub fn expect_result(&self) -> Value {
        self.result()
            .unwrap_or_else(|| panic!("no result in {self:?}"))
    }
}

/// `line` (`POST /mcp HTTP/1.1`) with `headers` (each `\r\nName: value`) and
/// a JSON `body` to `authority`, on a new connection.
pub fn exchange(authority: &str, line: &str, headers: &str, body: &str) -> Answer {
    let s = TcpStream::connect(authority).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    exchange_on(s, authority, line, headers, body)
}

/// The same over `stream` (TLS, or a connection made elsewhere), with
/// `Host: host`.
pub fn exchange_on(
    mut s: impl Read + Write,
    host: &str,
    line: &str,
    headers: &str,
    body: &str,
) -> Answer {
    write!(
        s,
        "{line}\r\nHost: {host}{headers}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let raw = String::from_utf8_lossy(&raw).to_string();
    let (head, rest) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let mut lines = head.lines();
    let status = (lines.next())
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    let chunked = (headers.iter())
        .any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    let body = match chunked {
        true => dechunk(rest),
        false => rest.to_string(),
    };
    Answer {
        status,
        headers,
        body,
    }
}

/// A chunked body's data.
fn dechunk(mut rest: &str) -> String {
    let mut body = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || after.len() < n {
            break;
        }
        body.push_str(&after[..n]);
        rest = after[n..].strip_prefix("\r\n").unwrap_or(&after[n..]);
    }
    body
}
