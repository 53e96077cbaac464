//! `wrap`'s reader tool (issue 51.4): the server's full instructions on
//! call, listed when the host did not read them whole. For a host that
//! reads instructions nowhere (Claude Desktop, Claude.ai: a row with
//! `Reads::Nowhere`), the tool's description carries the budgeted text,
//! since tool descriptions are what such a host sends its model.

use serde_json::{Value, json};

use crate::serve::gateway::view::READER;

/// What the reader serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reader {
    /// The server's full instructions, sanitized: the answer to a call.
    pub full: String,
    /// For a host that reads no instructions: the budgeted text, as the
    /// tool's description.
    pub described: Option<String>,
}

/// The reader's description for a host that reads instructions.
const DESCRIPTION: &str =
    "The full instructions of this MCP server (the system prompt holds a shortened version).";

impl Reader {
    /// The tool as `tools/list` lists it.
    pub(crate) fn tool(&self) -> Value {
        let description = match &self.described {
            Some(text) => {
                format!("Instructions of this MCP server; call for the full text.\n\n{text}")
            }
            None => DESCRIPTION.to_string(),
        };
        json!({
            "name": READER,
            "description": description,
            "inputSchema": {"type": "object", "properties": {}},
            "annotations": {"readOnlyHint": true, "openWorldHint": false},
        })
    }

    /// The answer to a call of the tool.
    pub(crate) fn answer(&self, id: &Value) -> Vec<u8> {
        let result = json!({"content": [{"type": "text", "text": self.full}]});
        let mut line = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
        line.push('\n');
        line.into_bytes()
    }

    /// Adds the tool to a `tools/list` result that ends the list (no
    /// `nextCursor`); whether it did.
    pub(crate) fn append(&self, result: &mut serde_json::Map<String, Value>) -> bool {
        if result.get("nextCursor").is_some_and(|c| !c.is_null()) {
            return false;
        }
        let Some(Value::Array(tools)) = result.get_mut("tools") else {
            return false;
        };
        if tools.iter().any(|t| t["name"] == json!(READER)) {
            return false;
        }
        tools.push(self.tool());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reader_is_listed_once_on_the_last_page_and_answers_the_full_text() {
        let r = Reader {
            full: "All of it.".into(),
            described: Some("Budgeted.".into()),
        };
        let mut last = json!({"tools": []}).as_object().unwrap().clone();
        assert!(r.append(&mut last));
        assert!(!r.append(&mut last));
        assert!(
            last["tools"][0]["description"]
                .as_str()
                .unwrap()
                .ends_with("\n\nBudgeted.")
        );
        let mut first = json!({"tools": [], "nextCursor": "2"})
            .as_object()
            .unwrap()
            .clone();
        assert!(!r.append(&mut first));
        let answer: Value = serde_json::from_slice(&r.answer(&json!(7))).unwrap();
        assert_eq!(answer["result"]["content"][0]["text"], json!("All of it."));
        assert_eq!(answer["id"], json!(7));
    }
}
