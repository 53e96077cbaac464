//! The upstreams' resources and resource templates, routed by URI: a
//! `resources/read` goes to the one upstream that lists the URI or has a
//! template that makes it. A URI two upstreams claim (both list it, or one
//! lists it and another's template makes it, or two templates make it) is
//! served by neither: it is left out of `resources/list`, a read of it is
//! refused, and the log says so once, naming both.
//!
//! Also `completion/complete`: a `ref/prompt` by its exposed name, a
//! `ref/resource` by the template URI one upstream listed.

use std::collections::{BTreeMap, BTreeSet};

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ClientRequest, CompleteRequest, CompleteRequestParams, CompleteResult, PromptReference,
    ReadResourceRequest, ReadResourceRequestParams, ReadResourceResponse, Reference, Resource,
    ResourceContents, ResourceTemplate, ServerResult,
};
use serde_json::json;

use crate::serve::surfaces::Surfaces;
use crate::serve::surfaces::known::{LIST_ANSWER, no_deadline, starting_by};
use crate::serve::surfaces::lists::{
    clean_resource, clean_template, host_meta, unexpected, uri_ok,
};
use crate::serve::surfaces::resource_owners::Resources;
use crate::serve::surfaces::uri::UriTemplate;
use crate::serve::upstream::send::Outbound;

impl Surfaces {
    /// Every connected upstream's resources (each one's pages), a URI that
    /// two upstreams list left out, their text sanitized.
    pub(in crate::serve) async fn resources_now(&self) -> Vec<Resource> {
        self.resources_by(tokio::time::Instant::now() + LIST_ANSWER)
            .await
    }

    /// The same, as answered by `deadline`.
    async fn resources_by(&self, deadline: tokio::time::Instant) -> Vec<Resource> {
        self.wait_starting(Some(starting_by(deadline))).await;
        let aliases = self.upstreams().with(|c| c.resources.is_some());
        let limits = self.hub().limits();
        let listed = self.listed::<Resource>(aliases, deadline).await;
        let mut by_uri: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (alias, list) in &listed {
            for r in list.iter().filter(|r| uri_ok(&r.uri)) {
                by_uri
                    .entry(r.uri.clone())
                    .or_default()
                    .insert(alias.clone());
            }
        }
        self.catalog().with_resources(|state| {
            state.listed = by_uri;
            let mut served = Vec::new();
            let mut seen = BTreeSet::new();
            for (_, list) in &listed {
                for r in list.iter().filter(|r| uri_ok(&r.uri)) {
                    let owners = &state.listed[&r.uri];
                    if owners.len() > 1 {
                        let owners = owners.clone();
                        state.report(&r.uri, &owners);
                    } else if seen.insert(r.uri.clone()) {
                        served.push(clean_resource(r, &limits));
                    }
                }
            }
            served
        })
    }

    /// Every connected upstream's resource templates, their text sanitized.
    pub(in crate::serve) async fn templates_now(&self) -> Vec<ResourceTemplate> {
        self.templates_by(tokio::time::Instant::now() + LIST_ANSWER)
            .await
    }

    /// The same, as answered by `deadline`.
    async fn templates_by(&self, deadline: tokio::time::Instant) -> Vec<ResourceTemplate> {
        self.wait_starting(Some(starting_by(deadline))).await;
        let aliases = self.upstreams().with(|c| c.resources.is_some());
        let limits = self.hub().limits();
        let listed = self.listed::<ResourceTemplate>(aliases, deadline).await;
        let mut templates = Vec::new();
        let mut served = Vec::new();
        for (alias, list) in &listed {
            for t in list.iter().filter(|t| uri_ok(&t.uri_template)) {
                if let Some(parsed) = UriTemplate::parse(&t.uri_template) {
                    templates.push((alias.clone(), t.uri_template.clone(), parsed));
                    served.push(clean_template(t, &limits));
                }
            }
        }
        self.catalog().with_resources(|s| s.templates = templates);
        served
    }

    /// The one upstream that claims `uri`, from the last lists or new ones
    /// (after the upstreams still starting connected, at most the call
    /// timeout); a URI claimed by none or by several is refused.
    pub(in crate::serve) async fn resource_owner(&self, uri: &str) -> Result<String, McpError> {
        let owners = self.catalog().with_resources(|s| s.claims(uri));
        let owners = if owners.is_empty() {
            self.wait_starting(None).await;
            self.resources_by(no_deadline()).await;
            self.templates_by(no_deadline()).await;
            self.catalog().with_resources(|s| s.claims(uri))
        } else {
            owners
        };
        let mut it = owners.iter();
        match (it.next(), it.next()) {
            (Some(alias), None) => Ok(alias.clone()),
            (None, _) => Err(McpError::invalid_params(
                format!("unknown resource {uri:?}: no upstream lists it or has a template for it"),
                Some(json!({"uri": uri})),
            )),
            (Some(_), Some(_)) => {
                self.catalog().with_resources(|s| s.report(uri, &owners));
                Err(McpError::invalid_params(
                    format!("resource {uri:?} is not served: more than one upstream claims it"),
                    Some(json!({"uri": uri, "upstreams": owners})),
                ))
            }
        }
    }

    /// The upstream a `resources/read` of `uri` goes to.
    pub(in crate::serve) async fn read_owner(&self, uri: &str) -> Result<String, McpError> {
        match self.skill_file_owner(uri) {
            Some((alias, _)) => Ok(alias),
            None => self.resource_owner(uri).await,
        }
    }

    /// `resources/read`, sent to the upstream that owns the URI; its
    /// contents as sent. `asks_host`: as for [`Surfaces::get_prompt_routed`].
    pub(in crate::serve) async fn read_routed(
        &self,
        params: ReadResourceRequestParams,
        asks_host: bool,
    ) -> Result<ReadResourceResponse, McpError> {
        // A skill's file goes to its upstream under the upstream's own URI.
        let asked = params.uri.clone();
        let (alias, uri) = match self.skill_file_owner(&asked) {
            Some(owned) => owned,
            None => (self.resource_owner(&asked).await?, asked.clone()),
        };
        let mut upstream = ReadResourceRequestParams::new(uri.clone());
        upstream.input_responses = params.input_responses;
        // A `requestState` goes back only to the upstream that issued it.
        let upstreams = self.upstreams();
        upstream.request_state = upstreams
            .seal()
            .opened_state(&alias, params.request_state)?;
        let request = ClientRequest::ReadResourceRequest(ReadResourceRequest::new(upstream));
        let out = Outbound::method(&alias, "resources/read", request)
            .telling(params.meta.as_ref(), asks_host);
        match upstreams.send(out, std::future::pending()).await? {
            ServerResult::ReadResourceResult(mut r) => {
                host_meta(&mut r.meta);
                rename_contents(&mut r.contents, &uri, &asked);
                // The upstream's cache hints are for its client: a 2026-07-28
                // host gets the gateway's (none: ask again), a 2025 one none.
                (r.ttl_ms, r.cache_scope) = (None, None);
                Ok(ReadResourceResponse::Complete(r))
            }
            ServerResult::InputRequiredResult(r) => Ok(ReadResourceResponse::InputRequired(
                upstreams.seal().sealed_state(&alias, r),
            )),
            _ => Err(unexpected(&alias, "resources/read")),
        }
    }

    /// `completion/complete`, sent to the upstream of the prompt (by its
    /// exposed name) or of the template (by the URI template it listed).
    pub(in crate::serve) async fn complete_routed(
        &self,
        params: CompleteRequestParams,
    ) -> Result<CompleteResult, McpError> {
        let (alias, reference) = match &params.r#ref {
            Reference::Prompt(p) => {
                let (alias, own) = self.prompt_owner(&p.name).await?;
                let mut own = PromptReference::new(own);
                own.title = p.title.clone();
                (alias, Reference::Prompt(own))
            }
            Reference::Resource(r) => (self.template_owner(&r.uri).await?, params.r#ref.clone()),
            _ => {
                return Err(McpError::invalid_params(
                    "completion/complete: \"ref\" must be a ref/prompt or a ref/resource",
                    Some(json!({"field": "ref"})),
                ));
            }
        };
        let mut upstream = CompleteRequestParams::new(reference, params.argument);
        upstream.context = params.context;
        let request = ClientRequest::CompleteRequest(CompleteRequest::new(upstream));
        let out = Outbound::method(&alias, "completion/complete", request);
        match self.upstreams().send(out, std::future::pending()).await? {
            ServerResult::CompleteResult(mut r) => {
                host_meta(&mut r.meta);
                Ok(r)
            }
            _ => Err(unexpected(&alias, "completion/complete")),
        }
    }

    /// The one upstream that listed the template `uri`.
    async fn template_owner(&self, uri: &str) -> Result<String, McpError> {
        let find = |s: &mut Resources| -> BTreeSet<String> {
            (s.templates.iter())
                .filter(|(_, t, _)| t == uri)
                .map(|(a, _, _)| a.clone())
                .collect()
        };
        let mut owners = self.catalog().with_resources(find);
        if owners.is_empty() {
            self.wait_starting(None).await;
            self.templates_by(no_deadline()).await;
            owners = self.catalog().with_resources(find);
        }
        match owners.len() {
            1 => Ok(owners.pop_first().unwrap_or_default()),
            0 => Err(McpError::invalid_params(
                format!("unknown resource template {uri:?}"),
                Some(json!({"uri": uri})),
            )),
            _ => Err(McpError::invalid_params(
                format!("resource template {uri:?} is not served: more than one upstream lists it"),
                Some(json!({"uri": uri, "upstreams": owners})),
            )),
        }
    }
}

/// `contents` of the upstream's URI `own` under the URI the host asked for.
fn rename_contents(contents: &mut [ResourceContents], own: &str, asked: &str) {
    if own == asked {
        return;
    }
    for c in contents {
        let uri = match c {
            ResourceContents::TextResourceContents { uri, .. } => uri,
            ResourceContents::BlobResourceContents { uri, .. } => uri,
            // A kind rmcp adds later keeps its URI as sent.
            _ => continue,
        };
        if uri == own {
            *uri = asked.to_string();
        }
    }
}
