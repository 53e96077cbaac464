//! The section read by the markdown engines hosts actually use: GitHub's
//! cmark-gfm, C cmark, markdown-it and mistune, through the Python harness
//! `tests/renderers/render.py`. Every hostile case in
//! `tests/renderers/cases.json` goes in as a server's instructions and as a
//! tool description (shown, and as a deferred tool's summary); every engine
//! must see exactly the real headings, no live tag, no link retargeted, and
//! the host's text appended right after the section as a paragraph of its
//! own.
//!
//! `.ci/run` installs the engines. Without them the test says so and passes,
//! unless `MCP_PREAMBLE_REQUIRE_RENDERERS=1` (set by `.ci/run`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mcp_preamble::{Assembler, ServerSnapshot, Template, Tool};
use serde_json::Value;

const ENGINES: [&str; 4] = ["cmark-gfm", "cmark", "markdown-it", "mistune"];
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
fn engines_available() -> bool {
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
            "SKIPPED: tests/renderers.rs needs python3 with cmarkgfm, mistune and markdown-it-py \
             (pip install -r tests/renderers/requirements.txt); .ci/run installs them"
        );
    }
    ok
}

/// Renders every document with every engine.
fn render(docs: &[String]) -> Vec<Value> {
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

fn servers(hostile: &str) -> Vec<ServerSnapshot> {
    vec![
        ServerSnapshot::new(NAMES[0])
            .with_instructions(hostile)
            .with_tool(Tool::new("probe", hostile))
            .with_tool(Tool::new("other", "Plain `code` here.")),
        ServerSnapshot::new(NAMES[1])
            .with_instructions(MIDDLE)
            .with_tool(Tool::new("mid", hostile)),
        ServerSnapshot::new(NAMES[2]).with_instructions(VICTIM),
    ]
}

/// The sections a case is checked in: tool descriptions shown, and the
/// hostile server's tools deferred (their summaries in the index).
fn sections(hostile: &str) -> Vec<String> {
    let shown = Assembler::new()
        .template(Template::markdown())
        .tool_descriptions(true);
    let deferred = Assembler::new()
        .template(Template::markdown())
        .defer(NAMES[0])
        .defer(NAMES[1]);
    [shown, deferred]
        .into_iter()
        .map(|a| {
            let mut text = a.assemble(&servers(hostile)).unwrap().text().to_string();
            text.push_str(HOST);
            text
        })
        .collect()
}

fn check(name: &str, doc: &str, reading: &Value) -> Vec<String> {
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
        want.extend(NAMES.iter().map(|n| (3, n.to_string())));
        if headings != want {
            problems.push(format!("{name} [{engine}]: headings {headings:?}"));
        }
        let live = r["live"].as_array().unwrap();
        if !live.is_empty() {
            problems.push(format!("{name} [{engine}]: live {live:?}"));
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
    let mut names = Vec::new();
    for (name, text) in &cases {
        for (n, doc) in sections(text).into_iter().enumerate() {
            names.push(format!("{name}#{n}"));
            docs.push(doc);
        }
    }
    let readings = render(&docs);
    let problems: Vec<String> = names
        .iter()
        .zip(&docs)
        .zip(&readings)
        .flat_map(|((name, doc), reading)| check(name, doc, reading))
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
    }
}
