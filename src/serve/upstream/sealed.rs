//! What an upstream hands a host to give back later, sealed to that
//! upstream: task ids (`io.modelcontextprotocol/tasks`) and the
//! `requestState` of input-required results (2026-07-28). The host gets
//! `<alias>.<tag>.<the upstream's value>`, the alias with `%` and `.`
//! escaped, the tag the first 16 bytes of HMAC-SHA-256 over the kind, the
//! alias and the value, as hex. Two upstreams' ids never collide, a
//! request with one goes to the upstream that issued it, and a host cannot
//! move a value to another upstream or make one up: anything that does not
//! open is refused (-32602) before any upstream sees it.
//!
//! The key is random per gateway unless one is given
//! ([`GatewayBuilder::seal_key`](crate::serve::GatewayBuilder::seal_key)),
//! so by default a gateway that restarts no longer knows its earlier ids.

use std::hash::{BuildHasher, RandomState};

use rmcp::ErrorData as McpError;
use rmcp::model::InputRequiredResult;
use serde_json::json;

use crate::support::hash::hmac_sha256;

/// The bytes of the tag, as hex in the sealed value.
const TAG: usize = 16;

/// What a sealed value is: a task id cannot stand for a request state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Task,
    State,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::Task => "task id",
            Kind::State => "requestState",
        }
    }
}

/// The key of a gateway's seals.
#[derive(Clone)]
pub(crate) struct Seal {
    key: [u8; 32],
}

impl std::fmt::Debug for Seal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Seal")
    }
}

impl Default for Seal {
    /// A random key: std's hasher keys come from the OS's randomness
    /// (128 bits), stretched through SHA-256.
    fn default() -> Seal {
        let keys = RandomState::new();
        let words: Vec<u64> = (0u8..4).map(|i| keys.hash_one(i)).collect();
        let seed: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        Seal::from_key(&seed)
    }
}

impl Seal {
    /// A seal whose key is derived from `secret`.
    pub(crate) fn from_key(secret: &[u8]) -> Seal {
        use sha2::Digest;
        let key = sha2::Sha256::digest([&b"mcp-preamble seal\0"[..], secret].concat()).into();
        Seal { key }
    }

    fn tag(&self, kind: Kind, alias: &str, value: &str) -> String {
        let kind = [kind as u8];
        let mac = hmac_sha256(
            &self.key,
            &[&kind, alias.as_bytes(), b"\0", value.as_bytes()],
        );
        mac[..TAG].iter().map(|b| format!("{b:02x}")).collect()
    }

    /// `value` of upstream `alias`, as the host gets it.
    pub(crate) fn seal(&self, kind: Kind, alias: &str, value: &str) -> String {
        let escaped = alias.replace('%', "%25").replace('.', "%2E");
        format!("{escaped}.{}.{value}", self.tag(kind, alias, value))
    }

    /// The upstream and its value in `sealed`, or the error the host gets.
    pub(crate) fn open(&self, kind: Kind, sealed: &str) -> Result<(String, String), McpError> {
        let refused = || {
            let what = kind.label();
            McpError::invalid_params(
                format!("unknown {what} {sealed:?}: not one this gateway handed out"),
                Some(json!({ "unknown": what })),
            )
        };
        let (escaped, rest) = sealed.split_once('.').ok_or_else(refused)?;
        let (tag, value) = rest.split_once('.').ok_or_else(refused)?;
        let alias = escaped.replace("%2E", ".").replace("%25", "%");
        let expected = self.tag(kind, &alias, value);
        // Compared whole, in time that does not depend on where they differ.
        let differ = (tag.bytes().zip(expected.bytes())).fold(0u8, |d, (a, b)| d | (a ^ b));
        if tag.len() != expected.len() || differ != 0 {
            return Err(refused());
        }
        Ok((alias, value.to_string()))
    }
}

impl Seal {
    /// `result` with its `requestState` sealed to `alias`.
    pub(crate) fn sealed_state(
        &self,
        alias: &str,
        mut result: InputRequiredResult,
    ) -> InputRequiredResult {
        result.request_state = (result.request_state).map(|s| self.seal(Kind::State, alias, &s));
        result
    }

    /// The upstream's own `requestState` in the host's `state`, when
    /// `alias` (the upstream the request goes to) issued it.
    pub(crate) fn opened_state(
        &self,
        alias: &str,
        state: Option<String>,
    ) -> Result<Option<String>, McpError> {
        let Some(state) = state else {
            return Ok(None);
        };
        let (issuer, inner) = self.open(Kind::State, &state)?;
        if issuer != alias {
            return Err(McpError::invalid_params(
                format!(
                    "requestState {state:?} was issued by upstream {issuer:?}, not by {alias:?}, which serves this request"
                ),
                Some(json!({"issuer": issuer, "upstream": alias})),
            ));
        }
        Ok(Some(inner))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_value_opens_to_its_upstream_and_nothing_else_opens() {
        let seal = Seal::from_key(b"k");
        for alias in ["a", "a.b", "50%.x", ""] {
            for value in ["t1", "with.dots", ""] {
                let sealed = seal.seal(Kind::Task, alias, value);
                assert_eq!(
                    seal.open(Kind::Task, &sealed).unwrap(),
                    (alias.to_string(), value.to_string())
                );
                assert!(seal.open(Kind::State, &sealed).is_err(), "{sealed}");
            }
        }
        let a = seal.seal(Kind::Task, "a", "t1");
        let moved = a.replacen("a.", "b.", 1);
        let other_key = Seal::from_key(b"other").seal(Kind::Task, "a", "t1");
        for forged in [
            moved.as_str(),
            &other_key,
            "t1",
            "a.t1",
            "a..t1",
            "",
            "a.zz.t1",
        ] {
            let e = seal.open(Kind::Task, forged).unwrap_err();
            assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS, "{forged}");
            assert!(e.message.starts_with("unknown task id"), "{}", e.message);
        }
        assert_ne!(Seal::default().seal(Kind::Task, "a", "t1"), a);
        // Gateways given the same secret (replicas) open each other's.
        assert!(Seal::from_key(b"k").open(Kind::Task, &a).is_ok());
    }
}
