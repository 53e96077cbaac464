//! Small helpers with one home each, shared by the pipeline's stages:
//! edit distance (did-you-mean suggestions), hashing (FNV-1a, SHA-256 hex),
//! canonical JSON (keys sorted, for stable hashes and cache keys), the
//! [`string_enum!`] macro for fieldless enums with a wire name per variant,
//! look-alike letters, [`lock`], the TLS client config (`tls.rs`), the one
//! file writer (`write.rs`, public through `files`), and the turns of an
//! upstream's subscription stream (`pace.rs`).
//!
//! Nothing else here is public, and nothing here imports the rest of the
//! crate: it sits below every other module.

pub(crate) mod canonical;
pub(crate) mod distance;
pub(crate) mod hash;
pub(crate) mod lookalike;
#[cfg(feature = "http")]
pub(crate) mod pace;
mod string_enum;
#[cfg(any(feature = "serve-auth", feature = "state-redis"))]
pub(crate) mod tls;
pub(crate) mod write;

pub(crate) use string_enum::string_enum;

/// Locks `m`, also when a panic elsewhere poisoned it: the data behind
/// these locks (maps and buffers) stays consistent between statements.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
