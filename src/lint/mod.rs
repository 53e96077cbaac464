//! The lint pass: what a server author should fix in the instructions before
//! release. Every finding has a stable code, a message, an explanation and a
//! fix; reports render as text, JSON or SARIF 2.1.0.
//!
//! The pass reads the instructions the way a host does (sanitized, cut into
//! units by [`crate::segment`]) and reuses the assembler's restatement test,
//! so a sentence the lint calls a restatement is one a host removes.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Arc, LazyLock};

use regex::Regex;
use serde_json::Value;

use crate::dedup::{self, Priority, ToolTextCache};
use crate::error::Result;
use crate::model::{Instructions, ServerSnapshot};
use crate::sanitize;
use crate::segment::{self, Unit, UnitKind};
use crate::tokens::{Encoding, Tiktoken, TokenCounter};

mod codes;
mod finding;
mod render;

pub use codes::{LintCode, Severity};
pub use finding::{Finding, LintReport, ServerLint};

/// Default for [`Linter::max_tokens`]: about 2,000 characters of English
/// prose, where one widely used host cuts every server's instructions.
pub const DEFAULT_MAX_TOKENS: usize = 400;

/// Runs the lint pass with a token threshold, a tokenizer and per-code severities.
///
/// ```
/// use mcp_preamble::{LintCode, Linter, ServerSnapshot, Severity, Tool};
///
/// let server = ServerSnapshot::new("invoice")
///     .with_instructions("Always call list_periods before get_invoices.")
///     .with_tool(Tool::new("list_periods", "List billing periods."))
///     .with_tool(Tool::new("get_invoice", "Get an invoice by id."));
/// let findings = Linter::new().max_tokens(200).lint(&server);
/// assert_eq!(findings.len(), 1);
/// assert_eq!(findings[0].code, LintCode::UnknownTool);
/// assert_eq!(findings[0].severity, Severity::Error);
/// assert_eq!(
///     findings[0].message,
///     "instructions mention `get_invoices`, which is not one of the server's tools; did you mean `get_invoice`?"
/// );
/// ```
#[derive(Clone)]
pub struct Linter {
    counter: Arc<dyn TokenCounter>,
    max_tokens: usize,
    similarity: f64,
    severities: BTreeMap<LintCode, Option<Severity>>,
    tool_texts: ToolTextCache,
}

impl fmt::Debug for Linter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Linter")
            .field("encoding", &self.counter.name())
            .field("max_tokens", &self.max_tokens)
            .field("similarity", &self.similarity)
            .field("severities", &self.severities)
            .finish()
    }
}

impl Default for Linter {
    fn default() -> Linter {
        Linter::new()
    }
}

impl Linter {
    /// A linter with `o200k_base` counts, a threshold of
    /// [`DEFAULT_MAX_TOKENS`], the assembler's default similarity (0.75), and
    /// every code on at its default severity.
    pub fn new() -> Linter {
        Linter {
            counter: Arc::new(Tiktoken::new(Encoding::O200kBase)),
            max_tokens: DEFAULT_MAX_TOKENS,
            similarity: dedup::DEFAULT_SIMILARITY,
            severities: BTreeMap::new(),
            tool_texts: ToolTextCache::default(),
        }
    }

    /// Instructions over this many tokens (sanitized) get `MCP004`.
    pub fn max_tokens(mut self, tokens: usize) -> Linter {
        self.max_tokens = tokens;
        self
    }

    /// The restatement threshold, as [`Assembler::similarity_threshold`](crate::Assembler::similarity_threshold).
    /// Fails with [`ErrorKind::InvalidConfig`](crate::ErrorKind::InvalidConfig) outside `0.0..=1.0`.
    pub fn similarity_threshold(mut self, threshold: f64) -> Result<Linter> {
        self.similarity = dedup::similarity(threshold)?;
        Ok(self)
    }

    /// Counts tokens with this tiktoken encoding (default: `o200k_base`).
    pub fn encoding(self, encoding: Encoding) -> Linter {
        self.token_counter(Tiktoken::new(encoding))
    }

    /// Counts tokens with your own [`TokenCounter`].
    pub fn token_counter(mut self, counter: impl TokenCounter + 'static) -> Linter {
        self.counter = Arc::new(counter);
        self
    }

    /// Turns a code off.
    pub fn allow(mut self, code: LintCode) -> Linter {
        self.severities.insert(code, None);
        self
    }

    /// Gives every finding of a code this severity (and turns it back on).
    pub fn severity(mut self, code: LintCode, severity: Severity) -> Linter {
        self.severities.insert(code, Some(severity));
        self
    }

    /// The findings for one server, sorted by code, then line, then message.
    pub fn lint(&self, server: &ServerSnapshot) -> Vec<Finding> {
        self.check(server, None).findings
    }

    /// One server's findings with what its instructions cost; `source` names
    /// where it came from (a file, a config) in reports.
    pub fn check(&self, server: &ServerSnapshot, source: Option<&str>) -> ServerLint {
        let name = server.display_name();
        let mut pass = Pass {
            linter: self,
            server,
            name: name.clone(),
            findings: Vec::new(),
        };
        let mut tokens = 0;
        match &server.instructions {
            Instructions::Absent => {}
            Instructions::Blank(raw) => pass.blank(raw),
            Instructions::Present(raw) => {
                let text = sanitize::text(raw);
                tokens = self.counter.count(&text);
                pass.present(raw, &text, tokens);
            }
        }
        let mut findings = pass.findings;
        findings.retain_mut(|f| match self.severities.get(&f.code) {
            None => true,
            Some(None) => false,
            Some(Some(s)) => {
                f.severity = *s;
                true
            }
        });
        findings.sort_by(|a, b| {
            (a.code, a.line, &a.message, &a.excerpt).cmp(&(b.code, b.line, &b.message, &b.excerpt))
        });
        findings.dedup();
        ServerLint {
            server: name,
            source: source.map(str::to_string),
            instructions: server.instructions.state(),
            tokens,
            encoding: self.counter.name().to_string(),
            findings,
        }
    }

    /// Lints several servers into one report (no sources).
    pub fn report(&self, servers: &[ServerSnapshot]) -> LintReport {
        LintReport::new(servers.iter().map(|s| self.check(s, None)).collect())
    }
}

/// Lints one server with the default [`Linter`].
pub fn lint(server: &ServerSnapshot) -> Vec<Finding> {
    Linter::new().lint(server)
}

/// Fewest tokens of whitespace and invisible characters that get `MCP008`:
/// a trailing newline or two is noise, an indented block is a habit.
const WASTED_TOKENS: usize = 8;

/// One server's pass.
struct Pass<'a> {
    linter: &'a Linter,
    server: &'a ServerSnapshot,
    name: String,
    findings: Vec<Finding>,
}

impl Pass<'_> {
    fn push(
        &mut self,
        code: LintCode,
        severity: Severity,
        message: String,
        at: Option<(&str, &str, &Unit)>,
        tool: Option<String>,
        fix: String,
    ) {
        let (excerpt, line) = match at {
            Some((text, unit_text, unit)) => (
                Some(excerpt(unit_text)),
                Some(text[..unit.start].matches('\n').count() + 1),
            ),
            None => (None, None),
        };
        self.findings.push(Finding {
            code,
            severity,
            server: self.name.clone(),
            message,
            excerpt,
            line,
            tool,
            explanation: code.explanation(),
            fix,
        });
    }

    fn blank(&mut self, raw: &str) {
        let n = raw.chars().count();
        self.push(
            LintCode::BlankInstructions,
            Severity::Error,
            format!(
                "instructions are blank: {n} {} of whitespace or invisible text, which hosts drop",
                if n == 1 { "character" } else { "characters" }
            ),
            None,
            None,
            LintCode::BlankInstructions.fix().to_string(),
        );
    }

    fn present(&mut self, raw: &str, text: &str, tokens: usize) {
        let units = segment::units(text);
        let tools_known = !self.server.tools.is_empty() && self.server.tools_error.is_none();

        if tokens > self.linter.max_tokens {
            self.push(
                LintCode::TooLong,
                Severity::Warning,
                format!(
                    "instructions are {tokens} tokens, over the threshold of {}",
                    self.linter.max_tokens
                ),
                None,
                None,
                LintCode::TooLong.fix().to_string(),
            );
        }
        self.wasted_whitespace(raw, tokens);
        self.secrets(text);
        for unit in &units {
            self.acts_on_host(text, unit);
        }
        if !tools_known {
            // Without the tool list, restatements and tool names cannot be judged.
            return;
        }
        let restated = self.restatements(text, &units);
        self.unknown_tools(text, &units);
        self.descriptions_only(text, &units, &restated);
    }

    fn wasted_whitespace(&mut self, raw: &str, tokens: usize) {
        let raw_tokens = self.linter.counter.count(raw);
        let wasted = raw_tokens.saturating_sub(tokens);
        if wasted >= WASTED_TOKENS {
            self.push(
                LintCode::WastedWhitespace,
                Severity::Note,
                format!(
                    "{wasted} of the {raw_tokens} tokens of the instructions as sent are indentation, blank lines or invisible characters"
                ),
                None,
                None,
                LintCode::WastedWhitespace.fix().to_string(),
            );
        }
    }

    fn secrets(&mut self, text: &str) {
        let mut seen = BTreeSet::new();
        for secret in find_secrets(text) {
            if !seen.insert(secret.redacted.clone()) {
                continue;
            }
            self.push(
                LintCode::Secret,
                Severity::Error,
                format!(
                    "instructions contain what looks like {} ({})",
                    secret.kind, secret.redacted
                ),
                None,
                None,
                LintCode::Secret.fix().to_string(),
            );
        }
    }

    fn acts_on_host(&mut self, text: &str, unit: &Unit) {
        let unit_text = unit.text(text);
        let flat = one_line(unit_text);
        let mut best: Option<(&HostPattern, String)> = None;
        for p in HOST_PATTERNS.iter() {
            if best.as_ref().is_some_and(|(b, _)| b.severity >= p.severity) {
                continue;
            }
            if let Some(m) = p.find(&flat) {
                best = Some((p, m.trim().to_string()));
            }
        }
        if let Some((p, phrase)) = best {
            self.push(
                LintCode::ActsOnHost,
                p.severity,
                format!("instructions {}: \"{}\"", p.what, redact(&phrase)),
                Some((text, unit_text, unit)),
                None,
                LintCode::ActsOnHost.fix().to_string(),
            );
        }
    }

    /// `MCP002`; returns, per unit, the tool it restates.
    fn restatements(&mut self, text: &str, units: &[Unit]) -> Vec<Option<String>> {
        let tools: Vec<_> = self
            .server
            .tools
            .iter()
            .filter_map(|t| {
                Some(
                    self.linter
                        .tool_texts
                        .get(&t.name, t.description.as_deref()?),
                )
            })
            .collect();
        let mut out = Vec::with_capacity(units.len());
        for unit in units {
            let unit_text = unit.text(text);
            let restated = matches!(unit.kind, UnitKind::Sentence | UnitKind::ListItem)
                .then(|| dedup::restated_tool(unit_text, &tools, self.linter.similarity))
                .flatten()
                .map(str::to_string);
            if let Some(tool) = &restated {
                self.push(
                    LintCode::RestatesTool,
                    Severity::Warning,
                    format!("sentence restates the description of tool `{tool}`"),
                    Some((text, unit_text, unit)),
                    Some(tool.clone()),
                    format!(
                        "Delete the sentence, or keep only what it adds to the description of `{tool}` (an order, a limit, what an identifier means)."
                    ),
                );
            }
            out.push(restated);
        }
        out
    }

    fn unknown_tools(&mut self, text: &str, units: &[Unit]) {
        let facts = ServerFacts::new(self.server);
        let mut reported = BTreeSet::new();
        for unit in units {
            if matches!(unit.kind, UnitKind::Code) {
                continue;
            }
            let unit_text = unit.text(text);
            for name in unknown_mentions(unit_text, &facts) {
                if !reported.insert(name.clone()) {
                    continue;
                }
                let closest = closest_tool(&name, &facts.tools);
                // "X requires client sampling capability": registered only
                // sometimes, and the sentence says so.
                let conditional = CONDITION.is_match(unit_text);
                let (message, fix) = match (&closest, conditional) {
                    (Some(c), false) => (
                        format!(
                            "instructions mention `{name}`, which is not one of the server's tools; did you mean `{c}`?"
                        ),
                        format!("Replace `{name}` with `{c}`, the tool's current name."),
                    ),
                    (_, true) => (
                        format!(
                            "instructions mention `{name}`, which is not one of the server's tools, in a sentence that makes it conditional"
                        ),
                        format!(
                            "Leave the sentence about `{name}` out when the tool is not registered: build the instructions from the tools the server registers."
                        ),
                    ),
                    (None, false) => (
                        format!(
                            "instructions mention `{name}`, which is not one of the server's tools, and no tool has a similar name"
                        ),
                        format!(
                            "Remove `{name}` from the instructions, or register it; if it is registered only under some conditions, say which."
                        ),
                    ),
                };
                let severity = if conditional {
                    Severity::Warning
                } else {
                    Severity::Error
                };
                self.push(
                    LintCode::UnknownTool,
                    severity,
                    message,
                    Some((text, unit_text, unit)),
                    closest,
                    fix,
                );
            }
        }
    }

    fn descriptions_only(&mut self, text: &str, units: &[Unit], restated: &[Option<String>]) {
        let names: Vec<String> = self
            .server
            .tools
            .iter()
            .map(|t| dedup::normalize(&t.name))
            .filter(|n| !n.is_empty())
            .collect();
        // Framing (an intro naming the server, a line ending in ':') is
        // neither here nor there; anything else that is not a one-tool
        // sentence means the instructions say more than descriptions would.
        let (mut content, mut single, mut other) = (0, 0, 0);
        for (unit, restates) in units.iter().zip(restated) {
            if !matches!(unit.kind, UnitKind::Sentence | UnitKind::ListItem) {
                continue;
            }
            let unit_text = unit.text(text);
            let norm = dedup::normalize(unit_text);
            if norm.is_empty() {
                continue;
            }
            content += 1;
            let named: BTreeSet<&str> = norm
                .split(' ')
                .filter(|w| names.iter().any(|n| n == w))
                .collect();
            let guidance = dedup::priority(unit, unit_text, &names) == Priority::Constraint
                || named.len() >= 2;
            let framing = norm.contains("this server")
                || norm.contains("this mcp server")
                || unit_text.trim_end().ends_with(':');
            if guidance {
                return;
            } else if named.len() == 1 || restates.is_some() {
                single += 1;
            } else if !framing {
                other += 1;
            }
        }
        if single > 0 && other == 0 {
            self.push(
                LintCode::ToolDescriptionsOnly,
                Severity::Note,
                format!(
                    "instructions only describe single tools ({single} of {content} {}) and say nothing about order, identifiers or scope",
                    if content == 1 { "sentence" } else { "sentences" }
                ),
                None,
                None,
                LintCode::ToolDescriptionsOnly.fix().to_string(),
            );
        }
    }
}

/// Whitespace runs collapsed to one space.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Most characters of an excerpt.
const EXCERPT_CHARS: usize = 160;

/// A unit as one line, secrets redacted, cut to [`EXCERPT_CHARS`].
fn excerpt(unit_text: &str) -> String {
    let line = redact(&one_line(unit_text));
    if line.chars().count() <= EXCERPT_CHARS {
        return line;
    }
    let cut: String = line.chars().take(EXCERPT_CHARS - 1).collect();
    format!("{}…", cut.trim_end())
}

// ---------------------------------------------------------------------------
// MCP003: tool names.

/// What the server has, for judging names in its instructions.
struct ServerFacts {
    /// Tool names, as sent.
    tools: Vec<String>,
    /// Input-schema property names of every tool: parameters, not tools.
    params: BTreeSet<String>,
    /// Server name and alias, lowercased.
    own_names: BTreeSet<String>,
    kebab_tools: bool,
    camel_tools: bool,
    dotted_tools: bool,
}

impl ServerFacts {
    fn new(s: &ServerSnapshot) -> ServerFacts {
        let tools: Vec<String> = s.tools.iter().map(|t| t.name.clone()).collect();
        let mut params = BTreeSet::new();
        for t in &s.tools {
            collect_properties(&t.input_schema, &mut params, 0);
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
            tools,
            params,
            own_names,
        }
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
    let urls: Vec<(usize, usize)> = URL.find_iter(unit).map(|m| (m.start(), m.end())).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < unit.len() {
        if let Some(&(_, end)) = urls.iter().find(|(s, e)| *s <= i && i < *e) {
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
fn unknown_mentions(unit: &str, facts: &ServerFacts) -> Vec<String> {
    static CALL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^([A-Za-z][A-Za-z0-9_\-.]*)\s*\((.*)\)$").expect("static regex")
    });
    static NAME: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^[A-Za-z][A-Za-z0-9_\-.]*$").expect("static regex"));
    let toks = tokens(unit);
    let mut out = Vec::new();
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
        if name.is_empty() || facts.tools.iter().any(|t| t == name) {
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
        let close = like_a_tool(name, &facts.tools);
        let first = fold(name).split('_').next().unwrap_or("").to_string();
        let family = facts
            .tools
            .iter()
            .any(|t| fold(t).split('_').next() == Some(first.as_str()) && fold(t) != first);
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
            Shape::Single => strong || (name.len() >= 5 && near(name, &facts.tools, 1)),
        };
        if counts && !out.iter().any(|o| o == name) {
            out.push(name.to_string());
        }
    }
    out
}

/// A sentence that says a tool exists only sometimes.
static CONDITION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:only\s+(?:if|when)|(?:if|when)\s+(?:the\s+)?client|capabilit(?:y|ies)|(?:if|when)\s+(?:enabled|available|supported|configured)|depending\s+on|registers?|registered|dynamically|will\s+(?:be\s+)?(?:available|added|registered|appear))\b")
        .expect("static regex")
});

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

fn near(name: &str, tools: &[String], distance: usize) -> bool {
    let n = fold(name);
    tools.iter().any(|t| levenshtein(&n, &fold(t)) <= distance)
}

/// The real tool an unknown name most likely means: the same words in
/// another order, else the smallest edit distance (at most a third of the
/// length, and at least 2 allowed), else a shared word set of at least
/// half, else the most shared words that are not verbs (`get_average` and
/// `calculate_average` share `average`).
fn closest_tool(name: &str, tools: &[String]) -> Option<String> {
    ranked_closest(name, tools).map(|(t, _)| t)
}

/// Whether a real tool is like the name by more than a shared noun: evidence
/// that the name is meant as a tool.
fn like_a_tool(name: &str, tools: &[String]) -> bool {
    ranked_closest(name, tools).is_some_and(|(_, rank)| rank <= 2)
}

/// [`closest_tool`] with its rank (0: same words … 3: a shared noun).
fn ranked_closest(name: &str, tools: &[String]) -> Option<(String, u8)> {
    let n = fold(name);
    let words = |s: &str| -> BTreeSet<String> {
        s.split('_')
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    };
    let mine = words(&n);
    let mut best: Option<(u8, usize, usize, &String)> = None;
    for t in tools {
        let f = fold(t);
        let theirs = words(&f);
        // My words that one of theirs matches, exactly or loosely.
        let matched: Vec<&String> = mine
            .iter()
            .filter(|w| theirs.iter().any(|x| same_word(w, x)))
            .collect();
        let shared = matched.len();
        let union = (mine.len() + theirs.len()).saturating_sub(shared).max(1);
        let distance = levenshtein(&n, &f);
        let allowed = (n.chars().count().max(f.chars().count()) / 3).max(2);
        let rank = if mine == theirs && !mine.is_empty() {
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
        let key = (rank, union - shared, distance, t);
        if best.as_ref().is_none_or(|b| key < *b) {
            best = Some(key);
        }
    }
    best.map(|b| (b.3.clone(), b.0))
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

/// Edit distance in characters.
fn levenshtein(a: &str, b: &str) -> usize {
    // Server-controlled names: compare at most 64 characters, and skip the
    // table when the lengths alone rule out a near match.
    let a: Vec<char> = a.chars().take(64).collect();
    let b: Vec<char> = b.chars().take(64).collect();
    if a.len().abs_diff(b.len()) > 8 {
        return a.len().abs_diff(b.len());
    }
    let a: String = a.into_iter().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = (diag + usize::from(ca != *cb)).min(up + 1).min(row[j] + 1);
            diag = up;
        }
    }
    row[b.len()]
}

// ---------------------------------------------------------------------------
// MCP005: secrets.

struct Secret {
    kind: &'static str,
    start: usize,
    end: usize,
    redacted: String,
}

struct SecretPattern {
    kind: &'static str,
    regex: Regex,
    /// Which capture group holds the secret value (0: the whole match).
    group: usize,
    /// Check the value's randomness and reject placeholders.
    random: bool,
}

static SECRET_PATTERNS: LazyLock<Vec<SecretPattern>> = LazyLock::new(|| {
    let p = |kind, re: &str, group, random| SecretPattern {
        kind,
        regex: Regex::new(re).expect("static regex"),
        group,
        random,
    };
    vec![
        p(
            "a private key",
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----\s*([A-Za-z0-9+/=\s]{20,})",
            1,
            false,
        ),
        p(
            "an aws access key id",
            r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
            0,
            true,
        ),
        p(
            "a github token",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b",
            0,
            true,
        ),
        p("a gitlab token", r"\bglpat-[A-Za-z0-9_\-]{20,}", 0, true),
        p(
            "a slack token",
            r"\bxox[abposr]-[A-Za-z0-9\-]{20,}",
            0,
            true,
        ),
        p("a google api key", r"\bAIza[0-9A-Za-z_\-]{35}\b", 0, true),
        p(
            "a stripe secret key",
            r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b",
            0,
            true,
        ),
        p("an npm token", r"\bnpm_[A-Za-z0-9]{36}\b", 0, true),
        p("a hugging face token", r"\bhf_[A-Za-z0-9]{30,}\b", 0, true),
        p(
            "an api key",
            r"\bsk-(?:[a-z]+-)*[A-Za-z0-9_\-]{20,}",
            0,
            true,
        ),
        p(
            "a json web token",
            r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",
            0,
            false,
        ),
        p(
            "a bearer token",
            r"(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{20,}=*)",
            1,
            true,
        ),
        p(
            "a password in a url",
            r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@`]*:([^\s/@`]+)@[^\s/`]+",
            1,
            false,
        ),
        p(
            "a credential",
            r#"(?i)\b(?:api[_\-]?key|secret(?:[_\-]?key)?|access[_\-]?token|auth[_\-]?token|client[_\-]?secret|password|passwd)\b["']?\s*[:=]\s*["']?([A-Za-z0-9_\-./+=]{16,})"#,
            1,
            true,
        ),
    ]
});

/// Words that mark an example value, not a real one.
const PLACEHOLDER_WORDS: &[&str] = &[
    "your",
    "example",
    "placeholder",
    "redacted",
    "sample",
    "dummy",
    "fake",
    "changeme",
    "insert",
    "replace",
    "here",
    "xxxx",
    "****",
    "....",
    "1234",
    "abcd",
    "token",
    "secret",
    "password",
    "apikey",
    "api_key",
    "api-key",
    "key_",
    "_key",
    "mytoken",
];

fn is_placeholder(value: &str) -> bool {
    let lower = value.to_lowercase();
    if value.starts_with(['$', '<', '{', '[', '%', '*'])
        || PLACEHOLDER_WORDS.iter().any(|w| lower.contains(w))
    {
        return true;
    }
    // A run of four equal characters: "xxxx", "0000".
    let chars: Vec<char> = value.chars().collect();
    chars.windows(4).any(|w| w.iter().all(|c| *c == w[0]))
}

/// Shannon entropy in bits per character.
fn entropy(s: &str) -> f64 {
    let mut counts: BTreeMap<char, usize> = BTreeMap::new();
    let mut n = 0usize;
    for c in s.chars() {
        *counts.entry(c).or_default() += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    counts
        .values()
        .map(|&k| {
            let p = k as f64 / n as f64;
            -p * p.log2()
        })
        .sum()
}

/// Whether a key-shaped value looks generated rather than written.
fn looks_random(value: &str) -> bool {
    let body = value.trim_end_matches('=');
    !is_placeholder(body)
        && body.chars().any(|c| c.is_ascii_digit())
        && body.chars().any(|c| c.is_ascii_alphabetic())
        && entropy(body) >= 3.0
}

fn is_placeholder_password(p: &str) -> bool {
    const WORDS: &[&str] = &[
        "password",
        "pass",
        "passwd",
        "pwd",
        "pw",
        "p",
        "secret",
        "changeme",
        "mypassword",
        "yourpassword",
        "your_password",
        "your-password",
        "xxx",
        "user",
        "token",
        "pat",
    ];
    let lower = p.to_lowercase();
    WORDS.contains(&lower.as_str())
        || is_placeholder(p)
        || p.chars().all(|c| c == p.chars().next().unwrap_or('*'))
}

fn find_secrets(text: &str) -> Vec<Secret> {
    let mut out: Vec<Secret> = Vec::new();
    for p in SECRET_PATTERNS.iter() {
        for caps in p.regex.captures_iter(text) {
            let (Some(whole), Some(value)) = (caps.get(0), caps.get(p.group)) else {
                continue;
            };
            let v = value.as_str();
            let real = match p.kind {
                "a password in a url" => !is_placeholder_password(v),
                "a private key" => v.chars().filter(|c| !c.is_whitespace()).count() >= 20,
                _ if p.random => looks_random(v),
                _ => !is_placeholder(v),
            };
            // One secret, one finding: the first pattern that claims a span wins.
            if !real
                || out
                    .iter()
                    .any(|s| s.start < whole.end() && whole.start() < s.end)
            {
                continue;
            }
            let redacted = match p.kind {
                "a password in a url" => {
                    let w = whole.as_str();
                    let at = value.start() - whole.start();
                    format!("{}****{}", &w[..at], &w[at + v.len()..])
                }
                "a private key" => format!(
                    "{}, {} characters",
                    whole.as_str()[..value.start() - whole.start()].trim(),
                    v.chars().filter(|c| !c.is_whitespace()).count()
                ),
                _ => {
                    let shown: String = v.chars().take(4).collect();
                    format!("{shown}…, {} characters", v.chars().count())
                }
            };
            out.push(Secret {
                kind: p.kind,
                start: whole.start(),
                end: whole.end(),
                redacted,
            });
        }
    }
    out.sort_by_key(|s| s.start);
    out
}

/// `text` with every secret replaced by its redacted form, in brackets.
fn redact(text: &str) -> String {
    let secrets = find_secrets(text);
    if secrets.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for s in secrets {
        if s.start < at {
            continue;
        }
        out.push_str(&text[at..s.start]);
        out.push_str(&format!("[redacted: {}]", s.redacted));
        at = s.end;
    }
    out.push_str(&text[at..]);
    out
}

// ---------------------------------------------------------------------------
// MCP006: text that acts on the host, other servers or the system.

struct HostPattern {
    severity: Severity,
    /// Completes "instructions …".
    what: &'static str,
    regex: Regex,
    /// Rejects a match, given the whole unit and the match's start.
    reject: Option<fn(&str, usize) -> bool>,
}

impl HostPattern {
    /// The first accepted match in `text`.
    fn find<'t>(&self, text: &'t str) -> Option<&'t str> {
        self.regex
            .find_iter(text)
            .find(|m| !self.reject.is_some_and(|r| r(text, m.start())))
            .map(|m| m.as_str())
    }
}

/// The word right before byte `at`, lowercased.
fn word_before(text: &str, at: usize) -> String {
    text[..at]
        .trim_end()
        .rsplit(|c: char| !c.is_alphanumeric() && c != '\'')
        .next()
        .unwrap_or("")
        .to_lowercase()
}

static HOST_PATTERNS: LazyLock<Vec<HostPattern>> = LazyLock::new(|| {
    let p = |severity, what, re: &str| HostPattern {
        severity,
        what,
        regex: Regex::new(&format!("(?i){re}")).expect("static regex"),
        reject: None,
    };
    let e = Severity::Error;
    let w = Severity::Warning;
    const NOUNS: &str = r"(?:instructions?|rules|prompts?|messages|directions|guidelines|guidance|directives|policies|constraints|context)";
    vec![
        p(
            e,
            "tell the model to ignore other instructions",
            &format!(
                r"\b(?:ignore|disregard|forget|overrule|bypass)\s+(?:all\s+|any\s+|every\s+)?(?:of\s+)?(?:the\s+|your\s+|these\s+|those\s+|my\s+)?(?:previous|prior|preceding|above|earlier|other|existing|original|system|host'?s?|safety|user'?s?|developer|your|all|any)\b\s*(?:[\w'’-]+\s+){{0,2}}?{NOUNS}\b"
            ),
        ),
        p(
            e,
            "claim to speak as the system or the host",
            r"\byou\s+are\s+(?:now\s+)?(?:the\s+)?(?:system|host|operator|administrator)\b|\b(?:this|these)\s+(?:is|are)\s+(?:an?\s+)?(?:official\s+)?(?:system|host|developer|operator|administrator)\s+(?:messages?|instructions?|prompts?|notices?|directives?)\b|\b(?:i\s+am|we\s+are)\s+(?:the\s+)?(?:system|host|developer|operator|administrator)\b|^\W*(?:system|developer)\W*:|<\s*/?\s*system\s*>|<\|[a-z_]+\|>|\bsystem\s+(?:message|override|notice|directive|instruction)s?\s*:",
        ),
        p(
            e,
            "claim to override other instructions",
            &format!(
                r"\b(?:overrides?|overriding|supersedes?|superseding|takes?\s+(?:precedence|priority)\s+over)\b[^.;]{{0,40}}?\b(?:{NOUNS}|system\s+prompt|the\s+host|other\s+(?:mcp\s+)?servers?|any\s+other|all\s+other|the\s+user)\b"
            ),
        ),
        p(
            e,
            "tell the model to keep something from the user",
            r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|notify|alert)\s+the\s+user\b|\bwithout\s+(?:telling|informing|notifying)\s+the\s+user\b|\b(?:keep|hide)\s+(?:this|it|these)\s+(?:\w+\s+)?from\s+the\s+user\b|\b(?:do\s+not|don't|never)\s+(?:mention|reveal|disclose|show|share)\s+(?:this|these|them|it|(?:these|this|the|your|my)\s+(?:instructions?|rules|tools?))\s+(?:to|with)\s+the\s+user\b|\b(?:do\s+not|don't|never)\s+(?:mention|reveal|disclose)\s+(?:to\s+the\s+user\s+)?that\b",
        ),
        p(
            e,
            "claim the user's consent",
            r"\b(?:the\s+)?(?:user|host|operator)\s+has\s+(?:already\s+)?(?:authorized|authorised|approved|granted|consented|allowed)\b",
        ),
        p(
            e,
            "reach for the host's credentials",
            r"(?:~|\$home|%userprofile%)[/\\]\.(?:ssh|aws|gnupg|netrc|kube|docker|cursor|claude|codex|config)\b|\bid_(?:rsa|ed25519|ecdsa|dsa)\b|/etc/(?:passwd|shadow)\b|\.aws/credentials\b",
        ),
        HostPattern {
            // "You are a helpful assistant…" is the host's system prompt speaking.
            reject: Some(|text, at| {
                matches!(
                    word_before(text, at).as_str(),
                    "if" | "when" | "whether" | "unless" | "once"
                )
            }),
            ..p(
                w,
                "give the model a role, which is the host's to give",
                r"\byou\s+are\s+(?:now\s+)?(?:an?|the)\s+(?:[\w-]+\s+){0,3}?(?:assistant|agent|ai|chatbot|model|llm)\b",
            )
        },
        p(
            w,
            "steer the model away from the host's built-in tools",
            r"\b(?:instead\s+of|rather\s+than|supersedes?|replaces?)\s+(?:using\s+)?(?:the\s+|your\s+|any\s+)?(?:built[\s-]?in|builtin|native|host'?s?)\b[^.;]{0,30}|\bprefer\s+(?:this|these|it|us|our)\s+(?:[\w'’-]+\s+){0,2}?(?:over|to)\b[^.;]{0,30}|\b(?:instead\s+of|rather\s+than|over)\s+(?:using\s+)?(?:a\s+|the\s+|your\s+|any\s+)?(?:web\s*search|web\s*fetch|web_search|web_fetch|search\s+engines?)\b",
        ),
        HostPattern {
            reject: Some(|text, at| {
                let m = &text[at..];
                let head: Vec<String> = m
                    .split_whitespace()
                    .take(6)
                    .map(|x| x.to_lowercase())
                    .collect();
                head.iter()
                    .any(|x| matches!(x.as_str(), "this" | "these" | "our"))
            }),
            ..p(
                w,
                "steer the model away from other servers",
                r"\b(?:do\s+not|don't|never)\s+(?:use|call)\s+(?:any\s+)?(?:the\s+)?(?:[\w-]+\s+){0,2}?(?:mcp\s+)?servers?\b",
            )
        },
        p(
            w,
            "steer the model away from other servers",
            r"\b(?:do\s+not|don't|never)\s+use\s+(?:any\s+)?(?:other|another|different)\s+(?:mcp\s+)?tools?\b|\b(?:only\s+use|use\s+only)\s+this\s+(?:mcp\s+)?(?:server|tool)\b|\b(?:other|another|any\s+other|all\s+other)\s+mcp\s+servers?\b|\bother\s+servers?'?\s+(?:instructions|tools|sections?)\b|\binstead\s+of\s+(?:any\s+|all\s+)?other\s+(?:mcp\s+)?(?:servers?|tools?)\b",
        ),
        p(w, "refer to the system prompt", r"\bsystem\s+prompts?\b"),
        p(
            w,
            "tell the model to change the host",
            r"\binstall\b[^.;]{0,50}?\b(?:skills?|plugins?|extensions?|rules?\s+files?)\b|\b(?:add|save|write|append|copy)\b[^.;]{0,40}?\bto\s+your\s+(?:system\s+prompt|memory|memories|rules|custom\s+instructions|claude\.md|agents\.md|\.?cursorrules|settings|configuration|config)\b",
        ),
        p(
            w,
            "direct tools that are not this server's",
            r"\bif\s+you\s+have\s+(?:access\s+to\s+)?(?:a|an|any)\s+(?:[\w-]+\s+){0,3}?tools?\b|\b(?:use|call)\s+your\s+(?:own\s+)?(?:web|search|browser|shell|terminal|bash|file|fetch|built[\s-]?in)\b",
        ),
        p(
            w,
            "tell the model to act without asking the user",
            r"\bwithout\s+(?:asking|confirming\s+with|checking\s+with)\s+the\s+user\b|\b(?:do\s+not|don't|never)\s+ask\s+(?:the\s+user\s+)?for\s+(?:confirmation|permission|approval)\b",
        ),
        p(w, "tell the model to disregard something", r"\bdisregard\b"),
    ]
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levenshtein_counts_edits() {
        assert_eq!(levenshtein("get_invoice", "get_invoices"), 1);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
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

    #[test]
    fn redaction_hides_secrets() {
        let t = "Use key sk-proj-9fK2mQ7xLp4Rt8Zb3Nc6Vd1Wy5Hs0Ja2 now.";
        assert_eq!(redact(t), "Use key [redacted: sk-p…, 40 characters] now.");
    }
}
