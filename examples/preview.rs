//! Preview the assembled section for capture files, or for a built-in sample.
//!
//! ```text
//! cargo run --example preview                       # built-in sample
//! cargo run --example preview -- tests/corpus/*.json --json
//! cargo run --example preview -- --template xml --encoding cl100k_base FILE...
//! cargo run --example preview -- --budget 128 --server-budget context7=64 --total-budget 400
//! cargo run --example preview -- --budget 256 --deferred aws-docs --defer-over 20
//! ```
//!
//! Each file is named in the section by its file stem (as a host would use its
//! config alias). A file that cannot be read is reported on one line and the
//! others still assemble; the exit code is then 1.

use std::path::Path;
use std::process::ExitCode;

use mcp_preamble::files::Capture;
use mcp_preamble::report::RemovalReason;
use mcp_preamble::{Assembler, Encoding, ServerSnapshot, Template};

const SAMPLE: &[(&str, &str)] = &[
    (
        "seed-invoice-server",
        include_str!("../tests/corpus/seed-invoice-server.json"),
    ),
    (
        "context7",
        include_str!("../tests/corpus/context7-mcp.json"),
    ),
    (
        "aws-docs",
        include_str!("../tests/corpus/awslabs-aws-documentation-mcp-server.json"),
    ),
    (
        "brave-search",
        include_str!("../tests/corpus/brave-search-mcp-server.json"),
    ),
    (
        "whitespace",
        include_str!("../tests/corpus/synthetic-node-whitespace.json"),
    ),
];

struct Args {
    files: Vec<String>,
    json: bool,
    template: Template,
    encoding: Encoding,
    budget: Option<usize>,
    server_budgets: Vec<(String, usize)>,
    total_budget: Option<usize>,
    deferred: Vec<String>,
    defer_over: Option<usize>,
}

fn tokens(flag: &str, v: &str) -> Result<usize, String> {
    v.parse()
        .map_err(|_| format!("{flag} needs a whole number of tokens, not {v:?}"))
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        files: Vec::new(),
        json: false,
        template: Template::markdown(),
        encoding: Encoding::O200kBase,
        budget: None,
        server_budgets: Vec::new(),
        total_budget: None,
        deferred: Vec::new(),
        defer_over: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| it.next().ok_or_else(|| format!("{flag} needs a value"));
        match arg.as_str() {
            "--json" => args.json = true,
            "--template" => {
                let v = value("--template")?;
                args.template = if Path::new(&v).is_file() {
                    Template::from_path(&v)
                } else {
                    Template::builtin(&v)
                }
                .map_err(|e| e.to_string())?;
            }
            "--encoding" => {
                args.encoding =
                    Encoding::from_name(&value("--encoding")?).map_err(|e| e.to_string())?
            }
            "--budget" => args.budget = Some(tokens("--budget", &value("--budget")?)?),
            "--total-budget" => {
                args.total_budget = Some(tokens("--total-budget", &value("--total-budget")?)?)
            }
            "--server-budget" => {
                let v = value("--server-budget")?;
                let (alias, n) = v
                    .rsplit_once('=')
                    .ok_or_else(|| format!("--server-budget needs ALIAS=N, not {v:?}"))?;
                args.server_budgets
                    .push((alias.to_string(), tokens("--server-budget", n)?));
            }
            "--deferred" => args.deferred.push(value("--deferred")?),
            "--defer-over" => {
                let v = value("--defer-over")?;
                let n = v.parse().map_err(|_| {
                    format!("--defer-over needs a whole number of tools, not {v:?}")
                })?;
                args.defer_over = Some(n);
            }
            "-h" | "--help" => {
                return Err(
                    "usage: preview [FILES...] [--json] [--template NAME|PATH] [--encoding E] \
                            [--budget N] [--server-budget ALIAS=N]... [--total-budget N] \
                            [--deferred ALIAS]... [--defer-over N]"
                        .into(),
                );
            }
            flag if flag.starts_with("--") => return Err(format!("unknown flag {flag}")),
            _ => args.files.push(arg),
        }
    }
    Ok(args)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(msg) => {
            eprintln!("preview: {msg}");
            return ExitCode::from(2);
        }
    };

    let mut failed = false;
    let mut snapshots: Vec<ServerSnapshot> = Vec::new();
    if args.files.is_empty() {
        for (alias, json) in SAMPLE {
            match Capture::from_json(json).and_then(|c| c.snapshot()) {
                Ok(s) => snapshots.push(s.with_alias(*alias)),
                Err(e) => {
                    eprintln!("preview: sample {alias}: {e}");
                    failed = true;
                }
            }
        }
    }
    for file in &args.files {
        let alias = Path::new(file)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| file.clone());
        match Capture::from_path(file).and_then(|c| c.snapshot()) {
            Ok(s) => snapshots.push(s.with_alias(alias)),
            Err(e) => {
                eprintln!("preview: {file}: {e}");
                failed = true;
            }
        }
    }

    let mut assembler = Assembler::new()
        .template(args.template)
        .encoding(args.encoding);
    if let Some(n) = args.budget {
        assembler = assembler.budget(n);
    }
    for (alias, n) in args.server_budgets {
        assembler = assembler.server_budget(alias, n);
    }
    if let Some(n) = args.total_budget {
        assembler = assembler.total_budget(n);
    }
    for alias in args.deferred {
        assembler = assembler.defer(alias);
    }
    if let Some(n) = args.defer_over {
        assembler = assembler.defer_over(n);
    }
    let assembly = match assembler.assemble(&snapshots) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("preview: {e}");
            return ExitCode::from(1);
        }
    };

    if args.json {
        println!("{}", assembly.to_json());
    } else {
        print!("{}", assembly.text());
        println!();
        println!(
            "{:<28} {:<7} {:<12} {:>5} {:>7} {:>7} {:>7} {:>8}",
            "server", "era", "instructions", "tools", "budget", "before", "tokens", "removed"
        );
        for s in assembly.servers() {
            let budget = s.budget.map_or("-".to_string(), |b| b.to_string());
            let tokens = if s.included {
                s.tokens.to_string()
            } else {
                "omitted".to_string()
            };
            let mut removed = Vec::new();
            for reason in [
                RemovalReason::RestatesTool,
                RemovalReason::Repeated,
                RemovalReason::SameAsServer,
                RemovalReason::Budget,
                RemovalReason::Policy,
            ] {
                let n = s.removed.iter().filter(|r| r.reason == reason).count();
                if n > 0 {
                    removed.push(format!("{reason}:{n}"));
                }
            }
            println!(
                "{:<28} {:<7} {:<12} {:>5} {:>7} {:>7} {:>7} {:>8}{}",
                s.name,
                s.era,
                s.instructions,
                s.tools,
                budget,
                s.tokens_before,
                tokens,
                s.removed.len(),
                if s.truncated { " (cut)" } else { "" }
            );
            if !removed.is_empty() {
                println!("    removed: {}", removed.join(", "));
            }
            if let Some(d) = &s.deferred {
                println!(
                    "    deferred: {} tools ({:?}); summaries cut {}, names cut {}, restatements kept {}",
                    d.tools.len(),
                    d.reason,
                    d.summaries_cut.len(),
                    d.names_cut.len(),
                    d.restatements_kept.len()
                );
            }
            for d in &s.notes {
                println!("    note: {d}");
            }
        }
        println!(
            "section: {} tokens ({}, template {})",
            assembly.total_tokens(),
            assembly.encoding(),
            assembly.template()
        );
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
