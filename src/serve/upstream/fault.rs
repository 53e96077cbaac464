//! The wording of every error a request to an upstream ends with, each
//! naming the upstream and what was asked: one place, so a `tools/call`, a
//! `prompts/get` and a `skills/get` to a hung upstream end alike.

use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::ErrorCode;
use rmcp::service::ServiceError;
use serde_json::json;

use crate::hub::ServerState;

/// What a request is about, as its errors name it: a tool of the
/// upstream (`"get_invoice"`) or a method (`prompts/get`).
#[derive(Clone, Copy)]
pub(crate) enum Subject<'a> {
    Tool(&'a str),
    Method(&'a str),
}

impl std::fmt::Display for Subject<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Subject::Tool(name) => write!(f, "{name:?}"),
            Subject::Method(method) => f.write_str(method),
        }
    }
}

/// The errors of one request, each naming its upstream and its subject.
pub(super) struct Fault<'a> {
    pub(super) alias: &'a str,
    pub(super) subject: Subject<'a>,
    pub(super) name_errors: bool,
}

impl Fault<'_> {
    pub(super) fn error(&self, message: String) -> McpError {
        McpError::new(
            ErrorCode::INTERNAL_ERROR,
            message,
            Some(json!({"upstream": self.alias})),
        )
    }

    /// The host cancelled it.
    pub(super) fn cancelled(&self) -> McpError {
        let (alias, subject) = (self.alias, self.subject);
        self.error(format!(
            "the call to {subject} of upstream {alias:?} was cancelled"
        ))
    }

    /// Not answered within `deadline`.
    pub(super) fn late(&self, deadline: Option<Duration>) -> McpError {
        let within = deadline.unwrap_or_default().as_secs_f64();
        let why = format!(
            "did not answer {} within {within} s (the call was cancelled)",
            self.subject
        );
        self.logged(self.error(format!("upstream {:?} {why}", self.alias)))
    }

    /// The upstream cannot take it now (logged).
    pub(super) fn unavailable(&self, state: ServerState, why: &str) -> McpError {
        let mut e = self.error(format!("upstream {:?} {why}", self.alias));
        e.data = Some(json!({"upstream": self.alias, "state": state.to_string()}));
        self.logged(e)
    }

    /// It went out and failed: the upstream's own error is passed on as
    /// it is; a lost connection is the gateway's error (logged).
    pub(super) fn failed(&self, error: ServiceError) -> McpError {
        let (alias, subject) = (self.alias, self.subject);
        let e = match error {
            ServiceError::McpError(e) if self.name_errors => {
                let message = format!("upstream {alias:?}: {}", crate::sanitize::line(&e.message));
                McpError::new(e.code, message, None)
            }
            ServiceError::McpError(e) => e,
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => self.error(format!(
                "upstream {alias:?} closed its connection during the call to {subject}; it is restarted if its policy allows"
            )),
            other => self.error(format!(
                "upstream {alias:?} failed the call to {subject}: {}",
                crate::connect::plain(&other.to_string())
            )),
        };
        self.logged(e)
    }

    /// Its event stream ended before the answer (a direct post).
    #[cfg(feature = "serve-http")]
    pub(super) fn cut(&self) -> McpError {
        let (alias, subject) = (self.alias, self.subject);
        self.logged(self.error(format!(
            "upstream {alias:?} closed its event stream before answering the call to {subject}"
        )))
    }

    /// An answer of another kind than the request's.
    pub(super) fn unexpected(&self) -> McpError {
        self.failed(ServiceError::UnexpectedResponse)
    }

    /// One log line per failed request.
    pub(super) fn logged(&self, e: McpError) -> McpError {
        let (upstream, message, code) = (self.alias, &e.message, e.code.0);
        match self.subject {
            Subject::Tool(tool) => tracing::warn!(
                upstream = %upstream,
                tool = %tool,
                "call failed: {message} (JSON-RPC error {code})"
            ),
            Subject::Method(method) => tracing::warn!(
                upstream = %upstream,
                method = %method,
                "{method} failed: {message} (JSON-RPC error {code})"
            ),
        }
        e
    }
}

/// The error of an answer to `subject` of `alias` that is not of its kind.
pub(crate) fn unexpected_result(alias: &str, subject: Subject<'_>) -> McpError {
    let name_errors = false;
    Fault {
        alias,
        subject,
        name_errors,
    }
    .unexpected()
}
