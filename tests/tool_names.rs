//! Host tool-name schemes: the names the model sees, in the section.

use mcp_preamble::tool_names::{Fit, Host, ToolNames};
use mcp_preamble::{Assembler, ServerSnapshot, Tool};

fn billing() -> ServerSnapshot {
    ServerSnapshot::new("billing-server")
        .with_alias("billing")
        .with_instructions("Use this server for invoices only.")
        .with_tool(Tool::new("list_periods", "List billing periods."))
        .with_tool(Tool::new("get_invoice", "Get one invoice."))
        .with_tool(Tool::new("void_invoice", "Void an invoice."))
}

/// The names each scheme gives the billing server's three tools.
fn expected(scheme: &str) -> [&'static str; 3] {
    match scheme {
        "claude-code" | "opencode" | "codex" => [
            "mcp__billing__list_periods",
            "mcp__billing__get_invoice",
            "mcp__billing__void_invoice",
        ],
        // VS Code builds its prefix from serverInfo (title, else name).
        "vscode" => [
            "mcp_billing-serve_list_periods",
            "mcp_billing-serve_get_invoice",
            "mcp_billing-serve_void_invoice",
        ],
        "plain" => ["list_periods", "get_invoice", "void_invoice"],
        "gw_{server}__{tool}" => [
            "gw_billing__list_periods",
            "gw_billing__get_invoice",
            "gw_billing__void_invoice",
        ],
        _ => unreachable!(),
    }
}

const SCHEMES: [&str; 6] = [
    "claude-code",
    "vscode",
    "codex",
    "opencode",
    "plain",
    "gw_{server}__{tool}",
];

#[test]
fn every_scheme_names_the_tool_list_and_the_deferred_index() {
    for scheme in SCHEMES {
        let names: ToolNames = scheme.parse().unwrap();
        let want = expected(scheme);
        let loaded = Assembler::new()
            .tool_names(names.clone())
            .assemble(&[billing()])
            .unwrap();
        for n in want {
            assert!(
                loaded.text().contains(&format!("`{n}`")),
                "{scheme}: {n}\n{}",
                loaded.text()
            );
        }
        let deferred = Assembler::new()
            .tool_names(names)
            .defer("billing")
            .assemble(&[billing()])
            .unwrap();
        let index = deferred
            .text()
            .split("Deferred tools")
            .nth(1)
            .unwrap_or_default();
        for n in want {
            assert!(
                index.contains(&format!("`{n}`")),
                "{scheme}: {n}\n{}",
                deferred.text()
            );
        }
        let report = deferred.servers()[0].deferred.as_ref().unwrap();
        assert_eq!(report.tools, want.map(String::from).to_vec(), "{scheme}");
        if scheme != "plain" {
            assert!(!loaded.text().contains("`list_periods`"), "{scheme}");
        }
    }
}

#[test]
fn a_sixty_character_tool_name_is_handled_as_each_host_handles_it() {
    let long = format!("get_{}", "x".repeat(56));
    assert_eq!(long.len(), 60);
    let server = ServerSnapshot::new("s")
        .with_alias("srv")
        .with_tool(Tool::new(&long, "d."));
    let name = |host: Host| ToolNames::host(host).exposed("srv", &long);
    // Claude Code and OpenCode send it whole (70 characters): the provider rejects it.
    for host in [Host::ClaudeCode, Host::Opencode] {
        let n = name(host);
        assert_eq!(n.as_str(), format!("mcp__srv__{long}"));
        assert_eq!(n.fit(), Fit::OverCap);
    }
    // Codex keeps 24 characters and appends SHA-1 (40 hex digits).
    let codex = name(Host::Codex);
    assert_eq!(codex.as_str().len(), 64);
    assert!(codex.as_str().starts_with("mcp__srv__get_xxxxxxxxxx"));
    assert!(codex.as_str()[24..].bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(codex.fit(), Fit::Hashed);
    // VS Code cuts at 64.
    let vscode = ToolNames::host(Host::Vscode).exposed("s", &long);
    assert_eq!(vscode.as_str(), &format!("mcp_s_{long}")[..64]);
    assert_eq!(vscode.fit(), Fit::Cut);
    // The section shows the name each host sends.
    for host in Host::ALL {
        let a = Assembler::new()
            .tool_names(ToolNames::host(host))
            .assemble(std::slice::from_ref(&server))
            .unwrap();
        let label = ToolNames::host(host)
            .server_label(Some("srv"), "s", None)
            .to_string();
        let want = ToolNames::host(host).exposed(&label, &long);
        assert!(
            a.text().contains(&format!("`{want}`")),
            "{host}: {}",
            a.text()
        );
    }
}

#[test]
fn the_default_is_the_tools_own_names() {
    let a = Assembler::new().assemble(&[billing()]).unwrap();
    let b = Assembler::new()
        .tool_names(ToolNames::plain())
        .assemble(&[billing()])
        .unwrap();
    assert_eq!(a.text(), b.text());
    assert!(a.text().contains("`get_invoice`"));
}
