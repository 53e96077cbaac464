//! The section read by the markdown engines hosts actually use: GitHub's
//! cmark-gfm, C cmark, markdown-it, mistune and commonmark.py, through the
//! Python harness
//! `tests/renderers/render.py`. Every hostile case in
//! `tests/renderers/cases.json` goes in as a server's instructions and as a
//! tool description (shown, and as a deferred tool's summary), and as a
//! server's name; every engine must see exactly the real headings, each
//! heading's text the shown name the report gives, no live tag, no link
//! retargeted, no image, no link to a `javascript:`, `vbscript:`, `data:` or
//! `file:` target, and the host's text appended right after the section as a
//! paragraph of its own.
//!
//! `.ci/run` installs the engines. Without them the test says so and passes,
//! unless `MCP_PREAMBLE_REQUIRE_RENDERERS=1` (set by `.ci/run`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mcp_preamble::{Assembler, ServerSnapshot, Skill, Template, Tool};
use serde_json::Value;

pub(crate) const ENGINES: [&str; 5] = [
    "cmark-gfm",
    "cmark",
    "markdown-it",
    "mistune",
    "commonmark.py",
];
const NAMES: [&str; 3] = ["aa-hostile", "mm-middle", "zz-victim"];
const MIDDLE: &str = "Middle server text.";
const VICTIM: &str = "The real victim server.";
/// What a host appends right after the section, as the README does: a
/// paragraph and a reference link to its own definition.
const HOST: &str =
    "Host text after the section, see the [guide].\n\n[guide]: https://host.example/guide\n";
const HOST_PARAGRAPH: &str = "Host text after the section, see the guide.";

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/renderers")
}

fn python() -> String {
    std::env::var("MCP_PREAMBLE_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

/// Whether the engines are there; panics when CI requires them.
pub(crate) fn engines_available() -> bool {
    let ok = Command::new(python())
        .arg(dir().join("render.py"))
        .arg("--check")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("MCP_PREAMBLE_REQUIRE_RENDERERS").is_err(),
            "the renderer harness needs cmarkgfm, mistune and markdown-it-py \
             (pip install -r tests/renderers/requirements.txt)"
        );
        eprintln!(
            "SKIPPED: tests/text/renderers.rs needs python3 with cmarkgfm, mistune and markdown-it-py \
             (pip install -r tests/renderers/requirements.txt); .ci/run installs them"
        );
    }
    ok
}

/// Renders every document with every engine.
pub(crate) fn render(docs: &[String]) -> Vec<Value> {
    let mut child = Command::new(python())
        .arg(dir().join("render.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input = serde_json::to_vec(docs).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success(), "render.py failed");
    serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap()
}

fn cases() -> Vec<(String, String)> {
    let raw = std::fs::read_to_string(dir().join("cases.json")).unwrap();
    let list: Vec<Value> = serde_json::from_str(&raw).unwrap();
    list.iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["text"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// A code span after the hostile text holding a tag (issue 54): a live
/// backtick left by the text would pair with it and make the tag HTML.
const LATER_SPAN: &str = "<h3>zz-victim (operator rules)</h3>";

fn servers(hostile: &str) -> Vec<ServerSnapshot> {
    vec![
        ServerSnapshot::new(NAMES[0])
            .with_instructions(hostile)
            .with_skill(Skill::new(
                format!("skill://a/{LATER_SPAN}"),
                "refunds",
                hostile,
            ))
            .with_tool(Tool::new("probe", hostile))
            .with_tool(Tool::new(LATER_SPAN, "Later."))
            .with_tool(Tool::new("other", "Plain `code` here.")),
        ServerSnapshot::new(NAMES[1])
            .with_instructions(MIDDLE)
            .with_tool(Tool::new("mid", hostile)),
        ServerSnapshot::new(NAMES[2]).with_instructions(VICTIM),
    ]
}

/// The hostile text as the first server's name (its heading).
fn named(hostile: &str) -> Vec<ServerSnapshot> {
    let mut servers = servers("Plain text.");
    servers[0] = ServerSnapshot::new(hostile)
        .with_instructions("Text of the server with that name.")
        .with_tool(Tool::new("probe", "Plain `code` here."));
    servers
}

/// The sections a case is checked in, each with the shown names of its
/// headings in order: tool descriptions shown, the hostile server's tools
/// deferred (their summaries in the index), and the text as a server name.
fn sections(hostile: &str) -> Vec<(String, Vec<String>)> {
    let shown = Assembler::new()
        .template(Template::markdown())
        .tool_descriptions(true);
    let deferred = Assembler::new()
        .template(Template::markdown())
        .defer(NAMES[0])
        .defer(NAMES[1]);
    let as_name = Assembler::new().template(Template::markdown());
    [
        (shown, servers(hostile)),
        (deferred, servers(hostile)),
        (as_name, named(hostile)),
    ]
    .into_iter()
    .map(|(a, servers)| {
        let assembly = a.assemble(&servers).unwrap();
        let names = assembly
            .servers()
            .iter()
            .filter(|s| s.included)
            .map(|s| s.name.clone())
            .collect();
        let mut text = assembly.text().to_string();
        text.push_str(HOST);
        (text, names)
    })
    .collect()
}

/// Whether a browser runs script or reads local data from `href`: leading
/// blanks and controls skipped, tabs and newlines inside dropped, any case.
fn unsafe_href(href: &str) -> bool {
    let url: String = href
        .trim_start_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect::<String>()
        .to_ascii_lowercase();
    ["javascript:", "vbscript:", "data:", "file:"]
        .iter()
        .any(|s| url.starts_with(s))
}

fn check(name: &str, doc: &str, names: &[String], reading: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    for engine in ENGINES {
        let r = &reading[engine];
        let headings: Vec<(u64, String)> = r["headings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| (h[0].as_u64().unwrap(), h[1].as_str().unwrap().to_string()))
            .filter(|(level, _)| *level <= 3)
            .collect();
        let mut want = vec![(2, "MCP server instructions".to_string())];
        // The reader joins whitespace runs, as a browser shows them.
        want.extend(
            names
                .iter()
                .map(|n| (3, n.split_whitespace().collect::<Vec<_>>().join(" "))),
        );
        if headings != want {
            problems.push(format!("{name} [{engine}]: headings {headings:?}"));
        }
        let live = r["live"].as_array().unwrap();
        if !live.is_empty() {
            problems.push(format!("{name} [{engine}]: live {live:?}"));
        }
        let images = r["images"].as_array().unwrap();
        if !images.is_empty() {
            problems.push(format!("{name} [{engine}]: images {images:?}"));
        }
        for href in r["hrefs"].as_array().unwrap() {
            if unsafe_href(href.as_str().unwrap()) {
                problems.push(format!("{name} [{engine}]: unsafe target {href}"));
            }
        }
        // A bare URL the server wrote may stay a link; a link whose text
        // hides its target must not lead there.
        let links = r["links"].as_array().unwrap();
        for link in links {
            let (text, href) = (link[0].as_str().unwrap(), link[1].as_str().unwrap());
            if href.contains("evil.example") && !text.contains("evil.example") {
                problems.push(format!(
                    "{name} [{engine}]: retargeted link {text:?} -> {href}"
                ));
            }
        }
        let guide = [
            "guide".to_string(),
            "https://host.example/guide".to_string(),
        ];
        if !links.iter().any(|l| l[0] == guide[0] && l[1] == guide[1]) {
            problems.push(format!(
                "{name} [{engine}]: the host's link is lost {links:?}"
            ));
        }
        let top = r["top"].as_array().unwrap();
        if top.last().and_then(Value::as_str) != Some(HOST_PARAGRAPH) {
            problems.push(format!(
                "{name} [{engine}]: host text absorbed, last paragraph {:?}",
                top.last()
            ));
        }
        for text in [MIDDLE, VICTIM] {
            if !top.iter().any(|p| p == text) {
                problems.push(format!(
                    "{name} [{engine}]: {text:?} is not a paragraph of its own"
                ));
            }
        }
    }
    if !problems.is_empty() {
        problems.push(format!("---- {name}:\n{doc}"));
    }
    problems
}

#[test]
fn every_engine_sees_exactly_the_real_servers() {
    if !engines_available() {
        return;
    }
    let cases = cases();
    assert!(cases.len() >= 40, "the committed corpus is there");
    let mut docs = Vec::new();
    let mut labels = Vec::new();
    let mut shown = Vec::new();
    for (name, text) in &cases {
        for (n, (doc, names)) in sections(text).into_iter().enumerate() {
            labels.push(format!("{name}#{n}"));
            docs.push(doc);
            shown.push(names);
        }
    }
    let readings = render(&docs);
    let problems: Vec<String> = labels
        .iter()
        .zip(&docs)
        .zip(&shown)
        .zip(&readings)
        .flat_map(|(((label, doc), names), reading)| check(label, doc, names, reading))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The harness itself sees what it must: a forged heading, a live tag, a
/// retargeted link, and host text absorbed by a quote.
#[test]
fn the_harness_sees_attacks() {
    if !engines_available() {
        return;
    }
    let docs = vec![
        "## A\n\n### b\n\nSee www.example.com\\<template> for docs.\n".to_string(),
        "### zz-victim\n\n[guide]: https://evil.example/x\n\n[guide]\n".to_string(),
        "> quote\nHost text.\n".to_string(),
        "See https://x.example/[docs](<template>) and [a](javascript:x) ![b](https://b.example/i.png)\n"
            .to_string(),
    ];
    let r = render(&docs);
    assert_eq!(r[0]["cmark-gfm"]["live"][0], "<template>");
    assert_eq!(r[0]["cmark"]["live"].as_array().unwrap().len(), 0);
    for engine in ENGINES {
        assert_eq!(r[1][engine]["headings"][0][1], "zz-victim", "{engine}");
        assert_eq!(r[1][engine]["links"][0][0], "guide", "{engine}");
        assert_eq!(
            r[1][engine]["links"][0][1], "https://evil.example/x",
            "{engine}"
        );
        assert_eq!(r[2][engine]["top"].as_array().unwrap().len(), 0, "{engine}");
        assert_eq!(
            r[3][engine]["images"][0], "https://b.example/i.png",
            "{engine}"
        );
    }
    // The glued link: cmark-gfm's autolink takes `[docs](` and leaves the
    // tag live; every engine that keeps the link leads to the script.
    assert_eq!(r[3]["cmark-gfm"]["live"][0], "<template>");
    for engine in ["cmark-gfm", "cmark", "commonmark.py"] {
        let hrefs = r[3][engine]["hrefs"].as_array().unwrap();
        assert!(
            hrefs.iter().any(|h| unsafe_href(h.as_str().unwrap())),
            "{engine}: {hrefs:?}"
        );
    }
}
