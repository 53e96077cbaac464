//! The requests the gateway makes of its upstreams for their prompts and
//! resources (each list's pages within [`Limits`], every upstream at once),
//! the errors that name the upstream, and what the gateway keeps of what
//! they send: names and titles as one line, descriptions as tool
//! descriptions are (cut to the limit, sanitized), URIs as sent or not at
//! all.

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ClientRequest, ErrorCode, ListPromptsRequest, ListResourceTemplatesRequest,
    ListResourcesRequest, PaginatedRequestParams, Prompt, Resource, ResourceTemplate,
    ServerCapabilities, ServerResult,
};
use serde_json::json;

use crate::limits::{Limits, prefix};
use crate::sanitize;
use crate::serve::upstream::send::{Outbound, Subject, Upstreams, unexpected_result};

/// The longest URI served (a longer one is left out of lists and refused).
pub(in crate::serve) const MAX_URI: usize = 2048;

/// What the gateway advertises of prompts, resources, completions, logging
/// and the Skills and Tasks extensions: what some upstream has (`subscribe`
/// when one has it; `resources` with skills, which the extension needs), or
/// all of it but tasks while some upstream is still `starting` (so a host
/// asks for what a late one brings).
pub(in crate::serve) fn merged(
    each: impl Iterator<Item = ServerCapabilities>,
    starting: bool,
) -> ServerCapabilities {
    let mut all = ServerCapabilities::default();
    let (mut skills, mut tasks) = (starting, false);
    for caps in each {
        skills |= caps.supports_skills();
        tasks |= caps.supports_tasks();
        all.prompts = all.prompts.or(caps.prompts);
        all.completions = all.completions.or(caps.completions);
        all.logging = all.logging.or(caps.logging);
        if let Some(r) = caps.resources {
            let mut mine = all.resources.unwrap_or_default();
            mine.subscribe = mine.subscribe.or(r.subscribe.filter(|s| *s));
            all.resources = Some(mine);
        }
    }
    if starting {
        all.prompts = all.prompts.or(Some(Default::default()));
        all.completions = all.completions.or(Some(Default::default()));
        let mut r = all.resources.unwrap_or_default();
        r.subscribe = Some(true);
        all.resources = Some(r);
    }
    if skills {
        all.extensions = ServerCapabilities::builder()
            .enable_skills()
            .build()
            .extensions;
        all.resources = all.resources.or(Some(Default::default()));
    }
    // Tasks only once an upstream has them: a host that declared the
    // extension may get a task handle from any call.
    if tasks {
        let mut extensions = all.extensions.take().unwrap_or_default();
        extensions.extend(
            ServerCapabilities::builder()
                .enable_tasks()
                .build()
                .extensions
                .unwrap_or_default(),
        );
        all.extensions = Some(extensions);
    }
    all
}

/// Method not found, for a method no upstream has what it needs for.
pub(in crate::serve) fn not_served(method: &str) -> McpError {
    McpError::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("method not found: no upstream of the gateway serves {method:?}"),
        Some(json!({"method": method})),
    )
}

/// One kind of list an upstream pages through.
pub(in crate::serve) trait Listing:
    Clone + PartialEq + Send + Sync + 'static
{
    const METHOD: &'static str;
    fn request(params: Option<PaginatedRequestParams>) -> ClientRequest;
    fn page(result: ServerResult) -> Option<(Vec<Self>, Option<String>)>;
}

impl Listing for Prompt {
    const METHOD: &'static str = "prompts/list";
    fn request(params: Option<PaginatedRequestParams>) -> ClientRequest {
        ClientRequest::ListPromptsRequest(ListPromptsRequest {
            params,
            ..Default::default()
        })
    }
    fn page(result: ServerResult) -> Option<(Vec<Self>, Option<String>)> {
        match result {
            ServerResult::ListPromptsResult(r) => Some((r.prompts, r.next_cursor)),
            _ => None,
        }
    }
}

impl Listing for Resource {
    const METHOD: &'static str = "resources/list";
    fn request(params: Option<PaginatedRequestParams>) -> ClientRequest {
        ClientRequest::ListResourcesRequest(ListResourcesRequest {
            params,
            ..Default::default()
        })
    }
    fn page(result: ServerResult) -> Option<(Vec<Self>, Option<String>)> {
        match result {
            ServerResult::ListResourcesResult(r) => Some((r.resources, r.next_cursor)),
            _ => None,
        }
    }
}

impl Listing for ResourceTemplate {
    const METHOD: &'static str = "resources/templates/list";
    fn request(params: Option<PaginatedRequestParams>) -> ClientRequest {
        ClientRequest::ListResourceTemplatesRequest(ListResourceTemplatesRequest {
            params,
            ..Default::default()
        })
    }
    fn page(result: ServerResult) -> Option<(Vec<Self>, Option<String>)> {
        match result {
            ServerResult::ListResourceTemplatesResult(r) => {
                Some((r.resource_templates, r.next_cursor))
            }
            _ => None,
        }
    }
}

/// `alias`'s whole list of `T`: its pages read in order within `limits`
/// (pages, items).
pub(in crate::serve) async fn all_pages<T: Listing>(
    alias: &str,
    upstreams: &Upstreams,
    limits: Limits,
) -> Result<Vec<T>, McpError> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..limits.max_tool_pages() {
        let params = cursor
            .clone()
            .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let out = Outbound::method(alias, T::METHOD, T::request(params));
        let result = upstreams.send(out, std::future::pending()).await?;
        let Some((page, next)) = T::page(result) else {
            return Err(unexpected(alias, T::METHOD));
        };
        items.extend(page);
        if items.len() >= limits.max_tools() {
            items.truncate(limits.max_tools());
            break;
        }
        // A cursor seen before would list the same pages again.
        match next {
            Some(next) if seen.insert(next.clone()) => cursor = Some(next),
            _ => break,
        }
    }
    Ok(items)
}

/// An upstream result's `_meta` as the host gets it: without the
/// upstream's own `serverInfo` (a 2026-07-28 upstream names itself there;
/// the host's server is the gateway), the rest as sent.
pub(in crate::serve) fn host_meta(meta: &mut Option<rmcp::model::MetaObject>) {
    if let Some(m) = meta {
        m.0.remove("io.modelcontextprotocol/serverInfo");
        if m.0.is_empty() {
            *meta = None;
        }
    }
}

/// An error of the gateway's about the upstream `alias`.
pub(in crate::serve) fn fault(alias: &str, why: String) -> McpError {
    McpError::new(
        ErrorCode::INTERNAL_ERROR,
        format!("upstream {alias:?} {why}"),
        Some(json!({"upstream": alias})),
    )
}

pub(in crate::serve) fn unexpected(alias: &str, method: &str) -> McpError {
    unexpected_result(alias, Subject::Method(method))
}

/// A name or title as the section shows one: one line, hidden characters out.
pub(in crate::serve) fn line(text: &str) -> String {
    sanitize::line(text)
}

/// A description as a tool's: cut to the description limit, sanitized;
/// `None` when empty.
pub(in crate::serve) fn text(text: Option<&str>, limits: &Limits) -> Option<String> {
    let text = text?;
    let cut = prefix(text, limits.tool_description_bytes);
    Some(sanitize::text(cut)).filter(|t| !t.is_empty())
}

/// Whether a URI can be served as sent: not too long, nothing hidden in
/// it (a URI is routed by its bytes, so it is never rewritten).
pub(in crate::serve) fn uri_ok(uri: &str) -> bool {
    !uri.is_empty()
        && uri.len() <= MAX_URI
        && !uri
            .chars()
            .any(|c| c.is_control() || sanitize::hidden(c).is_some())
}

/// `prompt` as hosts get it: under `name`, its text sanitized.
pub(in crate::serve) fn clean_prompt(prompt: &Prompt, name: &str, limits: &Limits) -> Prompt {
    let mut p = prompt.clone();
    p.name = name.to_string();
    p.title = p.title.as_deref().map(line);
    p.description = text(p.description.as_deref(), limits);
    if let Some(arguments) = &mut p.arguments {
        arguments.truncate(limits.max_tools());
        for a in arguments {
            a.name = line(&a.name);
            a.title = a.title.as_deref().map(line);
            a.description = text(a.description.as_deref(), limits);
        }
    }
    p
}

/// `resource` as hosts get it: its URI as sent, its text sanitized.
pub(in crate::serve) fn clean_resource(resource: &Resource, limits: &Limits) -> Resource {
    let mut r = resource.clone();
    r.name = line(&r.name);
    r.title = r.title.as_deref().map(line);
    r.description = text(r.description.as_deref(), limits);
    r.mime_type = r.mime_type.as_deref().map(line);
    r
}

/// `template` as hosts get it: its URI template as sent, its text sanitized.
pub(in crate::serve) fn clean_template(
    template: &ResourceTemplate,
    limits: &Limits,
) -> ResourceTemplate {
    let mut t = template.clone();
    t.name = line(&t.name);
    t.title = t.title.as_deref().map(line);
    t.description = text(t.description.as_deref(), limits);
    t.mime_type = t.mime_type.as_deref().map(line);
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::PromptArgument;

    #[test]
    fn capabilities_are_advertised_when_some_upstream_has_them_or_one_is_starting() {
        let tools = ServerCapabilities::builder().enable_tools().build();
        let none = merged([tools.clone()].into_iter(), false);
        assert_eq!(
            (none.prompts, none.resources, none.completions),
            (None, None, None)
        );
        let mut listing = ServerCapabilities::builder().enable_resources().build();
        listing.resources.as_mut().unwrap().subscribe = Some(false);
        let mut subscribing = listing.clone();
        subscribing.resources.as_mut().unwrap().subscribe = Some(true);
        let some = merged([tools.clone(), listing.clone()].into_iter(), false);
        assert!(some.prompts.is_none() && some.resources.is_some());
        assert_eq!(some.resources.unwrap().subscribe, None);
        let both = merged([listing, subscribing].into_iter(), false);
        assert_eq!(both.resources.unwrap().subscribe, Some(true));
        let starting = merged([tools].into_iter(), true);
        assert!(starting.prompts.is_some() && starting.completions.is_some());
        assert_eq!(starting.resources.unwrap().subscribe, Some(true));
    }

    #[test]
    fn prompt_and_resource_text_is_sanitized_and_a_hidden_uri_refused() {
        let limits = Limits::default();
        let long = "d".repeat(20 * 1024);
        let mut argument = PromptArgument::new("topic\u{200B}");
        argument.description = Some("What\u{E0041} about.".into());
        let mut prompt = Prompt::new("brief", Some(long.as_str()), Some(vec![argument]));
        prompt.title = Some("Brief\u{202E}\nnow".into());
        let served = clean_prompt(&prompt, "a__brief", &limits);
        assert_eq!(served.name, "a__brief");
        assert_eq!(served.title.as_deref(), Some("Brief now"));
        assert_eq!(
            served.description.as_ref().map(String::len),
            Some(16 * 1024)
        );
        let argument = &served.arguments.as_ref().unwrap()[0];
        assert_eq!(argument.name, "topic");
        assert_eq!(argument.description.as_deref(), Some("What about."));

        let mut resource = Resource::new("book://a/guide", "guide\u{2066}");
        resource.description = Some("\u{200B}".into());
        let served = clean_resource(&resource, &limits);
        assert_eq!(
            (served.uri.as_str(), served.name.as_str()),
            ("book://a/guide", "guide")
        );
        assert_eq!(served.description, None);

        assert!(uri_ok("book://a/guide"));
        assert!(!uri_ok("book://a\u{200B}/guide"));
        assert!(!uri_ok("book://a/\n"));
        assert!(!uri_ok(&format!("book://{}", "x".repeat(MAX_URI))));
        assert!(!uri_ok(""));
    }
}
