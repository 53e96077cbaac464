//! Tokenizer files loaded once per process (feature `tokenizers`): every
//! [`HfTokenizer::from_file`] of the same file shares one parsed tokenizer,
//! so ten assemblers of one `tokenizer.json` read and parse it once (1 to 4
//! seconds each for Llama 3's, measured in the packages).
//!
//! A file is the same when its path (made absolute) has the same size,
//! modification time and, on Unix, device and inode as when it was read:
//! then it is not read again. A file that changed is read, and its bytes
//! (their SHA-256) find a tokenizer parsed from the same bytes under any
//! path. Anything but a regular file (a FIFO, a device) is read every time:
//! it has no such stamp. Parsed tokenizers are kept for the life of the
//! process, one per distinct content.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::SystemTime;

use super::HfTokenizer;
use crate::error::{Error, Result, read_file};
use crate::support::hash::sha256_hex;

/// What tells a file's content has not changed, without reading it.
#[derive(Clone, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    device: u64,
    inode: u64,
}

impl Stamp {
    /// The stamp of a regular file; `None` for anything else.
    fn of(path: &Path) -> Option<Stamp> {
        let meta = std::fs::metadata(path).ok().filter(|m| m.is_file())?;
        #[cfg(unix)]
        let (device, inode) = {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino())
        };
        #[cfg(not(unix))]
        let (device, inode) = (0, 0);
        Some(Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
            device,
            inode,
        })
    }
}

/// One path: what it held when last read, and how often it was read.
#[derive(Default)]
struct PathEntry {
    seen: Option<(Stamp, HfTokenizer)>,
    reads: u64,
}

#[derive(Default)]
struct Loaded {
    /// Per path, behind its own lock: one path is read by one thread at a
    /// time (a second waits and shares the result), others in parallel.
    paths: HashMap<PathBuf, Arc<Mutex<PathEntry>>>,
    /// Parsed tokenizers by the SHA-256 of their file's bytes.
    contents: HashMap<String, HfTokenizer>,
}

fn loaded() -> MutexGuard<'static, Loaded> {
    static LOADED: OnceLock<Mutex<Loaded>> = OnceLock::new();
    // A panic elsewhere while it was held leaves whole maps: go on.
    let lock = LOADED.get_or_init(Mutex::default);
    lock.lock().unwrap_or_else(|e| e.into_inner())
}

/// The key of `path`: absolute, symlinks resolved, when it exists.
fn key(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

impl HfTokenizer {
    /// Loads a `tokenizer.json`. Its name in reports is the file name and
    /// the first 12 hex digits of the file's SHA-256
    /// (`tokenizer.json sha256:0123456789ab`), the same wherever the file
    /// lies; [`HfTokenizer::named`] gives it another.
    ///
    /// A file is read and parsed once per process while it stays the same
    /// (its size, modification time and inode): every later load of it,
    /// by any assembler, shares the parsed tokenizer
    /// ([`file_reads`](crate::tokens::file_reads) counts the reads).
    ///
    /// Fails with [`ErrorKind::Io`](crate::error::ErrorKind::Io) when the
    /// file cannot be read (or is over
    /// [`MAX_FILE_BYTES`](crate::files::MAX_FILE_BYTES)) and with
    /// [`ErrorKind::InvalidTokenizer`](crate::error::ErrorKind::InvalidTokenizer)
    /// when it is not a tokenizer the tokenizers crate loads.
    pub fn from_file(path: impl AsRef<Path>) -> Result<HfTokenizer> {
        load(path.as_ref())
    }
}

/// The tokenizer of the file at `path`, read and parsed only when this
/// process has not seen it as it is now; named after the file (its name
/// and hash), as [`HfTokenizer::from_file`] documents.
fn load(path: &Path) -> Result<HfTokenizer> {
    let entry = Arc::clone(loaded().paths.entry(key(path)).or_default());
    let mut entry = entry.lock().unwrap_or_else(|e| e.into_inner());
    let stamp = Stamp::of(path);
    if let (Some(now), Some((then, tokenizer))) = (&stamp, &entry.seen)
        && now == then
    {
        return Ok(tokenizer.clone());
    }
    entry.reads += 1;
    let json = read_file(path)?;
    let digest = sha256_hex(json.as_bytes());
    let file = path
        .file_name()
        .map_or_else(|| "tokenizer.json".into(), |n| n.to_string_lossy());
    let name = format!("{file} sha256:{}", &digest[..12]);
    let parsed = loaded().contents.get(&digest).cloned();
    let tokenizer = match parsed {
        Some(t) => t,
        None => {
            let t = HfTokenizer::from_json(&json)
                .map_err(|e| Error::new(e.kind(), format!("{}: {}", path.display(), e.detail())))?;
            loaded().contents.insert(digest, t.clone());
            t
        }
    }
    .named(name);
    entry.seen = stamp.map(|s| (s, tokenizer.clone()));
    Ok(tokenizer)
}

/// How many times this process has read the tokenizer file at `path`
/// (through [`HfTokenizer::from_file`], and so every assembler, policy
/// file and package given it): 1 however many assemblers share it, until
/// the file changes.
pub fn file_reads(path: impl AsRef<Path>) -> u64 {
    let entry = loaded().paths.get(&key(path.as_ref())).cloned();
    entry.map_or(0, |e| e.lock().unwrap_or_else(|e| e.into_inner()).reads)
}
