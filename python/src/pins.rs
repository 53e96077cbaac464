//! Pins: the lock file and how a server compares with it.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, PoisonError};

use mcp_preamble::pin::Lock;
use pyo3::prelude::*;

use crate::errors::to_py;
use crate::server::NativeServer;

/// A lock (`mcp_preamble.Lock` wraps it).
#[pyclass(module = "mcp_preamble._native", frozen)]
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

#[pymethods]
impl NativeLock {
    /// An empty lock.
    #[new]
    fn new() -> NativeLock {
        NativeLock {
            inner: Mutex::new(Lock::new()),
        }
    }

    /// A lock file.
    #[staticmethod]
    fn from_path(py: Python<'_>, path: PathBuf) -> PyResult<NativeLock> {
        let lock = py.detach(|| Lock::from_path(&path)).map_err(to_py)?;
        Ok(NativeLock {
            inner: Mutex::new(lock),
        })
    }

    /// A lock file's text; `origin` names it in errors.
    #[staticmethod]
    fn from_json(text: &str, origin: &str) -> PyResult<NativeLock> {
        let lock = Lock::from_str(text, origin).map_err(to_py)?;
        Ok(NativeLock {
            inner: Mutex::new(lock),
        })
    }

    /// Pins the server as it is now (replacing its pin).
    fn pin(&self, server: PyRef<'_, NativeServer>) {
        self.lock().pin(&server.snapshot);
    }

    /// Removes a pin; whether there was one.
    fn unpin(&self, key: &str) -> bool {
        self.lock().unpin(key)
    }

    /// The pinned servers' keys.
    fn keys(&self) -> Vec<String> {
        self.lock().keys().map(str::to_string).collect()
    }

    /// How the server compares with its pin, as the JSON of the crate's `Pin`.
    fn check(&self, server: PyRef<'_, NativeServer>) -> String {
        let pin = self.lock().check(&server.snapshot);
        serde_json::to_string(&pin).unwrap_or_default()
    }

    /// The lock file's text.
    fn to_json(&self) -> String {
        self.lock().to_json()
    }

    /// Writes the lock file as the CLI does (`Lock::save`: the writer's
    /// turn, a temporary file renamed into place, never through a symlink);
    /// the GIL is released while it waits for its turn.
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let lock = self.lock().clone();
        py.detach(|| lock.save(&path)).map_err(to_py)
    }
}
