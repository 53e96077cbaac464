//! The Rust test upstream (rmcp's server side): the invoice test server's
//! two tools with the same answers, served by this bench's own binary in a
//! child process (`--rmcp-upstream` on stdio, `--rmcp-upstream-http PORT`
//! over Streamable HTTP), so no other target is built for it.

use std::convert::Infallible;
use std::sync::Arc;

use mcp_preamble::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use mcp_preamble::rmcp::service::{RequestContext, RoleServer};
use mcp_preamble::rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use mcp_preamble::rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use mcp_preamble::rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::json;

pub const STDIO: &str = "--rmcp-upstream";
pub const HTTP: &str = "--rmcp-upstream-http";

#[derive(Clone)]
struct Invoices;

fn schema(value: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    value.as_object().cloned().unwrap_or_default()
}

impl ServerHandler for Invoices {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("invoice-rs", "1.0.0"))
            .with_instructions(
                "Always call list_periods before get_invoice. Invoice IDs are period scoped and are not stable across periods.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = vec![
            Tool::new(
                "list_periods",
                "List billing periods.",
                schema(json!({"type": "object", "properties": {}})),
            ),
            Tool::new(
                "get_invoice",
                "Get an invoice by id.",
                schema(
                    json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
                ),
            ),
        ];
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = match request.name.as_ref() {
            "list_periods" => "2026-07, 2026-08".to_string(),
            "get_invoice" => {
                let id = (request.arguments.as_ref())
                    .and_then(|a| a.get("id"))
                    .and_then(|v| v.as_str())
                    .unwrap_or_default();
                format!("invoice {id}")
            }
            other => return Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        };
        Ok(CallToolResponse::Complete(CallToolResult::success(vec![
            ContentBlock::text(text),
        ])))
    }
}

/// Serves on stdio until the client closes.
pub fn stdio() {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async {
        let running = Invoices
            .serve(mcp_preamble::rmcp::transport::stdio())
            .await
            .expect("a handshake");
        let _ = running.waiting().await;
    });
}

/// Serves Streamable HTTP on 127.0.0.1:`port` (path `/mcp`, any path in
/// fact) until killed.
pub fn http(port: u16) {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async {
        let mcp = StreamableHttpService::new(
            || Ok(Invoices),
            Arc::new(LocalSessionManager::default()),
            StreamableHttpServerConfig::default(),
        );
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .expect("a free port");
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            let mcp = mcp.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| {
                    let mcp = mcp.clone();
                    async move { Ok::<_, Infallible>(mcp.handle(req).await) }
                });
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .await;
            });
        }
    });
}
