//! The fuzz targets' committed corpora (`fuzz/corpus/<target>/`), each input run once through its
//! target's body (`fuzz/src/targets/`), decoded as libFuzzer's `fuzz_target!` decodes it: the
//! regression check CI runs, on stable Rust in this test build. `fuzz/replay.sh` does the same
//! under libFuzzer and AddressSanitizer (nightly, cargo-fuzz) for a developer who has them.

#[path = "../../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod fuzz;

// The targets name the fuzz crate's items as `crate::…`.
#[allow(unused_imports)]
use fuzz::*;

use std::path::{Path, PathBuf};

use arbitrary::{Arbitrary, Unstructured};

/// The committed inputs of `target`, in name order.
fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a corpus entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} has no inputs", dir.display());
    files
}

/// Runs every input of `target`; a panic names the input that caused it.
fn replay(target: &str, run: impl Fn(&[u8]) + std::panic::RefUnwindSafe) -> usize {
    let files = corpus(target);
    for file in &files {
        let data = std::fs::read(file).expect("a corpus file");
        if std::panic::catch_unwind(|| run(&data)).is_err() {
            panic!("fuzz target {target} fails on {}", file.display());
        }
    }
    files.len()
}

/// `fuzz_target!`'s decoding of a structured input: too short or undecodable is skipped.
fn typed<T: for<'a> Arbitrary<'a>>(data: &[u8], run: impl Fn(T)) {
    if data.len() < T::size_hint(0).0 {
        return;
    }
    if let Ok(input) = T::arbitrary_take_rest(Unstructured::new(data)) {
        run(input);
    }
}

#[test]
fn wire_corpus() {
    assert!(replay("wire", targets::wire::run) >= 100);
}

#[test]
fn template_corpus() {
    replay("template", targets::template::run);
}

#[test]
fn section_corpus() {
    replay("section", |d| typed(d, targets::section::run));
}

#[test]
fn links_corpus() {
    assert!(replay("links", |d| typed(d, targets::links::run)) >= 13);
}

/// The `links` seeds of issue 40 (`targets::links::seeds`) are committed as
/// `fuzz/corpus/links/seed-<name>`, each decoding to its value;
/// `MCP_PREAMBLE_BLESS_SEEDS=1` writes them.
#[test]
fn links_seeds_are_committed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/links");
    for (name, input) in targets::links::seeds() {
        let bytes = input.seed();
        let back = targets::links::LinksInput::arbitrary_take_rest(Unstructured::new(&bytes));
        assert_eq!(
            back.as_ref().ok(),
            Some(&input),
            "{name} does not decode to its value"
        );
        let path = dir.join(format!("seed-{name}"));
        if std::env::var_os("MCP_PREAMBLE_BLESS_SEEDS").is_some() {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &bytes).unwrap();
        }
        assert_eq!(
            std::fs::read(&path).ok(),
            Some(bytes),
            "{} is stale",
            path.display()
        );
    }
}

/// The `links` corpus through every engine: each input's section read by
/// cmark-gfm, C cmark, markdown-it, mistune and commonmark.py
/// (`fuzz/differential/check.py`, the harness of `tests/renderers/render.py`):
/// the real headings, no live tag, no image, no unsafe target, the host's
/// text its own paragraph. Skipped without the engines, unless
/// `MCP_PREAMBLE_REQUIRE_RENDERERS` is set (CI).
#[test]
fn links_corpus_through_every_engine() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = std::env::var("MCP_PREAMBLE_PYTHON").unwrap_or_else(|_| "python3".into());
    let engines = Command::new(&python)
        .arg(root.join("tests/renderers/render.py"))
        .arg("--check")
        .output()
        .is_ok_and(|o| o.status.success());
    if !engines {
        assert!(
            std::env::var("MCP_PREAMBLE_REQUIRE_RENDERERS").is_err(),
            "no engines"
        );
        eprintln!("SKIPPED: the markdown engines are not installed");
        return;
    }
    let mut items = Vec::new();
    for file in corpus("links") {
        let data = std::fs::read(&file).unwrap();
        let Ok(input) = targets::links::LinksInput::arbitrary_take_rest(Unstructured::new(&data))
        else {
            continue;
        };
        let Some(a) = input.assemble() else { continue };
        let names: Vec<&str> = a
            .servers()
            .iter()
            .filter(|s| s.included)
            .map(|s| s.name.as_str())
            .collect();
        items.push(serde_json::json!({
            "input": file.display().to_string(),
            "doc": format!("{}Host text after the section.\n", a.text()),
            "names": names,
        }));
    }
    assert!(items.len() >= 13);
    let mut child = Command::new(&python)
        .arg(root.join("fuzz/differential/check.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input = serde_json::to_vec(&items).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// `compose` (issue 54): the committed inputs through the pulldown-cmark half of its oracle (the
/// fuzz binary adds comrak).
#[test]
fn compose_corpus() {
    assert!(replay("compose", |d| typed(d, targets::compose::run)) >= 4);
}

/// The `compose` seeds (`targets::compose::seeds`, the reported attack and its relatives) are
/// committed as `fuzz/corpus/compose/seed-<name>`, each decoding to its value
/// (`MCP_PREAMBLE_BLESS_SEEDS=1` writes them); on the escaping before issue 54 the replay fails.
#[test]
fn compose_seeds_are_committed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/compose");
    for (name, input) in targets::compose::seeds() {
        let bytes = input.seed();
        let back = targets::compose::ComposeInput::arbitrary_take_rest(Unstructured::new(&bytes));
        assert_eq!(
            back.as_ref().ok(),
            Some(&input),
            "{name} does not decode to its value"
        );
        let path = dir.join(format!("seed-{name}"));
        if std::env::var_os("MCP_PREAMBLE_BLESS_SEEDS").is_some() {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &bytes).unwrap();
        }
        assert_eq!(
            std::fs::read(&path).ok(),
            Some(bytes),
            "{} is stale",
            path.display()
        );
    }
}

/// The `compose` corpus through the five engines of `tests/renderers/render.py` (one process):
/// each input's section has the shape of the placeholder section with the input's values in it,
/// as `tests/text/compose.rs` checks its cases. `MCP_PREAMBLE_COMPOSE_DIR=DIR` checks every input
/// in DIR instead (what a campaign kept: `fuzz/corpus-work/compose`). Skipped without the engines,
/// unless `MCP_PREAMBLE_REQUIRE_RENDERERS` is set (CI).
#[test]
fn compose_corpus_through_every_engine() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    use targets::compose::{ComposeInput, SLOTS, one_line, placeholder, section};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = std::env::var("MCP_PREAMBLE_PYTHON").unwrap_or_else(|_| "python3".into());
    let render = root.join("tests/renderers/render.py");
    if !Command::new(&python)
        .arg(&render)
        .arg("--check")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        assert!(
            std::env::var("MCP_PREAMBLE_REQUIRE_RENDERERS").is_err(),
            "no engines"
        );
        eprintln!("SKIPPED: the markdown engines are not installed");
        return;
    }
    let files = match std::env::var_os("MCP_PREAMBLE_COMPOSE_DIR") {
        Some(dir) => std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect(),
        None => corpus("compose"),
    };
    let mut docs = vec![section(&(0..SLOTS).map(placeholder).collect::<Vec<_>>())];
    let mut cases = Vec::new();
    for file in files {
        let data = std::fs::read(&file).unwrap();
        let Ok(input) = ComposeInput::arbitrary_take_rest(Unstructured::new(&data)) else {
            continue;
        };
        let values = input.values();
        docs.push(section(&values));
        cases.push((file, values));
    }
    assert!(cases.len() >= 4, "the seeds at least");
    let mut child = Command::new(&python)
        .arg(&render)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input = serde_json::to_vec(&docs).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success(), "render.py failed");
    let readings: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let mut problems = Vec::new();
    for engine in [
        "cmark-gfm",
        "cmark",
        "markdown-it",
        "mistune",
        "commonmark.py",
    ] {
        let want = readings[0][engine]["shape"].as_array().unwrap();
        for ((file, values), got) in cases.iter().zip(&readings[1..]) {
            let expected: Vec<String> = want
                .iter()
                .map(|s| {
                    (0..SLOTS)
                        .rev()
                        .fold(s.as_str().unwrap().to_string(), |s, k| {
                            s.replace(&placeholder(k), &one_line(&values[k]))
                        })
                })
                .collect();
            let got_shape: Vec<String> = got[engine]["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_string())
                .collect();
            let live = got[engine]["live"].as_array().unwrap();
            if got_shape != expected || !live.is_empty() {
                problems.push(format!("{} [{engine}]: {values:?}", file.display()));
            }
        }
    }
    eprintln!("compose: {} inputs through five engines", cases.len());
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn budgets_corpus() {
    replay("budgets", |d| typed(d, targets::budgets::run));
}

#[test]
fn lint_corpus() {
    replay("lint", |d| typed(d, targets::lint::run));
}

#[cfg(feature = "serve")]
#[test]
fn serve_host_corpus() {
    assert!(replay("serve_host", targets::serve_host::run) >= 10);
}

#[cfg(feature = "serve")]
#[test]
fn serve_upstream_corpus() {
    replay("serve_upstream", |d| typed(d, targets::serve_upstream::run));
}

#[cfg(feature = "serve")]
#[test]
fn wrap_relay_corpus() {
    assert!(replay("wrap_relay", targets::wrap_relay::run) >= 4);
}

#[cfg(feature = "serve")]
#[test]
fn serve_names_corpus() {
    replay("serve_names", |d| typed(d, targets::serve_names::run));
}

/// The replay decodes structured inputs: a corpus file that decodes to nothing would make its
/// target's replay pass without running. Most committed inputs decode (they were kept by the
/// fuzzer because they reached new code).
#[test]
fn structured_corpora_decode() {
    fn decoded<T: for<'a> Arbitrary<'a>>(target: &str) -> (usize, usize) {
        let files = corpus(target);
        let ok = files
            .iter()
            .filter(|f| {
                let data = std::fs::read(f).expect("a corpus file");
                data.len() >= T::size_hint(0).0
                    && T::arbitrary_take_rest(Unstructured::new(&data)).is_ok()
            })
            .count();
        (ok, files.len())
    }
    #[allow(unused_mut)]
    let mut all = vec![
        ("section", decoded::<SectionInput>("section")),
        ("budgets", decoded::<BudgetInput>("budgets")),
        ("lint", decoded::<LintInput>("lint")),
        ("links", decoded::<targets::links::LinksInput>("links")),
        (
            "compose",
            decoded::<targets::compose::ComposeInput>("compose"),
        ),
    ];
    #[cfg(feature = "serve")]
    all.extend([
        (
            "serve_upstream",
            decoded::<targets::serve_upstream::UpstreamInput>("serve_upstream"),
        ),
        (
            "serve_names",
            decoded::<targets::serve_names::NamesInput>("serve_names"),
        ),
    ]);
    for (target, (ok, all)) in all {
        assert!(ok * 2 > all, "{target}: only {ok} of {all} inputs decode");
    }
}

#[cfg(feature = "serve")]
#[test]
fn event_stream_corpus() {
    assert!(replay("event_stream", targets::event_stream::run) >= 4);
}
