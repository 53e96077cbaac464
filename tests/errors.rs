//! Every public error type goes through `?` into anyhow and keeps its message.

use mcp_preamble::{ErrorKind, ServerSnapshot};

const NOT_FOUND: &str =
    r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#;

fn error() -> anyhow::Result<()> {
    ServerSnapshot::from_discover_json(NOT_FOUND)?;
    Ok(())
}

fn rpc_error() -> anyhow::Result<()> {
    let e = ServerSnapshot::from_discover_json(NOT_FOUND).unwrap_err();
    Err(e.rpc_error().cloned().unwrap())?;
    Ok(())
}

#[test]
fn error_and_rpc_error() {
    let e = error().unwrap_err();
    assert_eq!(
        e.to_string(),
        "json-rpc error response: server/discover failed with -32601: Method not found"
    );
    let kind = e.downcast_ref::<mcp_preamble::Error>().unwrap().kind();
    assert_eq!(kind, ErrorKind::RpcError);
    assert_eq!(
        rpc_error().unwrap_err().to_string(),
        "server/discover failed with -32601: Method not found"
    );
}

#[cfg(feature = "testing")]
#[test]
fn testing_failure() {
    fn check() -> anyhow::Result<()> {
        let text: String = (0..50)
            .map(|i| format!("Step {i} must run before step {}. ", i + 1))
            .collect();
        let s = mcp_preamble::testing::server("big").instructions(text);
        mcp_preamble::testing::fits(&s, 10)?;
        Ok(())
    }
    let shown = check().unwrap_err().to_string();
    assert!(
        shown.starts_with("server \"big\" does not fit 10 tokens"),
        "{shown}"
    );
}

#[cfg(feature = "rmcp")]
#[tokio::test]
async fn connect_failure() {
    use mcp_preamble::connect::{ConnectOptions, connect};
    async fn run() -> anyhow::Result<()> {
        let entry = mcp_preamble::files::ServerEntry {
            alias: "nowhere".into(),
            transport: mcp_preamble::files::ServerTransport::Stdio {
                command: "/nonexistent/mcp-server".into(),
                args: vec![],
                env: Default::default(),
                cwd: None,
            },
        };
        connect(&entry, &ConnectOptions::new()).await?;
        Ok(())
    }
    let e = run().await.unwrap_err();
    assert!(
        e.to_string().starts_with(
            "server \"nowhere\": cannot connect: cannot start \"/nonexistent/mcp-server\": "
        ),
        "{e}"
    );
    // The cause is the next link of the chain, not a repeat of the message.
    let chain: Vec<String> = e.chain().map(|c| c.to_string()).collect();
    assert!(chain.len() <= 2, "{chain:?}");
}
