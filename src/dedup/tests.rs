use super::*;
use std::collections::HashSet;

#[test]
fn normalizing() {
    assert_eq!(
        normalize("1. Call `list_periods` FIRST!"),
        "call list_periods first"
    );
    assert_eq!(normalize("- \"get-invoice\" — by id."), "get-invoice by id");
    assert_eq!(normalize("It's read‑only."), "it's read only");
}

fn restated_tool<'t>(unit: &str, tools: &'t [Arc<ToolText>], t: f64) -> Option<&'t str> {
    super::restated_tool(unit, &mut ToolIndex::new(tools), t)
}

fn tools() -> Vec<Arc<ToolText>> {
    vec![
        Arc::new(ToolText::new("list_periods", "List billing periods.")),
        Arc::new(ToolText::new(
            "convert_currency",
            "Convert an amount between two ISO 4217 currencies using the latest cached exchange rate.",
        )),
    ]
}

#[test]
fn restatements_are_found() {
    let t = tools();
    assert_eq!(
        restated_tool("List billing periods.", &t, 0.8),
        Some("list_periods")
    );
    assert_eq!(
        restated_tool("`list_periods`: list billing periods", &t, 0.8),
        Some("list_periods")
    );
    assert_eq!(
        restated_tool(
            "1. Convert an amount between two ISO 4217 currencies using the latest cached exchange rate.",
            &t,
            0.8
        ),
        Some("convert_currency")
    );
    assert_eq!(
        restated_tool(
            "Use convert_currency to convert an amount between two currencies.",
            &t,
            0.8
        ),
        Some("convert_currency")
    );
}

#[test]
fn constraints_and_new_content_are_kept() {
    let t = tools();
    assert_eq!(
        restated_tool("Always call list_periods before get_invoice.", &t, 0.8),
        None
    );
    assert_eq!(restated_tool("List billing periods first.", &t, 0.8), None);
    assert_eq!(
        restated_tool("Invoice IDs are period scoped.", &t, 0.8),
        None
    );
    assert_eq!(restated_tool("Billing.", &t, 0.8), None);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
    /// The index finds exactly the tool a scan of every tool finds.
    #[test]
    fn the_index_finds_what_a_full_scan_finds(
        descriptions in proptest::collection::vec(
            proptest::collection::vec(0usize..12, 0..8), 1..12),
        units in proptest::collection::vec(
            proptest::collection::vec(0usize..13, 1..9), 1..10),
        threshold in proptest::sample::select(vec![0.0, 0.3, 0.5, 0.75, 0.9, 1.0]),
    ) {
        const WORDS: [&str; 13] = [
            "list", "billing", "periods", "invoice", "get", "first", "account", "t0",
            "t1", "the", "id", "never", "month",
        ];
        let text = |ws: &[usize]| ws.iter().map(|w| WORDS[*w]).collect::<Vec<_>>().join(" ");
        let tools: Vec<Arc<ToolText>> = descriptions
            .iter()
            .enumerate()
            .map(|(i, d)| Arc::new(ToolText::new(&format!("t{}", i % 3), &(text(d) + "."))))
            .collect();
        let mut index = ToolIndex::new(&tools);
        let mut all = ToolIndex::new(&tools);
        all.scan_all = true;
        for u in &units {
            let unit = text(u) + ".";
            proptest::prop_assert_eq!(
                super::restated_tool(&unit, &mut index, threshold),
                super::restated_tool(&unit, &mut all, threshold),
                "{}", unit
            );
        }
    }
}

#[test]
fn priorities() {
    let names = HashSet::from(["list_periods".to_string()]);
    let p = |s: &str| {
        let u = crate::segment::units(s)[0];
        priority(&u, u.text(s), &names)
    };
    assert_eq!(p("Never pass NaN."), Priority::Constraint);
    // Call order, wherever it stands (issue 55): a tool of the server, or a
    // call verb before a snake_case name; an order word alone is not it.
    assert_eq!(
        p("Always call list_periods before get_invoice."),
        Priority::CallOrder
    );
    assert_eq!(p("Then run sync_all once."), Priority::CallOrder);
    assert_eq!(
        p("Hours sync after the laptop wakes."),
        Priority::Constraint
    );
    assert_eq!(p("Use list_periods to browse."), Priority::NamesTool);
    assert_eq!(p("It is about money."), Priority::Prose);
    assert_eq!(p("Use this server for money."), Priority::NamesTool);
    assert_eq!(p("Your data may not reflect changes."), Priority::Prose);
    assert_eq!(p("IDs are not stable."), Priority::Constraint);
    assert_eq!(p("For example, ask for EUR."), Priority::Example);
    assert_eq!(p("```\nx\n```"), Priority::Example);
    assert_eq!(p("## Rules"), Priority::Heading);
}

/// The words as the first version of `for_each_word` found them, one
/// character at a time: the oracle of the version that slices.
fn words_char_by_char(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut flush = |word: &mut String| {
        let w = word.trim_matches(['-', '\'']);
        if !w.is_empty() {
            out.push(w.to_string());
        }
        word.clear();
    };
    for c in strip_list_marker(text.trim_start()).chars() {
        if c.is_ascii() {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '\'') {
                word.push(c);
            } else {
                flush(&mut word);
            }
        } else if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        } else {
            flush(&mut word);
        }
    }
    flush(&mut word);
    out
}

fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_word(text, |w| out.push(w.to_string()));
    out
}

#[test]
fn words_are_those_found_char_by_char_in_the_corpus() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut texts = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let server = crate::wire::load_server_file(&path).unwrap();
        let tools = server.tools.iter().filter_map(|t| t.description.as_deref());
        for text in server.instructions.raw().into_iter().chain(tools) {
            assert_eq!(words(text), words_char_by_char(text), "{text}");
            texts += 1;
        }
    }
    assert!(texts > 500, "{texts}");
    for text in [
        "ÉTÉ İstanbul ǅx",
        "--a-- 'b' -'- ''",
        "x\u{301}y ß ŉ",
        "1) 2. - * + x",
        "",
    ] {
        assert_eq!(words(text), words_char_by_char(text), "{text}");
    }
}

proptest::proptest! {
    #[test]
    fn words_are_those_found_char_by_char(text in "[a-zA-Z0-9_'\\- .,\n\u{e9}\u{c9}\u{130}\u{df}\u{301}\u{1c5}\u{2014}\u{4e00}\u{1f600}]{0,40}") {
        proptest::prop_assert_eq!(words(&text), words_char_by_char(&text));
    }
}

#[test]
fn the_lexicon_table_answers_as_its_lists() {
    let lex = &*LEXICON;
    let listed = STOPWORDS.iter().chain(CONSTRAINT_WORDS).chain(NOT_AFTER);
    let others = [
        "not", "invoice", "period", "firstly", "", "x", "ids_", "callable",
    ];
    for w in listed.chain(others.iter()) {
        let got = lex.get(word_hash(w)).copied().unwrap_or_default();
        assert_eq!(got.stop, STOPWORDS.contains(w), "{w}");
        assert_eq!(got.not_after, NOT_AFTER.contains(w), "{w}");
        let bit = CONSTRAINT_WORDS
            .iter()
            .position(|c| c == w)
            .map_or(0, |i| 1u64 << i);
        assert_eq!(got.constraint, bit, "{w}");
    }
    let used = lex.slots.iter().filter(|s| s.used).count();
    assert!(used * 4 <= SLOTS, "{used} of {SLOTS} slots");
}
