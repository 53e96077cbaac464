//! A tokens file: one bearer token per line, kept as digests, read again
//! when it changes.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use sha2::Digest;
use subtle::ConstantTimeEq;

use crate::error::{Error, ErrorKind, Result};

/// A token shorter than this is refused when the tokens file is read.
const MIN_TOKEN_LEN: usize = 16;
use sha2::Sha256;
use std::time::SystemTime;

/// A tokens file: the SHA-256 digest of each token, compared in constant
/// time with the presented token's (so neither a token's bytes nor its
/// length leak through timing), reloaded when the file changes.
pub(super) struct TokenFile {
    pub(super) path: PathBuf,
    state: Mutex<TokenState>,
}

struct TokenState {
    stamp: Option<(SystemTime, u64)>,
    digests: Arc<Vec<[u8; 32]>>,
}

impl TokenFile {
    pub(super) fn open(path: PathBuf) -> Result<TokenFile> {
        let stamp = stamp(&path);
        let digests = read_tokens(&path)?;
        if digests.is_empty() {
            return Err(Error::new(
                ErrorKind::InvalidConfig,
                format!("the tokens file {} holds no token", path.display()),
            ));
        }
        Ok(TokenFile {
            path,
            state: Mutex::new(TokenState {
                stamp,
                digests: Arc::new(digests),
            }),
        })
    }

    /// Whether `token` is one of the file's (as it is now, or its last
    /// good state).
    pub(super) fn holds(&self, token: &str) -> bool {
        let presented: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let digests = self.current();
        let mut found = subtle::Choice::from(0);
        for digest in digests.iter() {
            found |= digest.ct_eq(&presented);
        }
        found.into()
    }

    pub(super) fn current(&self) -> Arc<Vec<[u8; 32]>> {
        let now = stamp(&self.path);
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if now != state.stamp {
            state.stamp = now;
            match read_tokens(&self.path) {
                Ok(digests) if !digests.is_empty() => {
                    tracing::info!(
                        tokens = digests.len(),
                        "reloaded the tokens file {}",
                        self.path.display()
                    );
                    state.digests = Arc::new(digests);
                }
                Ok(_) => tracing::warn!(
                    "the tokens file {} holds no token now; the last tokens stay in force",
                    self.path.display()
                ),
                Err(e) => {
                    tracing::warn!("{e}; the last tokens stay in force");
                }
            }
        }
        state.digests.clone()
    }
}

/// The file's modification time and length (`None` when unreadable).
fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

/// The digests of the tokens of `path`; errors name the line, never a token.
pub(super) fn read_tokens(path: &Path) -> Result<Vec<[u8; 32]>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::new(
            ErrorKind::Io,
            format!("cannot read the tokens file {}: {e}", path.display()),
        )
    })?;
    let mut digests = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let token = line.trim();
        if token.is_empty() || token.starts_with('#') {
            continue;
        }
        let invalid = |what: &str| {
            Error::new(
                ErrorKind::InvalidConfig,
                format!("the tokens file {} line {}: {what}", path.display(), n + 1),
            )
        };
        // RFC 6750's token characters: what an Authorization header can carry.
        let b64token = token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/=".contains(&b));
        if !b64token {
            return Err(invalid(
                "a token is letters, digits and -._~+/= only (no spaces)",
            ));
        }
        if token.len() < MIN_TOKEN_LEN {
            return Err(invalid("a token shorter than 16 characters is refused"));
        }
        digests.push(Sha256::digest(token.as_bytes()).into());
    }
    Ok(digests)
}
