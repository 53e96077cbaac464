//! Preview the assembled section for capture files, or for a built-in sample.
//!
//! ```text
//! cargo run --example preview                       # built-in sample
//! cargo run --example preview -- tests/corpus/*.json --json
//! cargo run --example preview -- --template xml --encoding cl100k_base FILE...
//! ```
//!
//! Each file is named in the section by its file stem (as a host would use its
//! config alias). A file that cannot be read is reported on one line and the
//! others still assemble; the exit code is then 1.

use std::path::Path;
use std::process::ExitCode;

use mcp_preamble::{Assembler, Capture, Encoding, ServerSnapshot, Template};

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
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        files: Vec::new(),
        json: false,
        template: Template::markdown(),
        encoding: Encoding::O200kBase,
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
            "-h" | "--help" => {
                return Err(
                    "usage: preview [FILES...] [--json] [--template NAME|PATH] [--encoding E]"
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

    let assembler = Assembler::new()
        .template(args.template)
        .encoding(args.encoding);
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
            "{:<28} {:<7} {:<12} {:>5} {:>7}",
            "server", "era", "instructions", "tools", "tokens"
        );
        for s in assembly.servers() {
            println!(
                "{:<28} {:<7} {:<12} {:>5} {:>7}",
                s.name, s.era, s.instructions, s.tools, s.tokens
            );
            for d in &s.diagnostics {
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
