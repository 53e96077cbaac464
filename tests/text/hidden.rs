//! Hidden characters: removed by Unicode property, counted per server, flagged by the lint.

use mcp_preamble::lint::{LintCode, Linter, Severity};
use mcp_preamble::report::HiddenChars;
use mcp_preamble::{Assembler, InstructionsState, ServerSnapshot, Template, Tool};

const VISIBLE: &str = "Always call list_periods before get_invoice.";

/// Every class the sanitizer must remove, with the kind it is counted as.
fn classes() -> Vec<(&'static str, Vec<char>)> {
    let range = |a: u32, b: u32| (a..=b).filter_map(char::from_u32).collect::<Vec<_>>();
    vec![
        ("variation selectors FE00-FE0F", range(0xFE00, 0xFE0F)),
        ("variation selectors E0100-E01EF", range(0xE0100, 0xE01EF)),
        ("mongolian variation selectors", range(0x180B, 0x180D)),
        ("soft hyphen", vec!['\u{AD}']),
        ("mongolian vowel separator", vec!['\u{180E}']),
        ("deprecated format 206A-206F", range(0x206A, 0x206F)),
        ("interlinear annotation FFF9-FFFB", range(0xFFF9, 0xFFFB)),
        ("musical format 1D173-1D17A", range(0x1D173, 0x1D17A)),
        (
            "other Cf",
            vec!['\u{600}', '\u{6DD}', '\u{110BD}', '\u{13430}'],
        ),
        ("bidi", range(0x202A, 0x202E)),
        ("isolates", range(0x2066, 0x2069)),
        ("zero width", range(0x200B, 0x200F)),
        ("word joiner and invisible operators", range(0x2060, 0x2064)),
        ("tags", range(0xE0000, 0xE007F)),
        (
            "private use",
            vec!['\u{E000}', '\u{F8FF}', '\u{F0000}', '\u{10FFFD}'],
        ),
        (
            "hangul fillers",
            vec!['\u{115F}', '\u{1160}', '\u{3164}', '\u{FFA0}'],
        ),
        ("combining grapheme joiner", vec!['\u{34F}']),
        ("braille blank", vec!['\u{2800}']),
        ("khmer inherent vowels", vec!['\u{17B4}', '\u{17B5}']),
        ("unassigned", vec!['\u{378}', '\u{E01F0}', '\u{2FFFF}']),
        ("noncharacters", vec!['\u{FDD0}', '\u{FFFE}', '\u{1FFFF}']),
        (
            "C0 and C1 controls",
            vec!['\u{1}', '\u{1B}', '\u{7F}', '\u{85}', '\u{9F}'],
        ),
        ("byte order mark", vec!['\u{FEFF}']),
    ]
}

fn server(name: &str, instructions: &str) -> ServerSnapshot {
    ServerSnapshot::new(name)
        .with_instructions(instructions)
        .with_tool(Tool::new("list_periods", "List billing periods."))
}

#[test]
fn every_class_is_absent_from_both_templates_and_counted() {
    for (label, chars) in classes() {
        let hidden: String = chars.iter().collect();
        // Between words, inside a word, and in names.
        let text = format!("Always call{hidden} list_periods before get_{hidden}invoice.{hidden}");
        let s = ServerSnapshot::new(format!("billing{hidden}"))
            .with_instructions(&text)
            .with_tool(Tool::new(
                format!("list_{hidden}periods"),
                "List billing periods.",
            ));
        for template in [Template::markdown(), Template::xml()] {
            let a = Assembler::new()
                .template(template)
                .assemble(std::slice::from_ref(&s))
                .unwrap();
            let section = a.text();
            for c in &chars {
                assert!(
                    !section.contains(*c),
                    "{label}: U+{:04X} reached the section",
                    *c as u32
                );
            }
            assert!(section.contains(VISIBLE), "{label}: {section}");
            assert!(section.contains("list_periods"), "{label}");
            let report = &a.servers()[0];
            assert_eq!(report.name, "billing", "{label}");
            // Five places: instructions (three) and the server and tool names.
            assert_eq!(
                report.hidden_characters.total(),
                5 * chars.len(),
                "{label}: {:?}",
                report.hidden_characters
            );
        }
    }
}

#[test]
fn counts_are_by_kind_and_in_the_json_only_when_present() {
    let text = format!("{VISIBLE}\u{FE0F}\u{200B}\u{E000}\u{378}\u{3164}\u{1B}");
    let a = Assembler::new()
        .assemble(&[server("billing", &text)])
        .unwrap();
    let h = a.servers()[0].hidden_characters;
    assert_eq!(
        (
            h.control,
            h.format,
            h.variation_selector,
            h.private_use,
            h.unassigned,
            h.invisible
        ),
        (1, 1, 1, 1, 1, 1)
    );
    assert_eq!(
        h.to_string(),
        "1 control, 1 format, 1 variation selector, 1 private use, 1 unassigned, 1 invisible"
    );
    let json: serde_json::Value = serde_json::from_str(&a.to_json()).unwrap();
    assert_eq!(
        json["servers"][0]["hidden_characters"],
        serde_json::json!({"control": 1, "format": 1, "variation_selector": 1, "private_use": 1, "unassigned": 1, "invisible": 1})
    );
    let clean = Assembler::new()
        .assemble(&[server("billing", VISIBLE)])
        .unwrap();
    assert_eq!(clean.servers()[0].hidden_characters, HiddenChars::default());
    assert!(!clean.to_json().contains("hidden_characters"));
}

/// 127 bytes smuggled one per variation selector after a visible sentence.
fn smuggled() -> String {
    let message: Vec<u8> = (0..127u8).collect();
    let mut text = VISIBLE.to_string();
    for b in message {
        let vs = if b < 16 {
            0xFE00 + b as u32
        } else {
            0xE0100 + (b as u32 - 16)
        };
        text.push(char::from_u32(vs).unwrap());
    }
    text
}

#[test]
fn a_message_in_variation_selectors_does_not_survive() {
    let a = Assembler::new()
        .assemble(&[server("billing", &smuggled())])
        .unwrap();
    let report = &a.servers()[0];
    assert_eq!(report.hidden_characters.variation_selector, 127);
    assert!(
        report.text.contains(&format!("{VISIBLE}\n")),
        "{}",
        report.text
    );
    // The block is the visible sentence's size, not 540 tokens.
    assert!(report.tokens < 40, "{}", report.tokens);
}

#[test]
fn text_made_only_of_hidden_characters_is_blank() {
    for (label, chars) in classes() {
        let only: String = chars.iter().collect();
        let s = ServerSnapshot::new("x").with_instructions(&only);
        assert_eq!(s.instructions.state(), InstructionsState::Blank, "{label}");
        let findings = Linter::new().lint(&s);
        assert!(
            findings
                .iter()
                .any(|f| f.code == LintCode::BlankInstructions),
            "{label}"
        );
    }
}

#[test]
fn lint_flags_hidden_characters() {
    let codes = |text: &str| -> Vec<(LintCode, Severity)> {
        Linter::new()
            .lint(&server("billing", text))
            .into_iter()
            .filter(|f| f.code == LintCode::HiddenCharacters)
            .map(|f| (f.code, f.severity))
            .collect()
    };
    let error = vec![(LintCode::HiddenCharacters, Severity::Error)];
    assert_eq!(codes(&smuggled()), error);
    // Three zero-width spaces: over the small allowance.
    assert_eq!(
        codes("Always\u{200B} call\u{200B} list_periods\u{200B} first."),
        error
    );
    // One variation selector outside an emoji is an error on its own.
    assert_eq!(codes(&format!("{VISIBLE}\u{FE0F}")), error);
    // One stray zero-width space is a note.
    assert_eq!(
        codes("Always call\u{200B} list_periods first."),
        vec![(LintCode::HiddenCharacters, Severity::Note)]
    );
    // Near misses: emoji sequences and plain text.
    assert_eq!(codes("Rate limits apply ❤️ 1️⃣ 👨‍👩‍👧 ✔︎."), vec![]);
    assert_eq!(codes(VISIBLE), vec![]);
    let finding = Linter::new()
        .lint(&server("billing", &smuggled()))
        .into_iter()
        .find(|f| f.code == LintCode::HiddenCharacters)
        .unwrap();
    assert_eq!(
        finding.message,
        "instructions hold 127 hidden characters (127 variation selector) that sanitizing removes; nobody reading the text sees them"
    );
}
