//! The JSON-RPC errors of requests rmcp could not read: a request of a
//! method the gateway serves whose params do not read is invalid params
//! (-32602) naming the field; any other method is not found (-32601).
//!
//! rmcp reads a request whose params do not fit its method's type as a
//! custom request of that method, and answers it "method not found"; the
//! gateway's handler of custom requests ([`unread`]) tells the two apart.

// rmcp marks resources/subscribe legacy-only; 2025 sessions still send it, and the gateway serves both eras.
#![allow(deprecated)]

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequest, CompleteRequest, DiscoverRequest, ErrorCode, GetPromptRequest,
    GetSkillRequest, InitializeRequest, ListPromptsRequest, ListResourceTemplatesRequest,
    ListResourcesRequest, ListSkillsRequest, ListToolsRequest, PingRequest, ReadResourceRequest,
    SubscribeRequest, SubscriptionsListenRequest, UnsubscribeRequest,
};
use serde_json::{Value, json};

/// The JSON type a field must have.
#[derive(Clone, Copy)]
enum Kind {
    String,
    Object,
}

impl Kind {
    fn fits(self, v: &Value) -> bool {
        match self {
            Kind::String => v.is_string(),
            Kind::Object => v.is_object(),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::String => "a string",
            Kind::Object => "an object",
        }
    }
}

/// One field of a method's params: its name, type, and whether it must be there.
type Field = (&'static str, Kind, bool);

const META: Field = ("_meta", Kind::Object, false);

/// The methods the gateway serves and the fields of their params that
/// the gateway reads.
fn fields(method: &str) -> Option<&'static [Field]> {
    Some(match method {
        "tools/call" => &[
            ("name", Kind::String, true),
            ("arguments", Kind::Object, false),
            ("inputResponses", Kind::Object, false),
            ("requestState", Kind::String, false),
            META,
        ],
        "tools/list"
        | "prompts/list"
        | "resources/list"
        | "resources/templates/list"
        | "skills/list" => &[("cursor", Kind::String, false), META],
        "prompts/get" => &[
            ("name", Kind::String, true),
            ("arguments", Kind::Object, false),
            ("inputResponses", Kind::Object, false),
            ("requestState", Kind::String, false),
            META,
        ],
        "resources/read" => &[
            ("uri", Kind::String, true),
            ("inputResponses", Kind::Object, false),
            ("requestState", Kind::String, false),
            META,
        ],
        "resources/subscribe" | "resources/unsubscribe" | "skills/get" => {
            &[("uri", Kind::String, true), META]
        }
        "completion/complete" => &[
            ("ref", Kind::Object, true),
            ("argument", Kind::Object, true),
            ("context", Kind::Object, false),
            META,
        ],
        "initialize" => &[
            ("protocolVersion", Kind::String, true),
            ("capabilities", Kind::Object, true),
            ("clientInfo", Kind::Object, true),
            META,
        ],
        "ping" | "server/discover" => &[META],
        "subscriptions/listen" => &[("notifications", Kind::Object, true), META],
        _ => return None,
    })
}

/// The error for a request of `method` with `params` that rmcp read as a
/// custom request.
pub(crate) fn unread(method: &str, params: Option<&Value>) -> McpError {
    let Some(fields) = fields(method) else {
        return McpError::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("method not found: the gateway does not serve {method:?}"),
            Some(json!({"method": method})),
        );
    };
    let (field, why) = match params {
        None | Some(Value::Null) => match fields.iter().find(|f| f.2) {
            Some((name, ..)) => (Some(*name), format!("the params of {method} need {name:?}")),
            None => (None, format!("the params of {method} do not read")),
        },
        Some(Value::Object(given)) => match fields.iter().find_map(|f| wrong(f, given)) {
            Some((name, why)) => (Some(name), format!("the params of {method}: {why}")),
            None => (None, deeper(method, params)),
        },
        Some(_) => (None, format!("the params of {method} must be an object")),
    };
    let data = match field {
        Some(f) => json!({"method": method, "field": f}),
        None => json!({"method": method}),
    };
    McpError::invalid_params(why, Some(data))
}

/// What is wrong with `field` in `given`, if anything.
fn wrong(
    (name, kind, required): &Field,
    given: &serde_json::Map<String, Value>,
) -> Option<(&'static str, String)> {
    match given.get(*name) {
        None if *required => Some((name, format!("{name:?} is missing"))),
        Some(v) if !kind.fits(v) => Some((
            name,
            format!("{name:?} must be {}, not {}", kind.name(), kind_of(v)),
        )),
        _ => None,
    }
}

/// The params' fields are of the right types, yet they did not read (a
/// field inside one): rmcp's own reading of them says where.
fn deeper(method: &str, params: Option<&Value>) -> String {
    let request = json!({"method": method, "params": params});
    let error = match method {
        "tools/call" => read::<CallToolRequest>(request),
        "tools/list" => read::<ListToolsRequest>(request),
        "prompts/list" => read::<ListPromptsRequest>(request),
        "prompts/get" => read::<GetPromptRequest>(request),
        "resources/list" => read::<ListResourcesRequest>(request),
        "resources/templates/list" => read::<ListResourceTemplatesRequest>(request),
        "resources/read" => read::<ReadResourceRequest>(request),
        "resources/subscribe" => read::<SubscribeRequest>(request),
        "resources/unsubscribe" => read::<UnsubscribeRequest>(request),
        "completion/complete" => read::<CompleteRequest>(request),
        "initialize" => read::<InitializeRequest>(request),
        "ping" => read::<PingRequest>(request),
        "server/discover" => read::<DiscoverRequest>(request),
        "subscriptions/listen" => read::<SubscriptionsListenRequest>(request),
        "skills/list" => read::<ListSkillsRequest>(request),
        "skills/get" => read::<GetSkillRequest>(request),
        _ => None,
    };
    match error {
        Some(e) => format!("the params of {method} do not read: {e}"),
        None => format!("the params of {method} do not read"),
    }
}

fn read<T: serde::de::DeserializeOwned>(request: Value) -> Option<String> {
    serde_json::from_value::<T>(request)
        .err()
        .map(|e| e.to_string())
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code_message(e: &McpError) -> (i32, &str) {
        (e.code.0, e.message.as_ref())
    }

    #[test]
    fn a_call_without_a_name_names_the_field() {
        let e = unread("tools/call", Some(&json!({"arguments": {}})));
        assert_eq!(
            code_message(&e),
            (-32602, "the params of tools/call: \"name\" is missing")
        );
        assert_eq!(
            e.data,
            Some(json!({"method": "tools/call", "field": "name"}))
        );
    }

    #[test]
    fn arguments_as_a_string_names_the_field_and_its_type() {
        let e = unread(
            "tools/call",
            Some(&json!({"name": "a__b", "arguments": "x"})),
        );
        assert_eq!(
            code_message(&e),
            (
                -32602,
                "the params of tools/call: \"arguments\" must be an object, not a string"
            )
        );
    }

    #[test]
    fn params_that_are_not_an_object_or_absent_are_invalid_params() {
        let e = unread("tools/call", Some(&json!([1, 2])));
        assert_eq!(
            code_message(&e),
            (-32602, "the params of tools/call must be an object")
        );
        let e = unread("tools/call", None);
        assert_eq!(
            code_message(&e),
            (-32602, "the params of tools/call need \"name\"")
        );
    }

    #[test]
    fn a_field_inside_a_field_is_named_by_rmcps_reading() {
        let e = unread(
            "initialize",
            Some(&json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}})),
        );
        assert_eq!(e.code.0, -32602);
        assert!(
            e.message
                .starts_with("the params of initialize do not read: ")
                && e.message.contains("`name`"),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_skill_asked_for_without_a_uri_names_the_field() {
        let e = unread("skills/get", Some(&json!({})));
        assert_eq!(
            code_message(&e),
            (-32602, "the params of skills/get: \"uri\" is missing")
        );
        assert_eq!(
            e.data,
            Some(json!({"method": "skills/get", "field": "uri"}))
        );
    }

    #[test]
    fn a_method_the_gateway_does_not_serve_is_not_found() {
        let e = unread("tools/frobnicate", Some(&json!({})));
        assert_eq!(
            code_message(&e),
            (
                -32601,
                "method not found: the gateway does not serve \"tools/frobnicate\""
            )
        );
    }
}
