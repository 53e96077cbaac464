//! `template`: arbitrary template source through `Template::from_source`,
//! then rendered through an assembly of a small fixed server, unbudgeted
//! and under a budget (which re-renders blocks while fitting). Must return
//! an error or output, never panic; libFuzzer's `-timeout` catches hangs.

use mcp_preamble::{Assembler, ServerSnapshot, Template, Tool};

/// Largest template source tried, in bytes (target's own bound).
const MAX_SOURCE: usize = 8 * 1024;

fn servers() -> Vec<ServerSnapshot> {
    vec![
        ServerSnapshot::new("invoice-server")
            .with_alias("billing")
            .with_instructions(
                "Always call list_periods before get_invoice.\n\n## Notes\n\n- IDs are period scoped.\n- Amounts are in cents.",
            )
            .with_tool(Tool::new("list_periods", "List billing periods."))
            .with_tool(Tool::new("get_invoice", "Get an invoice by id.")),
        ServerSnapshot::new("tools-only").with_tool(Tool::new("ping", "Answers pong.")),
    ]
}

/// One input of the target (what libFuzzer's `fuzz_target!` passes).
pub fn run(data: &[u8]) {
    if data.len() > MAX_SOURCE {
        return;
    }
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    let template = match Template::from_source("fuzz", source) {
        Ok(t) => t,
        Err(e) => {
            let _ = (e.kind(), e.to_string());
            return;
        }
    };
    let servers = servers();
    for assembler in [
        Assembler::new().template(template.clone()),
        Assembler::new()
            .template(template.clone())
            .budget(24)
            .total_budget(60),
    ] {
        match assembler.assemble(&servers) {
            Ok(a) => {
                let _ = a.to_json();
                for s in a.servers() {
                    if let Some((x, y)) = s.span {
                        assert_eq!(&a.text()[x..y], s.text, "span of {}", s.name);
                    }
                }
            }
            Err(e) => {
                let _ = (e.kind(), e.to_string());
            }
        }
    }
}
