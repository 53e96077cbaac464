//! What an assembler keeps between assemblies (rendered blocks by view,
//! de-duplication by content, token counts in pieces) never changes a
//! section: a repeat, a clone with other settings and a changed server all
//! give what a fresh assembler gives.

use crate::common;

use common::{all_snapshots, o200k};
use mcp_preamble::settings::Similarity;
use mcp_preamble::{
    Assembler, Encoding, Limits, ServerSnapshot, Template, Tiktoken, TokenCounter, Tool,
};

/// A named way to build an assembler.
type Config = (&'static str, fn() -> Assembler);

/// Assemblers with settings that reach each stage that keeps work.
fn configs() -> Vec<Config> {
    vec![
        ("default", Assembler::new),
        ("budget", || Assembler::new().budget(120)),
        ("total budget", || Assembler::new().total_budget(3_000)),
        ("xml", || Assembler::new().template(Template::xml())),
        ("descriptions", || Assembler::new().tool_descriptions(true)),
        ("deferred", || Assembler::new().defer_over(10)),
        ("across servers", || {
            Assembler::new()
                .dedup_across_servers(true)
                .similarity(Similarity::new(0.5).unwrap())
        }),
        ("few units", || {
            Assembler::new().limits(Limits::default().dedup_units(3))
        }),
    ]
}

#[test]
fn a_repeat_assembly_is_the_cold_one() {
    let servers = all_snapshots();
    for (name, config) in configs() {
        let cold = config().assemble(&servers).unwrap().to_json();
        let warm = config();
        for round in 0..3 {
            let again = warm.assemble(&servers).unwrap().to_json();
            assert!(again == cold, "{name}, round {round}");
        }
    }
}

#[test]
fn a_clone_with_other_settings_gets_nothing_stale() {
    let servers = all_snapshots();
    let configs = configs();
    let first = Assembler::new();
    first.assemble(&servers).unwrap();
    // Clones share the memos; each setting must still be applied.
    for (name, config) in &configs {
        let fresh = config().assemble(&servers).unwrap().to_json();
        let cloned = match *name {
            "default" => first.clone(),
            "budget" => first.clone().budget(120),
            "total budget" => first.clone().total_budget(3_000),
            "xml" => first.clone().template(Template::xml()),
            "descriptions" => first.clone().tool_descriptions(true),
            "deferred" => first.clone().defer_over(10),
            "across servers" => first
                .clone()
                .dedup_across_servers(true)
                .similarity(Similarity::new(0.5).unwrap()),
            "few units" => first.clone().limits(Limits::default().dedup_units(3)),
            other => panic!("no clone for {other}"),
        };
        assert!(
            cloned.assemble(&servers).unwrap().to_json() == fresh,
            "{name}"
        );
    }
}

#[test]
fn one_changed_server_among_many_is_assembled_anew() {
    let mut servers = all_snapshots();
    let warm = Assembler::new();
    warm.assemble(&servers).unwrap();
    let k = servers
        .iter()
        .position(|s| s.instructions.raw().is_some())
        .unwrap();
    for text in [
        "Always call the list tool first. Always call the list tool first.",
        "Never call anything twice.",
    ] {
        servers[k] = servers[k].clone().with_instructions(text);
        let got = warm.assemble(&servers).unwrap();
        assert_eq!(
            got.to_json(),
            Assembler::new().assemble(&servers).unwrap().to_json()
        );
        assert!(got.text().contains(text.split(". ").next().unwrap()));
    }
}

#[test]
fn blocks_counted_in_pieces_count_exactly() {
    // Paragraphs, lists, code and lines that start with `/`, a space or a
    // symbol: pieces are cut only where a token cannot span the cut.
    let mut text = String::new();
    for i in 0..60 {
        text.push_str(&format!(
            "Paragraph {i}: always call tool_{i} before tool_{}.\n/path/{i} is a path.\n  indented {i}\n- item {i}\n\n```\ncode {i}\n```\n#{i} and !{i}?\n\n",
            i + 1
        ));
    }
    let server = ServerSnapshot::new("long")
        .with_instructions(&text)
        .with_tool(Tool::new("tool_1", "The first tool."));
    let other = ServerSnapshot::new("short").with_instructions("Use it.");
    for asm in [
        Assembler::new(),
        Assembler::new().budget(700),
        Assembler::new().template(Template::xml()),
    ] {
        for round in 0..2 {
            let a = asm.assemble(&[server.clone(), other.clone()]).unwrap();
            assert_eq!(a.total_tokens(), o200k(a.text()), "round {round}");
            for s in a.servers() {
                assert_eq!(s.tokens, o200k(&s.text), "{} round {round}", s.name);
            }
        }
    }
}

#[test]
fn a_block_rendered_for_one_template_is_not_shown_for_another() {
    let servers = all_snapshots();
    let markdown = Assembler::new().assemble(&servers).unwrap();
    let xml = Assembler::new()
        .template(Template::xml())
        .assemble(&servers)
        .unwrap();
    assert!(
        xml.text().starts_with("<mcp_servers>"),
        "{}",
        &xml.text()[..40]
    );
    assert_ne!(markdown.text(), xml.text());
}

/// A tiktoken encoding that allows only some of the cuts it could.
struct Cutting {
    encoding: Encoding,
    newline: bool,
    word: bool,
    before_newline: bool,
}

impl TokenCounter for Cutting {
    fn name(&self) -> &str {
        self.encoding.name()
    }
    fn count(&self, text: &str) -> usize {
        Tiktoken::new(self.encoding).count(text)
    }
    fn splits_after_newline(&self) -> bool {
        self.newline
    }
    fn splits_before_word(&self) -> bool {
        self.word
    }
    fn splits_before_newline(&self) -> bool {
        self.before_newline
    }
}

#[test]
fn the_corpus_counted_in_pieces_counts_as_whole() {
    // Cut after newlines, before words, both or neither, under each
    // encoding: every block and the section count what they count whole.
    let servers = all_snapshots();
    for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
        let whole = |text: &str| match encoding {
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton().count_ordinary(text),
            _ => o200k(text),
        };
        for (newline, word, before_newline) in [
            (true, true, true),
            (true, true, false),
            (true, false, false),
            (false, true, false),
            (false, false, true),
            (false, false, false),
        ] {
            let counter = || {
                let c = Cutting {
                    encoding,
                    newline,
                    word,
                    before_newline,
                };
                Assembler::new().token_counter(c)
            };
            let mut builders: Vec<Box<dyn Fn() -> Assembler>> = vec![Box::new(counter)];
            if newline && word && before_newline {
                // The crate's own counter cuts at all three.
                builders.push(Box::new(move || Assembler::new().encoding(encoding)));
            }
            for build in &builders {
                for asm in [build(), build().budget(120), build().total_budget(3_000)] {
                    let a = asm.assemble(&servers).unwrap();
                    let what = format!(
                        "{} newline {newline} word {word} before newline {before_newline}",
                        encoding.name()
                    );
                    assert_eq!(a.total_tokens(), whole(a.text()), "{what}");
                    for s in a.servers() {
                        assert_eq!(s.tokens, whole(&s.text), "{what}: {}", s.name);
                    }
                }
            }
        }
    }
}
