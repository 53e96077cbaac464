//! Replies from Redis, capped in size. redis-rs buffers a reply whole and
//! has no bound of its own, so the state's connections (commands and
//! pub/sub, `redis://` and `rediss://`) are opened here and read through
//! [`Capped`]: it follows RESP's framing as the bytes arrive, each byte
//! once, and fails the read as soon as one reply would pass [`MAX_REPLY`],
//! declared lengths included (a `$4000000000` header is refused before a
//! byte of its value is read). A hostile or broken Redis, or another
//! tenant's huge value under the state's keys, costs a gateway at most
//! the cap per reply; the refusal is logged and the command fails with an
//! `InvalidMessage` error (the follower keeps serving the last reviewed
//! state).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// The largest reply taken from Redis (64 MiB): the bound of a lock file
/// ([`MAX_FILE_BYTES`](crate::error::MAX_FILE_BYTES)), whose entries the
/// state holds; far above what the state's keys hold in use.
pub const MAX_REPLY: usize = 64 << 20;

/// The fewest bytes a value takes on the wire (`_\r\n`): what a declared
/// count of values is sure to cost.
const LEAST_VALUE: usize = 3;

/// Why a stream of replies was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refused {
    /// One reply passes the cap.
    Over,
    /// Not RESP (an unknown type byte, a length that is not a number).
    NotResp,
}

/// The line being read after a type byte: what it says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    /// A whole value (`+`, `-`, `:`, `_`, `#`, `,`, `(`).
    Simple,
    /// The length of a blob that follows (`$`, `!`, `=`).
    Blob,
    /// A count of values that follow, `per` for each (`*`, `~`, `>`: 1;
    /// `%`: 2); an attribute (`|`) is followed by its value too.
    Aggregate { per: usize, attribute: bool },
}

/// Where the framer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Type,
    Line(Line),
    /// The bytes of a blob left, its CRLF included.
    Blob(usize),
}

/// RESP's framing followed byte by byte: the size of the reply being read.
#[derive(Debug)]
pub(super) struct Framer {
    part: Part,
    /// Values still to come before the reply is whole.
    pending: usize,
    /// The reply's bytes so far.
    size: usize,
    /// The number of the current line, when it is a length.
    number: usize,
    negative: bool,
    bad: bool,
    max: usize,
}

impl Framer {
    pub(super) fn new(max: usize) -> Framer {
        Framer {
            part: Part::Type,
            pending: 0,
            size: 0,
            number: 0,
            negative: false,
            bad: false,
            max,
        }
    }

    /// Follows `bytes`; an error once a reply passes the cap (or is not RESP).
    pub(super) fn take(&mut self, mut bytes: &[u8]) -> Result<(), Refused> {
        while let Some(&first) = bytes.first() {
            let used = match self.part {
                // A blob's bytes were counted when its length came.
                Part::Blob(left) => {
                    let n = left.min(bytes.len());
                    self.part = Part::Blob(left - n);
                    if left == n {
                        self.part = Part::Type;
                        self.done();
                    }
                    n
                }
                Part::Type => {
                    self.start(first)?;
                    1
                }
                Part::Line(line) => {
                    let end = bytes.iter().position(|&b| b == b'\n');
                    let n = end.map_or(bytes.len(), |i| i + 1);
                    if line != Line::Simple {
                        bytes[..end.unwrap_or(n)]
                            .iter()
                            .for_each(|&b| self.digit(b));
                    }
                    self.size = self.size.saturating_add(n);
                    if end.is_some() {
                        self.end_line(line)?;
                    }
                    n
                }
            };
            bytes = &bytes[used..];
            if self.size > self.max {
                return Err(Refused::Over);
            }
        }
        Ok(())
    }

    /// A type byte: a new value, and a new reply when none is pending.
    fn start(&mut self, byte: u8) -> Result<(), Refused> {
        let line = match byte {
            b'+' | b'-' | b':' | b'_' | b'#' | b',' | b'(' => Line::Simple,
            b'$' | b'!' | b'=' => Line::Blob,
            b'*' | b'~' | b'>' => Line::Aggregate {
                per: 1,
                attribute: false,
            },
            b'%' => Line::Aggregate {
                per: 2,
                attribute: false,
            },
            b'|' => Line::Aggregate {
                per: 2,
                attribute: true,
            },
            _ => return Err(Refused::NotResp),
        };
        if self.pending == 0 {
            (self.pending, self.size) = (1, 0);
        }
        self.size = self.size.saturating_add(1);
        (self.number, self.negative, self.bad) = (0, false, false);
        self.part = Part::Line(line);
        Ok(())
    }

    /// One byte of a length line (its CR is skipped).
    fn digit(&mut self, b: u8) {
        match b {
            b'0'..=b'9' => {
                self.number =
                    (self.number.saturating_mul(10)).saturating_add(usize::from(b - b'0'));
            }
            b'-' if self.number == 0 && !self.negative => self.negative = true,
            b'\r' => {}
            _ => self.bad = true,
        }
    }

    /// A line's LF: the value is whole, or what it declares is owed.
    fn end_line(&mut self, line: Line) -> Result<(), Refused> {
        if line != Line::Simple && self.bad {
            return Err(Refused::NotResp);
        }
        let null = self.negative;
        self.part = Part::Type;
        match line {
            Line::Simple => self.done(),
            Line::Blob if null => self.done(),
            Line::Blob => {
                let left = self.number.saturating_add(2);
                self.size = self.size.saturating_add(left);
                self.part = Part::Blob(left);
            }
            Line::Aggregate { .. } if null => self.done(),
            Line::Aggregate { per, attribute } => {
                if !attribute {
                    self.done();
                }
                let values = self.number.saturating_mul(per);
                self.pending = self.pending.saturating_add(values);
                // What the values still owed are sure to cost.
                let owed = self.pending.saturating_mul(LEAST_VALUE);
                if self.size.saturating_add(owed) > self.max {
                    return Err(Refused::Over);
                }
            }
        }
        Ok(())
    }

    /// A value is whole.
    fn done(&mut self) {
        self.pending = self.pending.saturating_sub(1);
    }
}

/// A connection's bytes either way.
pub(super) trait Io: AsyncRead + AsyncWrite + Send + Sync + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Sync + Unpin> Io for T {}

/// A connection to Redis whose replies are held to the cap: past it, the
/// read fails (and keeps failing), the refusal is logged once with the
/// state's URL, and `over` is set for the command that was waiting.
pub(super) struct Capped {
    inner: Box<dyn Io>,
    framer: Framer,
    refused: Option<Refused>,
    over: Arc<AtomicBool>,
    shown: String,
}

impl Capped {
    fn failed(why: Refused) -> io::Error {
        let text = match why {
            Refused::Over => format!("a reply from redis over the {} MiB cap", MAX_REPLY >> 20),
            Refused::NotResp => "a reply from redis that is not resp".to_string(),
        };
        io::Error::new(io::ErrorKind::InvalidData, text)
    }
}

impl AsyncRead for Capped {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if let Some(why) = this.refused {
            return Poll::Ready(Err(Capped::failed(why)));
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        if let Err(why) = this.framer.take(&buf.filled()[before..]) {
            this.refused = Some(why);
            this.over.store(why == Refused::Over, Ordering::Relaxed);
            let error = Capped::failed(why);
            tracing::warn!(state = %this.shown, %error, "refused; the connection is closed and the last reviewed state kept");
            return Poll::Ready(Err(error));
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Capped {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// A connection to the Redis of `info` (TCP, or TLS for `rediss://`:
/// the server's certificate checked against the system's roots or
/// `SSL_CERT_FILE`'s), read through [`Capped`]. `over` is set when a
/// reply passes the cap.
pub(super) async fn connect(
    info: &redis::ConnectionInfo,
    shown: &str,
    over: Arc<AtomicBool>,
) -> io::Result<Capped> {
    let (host, port, tls) = match info.addr() {
        redis::ConnectionAddr::Tcp(host, port) => (host, *port, false),
        redis::ConnectionAddr::TcpTls {
            host,
            port,
            insecure: false,
            ..
        } => (host, *port, true),
        // `#insecure` and unix sockets are refused when the state opens.
        _ => return Err(io::Error::other("only redis:// and rediss:// are taken")),
    };
    let host = host.trim_matches(['[', ']']);
    let tcp = TcpStream::connect((host, port)).await?;
    tcp.set_nodelay(true)?;
    let inner: Box<dyn Io> = if tls {
        let config = crate::support::tls::client().map_err(io::Error::other)?;
        let name = rustls_pki_types::ServerName::try_from(host.to_string())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let connector = tokio_rustls::TlsConnector::from(config);
        Box::new(connector.connect(name, tcp).await?)
    } else {
        Box::new(tcp)
    };
    Ok(Capped {
        inner,
        framer: Framer::new(MAX_REPLY),
        refused: None,
        over,
        shown: shown.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(chunks: &[&[u8]], max: usize) -> Result<Framer, Refused> {
        let mut f = Framer::new(max);
        for c in chunks {
            f.take(c)?;
        }
        Ok(f)
    }

    #[test]
    fn replies_under_the_cap_pass_in_any_chunks_and_each_starts_afresh() {
        // GET, HGETALL (RESP2), then a RESP3 map with an attribute: each
        // reply is 40 bytes or less, the stream far more.
        let stream: &[u8] =
            b"$1\r\n3\r\n*4\r\n$1\r\na\r\n$2\r\nbc\r\n$1\r\nd\r\n$-1\r\n*-1\r\n%1\r\n+k\r\n|1\r\n+x\r\n:1\r\n#t\r\n";
        let whole = framed(&[stream, stream, stream], 40).unwrap();
        assert_eq!((whole.pending, whole.part), (0, Part::Type));
        for cut in 0..stream.len() {
            let (a, b) = stream.split_at(cut);
            assert!(framed(&[a, b, a, b], 40).is_ok(), "cut at {cut}");
        }
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert!(framed(&bytes, 40).is_ok());
    }

    #[test]
    fn a_reply_over_the_cap_is_refused_before_its_bytes_come() {
        // A declared blob over the cap: refused at its header.
        assert_eq!(framed(&[b"$100\r\n"], 64).err(), Some(Refused::Over));
        assert_eq!(
            framed(&[b"$4000000000000\r\n"], MAX_REPLY).err(),
            Some(Refused::Over)
        );
        // A count of values that cannot fit, nested too.
        assert_eq!(framed(&[b"*30\r\n"], 64).err(), Some(Refused::Over));
        assert_eq!(
            framed(&[b"*1\r\n%2000000000\r\n"], MAX_REPLY).err(),
            Some(Refused::Over)
        );
        // Many small values, each under the cap, one reply over it.
        let mut many = b"*100\r\n".to_vec();
        many.extend(b":1\r\n".repeat(100));
        assert!(framed(&[&many], 406).is_ok());
        assert_eq!(framed(&[&many], 405).err(), Some(Refused::Over));
        // A line that never ends.
        let endless = [b'x'; 100];
        assert_eq!(
            framed(&[b"+", &endless, &endless], 150).err(),
            Some(Refused::Over)
        );
        // A length that is not a number, a type that is not RESP.
        assert_eq!(framed(&[b"$1x\r\n"], 64).err(), Some(Refused::NotResp));
        assert_eq!(framed(&[b"HTTP/1.1"], 64).err(), Some(Refused::NotResp));
    }
}
