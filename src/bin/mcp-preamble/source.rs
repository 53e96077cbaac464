//! Where each server's snapshot came from: a row of the preview report.

/// How a server's snapshot was read (`"source"` in `preview --json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Connected now.
    Live,
    /// A fresh `server/discover` result from the cache.
    Cache,
    /// A capture or snapshot file.
    File,
}

/// Where a server's snapshot came from.
#[derive(serde::Serialize)]
pub struct Source {
    pub alias: String,
    pub source: Origin,
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub stderr: String,
    pub elapsed_ms: u64,
}

impl Source {
    pub fn ok(alias: &str, source: Origin, elapsed_ms: u64) -> Source {
        Source {
            alias: alias.to_string(),
            source,
            ok: true,
            error: None,
            stderr: String::new(),
            elapsed_ms,
        }
    }

    pub fn failed(alias: String, source: Origin, error: String) -> Source {
        Source {
            alias,
            source,
            ok: false,
            error: Some(error),
            stderr: String::new(),
            elapsed_ms: 0,
        }
    }
}
