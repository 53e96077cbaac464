//! Writing a lock file: whole or not at all, one writer at a time, never
//! through a symlink. The CLI, the Python package and the Node package all
//! write here, so they cannot differ on any of it.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use super::lock::Lock;
use crate::error::{Error, ErrorKind, Result};
use crate::support::write::{FileWriter, Written};

/// The writer's turn on a lock file: an exclusive OS lock (`flock`,
/// `LockFileEx`) on `<lock>.pinning` beside it, held until dropped. Hold
/// it from reading the lock to writing it, and no other writer (another
/// `mcp-preamble pin`, a package's `Lock.save`) can slip a write between.
///
/// Not the lock file itself: that is replaced by a rename, so a second
/// writer would lock the old file. A symlink at `<lock>.pinning` is refused.
///
/// ```
/// use mcp_preamble::pin::{Lock, LockFile};
/// use mcp_preamble::ServerSnapshot;
/// let dir = std::env::temp_dir().join(format!("lockfile-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let file = LockFile::open(dir.join("mcp-preamble.lock"))?;
/// let mut lock = file.read()?;                       // empty: no file yet
/// lock.pin(&ServerSnapshot::new("invoice"));
/// assert!(file.write(&lock)?);                       // written
/// assert!(!file.write(&lock)?);                      // the same bytes: left alone
/// drop(file);
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok::<(), mcp_preamble::Error>(())
/// ```
#[derive(Debug)]
pub struct LockFile {
    path: PathBuf,
    _turn: File,
}

impl LockFile {
    /// Waits for the writer's turn on the lock file at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<LockFile> {
        let path = path.as_ref().to_path_buf();
        let mut name = path.as_os_str().to_owned();
        name.push(".pinning");
        let turn_path = PathBuf::from(name);
        let fail = |e: std::io::Error| Error::write(&turn_path, e);
        if is_symlink(&turn_path) {
            return Err(Error::new(
                ErrorKind::InvalidConfig,
                format!(
                    "{}: a symlink, not followed (remove it)",
                    turn_path.display()
                ),
            ));
        }
        let turn = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&turn_path)
            .map_err(fail)?;
        // A symlink planted between the check and the open: refuse it too.
        if is_symlink(&turn_path) {
            return Err(Error::new(
                ErrorKind::InvalidConfig,
                format!(
                    "{}: a symlink, not followed (remove it)",
                    turn_path.display()
                ),
            ));
        }
        turn.lock().map_err(fail)?;
        Ok(LockFile { path, _turn: turn })
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The lock as the file has it now; an empty lock when there is no file.
    pub fn read(&self) -> Result<Lock> {
        match std::fs::symlink_metadata(&self.path) {
            Ok(_) => Lock::from_path(&self.path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Lock::new()),
            Err(e) => Err(
                Error::new(ErrorKind::Io, format!("{}: {e}", self.path.display())).with_source(e),
            ),
        }
    }

    /// Writes `lock` whole or not at all through the one file writer
    /// (`files::FileWriter`): a new temporary file beside
    /// the lock (created exclusively: an existing file or symlink of its name
    /// is never opened), synced, then renamed into place. A symlink at the
    /// lock's path is replaced itself, its target never written. An
    /// existing file's permissions are kept (a 0600 lock stays 0600); a new
    /// one gets the process's default (`0666` less the umask). A file with
    /// the same bytes already is left as it is. Returns whether it wrote.
    pub fn write(&self, lock: &Lock) -> Result<bool> {
        let target = &self.path;
        FileWriter::new(target)
            .replace()
            .write(lock.to_json().as_bytes())
            .map(|w| w == Written::Wrote)
            .map_err(|e| Error::write(target, e))
    }
}

impl Lock {
    /// Writes the lock file at `path`, as `mcp-preamble pin` does: in the
    /// writer's turn ([`LockFile`]), whole or not at all, never through a
    /// symlink, keeping the file's permissions ([`LockFile::write`]).
    /// Failure is an [`ErrorKind::Io`] error: `cannot write file: PATH: WHY`.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        LockFile::open(path)?.write(self).map(|_| ())
    }
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ServerSnapshot;

    fn dir(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("mcp-preamble-save-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn lock_of(names: &[&str]) -> Lock {
        let mut lock = Lock::new();
        for n in names {
            lock.pin(&ServerSnapshot::new(*n));
        }
        lock
    }

    /// The names in `d` other than `keep`: temporary files left behind.
    fn leftovers(d: &Path, keep: &[&str]) -> Vec<String> {
        let names = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned());
        names.filter(|n| !keep.contains(&n.as_str())).collect()
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_at_the_target_is_replaced_never_written_through() {
        let d = dir("symlink");
        let victim = d.join("victim.txt");
        std::fs::write(&victim, "keep me").unwrap();
        let target = d.join("mcp-preamble.lock");
        std::os::unix::fs::symlink(&victim, &target).unwrap();
        lock_of(&["a"]).save(&target).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        assert!(
            std::fs::symlink_metadata(&target)
                .unwrap()
                .file_type()
                .is_file()
        );
        assert_eq!(Lock::from_path(&target).unwrap(), lock_of(&["a"]));
        assert_eq!(
            leftovers(
                &d,
                &[
                    "victim.txt",
                    "mcp-preamble.lock",
                    "mcp-preamble.lock.pinning"
                ]
            ),
            Vec::<String>::new()
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_at_the_writers_lock_is_refused() {
        let d = dir("turn");
        let victim = d.join("victim.txt");
        std::fs::write(&victim, "keep me").unwrap();
        std::os::unix::fs::symlink(&victim, d.join("x.lock.pinning")).unwrap();
        let err = lock_of(&["a"]).save(d.join("x.lock")).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidConfig);
        assert!(
            err.to_string()
                .ends_with("x.lock.pinning: a symlink, not followed (remove it)"),
            "{err}"
        );
        assert!(!d.join("x.lock").exists());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    }

    #[cfg(unix)]
    #[test]
    fn the_targets_permissions_are_kept() {
        use std::os::unix::fs::PermissionsExt;
        let d = dir("mode");
        let target = d.join("mcp-preamble.lock");
        std::fs::write(&target, "{}").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
        lock_of(&["a"]).save(&target).unwrap();
        let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(Lock::from_path(&target).unwrap(), lock_of(&["a"]));
    }

    #[test]
    fn a_write_that_fails_says_so_and_leaves_nothing() {
        let d = dir("fail");
        let target = d.join("no-such-dir").join("x.lock");
        let err = lock_of(&["a"]).save(&target).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Io);
        assert!(err.to_string().starts_with("cannot write file: "), "{err}");
        // A directory in the lock's place: the rename fails, the temp goes.
        let target = d.join("taken");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("inside"), "x").unwrap();
        let err = lock_of(&["a"]).save(&target).unwrap_err();
        assert!(
            err.to_string()
                .starts_with(&format!("cannot write file: {}: ", target.display())),
            "{err}"
        );
        assert_eq!(
            leftovers(&d, &["taken", "taken.pinning"]),
            Vec::<String>::new()
        );
    }

    #[test]
    fn concurrent_writers_never_leave_a_torn_file() {
        let d = dir("race");
        let target = d.join("mcp-preamble.lock");
        // Four locks of different sizes: a torn write would be none of them.
        let names: Vec<String> = (0..100).map(|n| format!("s{n}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let locks: Vec<Lock> = (1..=4).map(|i| lock_of(&names[..i * 25])).collect();
        let texts: Vec<String> = locks.iter().map(Lock::to_json).collect();
        std::thread::scope(|s| {
            for lock in &locks {
                let target = &target;
                s.spawn(move || {
                    for _ in 0..25 {
                        lock.save(target).unwrap();
                    }
                });
            }
            s.spawn(|| {
                for _ in 0..200 {
                    if let Ok(text) = std::fs::read_to_string(&target) {
                        assert!(
                            texts.contains(&text),
                            "a torn lock file: {} bytes",
                            text.len()
                        );
                    }
                }
            });
        });
        assert!(texts.contains(&std::fs::read_to_string(&target).unwrap()));
        assert_eq!(
            leftovers(&d, &["mcp-preamble.lock", "mcp-preamble.lock.pinning"]),
            Vec::<String>::new()
        );
    }

    #[test]
    fn the_writers_turn_is_one_at_a_time() {
        let d = dir("turns");
        let target = d.join("x.lock");
        let first = LockFile::open(&target).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = {
            let target = target.clone();
            std::thread::spawn(move || {
                let second = LockFile::open(&target).unwrap();
                tx.send(second.read().unwrap()).unwrap();
            })
        };
        // The second writer waits while the first holds its turn ...
        assert!(
            rx.recv_timeout(std::time::Duration::from_millis(300))
                .is_err()
        );
        first.write(&lock_of(&["a"])).unwrap();
        drop(first);
        // ... and then reads what the first wrote.
        let seen = rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        assert_eq!(seen, lock_of(&["a"]));
        waiter.join().unwrap();
    }
}
