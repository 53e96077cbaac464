//! A line-delimited JSON-RPC pipe shared by rmcp and the calls written
//! and read whole beside it: a stdio server's stdin and stdout here
//! ([`Pipe`]), the gateway's own stdin and stdout in `serve/front`.
//!
//! rmcp's client sends a request through its service loop: a channel to
//! the loop, a task that writes it, and the answer read as an untagged
//! union of twenty results and handed back through another channel. A
//! forwarded `tools/call` needs none of it: its line is written under the
//! lock rmcp's own writes take ([`SharedWriter`]), and its answer is taken
//! from stdout before rmcp reads it ([`LineFilter`]). rmcp never sees the
//! request or its answer; everything else the server sends (its progress,
//! its log messages, its own requests) reaches rmcp as before, in order.

// Only the gateway (feature `serve`) writes whole lines; a hub alone reads through the filter.
#![cfg_attr(not(feature = "serve"), allow(dead_code))]

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::sync::{OwnedMutexGuard, oneshot};

use crate::support::lock;

/// A writer shared by rmcp's transport and whole-line writers: each of
/// rmcp's writes holds the lock from its first byte until it is flushed
/// (rmcp's framed writer flushes after every message), so no line lands
/// inside another.
pub(crate) struct SharedWriter<W> {
    out: Arc<tokio::sync::Mutex<W>>,
    held: Option<OwnedMutexGuard<W>>,
    locking: Option<Pin<Box<dyn Future<Output = OwnedMutexGuard<W>> + Send>>>,
}

impl<W: AsyncWrite + Send + Unpin + 'static> SharedWriter<W> {
    pub(crate) fn new(out: Arc<tokio::sync::Mutex<W>>) -> SharedWriter<W> {
        SharedWriter {
            out,
            held: None,
            locking: None,
        }
    }

    /// The lock, taken when not held yet.
    fn poll_hold(&mut self, cx: &mut Context<'_>) -> Poll<&mut OwnedMutexGuard<W>> {
        if self.held.is_none() {
            let guard = match self.out.clone().try_lock_owned() {
                Ok(guard) => guard,
                Err(_) => {
                    let out = self.out.clone();
                    let locking = self
                        .locking
                        .get_or_insert_with(|| Box::pin(out.lock_owned()));
                    let guard = ready!(locking.as_mut().poll(cx));
                    self.locking = None;
                    guard
                }
            };
            self.held = Some(guard);
        }
        match self.held.as_mut() {
            Some(guard) => Poll::Ready(guard),
            None => Poll::Pending,
        }
    }
}

/// Whether `needle` is in `haystack` (a line looked at before it is read).
pub(crate) fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

/// Writes `line` whole to `out` (the other side of a [`SharedWriter`]).
pub(crate) async fn write_line<W: AsyncWrite + Unpin>(
    out: &tokio::sync::Mutex<W>,
    line: &[u8],
) -> std::io::Result<()> {
    let mut out = out.lock().await;
    out.write_all(line).await?;
    out.flush().await
}

impl<W: AsyncWrite + Send + Unpin + 'static> AsyncWrite for SharedWriter<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let out = ready!(self.poll_hold(cx));
        Pin::new(&mut **out).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        if self.held.is_none() && self.locking.is_none() {
            return Poll::Ready(Ok(()));
        }
        let out = ready!(self.poll_hold(cx));
        let flushed = ready!(Pin::new(&mut **out).poll_flush(cx));
        self.held = None;
        Poll::Ready(flushed)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let out = ready!(self.poll_hold(cx));
        let shut = ready!(Pin::new(&mut **out).poll_shutdown(cx));
        self.held = None;
        Poll::Ready(shut)
    }
}

/// The longest line looked at: a longer one passes on as it comes,
/// unread (rmcp's own limit on a line is 16 MiB).
pub(crate) const MAX_LOOKED_AT: usize = 16 << 20;

/// What a [`LineFilter`] asks of each line.
pub(crate) trait Lines: Send {
    /// `true` takes `line` (without its newline; not passed on).
    fn take(&mut self, line: &[u8]) -> bool;
    /// The input ended.
    fn ended(&mut self);
}

/// A reader that passes on the lines of `inner` its [`Lines`] does not
/// take, whole and in order, and the bytes of an overlong line as they
/// come.
pub(crate) struct LineFilter<R, L> {
    inner: R,
    pub(crate) lines: L,
    limit: usize,
    /// The line read so far (while it is short enough to be looked at).
    line: Vec<u8>,
    /// The line being read is overlong: its bytes pass on as they come.
    passing: bool,
    /// Bytes to pass on, from `handed` on.
    ready: Vec<u8>,
    handed: usize,
    ended: bool,
    /// Where each read lands (zeroed once).
    chunk: Box<[u8]>,
}

impl<R, L: Lines> LineFilter<R, L> {
    /// Lines longer than `limit` pass on unread.
    pub(crate) fn new(inner: R, lines: L, limit: usize) -> Self {
        LineFilter {
            inner,
            lines,
            limit,
            line: Vec::new(),
            passing: false,
            ready: Vec::new(),
            handed: 0,
            ended: false,
            chunk: vec![0; READ_CHUNK].into_boxed_slice(),
        }
    }

    /// Looks at `bytes`, the next read.
    pub(crate) fn saw(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while let Some(end) = memchr::memchr(b'\n', rest) {
            self.keep(&rest[..end]);
            self.end_line();
            rest = &rest[end + 1..];
        }
        self.keep(rest);
    }

    fn keep(&mut self, bytes: &[u8]) {
        if self.passing {
            self.ready.extend_from_slice(bytes);
        } else if self.line.len() + bytes.len() > self.limit {
            self.passing = true;
            self.ready.append(&mut self.line);
            self.ready.extend_from_slice(bytes);
        } else {
            self.line.extend_from_slice(bytes);
        }
    }

    fn end_line(&mut self) {
        if std::mem::take(&mut self.passing) {
            self.ready.push(b'\n');
            return;
        }
        let text = self.line.strip_suffix(b"\r").unwrap_or(&self.line);
        if !self.lines.take(text) {
            self.ready.extend_from_slice(&self.line);
            self.ready.push(b'\n');
        }
        self.line.clear();
    }

    /// The bytes passed on so far and not read.
    #[cfg(test)]
    pub(crate) fn passed(&self) -> &[u8] {
        &self.ready[self.handed..]
    }
}

/// How much is read at a time.
const READ_CHUNK: usize = 8 * 1024;

impl<R: AsyncRead + Unpin, L: Lines + Unpin> AsyncRead for LineFilter<R, L> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.handed < this.ready.len() {
                let n = buf.remaining().min(this.ready.len() - this.handed);
                buf.put_slice(&this.ready[this.handed..this.handed + n]);
                this.handed += n;
                if this.handed == this.ready.len() {
                    this.ready.clear();
                    this.handed = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.ended {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = std::mem::take(&mut this.chunk);
            let mut read = ReadBuf::new(&mut chunk);
            let polled = Pin::new(&mut this.inner).poll_read(cx, &mut read);
            let n = read.filled().len();
            let got = match polled {
                Poll::Ready(Ok(())) => Some(n),
                Poll::Ready(Err(e)) => {
                    this.chunk = chunk;
                    return Poll::Ready(Err(e));
                }
                Poll::Pending => None,
            };
            let Some(n) = got else {
                this.chunk = chunk;
                return Poll::Pending;
            };
            match &chunk[..n] {
                [] => {
                    // An unfinished line is passed on as it is: rmcp drops it.
                    this.ended = true;
                    let line = std::mem::take(&mut this.line);
                    this.ready.extend_from_slice(&line);
                    this.lines.ended();
                }
                bytes => this.saw(bytes),
            }
            this.chunk = chunk;
        }
    }
}

/// The calls waiting for their answer on one pipe, by id.
type Waiting = Arc<Mutex<HashMap<i64, oneshot::Sender<Vec<u8>>>>>;

/// A server's stdin.
pub(crate) type Stdin = Box<dyn AsyncWrite + Send + Unpin>;

/// The first id of a call written whole: far from rmcp's own ids on the
/// same connection (from 0), and exact in JavaScript.
const FIRST_ID: i64 = 1 << 40;

/// A stdio server's pipes as a caller writes a request whole and takes
/// its answer ([`Pipe::ask`]).
#[derive(Clone)]
pub(crate) struct Pipe {
    stdin: Arc<tokio::sync::Mutex<Stdin>>,
    waiting: Waiting,
    ids: Arc<AtomicI64>,
}

impl std::fmt::Debug for Pipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Pipe")
    }
}

/// Why a call written whole has no answer.
#[derive(Debug)]
pub(crate) enum Unanswered {
    /// The line could not be written.
    Unwritten,
    /// The server's stdout ended before the answer.
    Closed,
}

impl Pipe {
    /// The pipes of a server: its stdin (shared with rmcp's writer), and
    /// the taker of its stdout's answers (rmcp reads what is left).
    pub(crate) fn new(stdin: Arc<tokio::sync::Mutex<Stdin>>) -> (Pipe, Answers) {
        let waiting = Waiting::default();
        let pipe = Pipe {
            stdin,
            waiting: waiting.clone(),
            ids: Arc::new(AtomicI64::new(FIRST_ID)),
        };
        (pipe, Answers { waiting })
    }

    /// Closes the server's stdin (for rmcp and every caller): a stdio
    /// server is asked to exit so. Writes after it fail.
    pub(crate) async fn close(&self) {
        let mut stdin = self.stdin.lock().await;
        let _ = stdin.shutdown().await;
        // Dropped: the pipe's last writer is gone.
        *stdin = Box::new(Closed);
    }

    /// A new request id.
    pub(crate) fn next_id(&self) -> i64 {
        self.ids.fetch_add(1, Ordering::Relaxed)
    }

    /// Writes `line` (a request of id `id`, ending in a newline) and waits
    /// for its answer line. Dropped before the answer, it waits no more
    /// (the caller tells the server to cancel).
    pub(crate) async fn ask(&self, id: i64, line: &[u8]) -> Result<Vec<u8>, Unanswered> {
        let (tx, rx) = oneshot::channel();
        lock(&self.waiting).insert(id, tx);
        let waiting = Waits(&self.waiting, id);
        if write_line(&self.stdin, line).await.is_err() {
            return Err(Unanswered::Unwritten);
        }
        let answer = rx.await.map_err(|_| Unanswered::Closed);
        drop(waiting);
        answer
    }
}

/// A closed stdin: every write fails.
struct Closed;

impl AsyncWrite for Closed {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        _: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Poll::Ready(Err(std::io::ErrorKind::BrokenPipe.into()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// Removes a call from the waiting when it ends, however it ends.
struct Waits<'a>(&'a Waiting, i64);

impl Drop for Waits<'_> {
    fn drop(&mut self) {
        lock(self.0).remove(&self.1);
    }
}

/// What a server's stdout filter takes: the answers of calls waiting.
pub(crate) struct Answers {
    waiting: Waiting,
}

impl Lines for Answers {
    fn take(&mut self, line: &[u8]) -> bool {
        let mut waiting = lock(&self.waiting);
        if waiting.is_empty() {
            return false;
        }
        match answer_id(line).and_then(|id| waiting.remove(&id)) {
            Some(tx) => {
                let _ = tx.send(line.to_vec());
                true
            }
            None => false,
        }
    }

    fn ended(&mut self) {
        // Every call waiting learns the pipe closed.
        lock(&self.waiting).clear();
    }
}

/// The id of `line` when it is an answer with a number for an id (an `id`
/// and no `method`). An answer as servers write it,
/// `{"jsonrpc":"2.0","id":N,"result":` or `,"error":`, is read from its
/// head: a result may be long, and its text is read whole once, by the
/// call that waits for it (which ends with an error if the rest does not
/// read).
fn answer_id(line: &[u8]) -> Option<i64> {
    #[derive(serde::Deserialize)]
    struct Head {
        id: Option<serde_json::Value>,
        method: Option<serde::de::IgnoredAny>,
    }
    if let Some(rest) = line.strip_prefix(br#"{"jsonrpc":"2.0","id":"#) {
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        let (number, after) = rest.split_at(digits);
        let canonical = digits == 1 || (digits > 1 && digits < 19 && number[0] != b'0');
        if canonical && (after.starts_with(br#","result":"#) || after.starts_with(br#","error":"#))
        {
            return std::str::from_utf8(number).ok()?.parse().ok();
        }
    }
    match serde_json::from_slice::<Head>(line) {
        Ok(Head {
            id: Some(id),
            method: None,
        }) => id.as_i64(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::answer_id;

    #[test]
    fn an_answer_is_known_by_its_head_as_by_reading_it_whole() {
        let whole = |line: &str| {
            let v: serde_json::Value = serde_json::from_str(line).ok()?;
            if v.get("method").is_some() {
                return None;
            }
            v.get("id")?.as_i64()
        };
        for line in [
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#,
            r#"{"jsonrpc":"2.0","id":0,"error":{"code":-1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":123456789012345678,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1234567890123456789,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":07,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":"7","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":-3,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7.5,"result":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":1}}"#,
            r#"{"id":9,"jsonrpc":"2.0","result":{}}"#,
            r#"not json"#,
        ] {
            assert_eq!(answer_id(line.as_bytes()), whole(line), "{line}");
        }
        assert_eq!(
            answer_id(br#"{"jsonrpc":"2.0","id":42,"result":{}}"#),
            Some(42)
        );
    }
}
