//! The gateway as rmcp's server handler: each request a host sends, routed
//! to the view, the upstreams or the reader.

// rmcp marks logging deprecated (SEP-2577); hosts and servers still use it.
#![allow(deprecated)]

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams,
    CompleteResult, CustomRequest, CustomResult, GetPromptRequestParams, GetPromptResponse,
    GetSkillRequestParams, GetSkillResult, GetTaskParams, GetTaskResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, RequestMetaObject,
    ServerCapabilities, ServerConfig, SetLevelRequestParams, SubscribeRequestParams,
    SubscriptionFilter, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData as McpError, ServerHandler};

use crate::serve::gateway::Gateway;
use crate::serve::gateway::call::meta_of;
use crate::serve::gateway::era::HostEra;
use crate::serve::gateway::rounds::rounds;
use crate::serve::surfaces::task_status::ListenTasks;
use crate::serve::upstream::progress::ProgressTo;
use crate::support::lock;

// Each method's work is awaited boxed: rmcp's handler future holds the
// state of every method at once, and a task's future is copied whole on
// its way to the runtime (tokio moves one under 16 KB by value, several
// times); boxed, that future stays small.
impl ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        // Asked at each handshake: what this session's host reads.
        let view = self.view();
        *lock(&self.read) = Some(view.clone());
        let upstreams = self.upstream_capabilities();
        capabilities.prompts = upstreams.prompts.map(|mut p| {
            p.list_changed = Some(true);
            p
        });
        capabilities.resources = upstreams.resources.map(|mut r| {
            r.list_changed = Some(true);
            r
        });
        capabilities.completions = upstreams.completions;
        capabilities.logging = upstreams.logging;
        capabilities.extensions = upstreams.extensions;
        ServerConfig::new(capabilities)
            .with_server_info(self.inner.info.clone())
            .with_instructions(view.instructions.clone())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let read = lock(&self.read).clone();
        let view = self.view();
        let tools = view.tools_for(read.as_deref());
        // serve-http hook: over HTTP (rmcp hands the request's head to the
        // handler), no tool a Streamable HTTP client must drop.
        #[cfg(feature = "serve-http")]
        let tools = {
            let mut tools = tools;
            let http = context.extensions.get::<hyper::http::request::Parts>();
            if http.is_some() {
                tools.retain(|t| !view.header_invalid.contains(t.name.as_ref()));
            }
            tools
        };
        Ok(self
            .era(&context)
            .convert(ListToolsResult::with_all_items(tools)))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let version = context.protocol_version();
        let era = HostEra::of(version.as_ref(), &self.inner.info);
        Box::pin(self.call(request, context))
            .await
            .map(|r| era.convert(r))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        self.serving("prompts/list", |c| c.prompts.is_some())?;
        let list = ListPromptsResult::with_all_items(Box::pin(self.surfaces().prompts_now()).await);
        Ok(self.era(&context).convert(list))
    }

    async fn get_prompt(
        &self,
        mut request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        request.meta = Some(self.meta_for(&context));
        self.serving("prompts/get", |c| c.prompts.is_some())?;
        let owner = match asks_host(&context) {
            true => Some(
                Box::pin(self.surfaces().prompt_owner(&request.name))
                    .await?
                    .0,
            ),
            false => None,
        };
        let ask = owner.as_deref().map(|alias| (&context.peer, alias));
        let name = request.name.clone();
        let what = || format!("the upstream of prompt {name:?}");
        let routed = |again| self.surfaces().get_prompt_routed(again, owner.is_some());
        let got = Box::pin(rounds(ask, what, request, routed)).await;
        got.map(|r| self.era(&context).convert(r))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.serving("resources/list", |c| c.resources.is_some())?;
        let list =
            ListResourcesResult::with_all_items(Box::pin(self.surfaces().resources_now()).await);
        Ok(self.era(&context).convert(list))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        self.serving("resources/templates/list", |c| c.resources.is_some())?;
        let list = ListResourceTemplatesResult::with_all_items(
            Box::pin(self.surfaces().templates_now()).await,
        );
        Ok(self.era(&context).convert(list))
    }

    async fn read_resource(
        &self,
        mut request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        request.meta = Some(self.meta_for(&context));
        self.serving("resources/read", |c| c.resources.is_some())?;
        let owner = match asks_host(&context) {
            true => Some(Box::pin(self.surfaces().read_owner(&request.uri)).await?),
            false => None,
        };
        let ask = owner.as_deref().map(|alias| (&context.peer, alias));
        let uri = request.uri.clone();
        let what = || format!("the upstream of resource {uri:?}");
        let routed = |again| self.surfaces().read_routed(again, owner.is_some());
        let read = Box::pin(rounds(ask, what, request, routed)).await;
        read.map(|r| self.era(&context).convert(r))
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.serving("resources/subscribe", |c| c.resources.is_some())?;
        Box::pin(
            self.surfaces()
                .subscribe_session(&context.peer, &request.uri),
        )
        .await
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.serving("resources/unsubscribe", |c| c.resources.is_some())?;
        Box::pin(
            self.surfaces()
                .unsubscribe_session(&context.peer, &request.uri),
        )
        .await;
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        self.serving("completion/complete", |c| c.completions.is_some())?;
        let completed = Box::pin(self.surfaces().complete_routed(request)).await;
        completed.map(|r| self.era(&context).convert(r))
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.serving("logging/setLevel", |c| c.logging.is_some())?;
        Box::pin(self.set_level_everywhere(request)).await;
        Ok(())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        Box::pin(self.get_task_routed(request, &context)).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Box::pin(self.update_task_routed(request, &context)).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Box::pin(self.cancel_task_routed(request, &context)).await
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, McpError> {
        self.serving("skills/list", ServerCapabilities::supports_skills)?;
        Ok(self.era(&context).convert(self.surfaces().skills_list()))
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, McpError> {
        let got = Box::pin(self.surfaces().skills_get(request)).await;
        got.map(|r| self.era(&context).convert(r))
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        // A request rmcp did not read: malformed params of a served method, or another method.
        let error = crate::serve::gateway::rpc::unread(&request.method, request.params.as_ref());
        tracing::debug!(code = error.code.0, "request refused: {}", error.message);
        Err(error)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // A 2025-era session: list changes go to it as plain notifications.
        self.surfaces().tell_session(context.peer);
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(self.surfaces().accepted(requested))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        // A 2026-07-28 session: list changes go through its subscription,
        // and the status of the tasks it names (read by the front: stdio's
        // in the request's extensions, HTTP's in its request's).
        let extensions = &context.request_context().extensions;
        let tasks = extensions.get::<ListenTasks>();
        #[cfg(feature = "serve-http")]
        let tasks = tasks.or_else(|| {
            (extensions.get::<http::request::Parts>())
                .and_then(|p| p.extensions.get::<ListenTasks>())
        });
        let tasks = tasks.map(|t| t.0.clone()).unwrap_or_default();
        Box::pin(self.surfaces().listen_all(context, tasks)).await
    }
}

impl Gateway {
    /// The era of the host that sent the request of `context`.
    fn era(&self, context: &RequestContext<RoleServer>) -> HostEra<'_> {
        HostEra::of(context.protocol_version().as_ref(), &self.inner.info)
    }
}

impl Gateway {
    /// The request `_meta` of a host's request ([`meta_of`]), with the log
    /// level its session set when the request names none.
    fn meta_for(&self, context: &RequestContext<RoleServer>) -> RequestMetaObject {
        let mut meta = meta_of(context);
        if let (None, Some(level)) = (meta.log_level(), *lock(&self.level)) {
            meta.set_log_level(level);
        }
        meta
    }

    /// A host session's `tools/call`, with the rounds a 2025-era host's
    /// call takes when its upstream asks for input ([`rounds`]).
    async fn call(
        &self,
        mut params: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // What the host declared travels with its call (see `told_by`).
        params.meta = Some(self.meta_for(&context));
        #[cfg(feature = "serve-http")]
        crate::serve::gateway::call::Called::tell(&context, &params.name);
        // The upstream's own requests meanwhile go to this host session.
        let upstream = (self.view().names.upstream(&params.name)).map(|(a, _)| a.to_string());
        let asking = self.inner.surfaces.upstreams().asking();
        let session = in_session(&context);
        let host = session.then(|| context.peer.clone());
        let _in_call = (upstream.as_ref()).map(|alias| asking.enter(alias, host));
        let asked = asks_host(&context);
        let forward = forwarded(&context);
        let alias = upstream.as_deref().unwrap_or_default();
        let name = params.name.clone();
        let what = || format!("the upstream of tool {:?}", name.as_ref());
        let ask = asked.then_some((&context.peer, alias));
        rounds(ask, what, params, |again| {
            // The host's token stays with the host; see `progress`.
            let host = (context.meta.get_progress_token())
                .map(|token| (ProgressTo::Peer(context.peer.clone()), token));
            let ct = context.ct.clone();
            let cancelled = async move { ct.cancelled().await };
            self.call_tool_as(again, host, forward.clone(), asked, cancelled)
        })
        .await
    }
}

/// Whether the gateway asks the host of `context` what an upstream asks
/// for in an input-required answer: a 2025-era host (it cannot read one)
/// that can be sent requests.
fn asks_host(context: &RequestContext<RoleServer>) -> bool {
    let modern = (context.protocol_version())
        .is_some_and(|v| v.as_str() >= rmcp::model::ProtocolVersion::V_2026_07_28.as_str());
    !modern && in_session(context)
}

/// Whether the host of `context` can be sent requests: a stdio host, or
/// an HTTP session's (a stateless request has nowhere to be asked from).
fn in_session(context: &RequestContext<RoleServer>) -> bool {
    #[cfg(feature = "serve-http")]
    if let Some(parts) = context.extensions.get::<hyper::http::request::Parts>() {
        return parts.headers.contains_key("mcp-session-id");
    }
    let _ = context;
    true
}

/// The host's headers a direct post passes on (none but over HTTP).
fn forwarded(context: &RequestContext<RoleServer>) -> crate::serve::upstream::Forward {
    #[cfg(feature = "serve-http")]
    if let Some(parts) = context.extensions.get::<hyper::http::request::Parts>() {
        return crate::serve::upstream::direct::forwarded(&parts.headers);
    }
    let _ = context;
    Vec::new()
}
