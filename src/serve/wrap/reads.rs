//! What a host's model reads of one server through `wrap` (issue 51.8,
//! `mcp-preamble show`): the same shaping the relay does, offline, and the
//! host table's rule for where the instructions reach the model.

use crate::error::Result;
use crate::hosts::{HostCap, Reads};
use crate::model::ServerSnapshot;
use crate::report::{Removal, RemovalReason};
use crate::serve::wrap::Wrapper;

/// One server as a host's model reads it after `install`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ModelReads {
    /// Where the host's model reads the instructions.
    pub reads: Reads,
    /// The text that reaches the model there (`None`: nothing).
    pub text: Option<String>,
    /// The cap the text is held to, in the host's unit.
    pub cap: Option<HostCap>,
    /// Units of the instructions the budget or the host's cap removed.
    pub cut: Vec<Removal>,
    /// Each tool listed, as `(name, description)`, the reader included.
    pub tools: Vec<(String, Option<String>)>,
}

impl Wrapper {
    /// What the host's model reads of `snapshot` (its handshake and every
    /// tool) through this wrapper: the instructions served, where the host
    /// reads them (the reader tool's description for a host that reads
    /// them nowhere), and the tools as listed.
    pub fn model_reads(&self, snapshot: &ServerSnapshot) -> Result<ModelReads> {
        let shaper = &self.shaper;
        let (served, reader) = shaper.instructions(snapshot.clone())?;
        let report = shaper.report(snapshot.clone())?;
        let cut = report
            .into_iter()
            .flat_map(|r| r.removed)
            .filter(|r| r.reason == RemovalReason::Budget && r.unit.is_some())
            .collect();
        let row = shaper.host.map(|h| h.profile());
        let reads = row.map_or(Reads::Instructions, |p| p.reads);
        let mut tools = shaper.tools(snapshot)?;
        if let Some(reader) = &reader {
            let tool = reader.tool();
            let name = tool["name"].as_str().unwrap_or_default().to_string();
            tools.push((name, tool["description"].as_str().map(str::to_string)));
        }
        let text = match reads {
            Reads::Nowhere => reader.as_ref().and(tools.last()).and_then(|t| t.1.clone()),
            _ => served,
        };
        Ok(ModelReads {
            reads,
            text,
            cap: row.and_then(|p| p.cut.cap()),
            cut,
            tools,
        })
    }
}
