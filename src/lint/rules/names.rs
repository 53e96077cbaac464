//! Tool names in prose, for MCP003: which words of a unit are meant as
//! tool names, and which real tool an unknown one most likely means.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use crate::model::ServerSnapshot;
use crate::tool_names::ToolNames;
// Bounded: the names are server-controlled.
use crate::support::distance::levenshtein_bounded as levenshtein;

/// Most distinct unknown names compared with the tool list per server: each
/// comparison visits every tool, so a server naming thousands of tool-like
/// words would cost names × tools. Later names count as not like a tool.
pub(super) const MAX_RANKED_NAMES: usize = 256;

/// Most name-to-tool comparisons of each kind per server: with many tools,
/// fewer names are compared (at least [`MIN_RANKED_NAMES`]), so the work is
/// bounded whatever the names and the tools. Servers with up to 256
/// tools keep [`MAX_RANKED_NAMES`].
const MAX_COMPARISONS: usize = MAX_RANKED_NAMES * 256;
const MIN_RANKED_NAMES: usize = 8;

/// How many distinct names are compared with `tools` tools: both
/// comparisons ([`ServerFacts::closest`], [`ServerFacts::near`]) stop there.
fn ranked_names(tools: usize) -> usize {
    (MAX_COMPARISONS / tools.max(1)).clamp(MIN_RANKED_NAMES, MAX_RANKED_NAMES)
}

/// The server's tool names, folded and split into words once.
pub(super) struct ToolIndex {
    names: Vec<String>,
    folded: Vec<String>,
    words: Vec<BTreeSet<String>>,
    /// First words of multi-word folded names (`get` of `get_invoice`).
    families: HashSet<String>,
}

impl ToolIndex {
    pub(super) fn new(names: &[String]) -> ToolIndex {
        let folded: Vec<String> = names.iter().map(|t| fold(t)).collect();
        let words = folded.iter().map(|f| words(f)).collect();
        let families = folded
            .iter()
            .filter_map(|f| f.split_once('_').map(|(first, _)| first.to_string()))
            .collect();
        ToolIndex {
            names: names.to_vec(),
            folded,
            words,
            families,
        }
    }
}

fn words(folded: &str) -> BTreeSet<String> {
    folded
        .split('_')
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// What the server has, for judging names in its instructions.
pub(super) struct ServerFacts {
    tool_set: HashSet<String>,
    index: ToolIndex,
    /// [`ranked_closest`] by name, for at most `cap` names.
    ranked: RefCell<HashMap<String, Option<(String, u8)>>>,
    /// [`near_any`] at distance 1 by name, for at most `cap` names.
    near: RefCell<HashMap<String, bool>>,
    /// [`ranked_names`] of the server's tool count.
    cap: usize,
    /// Input-schema property names of every tool: parameters, not tools.
    params: BTreeSet<String>,
    /// Server name and alias, lowercased.
    own_names: BTreeSet<String>,
    /// Alias, `serverInfo.name` and title as sent: what hosts build tool
    /// names from.
    labels: Vec<String>,
    kebab_tools: bool,
    camel_tools: bool,
    dotted_tools: bool,
}

impl ServerFacts {
    pub(super) fn new(s: &ServerSnapshot) -> ServerFacts {
        let tools: Vec<String> = s.tools.iter().map(|t| t.name.clone()).collect();
        let mut params = BTreeSet::new();
        for t in &s.tools {
            collect_properties(t.input_schema.as_value(), &mut params, 0);
        }
        let mut own_names = BTreeSet::new();
        own_names.insert(s.server_info.name.to_lowercase());
        if let Some(a) = &s.alias {
            own_names.insert(a.to_lowercase());
        }
        ServerFacts {
            kebab_tools: tools.iter().any(|t| shape(t) == Shape::Kebab),
            camel_tools: tools.iter().any(|t| shape(t) == Shape::Camel),
            dotted_tools: tools.iter().any(|t| t.contains('.')),
            tool_set: tools.iter().cloned().collect(),
            index: ToolIndex::new(&tools),
            ranked: RefCell::new(HashMap::new()),
            near: RefCell::new(HashMap::new()),
            cap: ranked_names(tools.len()),
            params,
            own_names,
            labels: s
                .alias
                .iter()
                .chain([&s.server_info.name])
                .chain(&s.server_info.title)
                .cloned()
                .collect(),
        }
    }

    /// Whether `name` is what a host calls one of the server's tools
    /// (`mcp__billing__get_invoice` under Claude Code): a known tool.
    fn host_name(&self, name: &str) -> bool {
        if !name.starts_with("mcp_") {
            return false;
        }
        ToolNames::hosts().any(|h| {
            let scheme = ToolNames::host(h);
            self.labels.iter().any(|l| {
                let tools = &self.index.names;
                tools.iter().any(|t| scheme.exposed(l, t).as_str() == name)
            })
        })
    }
}

impl ServerFacts {
    /// The real tool `name` most likely means, with its rank; memoized, and
    /// `None` past [`ranked_names`] distinct names.
    pub(super) fn closest(&self, name: &str) -> Option<(String, u8)> {
        let mut ranked = self.ranked.borrow_mut();
        if let Some(hit) = ranked.get(name) {
            return hit.clone();
        }
        if ranked.len() >= self.cap {
            return None;
        }
        let found = ranked_closest(name, &self.index);
        ranked.insert(name.to_string(), found.clone());
        found
    }

    /// Whether `name` is one edit from a tool's folded name; memoized, and
    /// `false` past [`ranked_names`] distinct names (it visits every tool).
    fn near(&self, name: &str) -> bool {
        let mut near = self.near.borrow_mut();
        if let Some(hit) = near.get(name) {
            return *hit;
        }
        if near.len() >= self.cap {
            return false;
        }
        let found = near_any(name, &self.index, 1);
        near.insert(name.to_string(), found);
        found
    }

    /// How many distinct names were compared with the whole tool list (each
    /// comparison visits every tool): the lint's work on names.
    #[cfg(test)]
    fn comparisons(&self) -> usize {
        self.ranked.borrow().len() + self.near.borrow().len()
    }
}

/// Property names anywhere in a JSON schema (bounded depth: schemas are untrusted).
fn collect_properties(schema: &Value, out: &mut BTreeSet<String>, depth: usize) {
    if depth > 8 {
        return;
    }
    match schema {
        Value::Object(obj) => {
            if let Some(Value::Object(props)) = obj.get("properties") {
                out.extend(props.keys().cloned());
            }
            for v in obj.values() {
                collect_properties(v, out, depth + 1);
            }
        }
        Value::Array(items) => {
            for v in items {
                collect_properties(v, out, depth + 1);
            }
        }
        _ => {}
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `list_periods`
    Snake,
    /// `get-roots-list`
    Kebab,
    /// `getInvoice`
    Camel,
    /// `github.create_issue`
    Dotted,
    /// `recommend`
    Single,
}

fn shape(name: &str) -> Shape {
    if name.contains('.') {
        Shape::Dotted
    } else if name.contains('_') {
        Shape::Snake
    } else if name.contains('-') {
        Shape::Kebab
    } else if name
        .as_bytes()
        .windows(2)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
    {
        Shape::Camel
    } else {
        Shape::Single
    }
}

/// Words after a name that make it something other than a tool.
#[rustfmt::skip]
const NOT_TOOL_NEXT: &[&str] = &[
    "parameter", "parameters", "param", "params", "argument", "arguments", "arg", "args", "field",
    "fields", "option", "options", "flag", "flags", "property", "properties", "key", "keys",
    "value", "values", "variable", "variables", "setting", "settings", "env", "environment",
    "column", "columns", "table", "tables", "resource", "resources", "prompt", "prompts",
    "template", "templates", "file", "files", "directory", "folder", "package", "packages",
    "module", "modules", "library", "command", "commands", "method", "methods", "type", "types",
    "header", "headers", "scope", "scopes", "role", "roles", "permission", "permissions", "index",
    "event", "events", "section", "sections", "enum", "object", "objects", "class", "namespace",
    "endpoint", "endpoints", "schema", "mode", "format", "status", "state", "attribute",
    "attributes", "returned", "extension", "label", "labels", "tag", "tags", "id", "ids",
];

/// Words before a name that make it something other than a tool.
const NOT_TOOL_PREV: &[&str] = &["pass", "set", "unset", "specify", "provide"];

/// Words before a name that make it a tool call.
const CALL_PREV: &[&str] = &["call", "calling", "calls", "invoke", "invoking", "invokes"];

/// Words before a name that make it likely, not certain, a tool.
const USE_PREV: &[&str] = &["use", "using", "uses", "run", "running", "try"];

/// First words of tool names that are verbs: a snake_case name starting
/// with one reads as an action, not as a field or a value.
#[rustfmt::skip]
const TOOL_VERBS: &[&str] = &[
    "get", "list", "create", "update", "delete", "remove", "add", "search", "find", "fetch", "read",
    "write", "edit", "run", "query", "start", "stop", "send", "post", "put", "upload", "download",
    "execute", "exec", "generate", "resolve", "describe", "analyze", "analyse", "check", "validate",
    "open", "close", "navigate", "click", "take", "move", "view", "build", "trigger", "toggle",
    "publish", "subscribe", "unsubscribe", "invoke", "cancel", "retrieve", "lookup", "insert",
    "save", "load", "export", "import", "sync", "deploy", "install", "convert", "translate",
    "summarize", "browse", "scrape", "crawl", "extract", "parse", "render", "submit", "approve",
    "merge", "push", "pull", "commit", "clone", "scan", "count", "compute", "calculate",
    "schedule", "notify", "reply", "comment", "assign", "archive", "restore", "rename", "copy",
    "apply", "call", "set", "show", "make", "do", "upsert", "patch", "sign", "login", "logout",
];

/// Lowercase-first camelCase words that are brands, not tools.
const NOT_CAMEL_TOOLS: &[&str] = &[
    "iphone", "ipad", "ios", "ipados", "macos", "icloud", "ebay", "watchos", "tvos",
];

#[derive(Debug)]
enum Token<'a> {
    /// Inline code, its content.
    Code(&'a str),
    Word(&'a str),
    /// Anything that breaks a phrase: punctuation other than inside words.
    Break,
}

static URL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s`)\]>]*").expect("static regex"));

/// Words, inline code spans and breaks of a unit, with URLs left out.
fn tokens(unit: &str) -> Vec<Token<'_>> {
    // In order and disjoint: the next URL is the only one to check.
    let mut urls = URL.find_iter(unit).map(|m| (m.start(), m.end())).peekable();
    let mut out = Vec::new();
    let mut i = 0;
    while i < unit.len() {
        while urls.next_if(|&(_, e)| e <= i).is_some() {}
        if let Some(&(s, end)) = urls.peek()
            && s <= i
        {
            out.push(Token::Break);
            i = end;
            continue;
        }
        let rest = &unit[i..];
        let Some(c) = rest.chars().next() else { break };
        if c == '`' {
            let run = rest.bytes().take_while(|x| *x == b'`').count();
            let fence = &rest[..run];
            match rest[run..].find(fence) {
                Some(close) => {
                    out.push(Token::Code(rest[run..run + close].trim()));
                    i += run + close + run;
                }
                None => {
                    out.push(Token::Break);
                    i += run;
                }
            }
            continue;
        }
        if c.is_alphanumeric() || c == '_' {
            let len: usize = rest
                .chars()
                .take_while(|d| d.is_alphanumeric() || matches!(d, '_' | '-' | '.' | '\'' | '’'))
                .map(char::len_utf8)
                .sum();
            out.push(Token::Word(
                rest[..len].trim_end_matches(['.', '-', '\'', '’']),
            ));
            i += len;
            continue;
        }
        if !c.is_whitespace() {
            out.push(Token::Break);
        }
        i += c.len_utf8();
    }
    out
}

/// A token's word, lowercased, if it is a word.
fn word_at(tokens: &[Token<'_>], i: Option<usize>) -> Option<String> {
    match i.and_then(|i| tokens.get(i)) {
        Some(Token::Word(w)) => Some(w.to_lowercase()),
        Some(Token::Code(c)) => Some(c.to_lowercase()),
        _ => None,
    }
}

/// Names in a unit that look like tool mentions and are not the server's tools.
///
/// A name needs evidence to count: call syntax or a calling verb before it,
/// "tool" after it, a likeness to a real tool, a first word shared with a
/// real tool's, or (for snake_case) a verb as its first word. Names that
/// are parameters of the server's tools, upper-case constants, or followed
/// by a word such as "field" or "parameter" never count.
pub(super) fn unknown_mentions(unit: &str, facts: &ServerFacts) -> Vec<String> {
    static CALL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^([A-Za-z][A-Za-z0-9_\-.]*)\s*\((.*)\)$").expect("static regex")
    });
    static NAME: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^[A-Za-z][A-Za-z0-9_\-.]*$").expect("static regex"));
    let toks = tokens(unit);
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for (i, tok) in toks.iter().enumerate() {
        let (name, quoted, call) = match tok {
            Token::Code(content) => {
                if let Some(c) = CALL.captures(content) {
                    (c.get(1).map_or("", |m| m.as_str()), true, true)
                } else if NAME.is_match(content) {
                    (*content, true, false)
                } else {
                    continue;
                }
            }
            Token::Word(w) if NAME.is_match(w) => (*w, false, false),
            _ => continue,
        };
        let name = name.trim_end_matches(['.', '-', '_']);
        if name.is_empty() || facts.tool_set.contains(name) || facts.host_name(name) {
            continue;
        }
        let shape = shape(name);
        if !quoted && shape == Shape::Single {
            continue;
        }
        let prev = word_at(&toks, i.checked_sub(1));
        let prev2 = word_at(&toks, i.checked_sub(2));
        let next = word_at(&toks, Some(i + 1));
        if name.chars().all(|c| !c.is_lowercase())
            || another_servers(&toks, i)
            || facts.params.contains(name)
            || facts.own_names.contains(&name.to_lowercase())
            || next.as_deref().is_some_and(|n| NOT_TOOL_NEXT.contains(&n))
            || prev.as_deref().is_some_and(|p| NOT_TOOL_PREV.contains(&p))
        {
            continue;
        }
        let before = |list: &[&str]| {
            prev.as_deref().is_some_and(|p| list.contains(&p))
                || (prev.as_deref() == Some("the")
                    && prev2.as_deref().is_some_and(|p| list.contains(&p)))
        };
        let calls = call || before(CALL_PREV);
        let strong = calls || next.as_deref().is_some_and(|n| n == "tool" || n == "tools");
        let uses = before(USE_PREV);
        let close = facts.closest(name).is_some_and(|(_, rank)| rank <= 2);
        let first = fold(name).split('_').next().unwrap_or("").to_string();
        let family = facts.index.families.contains(&first);
        let verb = TOOL_VERBS.contains(&first.as_str());
        let counts = match shape {
            Shape::Snake => strong || uses || close || family || verb,
            Shape::Kebab if quoted => {
                strong || uses || close || (facts.kebab_tools && (family || verb))
            }
            // Bare hyphenated words are mostly English ("read-only").
            Shape::Kebab => calls,
            Shape::Camel if quoted => {
                strong || uses || close || (facts.camel_tools && (family || verb))
            }
            Shape::Camel => {
                calls
                    && name.starts_with(|c: char| c.is_ascii_lowercase())
                    && !NOT_CAMEL_TOOLS.contains(&name.to_lowercase().as_str())
            }
            Shape::Dotted => quoted && facts.dotted_tools && (strong || uses || close),
            Shape::Single => strong || (name.len() >= 5 && facts.near(name)),
        };
        if counts && seen.insert(name) {
            out.push(name.to_string());
        }
    }
    out
}

/// Whether the name at `i` is attributed to another server: "the
/// filesystem server's `write_file`", "`write_file` from the filesystem server".
fn another_servers(toks: &[Token<'_>], i: usize) -> bool {
    let prev = word_at(toks, i.checked_sub(1));
    if prev.is_some_and(|p| p == "server's" || p == "servers'" || p == "server’s") {
        return true;
    }
    let next = word_at(toks, Some(i + 1));
    next.is_some_and(|n| matches!(n.as_str(), "from" | "of" | "on" | "in" | "by"))
        && (i + 2..i + 6)
            .any(|k| word_at(toks, Some(k)).is_some_and(|w| w == "server" || w == "mcp"))
}

/// Lowercase, with `-` and `.` as `_`.
fn fold(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut prev_lower = false;
    for c in name.chars() {
        // camelCase humps are word breaks too: `endSession` is `end_session`.
        if c.is_uppercase() && prev_lower {
            out.push('_');
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        match c {
            '-' | '.' => out.push('_'),
            c => out.extend(c.to_lowercase()),
        }
    }
    out
}

fn near_any(name: &str, index: &ToolIndex, distance: usize) -> bool {
    let n = fold(name);
    index.folded.iter().any(|t| levenshtein(&n, t) <= distance)
}

/// The real tool an unknown name most likely means: the same words in
/// another order, else the smallest edit distance (at most a third of the
/// length, and at least 2 allowed), else a shared word set of at least
/// half, else the most shared words that are not verbs (`get_average` and
/// `calculate_average` share `average`).
#[cfg(test)]
fn closest_tool(name: &str, tools: &[String]) -> Option<String> {
    ranked_closest(name, &ToolIndex::new(tools)).map(|(t, _)| t)
}

/// The closest tool with its rank (0: same words … 3: a shared noun; rank
/// 2 or better is evidence that the name is meant as a tool).
fn ranked_closest(name: &str, index: &ToolIndex) -> Option<(String, u8)> {
    let n = fold(name);
    let mine = words(&n);
    let mut best: Option<(u8, usize, usize, &String)> = None;
    for ((t, f), theirs) in index.names.iter().zip(&index.folded).zip(&index.words) {
        let f = f.as_str();
        // A name for another action is no near miss: no suggestion is
        // better than a wrong one (`close_ticket` never gets `open_ticket`).
        if other_action(&n, f) {
            continue;
        }
        // My words that one of theirs matches, exactly or loosely.
        let matched: Vec<&String> = mine
            .iter()
            .filter(|w| theirs.iter().any(|x| same_word(w, x)))
            .collect();
        // Two of my words can match one of theirs loosely (`echo`, `echos`).
        let shared = matched.len().min(theirs.len());
        let union = (mine.len() + theirs.len()).saturating_sub(shared).max(1);
        let distance = levenshtein(&n, f);
        let allowed = (n.chars().count().max(f.chars().count()) / 3).max(2);
        let rank = if mine == *theirs && !mine.is_empty() {
            0
        } else if distance <= allowed {
            1
        } else if shared * 2 >= union && shared > 0 {
            2
        } else if matched
            .iter()
            .any(|w| !TOOL_VERBS.contains(&w.as_str()) && w.len() > 2)
        {
            3
        } else {
            continue;
        };
        let key = (rank, union.saturating_sub(shared), distance, t);
        if best.as_ref().is_none_or(|b| key < *b) {
            best = Some(key);
        }
    }
    best.map(|b| (b.3.clone(), b.0))
}

/// Verbs of one action each: two names starting with verbs of different
/// rows do different things (`close_ticket` is not a misspelt
/// `open_ticket`, `set_period` not `get_period`).
const ACTIONS: &[&[&str]] = &[
    &[
        "get", "fetch", "read", "retrieve", "lookup", "find", "search", "query", "view", "show",
        "list", "describe", "load", "browse",
    ],
    &[
        "create", "add", "insert", "make", "new", "post", "put", "upsert", "save", "write",
    ],
    &[
        "update", "edit", "patch", "set", "modify", "change", "rename",
    ],
    &["delete", "remove", "drop", "destroy", "purge", "erase"],
    &["open", "start", "begin", "launch", "enable"],
    &["close", "stop", "end", "finish", "disable", "cancel"],
    &["subscribe", "follow", "watch"],
    &["unsubscribe", "unfollow", "unwatch"],
    &["upload", "push", "send", "publish", "export"],
    &["download", "pull", "receive", "import"],
    &["lock"],
    &["unlock"],
    &["approve", "accept"],
    &["reject", "deny", "decline"],
    &["archive"],
    &["restore", "unarchive"],
];

/// Whether two folded names start with verbs of different actions
/// ([`ACTIONS`]); misspelt or unknown first words are no action.
fn other_action(a: &str, b: &str) -> bool {
    let row = |s: &str| {
        let first = s.split('_').next().filter(|v| s.len() > v.len())?;
        ACTIONS.iter().position(|r| r.contains(&first))
    };
    matches!((row(a), row(b)), (Some(x), Some(y)) if x != y)
}

/// Two words of tool names that mean the same: equal, a plural
/// (`period`, `periods`), or a shortening of four letters or more
/// (`repos`, `repositories`).
fn same_word(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    a == b
        || (short.len() >= 4 && long.starts_with(short.trim_end_matches('s')))
        || (short.len() >= 4 && levenshtein(a, b) <= 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Tool;

    /// 300 tools and 1,200 distinct unknown tool-like names (snake_case
    /// verbs and quoted single words, the shapes compared with every tool):
    /// the names compared with the whole tool list stay within the cap,
    /// so the work is tools × cap, not tools × names.
    #[test]
    fn work_on_hostile_names_is_capped() {
        let mut server = ServerSnapshot::new("s");
        for i in 0..300 {
            server = server.with_tool(Tool::new(format!("get_item_{i:05}"), "Get an item."));
        }
        let facts = ServerFacts::new(&server);
        let text: String = (0..600)
            .map(|i| format!("Call `fetch_thing{i}` then `zzqword{i}`, "))
            .collect();
        let found = unknown_mentions(&text, &facts);
        assert_eq!(found.len(), 600, "{:?}", &found[..4]);
        assert!(
            facts.comparisons() <= 2 * ranked_names(300),
            "{}",
            facts.comparisons()
        );
        // With many tools fewer names are compared: names × tools stays bounded.
        assert_eq!(ranked_names(256), MAX_RANKED_NAMES);
        assert_eq!(ranked_names(300), 218);
        assert_eq!(ranked_names(10_000), MIN_RANKED_NAMES);
        assert_eq!(ranked_names(1_000_000), MIN_RANKED_NAMES);
        for tools in [1, 1000, 5000, 10_000, 100_000] {
            assert!(ranked_names(tools) * tools <= MAX_COMPARISONS.max(MIN_RANKED_NAMES * tools));
        }
        // URLs among many words are skipped in one pass.
        let urls: String = (0..2000)
            .map(|i| format!("https://x.example/{i} call_it{i} "))
            .collect();
        assert_eq!(tokens(&urls).len(), 4000);
    }

    #[test]
    fn closest_tools() {
        let tools = vec![
            "list_periods".to_string(),
            "get_invoice".to_string(),
            "trigger-long-running-operation".to_string(),
        ];
        assert_eq!(
            closest_tool("invoice_get", &tools).as_deref(),
            Some("get_invoice")
        );
        assert_eq!(
            closest_tool("fetch_invoice", &tools).as_deref(),
            Some("get_invoice")
        );
        assert_eq!(
            closest_tool("list-period", &tools).as_deref(),
            Some("list_periods")
        );
        assert_eq!(closest_tool("trigger-sampling-request", &tools), None);
        let gh = vec![
            "search_repos".to_string(),
            "github_create_issue".to_string(),
        ];
        assert_eq!(
            closest_tool("search_repositories", &gh).as_deref(),
            Some("search_repos")
        );
        assert_eq!(
            closest_tool("create_issue", &gh).as_deref(),
            Some("github_create_issue")
        );
    }
}
