//! Pins: the lock file and how a server compares with it.

use std::sync::{Mutex, MutexGuard, PoisonError};

use mcp_preamble::pin::Lock;
use napi::bindgen_prelude::ClassInstance;
use napi_derive::napi;

use crate::errors::to_js;
use crate::server::NativeServer;

/// A lock (`Lock` of index.js wraps it).
#[napi]
pub struct NativeLock {
    inner: Mutex<Lock>,
}

impl NativeLock {
    /// The lock as it stands.
    pub fn lock(&self) -> MutexGuard<'_, Lock> {
        // A panic cannot happen while it is held; a poisoned lock is still whole.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[napi]
impl NativeLock {
    /// An empty lock.
    #[napi(constructor)]
    pub fn new() -> NativeLock {
        NativeLock {
            inner: Mutex::new(Lock::new()),
        }
    }

    /// A lock file.
    #[napi(factory, catch_unwind)]
    pub fn from_path(path: String) -> napi::Result<NativeLock> {
        let lock = Lock::from_path(&path).map_err(to_js)?;
        Ok(NativeLock {
            inner: Mutex::new(lock),
        })
    }

    /// A lock file's text; `origin` names it in errors.
    #[napi(factory, catch_unwind)]
    pub fn from_json(text: String, origin: String) -> napi::Result<NativeLock> {
        let lock = Lock::from_str(&text, &origin).map_err(to_js)?;
        Ok(NativeLock {
            inner: Mutex::new(lock),
        })
    }

    /// Pins the server as it is now (replacing its pin).
    #[napi]
    pub fn pin(&self, server: ClassInstance<'_, NativeServer>) {
        self.lock().pin(&server.snapshot);
    }

    /// Removes a pin; whether there was one.
    #[napi]
    pub fn unpin(&self, key: String) -> bool {
        self.lock().unpin(&key)
    }

    /// The pinned servers' keys.
    #[napi]
    pub fn keys(&self) -> Vec<String> {
        self.lock().keys().map(str::to_string).collect()
    }

    /// How the server compares with its pin, as the JSON of the crate's `Pin`.
    #[napi]
    pub fn check(&self, server: ClassInstance<'_, NativeServer>) -> String {
        let pin = self.lock().check(&server.snapshot);
        serde_json::to_string(&pin).unwrap_or_default()
    }

    /// The lock file's text.
    #[napi]
    pub fn to_json(&self) -> String {
        self.lock().to_json()
    }

    /// Writes the lock file as the CLI does (`Lock::save`: the writer's
    /// turn, a temporary file renamed into place, never through a symlink).
    #[napi(catch_unwind)]
    pub fn save(&self, path: String) -> napi::Result<()> {
        let lock = self.lock().clone();
        lock.save(&path).map_err(to_js)
    }
}

impl Default for NativeLock {
    fn default() -> NativeLock {
        NativeLock::new()
    }
}
