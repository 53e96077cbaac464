//! The one reader of server-sent events (an upstream's `text/event-stream`
//! answers, for the direct post and `wrap --url`): each byte is looked at
//! once, however the stream is cut into chunks, so an event that never
//! ends costs its reader the bytes it sends and nothing more, and another
//! upstream's calls keep their time.
//!
//! Lines end in LF, CRLF or CR; `data` lines are joined with LF into the
//! event's data; comments, `event`, `retry` and unknown fields are
//! skipped; `id` is kept as the last event id (for a resumption). An event
//! whose data and current line (ended or not, of any field) pass the bound
//! is an error, and the reader keeps nothing of it.

/// Reads events from the chunks it is given.
#[derive(Debug)]
pub struct EventReader {
    /// Bytes not yet taken: the current line, from `line` on.
    buf: Vec<u8>,
    /// Where the current (unfinished) line starts in `buf`.
    line: usize,
    /// How far `buf` was searched for the current line's end.
    scanned: usize,
    /// The data of the event being read.
    data: Vec<u8>,
    /// Whether that event had a `data` line (an empty one counts).
    has_data: bool,
    /// A CR ended the last line: an LF right after it is part of it.
    after_cr: bool,
    last_id: Option<String>,
    max: usize,
    /// Bytes looked at or moved: the test that the work is linear reads it.
    #[cfg_attr(not(test), allow(dead_code))]
    work: usize,
}

/// An event over the reader's bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLong;

impl EventReader {
    /// A reader of events of at most `max` bytes of data.
    pub fn new(max: usize) -> EventReader {
        EventReader {
            buf: Vec::new(),
            line: 0,
            scanned: 0,
            data: Vec::new(),
            has_data: false,
            after_cr: false,
            last_id: None,
            max,
            work: 0,
        }
    }

    /// Takes `chunk`; read its events with [`EventReader::next_event`].
    pub fn push(&mut self, chunk: &[u8]) {
        // What was taken is dropped before more comes: the buffer holds
        // one unfinished line at most, and is moved once per chunk.
        if self.line > 0 {
            self.work += self.buf.len() - self.line;
            self.buf.drain(..self.line);
            self.scanned -= self.line;
            self.line = 0;
        }
        self.buf.extend_from_slice(chunk);
    }

    /// The data of the next whole event, `None` until one is there, or
    /// [`TooLong`] (then the event is dropped and reading goes on after it
    /// is over the bound: the caller usually stops).
    pub fn next_event(&mut self) -> Option<Result<Vec<u8>, TooLong>> {
        loop {
            let Some(end) = self.line_end() else {
                if self.buf.len() - self.line + self.data.len() > self.max {
                    return Some(Err(self.overflow()));
                }
                return None;
            };
            // A whole line is held to the bound as an unfinished one is,
            // so where the chunks were cut changes nothing.
            if end - self.line + self.data.len() > self.max {
                return Some(Err(self.overflow()));
            }
            let (start, stop) = (self.line, end);
            let crlf_next = self.buf[end] == b'\r';
            self.line = end + 1;
            self.scanned = self.line;
            self.after_cr = crlf_next;
            if let Some(event) = self.take_line(start, stop) {
                return Some(event);
            }
        }
    }

    /// The data of an event the stream ended without a blank line after.
    pub fn finish(mut self) -> Option<Vec<u8>> {
        let rest = self.buf.len();
        if self.line < rest {
            let start = self.line;
            self.line = rest;
            if let Some(Ok(event)) = self.take_line(start, rest) {
                return Some(event);
            }
        }
        self.has_data.then_some(self.data)
    }

    /// The `id` of the last event that had one.
    pub fn last_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// Where the current line ends (its LF or CR), scanning only what was
    /// not scanned before.
    fn line_end(&mut self) -> Option<usize> {
        if self.after_cr && self.buf.get(self.line) == Some(&b'\n') {
            self.line += 1;
            self.scanned = self.scanned.max(self.line);
            self.after_cr = false;
        }
        if self.line < self.buf.len() {
            self.after_cr = false;
        }
        let from = self.scanned.max(self.line);
        let found = self.buf[from..]
            .iter()
            .position(|&b| b == b'\n' || b == b'\r');
        self.work += found.map_or(self.buf.len() - from, |i| i + 1);
        match found {
            Some(i) => Some(from + i),
            None => {
                self.scanned = self.buf.len();
                None
            }
        }
    }

    /// One whole line: a blank one ends the event (its data, when it had
    /// some).
    fn take_line(&mut self, start: usize, stop: usize) -> Option<Result<Vec<u8>, TooLong>> {
        let line = &self.buf[start..stop];
        if line.is_empty() {
            let had = std::mem::take(&mut self.has_data);
            let data = std::mem::take(&mut self.data);
            return had.then_some(Ok(data));
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(0) => return None,
            Some(i) => (&line[..i], &line[i + 1..]),
            None => (line, &line[line.len()..]),
        };
        let value = value.strip_prefix(b" ").unwrap_or(value);
        match field {
            b"data" => {
                if self.data.len() + value.len() + 1 > self.max {
                    return Some(Err(self.overflow()));
                }
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            b"id" if !value.contains(&0) => {
                self.last_id = Some(String::from_utf8_lossy(value).into_owned());
            }
            _ => {}
        }
        None
    }

    /// Drops the event being read.
    fn overflow(&mut self) -> TooLong {
        self.data = Vec::new();
        self.has_data = false;
        self.buf = Vec::new();
        (self.line, self.scanned) = (0, 0);
        TooLong
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(chunks: &[&[u8]], max: usize) -> Vec<Result<Vec<u8>, TooLong>> {
        let mut r = EventReader::new(max);
        let mut out = Vec::new();
        for c in chunks {
            r.push(c);
            while let Some(e) = r.next_event() {
                out.push(e);
            }
        }
        out.extend(r.finish().map(Ok));
        out
    }

    #[test]
    fn events_are_read_whole_in_lf_crlf_or_cr_and_comments_are_skipped() {
        let stream = &b":\n\ndata: {\"a\":1}\n\nid: 7\r\ndata: {\"b\":\r\ndata: 2}\r\n\r\ndata:x\rdata:y\r\r"[..];
        let want: Vec<Result<Vec<u8>, TooLong>> = vec![
            Ok(b"{\"a\":1}".to_vec()),
            Ok(b"{\"b\":\n2}".to_vec()),
            Ok(b"x\ny".to_vec()),
        ];
        assert_eq!(all(&[stream], 1 << 20), want);
        // Cut anywhere, even between a CR and its LF, the events are the same.
        for cut in 0..stream.len() {
            let (a, b) = stream.split_at(cut);
            assert_eq!(all(&[a, b], 1 << 20), want, "cut at {cut}");
        }
        let one_by_one: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(all(&one_by_one, 1 << 20), want);
    }

    #[test]
    fn the_last_id_is_kept_and_an_unended_event_is_read_at_the_end() {
        let mut r = EventReader::new(100);
        r.push(b"id: 41\ndata: a\n\nid: 42\ndata: b");
        assert_eq!(r.next_event(), Some(Ok(b"a".to_vec())));
        assert_eq!(r.next_event(), None);
        assert_eq!(r.last_id(), Some("42"));
        assert_eq!(r.finish(), Some(b"b".to_vec()));
    }

    #[test]
    fn an_event_over_the_bound_is_an_error_whether_or_not_its_line_ended() {
        assert_eq!(all(&[b"data: 0123456789\n\n"], 8), vec![Err(TooLong)]);
        // An unfinished line counts whole (its field name too).
        let mut r = EventReader::new(12);
        r.push(b"data: 0123");
        assert_eq!(r.next_event(), None);
        r.push(b"456789");
        assert_eq!(r.next_event(), Some(Err(TooLong)));
    }

    #[test]
    fn the_bound_does_not_depend_on_where_the_chunks_were_cut() {
        // A long line of another field: over the bound whole or in parts.
        let stream = b"data: x\nfiller: 0123456789abcdef\n\n";
        assert_eq!(all(&[stream], 12), vec![Err(TooLong)]);
        let (a, b) = stream.split_at(20);
        assert_eq!(all(&[a, b], 12), vec![Err(TooLong)]);
    }

    #[test]
    fn an_endless_line_is_searched_once() {
        // Each chunk is scanned once: `scanned` moves with the buffer.
        let mut r = EventReader::new(usize::MAX);
        r.push(b"data: ");
        for _ in 0..1000 {
            r.push(&[b'x'; 64]);
            assert_eq!(r.next_event(), None);
            assert_eq!(r.scanned, r.buf.len());
        }
    }

    /// Issue 54: a 1 MiB event fed in 7-byte chunks (and in many short
    /// data lines) costs work in proportion to its bytes, not to bytes
    /// times chunks (the reader that rescanned its buffer did ~75 G here).
    #[test]
    fn the_work_is_linear_in_the_bytes_however_small_the_chunks() {
        for line in [usize::MAX, 100] {
            let mut event = Vec::new();
            while event.len() < 1 << 20 {
                let take = line.min(1 << 20);
                event.extend_from_slice(b"data: ");
                event.extend(std::iter::repeat_n(b'x', take.min((1 << 20) - event.len())));
                event.push(b'\n');
            }
            event.push(b'\n');
            let mut r = EventReader::new(usize::MAX);
            let mut events = 0;
            for chunk in event.chunks(7) {
                r.push(chunk);
                while let Some(e) = r.next_event() {
                    assert!(e.is_ok());
                    events += 1;
                }
            }
            assert_eq!(events, 1);
            assert!(
                r.work <= 3 * event.len(),
                "{} bytes, {} of work",
                event.len(),
                r.work
            );
        }
    }
}
