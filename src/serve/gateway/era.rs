//! Every result the gateway sends a host, in the host's protocol era,
//! whatever era its upstream spoke: the one conversion, on every path
//! (rmcp's handler for sessions and stateless requests, the fast lane).
//!
//! A 2026-07-28 host gets `resultType` on every result (a 2025 upstream
//! sends none), the cache hints that era requires, and the gateway's own
//! `serverInfo` in `_meta` (a SHOULD; an upstream's own is replaced: the
//! host's server is the gateway). A 2025 host gets none of these: no
//! `resultType: "complete"`, no `ttlMs`/`cacheScope`, no `serverInfo` in
//! `_meta`, and no non-object tool output (rmcp's rules for older peers).

use rmcp::model::{
    CacheScope, CallToolResponse, CallToolResult, CompleteResult, GetPromptResponse,
    GetPromptResult, GetSkillResult, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult, ListToolsResult,
    MetaObject, ProtocolVersion, ReadResourceResponse, ReadResourceResult, ResultType,
};

/// The `_meta` key of a 2026-07-28 result's server.
const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// The era of the host a result goes to, and the gateway's `serverInfo`.
#[derive(Debug, Clone, Copy)]
pub(in crate::serve) struct HostEra<'a> {
    modern: bool,
    info: &'a Implementation,
}

impl<'a> HostEra<'a> {
    /// The era of a host that speaks `version` (none known: a 2025 session
    /// before its handshake).
    pub(in crate::serve) fn of(
        version: Option<&ProtocolVersion>,
        info: &'a Implementation,
    ) -> HostEra<'a> {
        let modern = version.is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        HostEra { modern, info }
    }

    /// `result` as this host's era has it.
    pub(in crate::serve) fn convert<R: Hosted>(self, mut result: R) -> R {
        result.to_era(self);
        result
    }

    /// The parts of one result every era rule touches.
    fn apply(
        self,
        result_type: Option<&mut Option<ResultType>>,
        meta: &mut Option<MetaObject>,
        cache: Option<(&mut Option<u64>, &mut Option<CacheScope>)>,
    ) {
        if self.modern {
            if let Some(t) = result_type {
                t.get_or_insert(ResultType::COMPLETE);
            }
            let info = serde_json::to_value(self.info).unwrap_or_default();
            meta.get_or_insert_default()
                .0
                .insert(SERVER_INFO.to_string(), info);
            return;
        }
        if let Some(t) = result_type {
            t.take_if(|t| t.is_complete());
        }
        if let Some((ttl, scope)) = cache {
            (*ttl, *scope) = (None, None);
        }
        if let Some(m) = meta {
            m.0.remove(SERVER_INFO);
            if m.0.is_empty() {
                *meta = None;
            }
        }
    }
}

/// A result the gateway sends a host.
pub(in crate::serve) trait Hosted {
    /// This result as `era` has it.
    fn to_era(&mut self, era: HostEra<'_>);
}

impl Hosted for CallToolResult {
    fn to_era(&mut self, era: HostEra<'_>) {
        era.apply(Some(&mut self.result_type), &mut self.meta, None);
        if era.modern {
            return;
        }
        // 2025 wants object structured content: another value goes to the
        // host as the first text block (unless it is there already).
        if let Some(value) = self.structured_content.take_if(|v| !v.is_object()) {
            let first = self.content.first().and_then(|c| c.as_text());
            let there = first.is_some_and(|t| {
                serde_json::from_str::<serde_json::Value>(&t.text).is_ok_and(|v| v == value)
            });
            if !there {
                let text = rmcp::model::ContentBlock::text(value.to_string());
                self.content.insert(0, text);
            }
        }
    }
}

impl Hosted for ListToolsResult {
    fn to_era(&mut self, era: HostEra<'_>) {
        let cache = (&mut self.ttl_ms, &mut self.cache_scope);
        era.apply(Some(&mut self.result_type), &mut self.meta, Some(cache));
        if era.modern {
            fill_cache(&mut self.ttl_ms, &mut self.cache_scope);
        } else {
            // 2025 wants object output schemas only.
            for tool in &mut self.tools {
                let object = |s: &std::sync::Arc<rmcp::model::JsonObject>| {
                    s.get("type").and_then(|t| t.as_str()) == Some("object")
                };
                tool.output_schema.take_if(|s| !object(s));
            }
        }
    }
}

/// `ttlMs: 0`, `cacheScope: "private"` where a 2026-07-28 result has
/// none (rmcp's defaults: fresh never, shared never).
fn fill_cache(ttl: &mut Option<u64>, scope: &mut Option<CacheScope>) {
    ttl.get_or_insert(0);
    scope.get_or_insert(CacheScope::Private);
}

/// The lists and reads: `resultType`, `_meta` and the cache hints.
macro_rules! cached {
    ($($t:ty),*) => {$(
        impl Hosted for $t {
            fn to_era(&mut self, era: HostEra<'_>) {
                let cache = (&mut self.ttl_ms, &mut self.cache_scope);
                era.apply(Some(&mut self.result_type), &mut self.meta, Some(cache));
                if era.modern {
                    fill_cache(&mut self.ttl_ms, &mut self.cache_scope);
                }
            }
        }
    )*};
}

cached!(
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ReadResourceResult
);

/// Results with `resultType` and `_meta`, no cache hints (the skills
/// extension's keep theirs as its own).
macro_rules! typed {
    ($($t:ty),*) => {$(
        impl Hosted for $t {
            fn to_era(&mut self, era: HostEra<'_>) {
                era.apply(Some(&mut self.result_type), &mut self.meta, None);
            }
        }
    )*};
}

typed!(
    GetPromptResult,
    CompleteResult,
    ListSkillsResult,
    GetSkillResult
);

impl Hosted for CallToolResponse {
    fn to_era(&mut self, era: HostEra<'_>) {
        match self {
            CallToolResponse::Complete(r) => r.to_era(era),
            // Only ever 2026-07-28 results (rmcp refuses them to older peers).
            CallToolResponse::InputRequired(r) => era.apply(None, &mut r.meta, None),
            CallToolResponse::Task(r) => era.apply(None, &mut r.meta, None),
            // A kind rmcp adds later: as rmcp's handler sends it.
            _ => {}
        }
    }
}

impl Hosted for GetPromptResponse {
    fn to_era(&mut self, era: HostEra<'_>) {
        match self {
            GetPromptResponse::Complete(r) => r.to_era(era),
            GetPromptResponse::InputRequired(r) => era.apply(None, &mut r.meta, None),
            _ => {}
        }
    }
}

impl Hosted for ReadResourceResponse {
    fn to_era(&mut self, era: HostEra<'_>) {
        match self {
            ReadResourceResponse::Complete(r) => r.to_era(era),
            ReadResourceResponse::InputRequired(r) => era.apply(None, &mut r.meta, None),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ContentBlock, Tool};
    use serde_json::{Value, json};

    fn info() -> Implementation {
        Implementation::new("mcp-preamble", "9.9.9")
    }

    fn era<'a>(version: &str, info: &'a Implementation) -> HostEra<'a> {
        let version: ProtocolVersion = serde_json::from_value(json!(version)).unwrap();
        HostEra::of(Some(&version), info)
    }

    fn wire(result: impl Into<rmcp::model::ServerResult>) -> Value {
        serde_json::to_value(result.into()).unwrap()
    }

    /// A call result as a 2025 upstream sends it, and as a 2026-07-28 one
    /// does (its own `serverInfo` in `_meta`, its cache hints).
    fn upstream_results() -> [Value; 2] {
        let legacy = json!({"content": [{"type": "text", "text": "hi"}],
                            "structuredContent": {"n": 1}, "_meta": {"trace": "t1"}});
        let mut modern = legacy.clone();
        modern["resultType"] = json!("complete");
        modern["_meta"]["io.modelcontextprotocol/serverInfo"] =
            json!({"name": "up", "version": "1"});
        [legacy, modern]
    }

    #[test]
    fn a_call_result_takes_the_hosts_era_from_either_upstream_era() {
        let info = info();
        for sent in upstream_results() {
            let result: CallToolResult = serde_json::from_value(sent.clone()).unwrap();
            let modern = wire(era("2026-07-28", &info).convert(result.clone()));
            assert_eq!(modern["resultType"], "complete", "{sent}");
            assert_eq!(
                modern["_meta"]["io.modelcontextprotocol/serverInfo"],
                json!({"name": "mcp-preamble", "version": "9.9.9"}),
                "{sent}"
            );
            assert_eq!(modern["_meta"]["trace"], "t1");
            assert_eq!(modern["structuredContent"], json!({"n": 1}));
            for old in ["2025-11-25", "2025-06-18", "2025-03-26"] {
                let legacy = wire(era(old, &info).convert(result.clone()));
                assert_eq!(legacy, upstream_results()[0], "{old} from {sent}");
            }
        }
        // No version known (before a 2025 handshake) is 2025.
        let bare = CallToolResult::success(vec![ContentBlock::text("x")]);
        let none = HostEra::of(None, &info).convert(bare);
        assert_eq!(
            wire(none),
            json!({"content": [{"type": "text", "text": "x"}], "isError": false})
        );
    }

    #[test]
    fn non_object_structured_output_reaches_a_2025_host_as_text() {
        let info = info();
        let sent = json!({"resultType": "complete", "content": [], "structuredContent": [1, 2]});
        let result: CallToolResult = serde_json::from_value(sent).unwrap();
        let modern = wire(era("2026-07-28", &info).convert(result.clone()));
        assert_eq!(modern["structuredContent"], json!([1, 2]));
        let legacy = wire(era("2025-11-25", &info).convert(result));
        assert_eq!(
            legacy,
            json!({"content": [{"type": "text", "text": "[1,2]"}]})
        );
    }

    #[test]
    fn a_tool_list_keeps_output_schemas_and_takes_the_hosts_era() {
        let info = info();
        let mut object = Tool::new("a", "A.", serde_json::Map::new());
        object.output_schema = Some(
            json!({"type": "object", "properties": {"n": {"type": "integer"}}})
                .as_object()
                .cloned()
                .unwrap()
                .into(),
        );
        let mut list = object.clone();
        list.name = "b".into();
        list.output_schema = Some(
            json!({"type": "array"})
                .as_object()
                .cloned()
                .unwrap()
                .into(),
        );
        let sent = ListToolsResult::with_all_items(vec![object, list]);
        let modern = wire(era("2026-07-28", &info).convert(sent.clone()));
        assert_eq!(modern["resultType"], "complete");
        assert_eq!(
            (modern["ttlMs"].clone(), modern["cacheScope"].clone()),
            (json!(0), json!("private"))
        );
        assert_eq!(
            modern["tools"][0]["outputSchema"]["properties"]["n"]["type"],
            "integer"
        );
        assert_eq!(modern["tools"][1]["outputSchema"]["type"], "array");
        assert_eq!(
            modern["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
            "mcp-preamble"
        );
        let mut hinted = sent;
        hinted.ttl_ms = Some(5);
        let legacy = wire(era("2025-11-25", &info).convert(hinted));
        assert_eq!(
            legacy["tools"][0]["outputSchema"]["properties"]["n"]["type"],
            "integer"
        );
        assert!(legacy["tools"][1].get("outputSchema").is_none(), "{legacy}");
        for key in ["resultType", "ttlMs", "cacheScope", "_meta"] {
            assert!(legacy.get(key).is_none(), "{key}: {legacy}");
        }
    }

    #[test]
    fn prompts_resources_and_completions_take_the_hosts_era() {
        let info = info();
        let sent = json!({"resultType": "complete", "contents": [], "ttlMs": 60000, "cacheScope": "public",
                          "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "up", "version": "1"}}});
        let read: ReadResourceResult = serde_json::from_value(sent).unwrap();
        let legacy =
            wire(era("2025-06-18", &info).convert(ReadResourceResponse::Complete(read.clone())));
        assert_eq!(legacy, json!({"contents": []}));
        let modern = wire(era("2026-07-28", &info).convert(ReadResourceResponse::Complete(read)));
        // The upstream's own cache hints are the gateway's to keep or not; the era keeps them.
        assert_eq!(
            (modern["ttlMs"].clone(), modern["cacheScope"].clone()),
            (json!(60000), json!("public"))
        );
        assert_eq!(
            modern["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
            "mcp-preamble"
        );
        let prompt: GetPromptResult = serde_json::from_value(json!({"messages": []})).unwrap();
        let modern = wire(era("2026-07-28", &info).convert(GetPromptResponse::Complete(prompt)));
        assert_eq!(modern["resultType"], "complete");
        let list = ListPromptsResult::with_all_items(vec![]);
        assert_eq!(
            wire(era("2025-11-25", &info).convert(list)),
            json!({"prompts": []})
        );
    }
}
