//! `event_stream`: the gateway's one reader of server-sent events
//! (`serve::EventReader`, for the direct post and `wrap --url`).
//!
//! The input's first byte picks the chunk size (1 to 256) and the bound
//! (its low 7 bits times 16, or none when 0); the rest is the stream.
//!
//! Oracles: the events are the same whatever the chunks (one chunk, the
//! picked size, one byte at a time); they are those a plain reference
//! reader (whole stream, split into lines) finds; no event's data passes
//! the bound; and a stream with no line end at all yields nothing before
//! its end, however long.

use mcp_preamble::serve::{EventReader, TooLong};

type Events = Vec<Result<Vec<u8>, TooLong>>;

fn read(stream: &[u8], chunk: usize, max: usize) -> Events {
    let mut reader = EventReader::new(max);
    let mut out = Vec::new();
    for c in stream.chunks(chunk.max(1)) {
        reader.push(c);
        while let Some(e) = reader.next_event() {
            let over = e.is_err();
            out.push(e);
            if over {
                return out;
            }
        }
    }
    out.extend(reader.finish().map(Ok));
    out
}

/// The events of `stream` read whole, line by line, without a bound.
fn reference(stream: &[u8]) -> Vec<Vec<u8>> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < stream.len() {
        match stream[i] {
            b'\n' => {
                lines.push(&stream[start..i]);
                start = i + 1;
            }
            b'\r' => {
                lines.push(&stream[start..i]);
                if stream.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    let rest = &stream[start..];
    let mut events = Vec::new();
    let (mut data, mut has) = (Vec::new(), false);
    for line in lines.into_iter().chain((!rest.is_empty()).then_some(rest)) {
        if line.is_empty() {
            if has {
                events.push(std::mem::take(&mut data));
            }
            (data, has) = (Vec::new(), false);
            continue;
        }
        let value = match line.iter().position(|&b| b == b':') {
            Some(0) => continue,
            Some(i) if &line[..i] == b"data" => &line[i + 1..],
            None if line == b"data" => &line[4..],
            _ => continue,
        };
        if has {
            data.push(b'\n');
        }
        data.extend_from_slice(value.strip_prefix(b" ").unwrap_or(value));
        has = true;
    }
    if has {
        events.push(data);
    }
    events
}

pub fn run(data: &[u8]) {
    let Some((&first, stream)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(first) + 1;
    let bound = usize::from(first & 0x7f) * 16;
    let max = if bound == 0 { usize::MAX } else { bound };
    let whole = read(stream, stream.len(), max);
    assert_eq!(read(stream, chunk, max), whole, "chunks of {chunk}");
    assert_eq!(read(stream, 1, max), whole, "one byte at a time");
    for event in whole.iter().flatten() {
        assert!(event.len() <= max, "an event over the bound");
    }
    if max == usize::MAX {
        let want: Events = reference(stream).into_iter().map(Ok).collect();
        assert_eq!(whole, want, "not the reference reader's events");
    }
    if !stream.contains(&b'\n') && !stream.contains(&b'\r') {
        let mut reader = EventReader::new(max);
        reader.push(stream);
        assert!(
            matches!(reader.next_event(), None | Some(Err(TooLong))),
            "an event before any line end"
        );
    }
}
