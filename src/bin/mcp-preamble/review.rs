//! Where the reviewed pins are: a lock file (`--lock`) or a review state
//! shared by gateways in Redis or Valkey (`--state`), and whether the
//! gateway's shared state answers (its readiness).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use mcp_preamble::pin::Lock;
use mcp_preamble::state::{Readiness, SharedState};

/// The reviewed pins of a run.
pub enum Review {
    /// Neither `--lock` nor `--state`.
    None,
    /// `--lock PATH`.
    File(PathBuf),
    /// `--state URL`.
    Shared(Arc<SharedState>),
}

impl Review {
    /// `--lock` or `--state` (clap keeps them from coming together).
    pub fn open(lock: Option<&Path>, state: Option<&str>) -> Result<Review, mcp_preamble::Error> {
        Ok(match (lock, state) {
            (_, Some(url)) => Review::Shared(Arc::new(SharedState::open(url)?)),
            (Some(path), None) => Review::File(path.to_path_buf()),
            (None, None) => Review::None,
        })
    }

    /// The pins as they are now; `None` without `--lock` or `--state`.
    pub async fn load(&self) -> Result<Option<Lock>, mcp_preamble::Error> {
        match self {
            Review::None => Ok(None),
            Review::File(path) => Lock::from_path(path).map(Some),
            Review::Shared(state) => state.load().await.map(Some),
        }
    }
}

/// The readiness of the gateway's shared state, once it follows one.
static READINESS: OnceLock<Readiness> = OnceLock::new();

/// Keeps `readiness` as the one [`ready`] reports.
pub fn set_readiness(readiness: Readiness) {
    let _ = READINESS.set(readiness);
}

/// Whether the gateway's review state is loaded and answers: always true
/// with a lock file or none; with `--state`, while Redis answers (for a
/// readiness probe such as `/readyz`).
pub fn ready() -> bool {
    READINESS.get().is_none_or(Readiness::is_ready)
}

/// Where a running gateway reads its lock from.
pub enum LockSource {
    /// No lock.
    None,
    /// A lock file, read again when it changes.
    File(PathBuf),
    /// The shared state's last lock, as its follower keeps it.
    Shared(tokio::sync::watch::Receiver<Lock>),
}

impl LockSource {
    /// The lock as it is now.
    pub fn current(&self) -> Result<Option<Lock>, mcp_preamble::Error> {
        match self {
            LockSource::None => Ok(None),
            LockSource::File(path) => Lock::from_path(path).map(Some),
            LockSource::Shared(lock) => Ok(Some(lock.borrow().clone())),
        }
    }

    /// The lock file, when the lock is one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            LockSource::File(path) => Some(path),
            _ => None,
        }
    }

    /// Returns when the shared state's lock changed; never for a file
    /// (its changes are seen by its modification time).
    pub async fn changed(&mut self) {
        if let LockSource::Shared(lock) = self
            && lock.changed().await.is_ok()
        {
            return;
        }
        std::future::pending().await
    }
}

/// `serve`'s lock: a file's, or the shared state's, loaded once (the last
/// one kept in `dir` when Redis does not answer) and then followed; the
/// follower lives as long as it is kept.
pub async fn follow(
    review: Review,
    dir: Option<&Path>,
) -> (LockSource, Option<mcp_preamble::state::Follower>) {
    let state = match review {
        Review::None => return (LockSource::None, None),
        Review::File(path) => return (LockSource::File(path), None),
        Review::Shared(state) => state,
    };
    let (first, ready) = match state.load().await {
        Ok(lock) => (lock, true),
        Err(e) => {
            let kept = dir.and_then(crate::state::shared_lock);
            tracing::warn!(
                error = %e,
                "the shared review state does not load at start; serving {} until it does",
                if kept.is_some() { "the last reviewed state this gateway kept" } else { "no pins" }
            );
            (kept.unwrap_or_default(), false)
        }
    };
    let follower = state.follow(first, ready);
    set_readiness(follower.ready.clone());
    if let Some(dir) = dir {
        tokio::spawn(keep_last(follower.lock.clone(), dir.to_path_buf()));
    }
    (LockSource::Shared(follower.lock.clone()), Some(follower))
}

/// Keeps the shared state's last lock in `dir`, for the next start.
async fn keep_last(mut lock: tokio::sync::watch::Receiver<Lock>, dir: PathBuf) {
    loop {
        let last = lock.borrow_and_update().clone();
        if let Err(e) = crate::state::save_shared_lock(&dir, &last) {
            tracing::warn!(
                "the last shared review state could not be kept in {}: {e}",
                dir.display()
            );
        }
        if lock.changed().await.is_err() {
            return;
        }
    }
}
