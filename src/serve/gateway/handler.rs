//! The gateway as rmcp's server handler: each request a host sends, routed
//! to the view, the upstreams or the reader.

// rmcp marks logging deprecated (SEP-2577); hosts and servers still use it.
#![allow(deprecated)]

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams,
    CompleteResult, CustomRequest, CustomResult, GetPromptRequestParams, GetPromptResponse,
    GetSkillRequestParams, GetSkillResult, GetTaskParams, GetTaskResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities,
    ServerConfig, SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter,
    UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData as McpError, ServerHandler};

use crate::serve::gateway::Gateway;
use crate::serve::gateway::call::meta_of;
use crate::serve::gateway::era::HostEra;
#[cfg(feature = "serve-http")]
use crate::serve::surfaces::task_status::ListenTasks;
use crate::support::lock;

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
        self.call(request, context).await.map(|r| era.convert(r))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        self.serving("prompts/list", |c| c.prompts.is_some())?;
        let list = ListPromptsResult::with_all_items(self.surfaces().prompts_now().await);
        Ok(self.era(&context).convert(list))
    }

    async fn get_prompt(
        &self,
        mut request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        request.meta = Some(meta_of(&context));
        self.serving("prompts/get", |c| c.prompts.is_some())?;
        let got = self.surfaces().get_prompt_routed(request).await;
        got.map(|r| self.era(&context).convert(r))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.serving("resources/list", |c| c.resources.is_some())?;
        let list = ListResourcesResult::with_all_items(self.surfaces().resources_now().await);
        Ok(self.era(&context).convert(list))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        self.serving("resources/templates/list", |c| c.resources.is_some())?;
        let list =
            ListResourceTemplatesResult::with_all_items(self.surfaces().templates_now().await);
        Ok(self.era(&context).convert(list))
    }

    async fn read_resource(
        &self,
        mut request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        request.meta = Some(meta_of(&context));
        self.serving("resources/read", |c| c.resources.is_some())?;
        let read = self.surfaces().read_routed(request).await;
        read.map(|r| self.era(&context).convert(r))
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.serving("resources/subscribe", |c| c.resources.is_some())?;
        self.surfaces()
            .subscribe_session(&context.peer, &request.uri)
            .await
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.serving("resources/unsubscribe", |c| c.resources.is_some())?;
        self.surfaces()
            .unsubscribe_session(&context.peer, &request.uri)
            .await;
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        self.serving("completion/complete", |c| c.completions.is_some())?;
        let completed = self.surfaces().complete_routed(request).await;
        completed.map(|r| self.era(&context).convert(r))
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.serving("logging/setLevel", |c| c.logging.is_some())?;
        self.set_level_everywhere(request).await;
        Ok(())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        self.get_task_routed(request, &context).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.update_task_routed(request, &context).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.cancel_task_routed(request, &context).await
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
        let got = self.surfaces().skills_get(request).await;
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
        // and the status of the tasks it names (read by the HTTP front).
        #[cfg(feature = "serve-http")]
        let tasks = (context.request_context().extensions)
            .get::<http::request::Parts>()
            .and_then(|p| p.extensions.get::<ListenTasks>())
            .map(|t| t.0.clone())
            .unwrap_or_default();
        #[cfg(not(feature = "serve-http"))]
        let tasks = Vec::new();
        self.surfaces().listen_all(context, tasks).await
    }
}

impl Gateway {
    /// The era of the host that sent the request of `context`.
    fn era(&self, context: &RequestContext<RoleServer>) -> HostEra<'_> {
        HostEra::of(context.protocol_version().as_ref(), &self.inner.info)
    }
}
