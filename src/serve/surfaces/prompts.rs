//! The upstreams' prompts, served under names made as the tools' are
//! ([`GatewayNames`]: `{alias}__{prompt}`, at most 64 characters, never two
//! alike, a name once given kept by its (alias, prompt) for the gateway's
//! life), and `prompts/get` routed to the owner under its own name.

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ClientRequest, GetPromptRequest, GetPromptRequestParams, GetPromptResponse, Prompt,
    ServerResult,
};
use serde_json::json;

use crate::serve::surfaces::Surfaces;
use crate::serve::surfaces::known::{LIST_ANSWER, no_deadline, starting_by};
use crate::serve::surfaces::lists::{clean_prompt, host_meta, unexpected};
use crate::serve::upstream::send::Outbound;

impl Surfaces {
    /// Every connected upstream's prompts (each one's pages), under their
    /// exposed names, their text sanitized.
    pub(in crate::serve) async fn prompts_now(&self) -> Vec<Prompt> {
        self.prompts_by(tokio::time::Instant::now() + LIST_ANSWER)
            .await
    }

    /// The same, as answered by `deadline`.
    async fn prompts_by(&self, deadline: tokio::time::Instant) -> Vec<Prompt> {
        self.wait_starting(Some(starting_by(deadline))).await;
        let aliases = self.upstreams().with(|c| c.prompts.is_some());
        let limits = self.hub().limits();
        let listed = self.listed::<Prompt>(aliases, deadline).await;
        let scheme = crate::serve::gateway::names::served_scheme(self.hub());
        self.catalog().with_prompts(|prompts| {
            let names = prompts.name(&scheme, &listed);
            let mut served = Vec::new();
            for (alias, list) in &listed {
                let mut seen = std::collections::BTreeSet::new();
                for p in list.iter().filter(|p| seen.insert(p.name.as_str())) {
                    if let Some(name) = names.exposed(alias, &p.name) {
                        served.push(clean_prompt(p, name, &limits));
                    }
                }
            }
            served
        })
    }

    /// The (alias, prompt) behind `name`: from the last list, or a new one
    /// (after the upstreams still starting connected, at most the call
    /// timeout).
    pub(in crate::serve) async fn prompt_owner(
        &self,
        name: &str,
    ) -> Result<(String, String), McpError> {
        if let Some(owner) = self.catalog().with_prompts(|p| p.owner(name)) {
            return Ok(owner);
        }
        self.wait_starting(None).await;
        self.prompts_by(no_deadline()).await;
        self.catalog()
            .with_prompts(|p| p.owner(name))
            .ok_or_else(|| {
                McpError::invalid_params(
                    format!("unknown prompt {name:?}"),
                    Some(json!({"prompt": name})),
                )
            })
    }

    /// `prompts/get` of an exposed name, sent to its upstream under the
    /// upstream's own name with the host's arguments; the result as sent.
    /// `asks_host`: the gateway asks the host for what the upstream asks.
    pub(in crate::serve) async fn get_prompt_routed(
        &self,
        params: GetPromptRequestParams,
        asks_host: bool,
    ) -> Result<GetPromptResponse, McpError> {
        let (alias, own) = self.prompt_owner(&params.name).await?;
        let mut upstream = GetPromptRequestParams::new(own);
        upstream.arguments = params.arguments;
        upstream.input_responses = params.input_responses;
        // A `requestState` goes back only to the upstream that issued it.
        let upstreams = self.upstreams();
        upstream.request_state = upstreams
            .seal()
            .opened_state(&alias, params.request_state)?;
        let request = ClientRequest::GetPromptRequest(GetPromptRequest::new(upstream));
        let out = Outbound::method(&alias, "prompts/get", request)
            .telling(params.meta.as_ref(), asks_host);
        match upstreams.send(out, std::future::pending()).await? {
            ServerResult::GetPromptResult(mut r) => {
                host_meta(&mut r.meta);
                Ok(GetPromptResponse::Complete(r))
            }
            ServerResult::InputRequiredResult(r) => Ok(GetPromptResponse::InputRequired(
                upstreams.seal().sealed_state(&alias, r),
            )),
            _ => Err(unexpected(&alias, "prompts/get")),
        }
    }
}
