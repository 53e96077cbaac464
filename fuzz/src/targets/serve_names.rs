//! `serve_names`: sequences of tool adds, removes and renames across three
//! upstreams (aliases that make one safe prefix), each change published by
//! the hub as a connection publishes it (a first snapshot, `list_changed`,
//! a server gone), and a host's `tools/list` of the gateway after each.
//!
//! Oracles ([`Seen::check`]): every listed name unique, of the character
//! set and length model APIs accept, and naming (through the gateway's
//! table) a tool its upstream lists now; with [`NAMES_CONTRACT`], a name the
//! host has seen never moves to another tool while both are listed, and a
//! listed tool keeps its name.
//!
//! [`Seen::check`]: crate::gateway::Seen::check
//! [`NAMES_CONTRACT`]: crate::gateway::NAMES_CONTRACT

use arbitrary::Arbitrary;
use mcp_preamble::Tool;

use crate::gateway::{ALIASES, Seen, gateway, host, list, runtime, set_tools};

/// Most changes per input (target's own bound).
const MAX_OPS: usize = 24;
/// Most tools an upstream holds here (target's own bound).
const MAX_HELD: usize = 12;

/// One change of an upstream's tools (`server` is taken mod 3).
#[derive(Arbitrary, Debug, Clone, PartialEq, Eq)]
pub enum NameOp {
    /// The server lists a new tool (a new server when it has none).
    Add { server: u8, tool: String },
    /// The server no longer lists its `tool`-th tool (mod its count).
    Remove { server: u8, tool: u8 },
    /// The server lists its `tool`-th tool under another name.
    Rename { server: u8, tool: u8, to: String },
    /// The server lists its tools in reverse order.
    Reverse { server: u8 },
    /// The server is gone.
    Gone { server: u8 },
}

/// Input of the `serve_names` target.
#[derive(Arbitrary, Debug, Clone, PartialEq, Eq)]
pub struct NamesInput {
    pub ops: Vec<NameOp>,
}

/// One input of the target (what libFuzzer's `fuzz_target!` passes).
pub fn run(input: NamesInput) {
    runtime().block_on(async {
        let gateway = gateway();
        let session = host(&gateway).await;
        let mut seen = Seen::default();
        let mut held: [Option<Vec<String>>; 3] = Default::default();
        for op in input.ops.iter().take(MAX_OPS) {
            let Some(i) = apply(&mut held, op) else {
                continue;
            };
            let hub = gateway.hub();
            match &held[i] {
                Some(names) => {
                    let tools = names.iter().map(|n| Tool::new(n.clone(), "")).collect();
                    set_tools(hub, ALIASES[i], tools);
                }
                None => {
                    let _ = hub.remove(ALIASES[i]);
                }
            }
            seen.check(&gateway, &list(&session).await);
        }
        let _ = session.cancel().await;
    });
}

/// Applies `op` to the model of what each upstream lists; the upstream it
/// changed, if any.
fn apply(held: &mut [Option<Vec<String>>; 3], op: &NameOp) -> Option<usize> {
    let at = |s: &u8| usize::from(*s) % ALIASES.len();
    match op {
        NameOp::Add { server, tool } => {
            let tools = held[at(server)].get_or_insert_with(Vec::new);
            if tools.len() >= MAX_HELD {
                return None;
            }
            tools.push(crate::clip(tool, 80).to_string());
            Some(at(server))
        }
        NameOp::Remove { server, tool } => {
            let tools = held[at(server)].as_mut().filter(|t| !t.is_empty())?;
            tools.remove(usize::from(*tool) % tools.len());
            Some(at(server))
        }
        NameOp::Rename { server, tool, to } => {
            let tools = held[at(server)].as_mut().filter(|t| !t.is_empty())?;
            let n = tools.len();
            tools[usize::from(*tool) % n] = crate::clip(to, 80).to_string();
            Some(at(server))
        }
        NameOp::Reverse { server } => {
            held[at(server)].as_mut()?.reverse();
            Some(at(server))
        }
        NameOp::Gone { server } => {
            held[at(server)].take()?;
            Some(at(server))
        }
    }
}
