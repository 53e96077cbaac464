//! The one writer of every file the crate and its CLI write: lock files,
//! snapshot files, `install`'s backups and host configs, the CLI's state
//! files, the connect cache. Public as `mcp_preamble::files::FileWriter`.
//!
//! Every write goes to a new temporary file beside the target, created
//! exclusively (`O_CREAT|O_EXCL`: an existing file or symlink of its name is
//! an error, never opened or followed), with its mode set before a byte is
//! written, synced, then placed: by a hard link when nothing may be replaced
//! (the link fails if anything has the name, a dangling symlink included),
//! by a rename otherwise (a symlink at the target is replaced itself, what
//! it points at is never written).

use std::fs::{File, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

/// What [`FileWriter::write`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Written {
    /// The file now holds the bytes.
    Wrote,
    /// The target already held the same bytes: left as it was.
    Unchanged,
}

/// Something has the target's name (a file, a symlink, a directory) and
/// the writer was told not to replace it: nothing was written, nothing
/// followed. The [`std::io::Error`] that carries it has kind
/// [`AlreadyExists`](std::io::ErrorKind::AlreadyExists) and says
/// `PATH: already there (a file or a symlink); not replaced, not followed`.
#[derive(Debug)]
pub struct InTheWay {
    /// The target that was not written.
    pub path: PathBuf,
}

impl std::fmt::Display for InTheWay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: already there (a file or a symlink); not replaced, not followed",
            self.path.display()
        )
    }
}

impl std::error::Error for InTheWay {}

/// How one file is written (see the module's page for the steps).
///
/// ```
/// use mcp_preamble::files::{FileWriter, Written};
/// let dir = std::env::temp_dir().join(format!("file-writer-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("a.json");
/// # let _ = std::fs::remove_file(&path);
/// assert_eq!(FileWriter::new(&path).write(b"{}")?, Written::Wrote);
/// // Created exclusively unless told to replace:
/// let err = FileWriter::new(&path).write(b"[]").unwrap_err();
/// assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
/// assert_eq!(FileWriter::new(&path).replace().write(b"{}")?, Written::Unchanged);
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct FileWriter {
    path: PathBuf,
    replace: bool,
    mode: Option<u32>,
    sync: bool,
}

impl FileWriter {
    /// A writer of `path` that creates it only: anything already there is
    /// an [`InTheWay`] error. Its mode is the process's default (`0666`
    /// less the umask) unless [`mode`](Self::mode) says otherwise.
    pub fn new(path: impl AsRef<Path>) -> FileWriter {
        FileWriter {
            path: path.as_ref().to_path_buf(),
            replace: false,
            mode: None,
            sync: true,
        }
    }

    /// Replaces what is there (a regular file keeps its mode unless
    /// [`mode`](Self::mode) says otherwise; a symlink is replaced itself).
    pub fn replace(mut self) -> FileWriter {
        self.replace = true;
        self
    }

    /// The file's permission bits (Unix; ignored elsewhere), set before any
    /// byte is written and not narrowed or widened by the umask.
    pub fn mode(mut self, mode: u32) -> FileWriter {
        self.mode = Some(mode & 0o7777);
        self
    }

    /// Not synced to disk before it is placed: for a file rewritten often
    /// whose loss in a crash costs nothing (a status), so that no write waits
    /// for the disk. Still whole or not at all to a reader.
    pub fn unsynced(mut self) -> FileWriter {
        self.sync = false;
        self
    }

    /// The mode of `source` (a backup of a `0600` config is `0600`); when
    /// `source` cannot be read, the default.
    pub fn mode_of(self, source: &Path) -> FileWriter {
        match mode_of(source) {
            Some(m) => self.mode(m),
            None => self,
        }
    }

    /// Writes `bytes` whole or not at all (see the module's page).
    pub fn write(&self, bytes: &[u8]) -> std::io::Result<Written> {
        let target = &self.path;
        let before = std::fs::symlink_metadata(target).ok();
        let regular = before.as_ref().filter(|m| m.file_type().is_file());
        if before.is_some() && !self.replace {
            return Err(in_the_way(target));
        }
        if regular.is_some() && std::fs::read(target).is_ok_and(|old| old == bytes) {
            return Ok(Written::Unchanged);
        }
        let mode = self
            .mode
            .or_else(|| regular.and_then(|_| mode_of(target)))
            .filter(|_| cfg!(unix));
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let (tmp, mut file) = temp_file(dir, target, mode)?;
        let written = file
            .write_all(bytes)
            .and_then(|()| if self.sync { file.sync_all() } else { Ok(()) })
            .and_then(|()| place(&tmp, target, self.replace));
        drop(file);
        // After a hard link the temporary name goes too; after a rename it is gone.
        if written.is_err() || !self.replace {
            let _ = std::fs::remove_file(&tmp);
        }
        written.map(|()| Written::Wrote)
    }
}

fn in_the_way(path: &Path) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        InTheWay {
            path: path.to_path_buf(),
        },
    )
}

#[cfg(unix)]
fn mode_of(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .ok()
        .map(|m| m.permissions().mode() & 0o7777)
}

#[cfg(not(unix))]
fn mode_of(_: &Path) -> Option<u32> {
    None
}

fn place(tmp: &Path, target: &Path, replace: bool) -> std::io::Result<()> {
    if replace {
        // rename replaces a symlink at `target` itself, never what it points to.
        return std::fs::rename(tmp, target);
    }
    // A hard link fails if the name was taken since the check: no window in
    // which a file or symlink planted meanwhile could be replaced.
    match std::fs::hard_link(tmp, target) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(in_the_way(target)),
        // A filesystem without hard links: check again, then rename.
        Err(_) if std::fs::symlink_metadata(target).is_ok() => Err(in_the_way(target)),
        Err(_) => std::fs::rename(tmp, target),
    }
}

/// A new file in `dir` under an unpredictable name (`create_new`: an
/// existing file or symlink of that name is an error, never opened), with
/// `mode` from its creation on.
fn temp_file(dir: &Path, target: &Path, mode: Option<u32>) -> std::io::Result<(PathBuf, File)> {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut last = None;
    for attempt in 0u32..16 {
        // RandomState is seeded from the OS's randomness.
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        h.write_u32(attempt);
        let tmp = dir.join(format!(".{name}.{:016x}.tmp", h.finish()));
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        if let Some(m) = mode {
            // Never wider than asked while the bytes go in; exact just below.
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, m & 0o777);
        }
        match options.open(&tmp) {
            Ok(file) => {
                #[cfg(unix)]
                if let Some(m) = mode {
                    use std::os::unix::fs::PermissionsExt;
                    let set = file.set_permissions(std::fs::Permissions::from_mode(m));
                    if let Err(e) = set {
                        let _ = std::fs::remove_file(&tmp);
                        return Err(e);
                    }
                }
                return Ok((tmp, file));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    let _ = mode;
    Err(last.unwrap_or_else(|| std::io::Error::other("no temporary file name")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("mcp-preamble-writer-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[cfg(unix)]
    #[test]
    fn a_planted_link_is_never_followed_and_refused_when_creating() {
        let d = dir("link");
        let victim = d.join("victim");
        std::fs::write(&victim, "keep me").unwrap();
        let target = d.join("x.bak");
        std::os::unix::fs::symlink(&victim, &target).unwrap();
        let err = FileWriter::new(&target).write(b"evil").unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(
            err.to_string(),
            format!(
                "{}: already there (a file or a symlink); not replaced, not followed",
                target.display()
            )
        );
        assert!(err.get_ref().unwrap().is::<InTheWay>());
        // A dangling link too.
        let dangling = d.join("y.bak");
        std::os::unix::fs::symlink(d.join("nowhere"), &dangling).unwrap();
        assert!(FileWriter::new(&dangling).write(b"evil").is_err());
        assert!(!d.join("nowhere").exists());
        // Replacing replaces the link itself.
        FileWriter::new(&target).replace().write(b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        assert!(std::fs::symlink_metadata(&target).unwrap().is_file());
        assert_eq!(names(&d), ["victim", "x.bak", "y.bak"]);
    }

    #[cfg(unix)]
    #[test]
    fn the_mode_is_the_sources_or_the_targets_whatever_the_umask() {
        use std::os::unix::fs::PermissionsExt;
        let d = dir("mode");
        let config = d.join("config.json");
        std::fs::write(&config, "{}").unwrap();
        std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o600)).unwrap();
        let backup = d.join("config.json.bak");
        FileWriter::new(&backup)
            .mode_of(&config)
            .write(b"{}")
            .unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&backup), 0o600);
        // A replaced file keeps its own mode, wider or narrower.
        std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o640)).unwrap();
        FileWriter::new(&config).replace().write(b"[]").unwrap();
        assert_eq!(mode(&config), 0o640);
        assert_eq!(std::fs::read_to_string(&config).unwrap(), "[]");
        assert_eq!(names(&d), ["config.json", "config.json.bak"]);
    }
}
