//! Newline-delimited JSON-RPC messages read within a byte cap: an
//! untrusted peer's endless line is an error, never an unbounded buffer.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// What reading one line gave.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// One message's bytes, without the line end (`\n` or `\r\n`).
    Message(Vec<u8>),
    /// The peer closed its side.
    End,
    /// A line longer than the cap (its start is dropped, nothing kept).
    TooLong,
}

/// Reads the next non-empty line of at most `max` bytes.
pub(crate) async fn next_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    max: usize,
) -> std::io::Result<Line> {
    let mut line = Vec::new();
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            // A last line without its newline is still a message.
            return Ok(match trimmed(line) {
                Some(l) => Line::Message(l),
                None => Line::End,
            });
        }
        let (take, done) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (at + 1, true),
            None => (available.len(), false),
        };
        if line.len() + take > max.saturating_add(2) {
            return Ok(Line::TooLong);
        }
        line.extend_from_slice(&available[..take]);
        reader.consume(take);
        if done {
            match trimmed(std::mem::take(&mut line)) {
                Some(l) if l.len() <= max => return Ok(Line::Message(l)),
                Some(_) => return Ok(Line::TooLong),
                // A blank line between messages is skipped.
                None => continue,
            }
        }
    }
}

/// `line` without its line end; `None` when nothing is left.
fn trimmed(mut line: Vec<u8>) -> Option<Vec<u8>> {
    while matches!(line.last(), Some(b'\n' | b'\r')) {
        line.pop();
    }
    (!line.iter().all(u8::is_ascii_whitespace)).then_some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn all(input: &[u8], max: usize) -> Vec<Line> {
        let mut reader = tokio::io::BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        loop {
            let line = next_line(&mut reader, max).await.unwrap();
            let stop = matches!(line, Line::End | Line::TooLong);
            out.push(line);
            if stop {
                return out;
            }
        }
    }

    #[tokio::test]
    async fn lines_are_read_whole_within_the_cap_and_refused_past_it() {
        let m = |s: &str| Line::Message(s.as_bytes().to_vec());
        assert_eq!(
            all(b"{\"a\":1}\r\n\n{\"b\":2}\n{\"c\":3}", 16).await,
            [m("{\"a\":1}"), m("{\"b\":2}"), m("{\"c\":3}"), Line::End]
        );
        // Exactly the cap is a message; one byte more is refused.
        assert_eq!(all(b"12345678\n", 8).await, [m("12345678"), Line::End]);
        assert_eq!(all(b"123456789\n", 8).await, [Line::TooLong]);
        // An endless line stops at the cap, not at the end of the input.
        assert_eq!(all(&vec![b'x'; 1 << 16], 64).await, [Line::TooLong]);
    }
}
