//! Token counting through the trait: custom counters, memoized counts, and
//! counts that add up across the cuts the assembler makes.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_preamble::{Assembler, ServerSnapshot, TokenCounter, Tool};

use crate::common;

/// Counts characters, and how often it was asked.
#[derive(Clone, Default)]
struct Chars(Arc<AtomicUsize>);

impl TokenCounter for Chars {
    fn name(&self) -> &str {
        "chars"
    }
    fn count(&self, text: &str) -> usize {
        self.0.fetch_add(1, Ordering::SeqCst);
        text.chars().count()
    }
}

fn servers() -> Vec<ServerSnapshot> {
    vec![
        ServerSnapshot::new("a")
            .with_instructions("Always call first_tool first. It is a long sentence of prose here.")
            .with_tool(Tool::new("first_tool", "Does a thing.")),
        ServerSnapshot::new("b").with_instructions("Never delete anything without asking."),
    ]
}

#[test]
fn a_custom_counter_is_used_for_budgets() {
    let counter = Chars::default();
    let a = Assembler::new()
        .token_counter(counter.clone())
        .budget(60)
        .assemble(&servers())
        .unwrap();
    assert_eq!(a.encoding(), "chars");
    assert_eq!(a.total_tokens(), a.text().chars().count());
    for s in a.servers() {
        assert_eq!(s.tokens, s.text.chars().count());
        assert!(s.tokens <= 60, "{}", s.text);
    }
}

#[test]
fn unchanged_strings_are_not_counted_again() {
    let counter = Chars::default();
    let assembler = Assembler::new().token_counter(counter.clone()).budget(60);
    let first = assembler.assemble(&servers()).unwrap();
    let calls = counter.0.load(Ordering::SeqCst);
    assert!(calls > 0);
    let second = assembler.clone().assemble(&servers()).unwrap();
    assert_eq!(
        counter.0.load(Ordering::SeqCst),
        calls,
        "all counts came from the memo"
    );
    assert_eq!(first.text(), second.text());

    // One server changes: only its strings (and the section) are counted.
    let mut changed = servers();
    changed[1] = ServerSnapshot::new("b").with_instructions("Never drop tables.");
    assembler.assemble(&changed).unwrap();
    let more = counter.0.load(Ordering::SeqCst) - calls;
    assert!(
        more > 0 && more < calls,
        "{more} new counts vs {calls} cold"
    );
}

mod splitting {
    use mcp_preamble::{Encoding, Tiktoken, TokenCounter};
    use proptest::prelude::*;

    /// Text cut right after a newline, before a character that is neither
    /// whitespace nor `/`, counts the same in pieces as whole: the property
    /// the assembler relies on to count an unchanged block from its memo.
    fn pieces() -> impl Strategy<Value = Vec<String>> {
        let piece = prop_oneof![
            any::<String>(),
            "[ -~]{0,30}",
            Just("`".to_string()),
            Just("```".to_string()),
            Just("]]".to_string()),
            Just("  ".to_string()),
            Just("\r\n".to_string()),
            Just("'s".to_string()),
            Just("123".to_string()),
            Just("日本円".to_string()),
        ];
        proptest::collection::vec(
            proptest::collection::vec(piece, 1..5).prop_map(|v| v.concat()),
            1..6,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn counts_add_up_across_newline_cuts(chunks in pieces(), heads in proptest::collection::vec("[#<A-Za-z0-9`*-]", 6)) {
            for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
                let t = Tiktoken::new(encoding);
                prop_assert!(t.splits_after_newline());
                // Each chunk after the first starts with a non-space, non-slash
                // character and follows a newline.
                let mut parts = Vec::new();
                for (i, c) in chunks.iter().enumerate() {
                    let mut part = if i == 0 { String::new() } else { heads[i % heads.len()].clone() };
                    part.push_str(c);
                    part.push('\n');
                    parts.push(part);
                }
                let whole: String = parts.concat();
                let sum: usize = parts.iter().map(|p| t.count(p)).sum();
                prop_assert_eq!(t.count(&whole), sum, "{:?}", parts);
            }
        }
    }
}

mod word_cuts {
    //! Text cut before a single space between two printable ASCII
    //! characters (`"word,| next"`) counts the same in pieces as whole under
    //! every tiktoken encoding: the property
    //! [`TokenCounter::splits_before_word`] promises.

    use super::common;
    use mcp_preamble::{Encoding, Tiktoken, TokenCounter};
    use proptest::prelude::*;
    use tiktoken_rs::CoreBPE;

    /// Every place the trait's documentation allows.
    fn places(text: &str) -> Vec<usize> {
        let b = text.as_bytes();
        (1..b.len().saturating_sub(1))
            .filter(|&p| b[p - 1].is_ascii_graphic() && b[p] == b' ' && b[p + 1].is_ascii_graphic())
            .collect()
    }

    /// The crate's encodings, and tiktoken-rs's older ones (`p50k_base`,
    /// `r50k_base`, with GPT-2's pattern) for the same reasoning.
    fn encodings() -> Vec<(&'static str, &'static CoreBPE)> {
        for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
            assert!(Tiktoken::new(encoding).splits_before_word());
        }
        vec![
            ("o200k_base", tiktoken_rs::o200k_base_singleton()),
            ("cl100k_base", tiktoken_rs::cl100k_base_singleton()),
            ("p50k_base", tiktoken_rs::p50k_base_singleton()),
            ("r50k_base", tiktoken_rs::r50k_base_singleton()),
        ]
    }

    /// The count of `text` cut at `cuts`.
    fn in_pieces(bpe: &CoreBPE, text: &str, cuts: &[usize]) -> usize {
        let mut from = 0;
        let mut total = 0;
        for &cut in cuts.iter().chain(std::iter::once(&text.len())) {
            total += bpe.count_ordinary(&text[from..cut]);
            from = cut;
        }
        total
    }

    /// Text rich in words, spaces and the pre-tokenizers' edge cases:
    /// contractions, digit runs, letter case, marks, other scripts, runs
    /// of spaces and newlines.
    fn text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            any::<String>(),
            "[ -~]{0,20}",
            "[A-Za-z0-9]{1,8}",
            "[a-z]{1,6} [a-zA-Z]{1,6}",
            "[!-~]{1,4} [!-~]{1,4}",
            "`[a-z_]{1,6}`, ",
            Just(" ".to_string()),
            Just("  ".to_string()),
            Just("\n".to_string()),
            Just("\r\n".to_string()),
            Just("\t".to_string()),
            Just("'s".to_string()),
            Just("'LL".to_string()),
            Just("\u{2019}s".to_string()),
            Just("12345".to_string()),
            Just("HTTPServer".to_string()),
            Just("McDonald".to_string()),
            Just("e\u{301}".to_string()),
            Just("caf\u{e9}".to_string()),
            Just("\u{65e5}\u{672c}".to_string()),
            Just("/".to_string()),
            Just("`".to_string()),
        ];
        proptest::collection::vec(piece, 0..24).prop_map(|v| v.concat())
    }

    /// Checks that every encoding counts each instruction and tool
    /// description of the corpus the same cut at `places_of` it; returns
    /// how many places there were.
    fn corpus_counts_add_up(places_of: fn(&str) -> Vec<usize>) -> usize {
        let mut texts = Vec::new();
        for s in common::all_snapshots() {
            texts.extend(s.instructions.raw().map(str::to_string));
            texts.extend(s.tools.iter().filter_map(|t| t.description.clone()));
        }
        let cuts: Vec<Vec<usize>> = texts.iter().map(|t| places_of(t)).collect();
        for (name, bpe) in encodings() {
            for (text, cuts) in texts.iter().zip(&cuts) {
                assert_eq!(
                    bpe.count_ordinary(text),
                    in_pieces(bpe, text, cuts),
                    "{name}: {text:?}"
                );
            }
        }
        cuts.iter().map(Vec::len).sum()
    }

    #[test]
    fn every_instruction_and_description_of_the_corpus_counts_the_same_cut() {
        let total = corpus_counts_add_up(places);
        assert!(total > 10_000, "only {total} places in the corpus");
    }

    /// Every place [`TokenCounter::splits_before_newline`] allows: between
    /// an ASCII letter or digit and a newline.
    fn newline_places(text: &str) -> Vec<usize> {
        let b = text.as_bytes();
        (1..b.len())
            .filter(|&p| b[p - 1].is_ascii_alphanumeric() && b[p] == b'\n')
            .collect()
    }

    /// Both rules' places, as the section is cut.
    fn all_places(text: &str) -> Vec<usize> {
        let mut cuts = places(text);
        cuts.extend(newline_places(text));
        cuts.sort_unstable();
        cuts.dedup();
        cuts
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn counts_add_up_across_every_word_cut_and_newline_cut(text in text()) {
            for (name, bpe) in encodings() {
                for cuts in [places(&text), newline_places(&text), all_places(&text)] {
                    prop_assert_eq!(bpe.count_ordinary(&text), in_pieces(bpe, &text, &cuts), "{} {:?} {:?}", name, text, cuts);
                }
            }
        }
    }

    #[test]
    fn every_instruction_and_description_of_the_corpus_counts_the_same_cut_before_newlines() {
        for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
            assert!(Tiktoken::new(encoding).splits_before_newline());
        }
        let total = corpus_counts_add_up(newline_places);
        assert!(total > 500, "only {total} places in the corpus");
    }

    #[test]
    fn the_places_next_to_a_newline_cut_may_change_a_count() {
        // What the rule refuses: a newline after a symbol, which o200k's
        // symbol pieces take with them.
        let o200k = tiktoken_rs::o200k_base_singleton();
        for (left, right) in [("fn main() {", "\n"), ("a:", "\n\n")] {
            assert!(!newline_places(&format!("{left}{right}")).contains(&left.len()));
            assert_ne!(
                o200k.count_ordinary(&format!("{left}{right}")),
                o200k.count_ordinary(left) + o200k.count_ordinary(right),
                "{left:?} {right:?}"
            );
        }
    }

    #[test]
    fn the_places_next_to_a_word_cut_may_change_a_count() {
        // What the rule refuses because a token or a pre-tokenizer piece
        // can span it: before the space's word, inside a word or a run
        // of digits, before a contraction.
        let o200k = tiktoken_rs::o200k_base_singleton();
        for (left, right) in [("a ", "b"), ("wor", "d"), ("1234", "5"), ("it", "'s")] {
            assert!(!places(&format!("{left}{right}")).contains(&left.len()));
            assert_ne!(
                o200k.count_ordinary(&format!("{left}{right}")),
                o200k.count_ordinary(left) + o200k.count_ordinary(right),
                "{left:?} {right:?}"
            );
        }
    }
}

/// Counts the bytes of text it is asked to count (o200k_base's counts),
/// cutting before words and before newlines after words or not.
#[derive(Clone, Default)]
struct Bytes {
    counted: Arc<AtomicUsize>,
    word: bool,
    newline: bool,
}

impl TokenCounter for Bytes {
    fn name(&self) -> &str {
        "o200k_base"
    }
    fn count(&self, text: &str) -> usize {
        self.counted.fetch_add(text.len(), Ordering::SeqCst);
        mcp_preamble::Tiktoken::new(mcp_preamble::Encoding::O200kBase).count(text)
    }
    fn splits_after_newline(&self) -> bool {
        true
    }
    fn splits_before_word(&self) -> bool {
        self.word
    }
    fn splits_before_newline(&self) -> bool {
        self.newline
    }
}

#[test]
fn a_block_ending_in_a_word_is_not_counted_again_in_the_section() {
    // The hostile 64 KiB word: its block ends in it, and the section goes
    // on after it into a newline; cut there, the section takes the word's
    // count from the memo instead of counting 64 KiB once more.
    let word = "a".repeat(64 * 1024);
    let servers = [ServerSnapshot::new("huge").with_instructions(word.as_str())];
    let cold = |newline: bool| {
        let counter = Bytes {
            word: true,
            newline,
            ..Bytes::default()
        };
        let a = Assembler::new()
            .token_counter(counter.clone())
            .assemble(&servers)
            .unwrap();
        assert!(a.text().contains(&format!("{word}\n")));
        (counter.counted.load(Ordering::SeqCst), a.to_json())
    };
    let (without, by_words) = cold(false);
    let (with, by_newlines) = cold(true);
    assert_eq!(by_newlines, by_words);
    assert!(
        without > 2 * word.len(),
        "{without} bytes counted without the cut"
    );
    assert!(
        with < word.len() + 4096,
        "{with} bytes counted with the cut"
    );
}

#[test]
fn cuts_before_words_count_less_text_cold() {
    // The section counts a block's last line from the memo up to its last
    // word, instead of counting the whole line again.
    let servers = common::all_snapshots();
    let cold = |word: bool| {
        let counter = Bytes {
            word,
            ..Bytes::default()
        };
        let a = Assembler::new()
            .token_counter(counter.clone())
            .assemble(&servers)
            .unwrap();
        (counter.counted.load(Ordering::SeqCst), a.to_json())
    };
    let (lines, by_lines) = cold(false);
    let (words, by_words) = cold(true);
    assert_eq!(by_words, by_lines);
    assert!(
        words * 4 < lines * 3,
        "{words} bytes counted with word cuts, {lines} without"
    );
}
