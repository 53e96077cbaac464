//! Input a 2026-07-28 upstream asks for, in front of a 2025-era host: such
//! a host cannot read an input-required result, so while the upstream
//! answers one, the gateway asks the host each input request itself
//! (`asking::fulfil`) and sends the request again with the answers and the
//! upstream's state, at most
//! [`DEFAULT_MRTR_MAX_ROUNDS`](rmcp::model::DEFAULT_MRTR_MAX_ROUNDS) times.
//! One loop for `tools/call`, `prompts/get` and `resources/read`.

use std::future::Future;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, DEFAULT_MRTR_MAX_ROUNDS, GetPromptRequestParams,
    GetPromptResponse, InputRequiredResult, InputResponses, ReadResourceRequestParams,
    ReadResourceResponse,
};
use rmcp::service::{Peer, RoleServer};

use crate::serve::upstream::asking::fulfil;

/// A request an upstream may answer with an input-required result.
pub(in crate::serve) trait Retry: Clone {
    type Response;
    /// What `answer` asks for, or `answer` when it asks nothing.
    fn asks(answer: Self::Response) -> Result<InputRequiredResult, Self::Response>;
    /// This request once more, with the host's answers and the state.
    fn again(&mut self, answers: Option<InputResponses>, state: Option<String>);
}

macro_rules! retry {
    ($params:ty, $response:ident) => {
        impl Retry for $params {
            type Response = $response;
            fn asks(answer: $response) -> Result<InputRequiredResult, $response> {
                match answer {
                    $response::InputRequired(asks) => Ok(asks),
                    answer => Err(answer),
                }
            }
            fn again(&mut self, answers: Option<InputResponses>, state: Option<String>) {
                self.input_responses = answers;
                self.request_state = state;
            }
        }
    };
}

retry!(CallToolRequestParams, CallToolResponse);
retry!(GetPromptRequestParams, GetPromptResponse);
retry!(ReadResourceRequestParams, ReadResourceResponse);

/// The answer to `params` (`send` sends it). With a `host` to ask (a
/// 2025-era host in a session, and the alias of the upstream it asks
/// through) an input-required answer is fulfilled by the host and
/// `params` go again; `what` names the upstream in the error after the
/// last round.
pub(in crate::serve) async fn rounds<P: Retry, F>(
    host: Option<(&Peer<RoleServer>, &str)>,
    what: impl FnOnce() -> String,
    mut params: P,
    mut send: impl FnMut(P) -> F,
) -> Result<P::Response, McpError>
where
    F: Future<Output = Result<P::Response, McpError>>,
{
    let Some((peer, alias)) = host else {
        return send(params).await;
    };
    for _ in 0..DEFAULT_MRTR_MAX_ROUNDS {
        let asks = match P::asks(send(params.clone()).await?) {
            Ok(asks) => asks,
            Err(answer) => return Ok(answer),
        };
        let requests = asks.input_requests.unwrap_or_default();
        let answers = fulfil(peer, alias, requests).await?;
        params.again((!answers.is_empty()).then_some(answers), asks.request_state);
    }
    let why = format!(
        "{} still asked for input after {DEFAULT_MRTR_MAX_ROUNDS} rounds",
        what()
    );
    tracing::warn!("request failed: {why}");
    Err(McpError::internal_error(why, None))
}
