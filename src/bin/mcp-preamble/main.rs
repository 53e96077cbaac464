//! `mcp-preamble`: see what your MCP servers would put into a prompt, and
//! what it costs, before a single model call.

use std::io::{IsTerminal, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use mcp_preamble::connect::{DiscoverCache, Handshake, connect, now_ms};
use mcp_preamble::{
    Assembler, Assembly, Encoding, McpConfig, ServerEntry, ServerSnapshot, SnapshotFile, Template,
    load_server_file,
};

/// Preview the system-prompt section your MCP servers' instructions make.
#[derive(Parser)]
#[command(name = "mcp-preamble", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Connect to servers (or read files) and print the assembled section and a token table.
    Preview(Preview),
    /// Connect to the servers of a config and write one snapshot file per server.
    Snapshot(SnapshotArgs),
    /// Lint servers' instructions (files or a config's live servers): findings per server.
    Lint(LintArgs),
}

#[derive(Args)]
struct Connect {
    /// An MCP config: Claude Desktop / Cursor `mcpServers`, VS Code `servers`, or `url` entries.
    #[arg(long, value_name = "PATH")]
    config: Option<PathBuf>,
    /// Seconds each server has for its handshake and tools/list.
    #[arg(long, default_value = "30", value_name = "SECONDS", value_parser = parse_timeout)]
    timeout: Duration,
    /// `legacy` (initialize), `auto` (server/discover, falling back), or a revision such as `2026-07-28`.
    #[arg(long, default_value = "auto", value_parser = parse_handshake)]
    handshake: Handshake,
    /// Reuse stored server/discover results while their ttlMs says they are fresh.
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
}

#[derive(Args)]
struct Preview {
    /// Capture files (tests/corpus format) or snapshot files.
    files: Vec<PathBuf>,
    #[command(flatten)]
    connect: Connect,
    /// Token budget of every server's block.
    #[arg(long, value_name = "N")]
    budget: Option<usize>,
    /// Token budget of one server, by alias (repeatable).
    #[arg(long, value_name = "ALIAS=N", value_parser = parse_server_budget)]
    server_budget: Vec<(String, usize)>,
    /// Token budget of the whole section, shared fairly.
    #[arg(long, value_name = "N")]
    total_budget: Option<usize>,
    /// `markdown`, `xml`, or a template file.
    #[arg(long, default_value = "markdown", value_name = "NAME|PATH")]
    template: String,
    /// `o200k_base`, `cl100k_base`, or a model name.
    #[arg(long, default_value = "o200k_base", value_name = "E")]
    encoding: String,
    /// Print the report as JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Exit 1 when any server failed or needed budget trimming.
    #[arg(long)]
    check: bool,
}

#[derive(Args)]
struct SnapshotArgs {
    #[command(flatten)]
    connect: Connect,
    /// Directory for the snapshot files (`<alias>.json`).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

#[derive(Args)]
struct LintArgs {
    /// Capture files (tests/corpus format) or snapshot files.
    files: Vec<PathBuf>,
    #[command(flatten)]
    connect: Connect,
    /// `text`, `json`, or `sarif` (SARIF 2.1.0, for code-scanning tools).
    #[arg(long, value_enum, default_value_t = LintFormat::Text)]
    format: LintFormat,
    /// Exit 1 when a finding is at or above this level: `note`, `warning` or `error`.
    #[arg(long, default_value = "error", value_name = "LEVEL", value_parser = parse_severity)]
    deny: mcp_preamble::Severity,
    /// Instructions over this many tokens get MCP004.
    #[arg(long, default_value_t = mcp_preamble::DEFAULT_MAX_TOKENS, value_name = "N")]
    max_tokens: usize,
    /// `o200k_base`, `cl100k_base`, or a model name.
    #[arg(long, default_value = "o200k_base", value_name = "E")]
    encoding: String,
    /// Turn a lint off, by code or name (repeatable): `--allow MCP002`, `--allow restates-tool`.
    #[arg(long, value_name = "CODE", value_parser = parse_lint_code)]
    allow: Vec<mcp_preamble::LintCode>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum LintFormat {
    Text,
    Json,
    Sarif,
}

fn parse_severity(s: &str) -> Result<mcp_preamble::Severity, String> {
    s.parse().map_err(|e: mcp_preamble::Error| e.to_string())
}

fn parse_lint_code(s: &str) -> Result<mcp_preamble::LintCode, String> {
    s.parse().map_err(|e: mcp_preamble::Error| e.to_string())
}

fn parse_timeout(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !(0.0..=86_400.0).contains(&secs) {
        return Err(format!("{s} is outside 0 to 86400 seconds"));
    }
    Duration::try_from_secs_f64(secs).map_err(|e| e.to_string())
}

fn parse_handshake(s: &str) -> Result<Handshake, String> {
    s.parse().map_err(|e: mcp_preamble::Error| e.to_string())
}

fn parse_server_budget(s: &str) -> Result<(String, usize), String> {
    let (alias, n) = s
        .rsplit_once('=')
        .ok_or_else(|| format!("expected ALIAS=N, got {s:?}"))?;
    let n = n
        .parse()
        .map_err(|_| format!("{n:?} is not a number of tokens"))?;
    Ok((alias.to_string(), n))
}

/// Where a server's snapshot came from.
#[derive(serde::Serialize)]
struct Source {
    alias: String,
    /// `live`, `cache` or `file`.
    source: &'static str,
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    stderr: String,
    elapsed_ms: u64,
}

/// Connects to every entry at once; failures come back as sources with `ok: false`.
async fn gather(
    config: &McpConfig,
    opts: &Connect,
) -> (
    Vec<ServerSnapshot>,
    Vec<Source>,
    Vec<mcp_preamble::connect::Connection>,
) {
    let cache = opts.cache_dir.as_ref().map(DiscoverCache::new);
    let timeout = opts.timeout;
    let progress = Progress::new(&config.servers);
    let mut set = tokio::task::JoinSet::new();
    for (i, entry) in config.servers.iter().cloned().enumerate() {
        if let Some(snapshot) = cache.as_ref().and_then(|c| c.load(&entry, now_ms())) {
            progress.set(i, "from cache");
            set.spawn(async move { (i, entry, Ok(Err(snapshot))) });
            continue;
        }
        let handshake = opts.handshake.clone();
        let progress = progress.clone();
        set.spawn(async move {
            let r = connect(&entry, &handshake, timeout).await;
            match &r {
                Ok(c) => progress.set(i, &format!("ok in {} ms", c.elapsed.as_millis())),
                Err(f) => progress.set(i, &format!("failed: {}", f.error)),
            }
            (i, entry, r.map(Ok))
        });
    }
    let mut done = Vec::new();
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok(item) => done.push(item),
            // A task that panicked: its server must still show as failed.
            Err(e) => eprintln!("mcp-preamble: a connection task failed: {e}"),
        }
    }
    let finished: std::collections::HashSet<usize> = done.iter().map(|(i, _, _)| *i).collect();
    let lost: Vec<Source> = config
        .servers
        .iter()
        .enumerate()
        .filter(|(i, _)| !finished.contains(i))
        .map(|(_, entry)| Source {
            alias: entry.alias.clone(),
            source: "live",
            ok: false,
            error: Some("the connection task stopped unexpectedly".into()),
            stderr: String::new(),
            elapsed_ms: 0,
        })
        .collect();
    progress.finish();
    done.sort_by_key(|(i, _, _)| *i);
    let (mut snapshots, mut sources, mut live) = (Vec::new(), lost, Vec::new());
    for (_, entry, result) in done {
        match result {
            Ok(Ok(connection)) => {
                if let Some(c) = &cache
                    && let Err(e) = c.store(&entry, &connection.snapshot, now_ms())
                {
                    eprintln!("mcp-preamble: cache: {e}");
                }
                snapshots.push(connection.snapshot.clone());
                sources.push(Source {
                    alias: entry.alias.clone(),
                    source: "live",
                    ok: true,
                    error: None,
                    stderr: String::new(),
                    elapsed_ms: connection.elapsed.as_millis() as u64,
                });
                live.push(connection);
            }
            Ok(Err(cached)) => {
                snapshots.push(cached);
                sources.push(Source {
                    alias: entry.alias.clone(),
                    source: "cache",
                    ok: true,
                    error: None,
                    stderr: String::new(),
                    elapsed_ms: 0,
                });
            }
            Err(failure) => sources.push(Source {
                alias: entry.alias.clone(),
                source: "live",
                ok: false,
                error: Some(failure.error.to_string()),
                stderr: tail_lines(&failure.stderr, 5),
                elapsed_ms: failure.elapsed.as_millis() as u64,
            }),
        }
    }
    (snapshots, sources, live)
}

fn tail_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// One status line per server on stderr, redrawn in place on a terminal.
#[derive(Clone)]
struct Progress {
    lines: Arc<Mutex<Vec<(String, String)>>>,
    live: bool,
}

impl Progress {
    fn new(servers: &[ServerEntry]) -> Progress {
        let live = std::io::stderr().is_terminal() && !servers.is_empty();
        let p = Progress {
            lines: Arc::new(Mutex::new(
                servers
                    .iter()
                    .map(|s| (s.alias.clone(), "connecting…".to_string()))
                    .collect(),
            )),
            live,
        };
        if live {
            p.draw(false);
        }
        p
    }

    fn set(&self, i: usize, status: &str) {
        if let Some(line) = self
            .lines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(i)
        {
            line.1 = status.to_string();
        }
        if self.live {
            self.draw(true);
        }
    }

    fn draw(&self, redraw: bool) {
        let lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        let mut err = std::io::stderr().lock();
        if redraw {
            let _ = write!(err, "\x1b[{}A", lines.len());
        }
        for (alias, status) in lines.iter() {
            // One screen line each, or the redraw would climb too few lines.
            let line = truncate(&format!("  {alias}: {status}"), 78);
            let _ = writeln!(err, "\x1b[2K{line}");
        }
        let _ = err.flush();
    }

    fn finish(&self) {
        if self.live {
            let n = self.lines.lock().map(|l| l.len()).unwrap_or(0);
            // Clear the progress block so the report starts clean.
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\x1b[{n}A");
            for _ in 0..n {
                let _ = writeln!(err, "\x1b[2K");
            }
            let _ = write!(err, "\x1b[{n}A");
        }
    }
}

fn needed_trimming(assembly: &Assembly) -> bool {
    assembly.servers().iter().any(|s| {
        s.truncated
            || s.removed.iter().any(|r| r.reason == "budget")
            || s.diagnostics
                .iter()
                .any(|d| d.starts_with("omitted: its heading alone"))
    })
}

struct Paint(bool);

impl Paint {
    fn on(&self, code: &str, text: &str) -> String {
        if self.0 {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
}

/// The text report: the section, then a row per server.
fn text_report(assembly: &Assembly, sources: &[Source]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let paint = Paint(std::io::stdout().is_terminal());
    let _ = write!(out, "{}", assembly.text());
    if !assembly.text().is_empty() {
        let _ = writeln!(out);
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{}",
        paint.on(
            "1",
            &format!(
                "{:<24} {:<18} {:<8} {:>5} {:>6} {:>6} {:>6} {:>7} {:>8}",
                "server",
                "era/version",
                "instr",
                "tools",
                "budget",
                "before",
                "after",
                "removed",
                "connect"
            )
        )
    );
    for s in assembly.servers() {
        let alias = s.alias.clone().unwrap_or_else(|| s.name.clone());
        let source = sources.iter().find(|c| c.alias == alias);
        let connect = match source {
            Some(c) if c.source == "cache" => "cache".to_string(),
            Some(c) if c.source == "live" => format!("{} ms", c.elapsed_ms),
            _ => "file".to_string(),
        };
        let trimmed = s.truncated || s.removed.iter().any(|r| r.reason == "budget");
        let after = if s.included {
            s.tokens.to_string()
        } else {
            "-".to_string()
        };
        let row = format!(
            "{:<24} {:<18} {:<8} {:>5} {:>6} {:>6} {:>6} {:>7} {:>8}",
            truncate(&s.name, 24),
            format!("{}/{}", s.era, s.protocol_version),
            s.instructions,
            s.tools,
            s.budget.map_or("-".to_string(), |b| b.to_string()),
            s.tokens_before,
            after,
            s.removed.len(),
            connect
        );
        let _ = writeln!(
            out,
            "{}",
            if trimmed {
                paint.on("33", &row)
            } else {
                paint.on("32", &row)
            }
        );
        for d in &s.diagnostics {
            let _ = writeln!(out, "    {d}");
        }
    }
    for f in sources.iter().filter(|c| !c.ok) {
        let row = format!(
            "{:<24} {}",
            truncate(&f.alias, 24),
            f.error.as_deref().unwrap_or("failed")
        );
        let _ = writeln!(out, "{}", paint.on("31", &row));
        for line in f.stderr.lines() {
            let _ = writeln!(out, "    stderr: {line}");
        }
    }
    let _ = writeln!(
        out,
        "section: {} tokens ({}, template {})",
        assembly.total_tokens(),
        assembly.encoding(),
        assembly.template()
    );
    out
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
fn emit(text: &str) {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n - 1).collect::<String>() + "…"
    }
}

fn assembler(p: &Preview) -> Result<Assembler, String> {
    let template = if std::path::Path::new(&p.template).is_file() {
        Template::from_path(&p.template)
    } else {
        Template::builtin(&p.template)
    }
    .map_err(|e| e.to_string())?;
    let encoding = Encoding::from_name(&p.encoding).map_err(|e| e.to_string())?;
    let mut a = Assembler::new().template(template).encoding(encoding);
    if let Some(n) = p.budget {
        a = a.budget(n);
    }
    for (alias, n) in &p.server_budget {
        a = a.server_budget(alias.clone(), *n);
    }
    if let Some(n) = p.total_budget {
        a = a.total_budget(n);
    }
    Ok(a)
}

async fn preview(p: Preview) -> ExitCode {
    let assembler = match assembler(&p) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("mcp-preamble: {e}");
            return ExitCode::from(2);
        }
    };
    let mut snapshots = Vec::new();
    let mut sources = Vec::new();
    let mut failed = false;
    for file in &p.files {
        let alias = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        match load_server_file(file) {
            Ok(mut s) => {
                if s.alias.is_none() {
                    s.alias = Some(alias);
                }
                snapshots.push(s);
            }
            Err(e) => {
                failed = true;
                eprintln!("mcp-preamble: {}: {e}", file.display());
                sources.push(Source {
                    alias,
                    source: "file",
                    ok: false,
                    error: Some(e.to_string()),
                    stderr: String::new(),
                    elapsed_ms: 0,
                });
            }
        }
    }
    let mut live = Vec::new();
    if let Some(path) = &p.connect.config {
        match McpConfig::from_path(path) {
            Ok(config) => {
                let (s, c, l) = gather(&config, &p.connect).await;
                failed |= c.iter().any(|c| !c.ok);
                snapshots.extend(s);
                sources.extend(c);
                live = l;
            }
            Err(e) => {
                eprintln!("mcp-preamble: {e}");
                return ExitCode::from(2);
            }
        }
    }
    if p.files.is_empty() && p.connect.config.is_none() {
        eprintln!("mcp-preamble: give capture/snapshot FILES or --config PATH");
        return ExitCode::from(2);
    }
    let assembly = match assembler.assemble(&snapshots) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("mcp-preamble: {e}");
            return ExitCode::from(2);
        }
    };
    for c in live {
        c.close().await;
    }
    if p.json {
        let report = serde_json::json!({ "assembly": assembly, "connections": sources });
        emit(&(serde_json::to_string_pretty(&report).unwrap_or_default() + "\n"));
    } else {
        emit(&text_report(&assembly, &sources));
    }
    if failed || (p.check && needed_trimming(&assembly)) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

async fn snapshot(a: SnapshotArgs) -> ExitCode {
    let Some(path) = &a.connect.config else {
        eprintln!("mcp-preamble: snapshot needs --config PATH");
        return ExitCode::from(2);
    };
    let config = match McpConfig::from_path(path) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("mcp-preamble: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = std::fs::create_dir_all(&a.out) {
        eprintln!("mcp-preamble: {}: {e}", a.out.display());
        return ExitCode::from(2);
    }
    let (snapshots, sources, live) = gather(&config, &a.connect).await;
    for c in live {
        c.close().await;
    }
    let mut failed = false;
    let mut used = std::collections::HashSet::new();
    for s in &snapshots {
        let alias = s.alias.clone().unwrap_or_default();
        // Two aliases can make the same file name ("a b", "a_b"): never overwrite.
        let base = file_name(&alias);
        let mut stem = base.clone();
        let mut n = 2;
        while !used.insert(stem.clone()) {
            stem = format!("{base}-{n}");
            n += 1;
        }
        let file = a.out.join(format!("{stem}.json"));
        let text = SnapshotFile::new(s.clone(), now_ms()).to_json();
        match std::fs::write(&file, text + "\n") {
            Ok(()) => println!("{alias}: wrote {}", file.display()),
            Err(e) => {
                failed = true;
                eprintln!("mcp-preamble: {}: {e}", file.display());
            }
        }
    }
    for f in sources.iter().filter(|c| !c.ok) {
        failed = true;
        eprintln!("{}: {}", f.alias, f.error.as_deref().unwrap_or("failed"));
        for line in f.stderr.lines() {
            eprintln!("    stderr: {line}");
        }
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Lints files and a config's servers. Exit 2 when a server could not be
/// linted (so an incomplete lint never passes), else 1 when a finding is at
/// or above `--deny`, else 0.
async fn lint(a: LintArgs) -> ExitCode {
    let encoding = match Encoding::from_name(&a.encoding) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("mcp-preamble: {e}");
            return ExitCode::from(2);
        }
    };
    if a.files.is_empty() && a.connect.config.is_none() {
        eprintln!("mcp-preamble: give capture/snapshot FILES or --config PATH");
        return ExitCode::from(2);
    }
    let mut linter = mcp_preamble::Linter::new()
        .encoding(encoding)
        .max_tokens(a.max_tokens);
    for code in &a.allow {
        linter = linter.allow(*code);
    }
    let mut servers = Vec::new();
    let mut failures = Vec::new();
    for file in &a.files {
        let source = file.display().to_string();
        match load_server_file(file) {
            Ok(mut s) => {
                if s.alias.is_none() {
                    s.alias = file.file_stem().map(|n| n.to_string_lossy().into_owned());
                }
                servers.push(linter.check(&s, Some(&source)));
            }
            Err(e) => failures.push((source, e.to_string())),
        }
    }
    if let Some(path) = &a.connect.config {
        let origin = path.display().to_string();
        match McpConfig::from_path(path) {
            Ok(config) => {
                let (snapshots, sources, live) = gather(&config, &a.connect).await;
                for c in live {
                    c.close().await;
                }
                for s in &snapshots {
                    servers.push(linter.check(s, Some(&origin)));
                }
                for f in sources.iter().filter(|c| !c.ok) {
                    let error = f.error.as_deref().unwrap_or("failed");
                    failures.push((origin.clone(), format!("server {}: {error}", f.alias)));
                }
            }
            Err(e) => {
                eprintln!("mcp-preamble: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let mut report = mcp_preamble::LintReport::new(servers);
    for (source, error) in failures {
        eprintln!("mcp-preamble: {source}: {error}");
        report.add_failure(source, error);
    }
    let out = match a.format {
        LintFormat::Text => report.to_text(),
        LintFormat::Json => report.to_json() + "\n",
        LintFormat::Sarif => report.to_sarif() + "\n",
    };
    // A closed pipe (`| head`) is the reader's choice, not an error to panic on.
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    if !report.failures().is_empty() {
        ExitCode::from(2)
    } else if report.count_at_least(a.deny) > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// An alias made safe as a file name.
fn file_name(alias: &str) -> String {
    let s: String = alias
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with('.') {
        format!("server{s}")
    } else {
        s
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mcp-preamble: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    runtime.block_on(async {
        match cli.command {
            Command::Preview(p) => preview(p).await,
            Command::Snapshot(s) => snapshot(s).await,
            Command::Lint(l) => lint(l).await,
        }
    })
}
