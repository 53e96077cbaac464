//! Tasks (`io.modelcontextprotocol/tasks`, 2026-07-28) through the
//! gateway: a `tools/call` answered with a task reaches the host with the
//! task id sealed to its upstream (`upstream/sealed.rs`), and the host's
//! `tasks/get`, `tasks/update` and `tasks/cancel` of that id go to the
//! upstream that issued it, under its own id. An id the gateway did not
//! hand out is refused (-32602) and reaches no upstream.

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CancelTaskParams, CancelTaskRequest, ClientRequest, GetTaskParams, GetTaskRequest,
    GetTaskResult, ServerResult, UpdateTaskParams, UpdateTaskRequest,
};
use rmcp::service::{RequestContext, RoleServer};

use crate::serve::gateway::Gateway;
use crate::serve::gateway::call::meta_of;
use crate::serve::upstream::sealed::Kind;
use crate::serve::upstream::send::{Outbound, Subject, unexpected_result};

impl Gateway {
    /// `tasks/get` of a task id the gateway handed out.
    pub(crate) async fn get_task_routed(
        &self,
        params: GetTaskParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        let sealed = params.task_id;
        let (alias, answer) = self
            .to_task(&sealed, context, |id| {
                ClientRequest::GetTaskRequest(GetTaskRequest::new(GetTaskParams::new(id)))
            })
            .await?;
        match answer {
            ServerResult::GetTaskResult(mut r) => {
                r.task.task.task_id = sealed;
                Ok(r)
            }
            _ => Err(unexpected_result(&alias, Subject::Method("tasks/get"))),
        }
    }

    /// `tasks/update` of a task id the gateway handed out.
    pub(crate) async fn update_task_routed(
        &self,
        params: UpdateTaskParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let responses = params.input_responses;
        self.to_task(&params.task_id, context, |id| {
            ClientRequest::UpdateTaskRequest(UpdateTaskRequest::new(UpdateTaskParams::new(
                id, responses,
            )))
        })
        .await
        .map(|_| ())
    }

    /// `tasks/cancel` of a task id the gateway handed out.
    pub(crate) async fn cancel_task_routed(
        &self,
        params: CancelTaskParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.to_task(&params.task_id, context, |id| {
            ClientRequest::CancelTaskRequest(CancelTaskRequest::new(CancelTaskParams::new(id)))
        })
        .await
        .map(|_| ())
    }

    /// The request `make` makes of the upstream's own id in `sealed`, sent
    /// to the upstream that issued it (told what the host declared); its
    /// alias and answer (an acknowledgement of any shape is one).
    async fn to_task(
        &self,
        sealed: &str,
        context: &RequestContext<RoleServer>,
        make: impl FnOnce(String) -> ClientRequest,
    ) -> Result<(String, ServerResult), McpError> {
        let upstreams = self.inner.surfaces.upstreams();
        let (alias, id) = upstreams.seal().open(Kind::Task, sealed)?;
        let request = make(id);
        let method = match &request {
            ClientRequest::GetTaskRequest(_) => "tasks/get",
            ClientRequest::UpdateTaskRequest(_) => "tasks/update",
            _ => "tasks/cancel",
        };
        let out = Outbound::method(&alias, method, request).telling(Some(&meta_of(context)), false);
        let answer = upstreams.send(out, context.ct.cancelled()).await?;
        Ok((alias, answer))
    }
}
