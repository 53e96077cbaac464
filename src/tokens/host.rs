//! An exact count the host supplies (a provider's token-count endpoint),
//! cached by digest, bounded by a timeout, with a fallback counter.

use crate::support::lock;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use super::TokenCounter;
use crate::support::hash::sha256_hex;

/// The host's count of one text: `Ok(tokens)` or why it could not count.
type CountFn = dyn Fn(&str) -> std::result::Result<usize, String> + Send + Sync;

/// Most digests the cache keeps before it starts over.
const CACHE_CAP: usize = 65_536;

/// A [`TokenCounter`] whose counts come from the host: typically a
/// provider's token-count endpoint (Anthropic's `count_tokens`), which only
/// the host can call. The library makes no network call itself.
///
/// - Counts are cached by the SHA-256 of the text, shared by clones: an
///   unchanged block is never sent again, so after the first assembly only
///   a changed block costs a call.
/// - Each call runs on its own thread and is waited for at most the
///   timeout. Past it (or when the host's function fails or panics) the
///   text is counted with the fallback counter (e.g. the Claude estimate),
///   and the assembly's report says so
///   ([`Counting::fallbacks`](super::Counting::fallbacks)). A late answer
///   is still cached, so the next assembly has it.
/// - Budgets hold on whatever was counted: exact counts, or the fallback's
///   for the texts that fell back.
/// - Counts that fell back are never kept in the assembler's memo, so the
///   next assembly asks again. A live hub keeps each server's fitted block
///   until the server changes, though: a block fitted while its counts fell
///   back is reused as it is (its report said so when it was made).
///
/// The host's function may block (an HTTP call); it must be
/// deterministic for a text, or assemblies of the same input differ. With a
/// budget, the assembler counts every step it trims a block to, so the
/// first assembly of a block over its budget may take several calls.
///
/// ```
/// use std::time::Duration;
/// use mcp_preamble::Assembler;
/// use mcp_preamble::tokens::{ClaudeEstimate, ClaudeGeneration, HostCounter};
/// // A stand-in for the provider's endpoint: one token per 3 bytes.
/// let remote = |text: &str| -> Result<usize, String> { Ok(text.len().div_ceil(3)) };
/// let counter = HostCounter::new("claude-sonnet-4 (count_tokens)", remote)
///     .timeout(Duration::from_millis(500))
///     .fallback(ClaudeEstimate::new("claude-sonnet-4", ClaudeGeneration::Before4_7));
/// let assembler = Assembler::new().token_counter(counter).budget(200);
/// # let _ = assembler;
/// ```
#[derive(Clone)]
pub struct HostCounter {
    name: String,
    count: Arc<CountFn>,
    fallback: Arc<dyn TokenCounter>,
    timeout: Duration,
    cache: Arc<Mutex<HashMap<String, usize>>>,
    fallbacks: Arc<AtomicU64>,
}

impl std::fmt::Debug for HostCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostCounter")
            .field("name", &self.name)
            .field("fallback", &self.fallback.name())
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl HostCounter {
    /// A counter reported as `name`, counting with `count`. Defaults: a
    /// timeout of 2 s, and `o200k_base` as the fallback.
    pub fn new(
        name: impl Into<String>,
        count: impl Fn(&str) -> std::result::Result<usize, String> + Send + Sync + 'static,
    ) -> HostCounter {
        HostCounter {
            name: name.into(),
            count: Arc::new(count),
            fallback: Arc::new(super::Tiktoken::new(super::Encoding::O200kBase)),
            timeout: Duration::from_secs(2),
            cache: Arc::new(Mutex::new(HashMap::new())),
            fallbacks: Arc::new(AtomicU64::new(0)),
        }
    }

    /// How long one count is waited for before the fallback counts it.
    pub fn timeout(mut self, timeout: Duration) -> HostCounter {
        self.timeout = timeout;
        self
    }

    /// The counter used past the timeout or on a failure.
    pub fn fallback(mut self, fallback: impl TokenCounter + 'static) -> HostCounter {
        self.fallback = Arc::new(fallback);
        self
    }

    fn cached(&self, digest: &str) -> Option<usize> {
        lock(&self.cache).get(digest).copied()
    }
}

fn store(cache: &Mutex<HashMap<String, usize>>, digest: String, n: usize) {
    let mut cache = lock(cache);
    if cache.len() >= CACHE_CAP {
        cache.clear();
    }
    cache.insert(digest, n);
}

impl TokenCounter for HostCounter {
    fn name(&self) -> &str {
        &self.name
    }

    fn count(&self, text: &str) -> usize {
        let digest = sha256_hex(text.as_bytes());
        if let Some(n) = self.cached(&digest) {
            return n;
        }
        let (tx, rx) = mpsc::channel();
        let (count, cache, owned) = (self.count.clone(), self.cache.clone(), text.to_string());
        let spawned = std::thread::Builder::new()
            .name("mcp-preamble-count".into())
            .spawn(move || {
                let answer =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| count(&owned)));
                if let Ok(Ok(n)) = answer {
                    store(&cache, digest, n);
                    let _ = tx.send(n);
                }
            });
        match spawned
            .ok()
            .and_then(|_| rx.recv_timeout(self.timeout).ok())
        {
            Some(n) => n,
            None => {
                self.fallbacks.fetch_add(1, Ordering::Relaxed);
                self.fallback.count(text)
            }
        }
    }

    /// `false`: the host's counter is opaque.
    fn splits_after_newline(&self) -> bool {
        false
    }

    /// `false`: the host's counter is opaque.
    fn splits_before_word(&self) -> bool {
        false
    }

    /// `false`: the host's counter is opaque.
    fn splits_before_newline(&self) -> bool {
        false
    }

    fn fallbacks(&self) -> u64 {
        self.fallbacks.load(Ordering::Relaxed)
    }

    fn fallback_counter(&self) -> Option<&dyn TokenCounter> {
        Some(self.fallback.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn cached_by_digest_and_falls_back_past_the_timeout() {
        let calls = Arc::new(AtomicUsize::new(0));
        let seen = calls.clone();
        let c = HostCounter::new("remote", move |t: &str| {
            seen.fetch_add(1, Ordering::SeqCst);
            if t.contains("slow") {
                std::thread::sleep(Duration::from_millis(300));
            }
            if t.contains("fail") {
                return Err("503".into());
            }
            Ok(t.len())
        })
        .timeout(Duration::from_millis(100));
        assert_eq!(c.count("hello"), 5);
        assert_eq!(c.count("hello"), 5);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!(c.fallbacks(), 0);
        let o200k = super::super::Tiktoken::new(super::super::Encoding::O200kBase);
        assert_eq!(c.count("slow text here"), o200k.count("slow text here"));
        assert_eq!(c.fallbacks(), 1);
        // The late answer is cached for the next time.
        std::thread::sleep(Duration::from_millis(400));
        assert_eq!(c.count("slow text here"), 14);
        assert_eq!(c.count("fail"), o200k.count("fail"));
        assert_eq!(c.fallbacks(), 2);
    }
}
