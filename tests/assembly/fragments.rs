//! No orphan fragments (issue 39, item 1): at every budget from 16 to 400
//! o200k tokens, what a block keeps of a server's instructions closes every
//! quotation, parenthesis, bracket and code fence the instructions closed.
//! The same property in a Hugging Face tokenizer is in `tokenizers.rs`.

use crate::common;

use common::fragments::{balanced, marked_template, orphans, shown_instructions};
use mcp_preamble::{Assembler, ServerSnapshot};

#[test]
fn no_budget_leaves_a_pair_open_in_o200k() {
    let assembler = Assembler::new().template(marked_template());
    let (found, trimmed) = orphans(&assembler, &common::all_snapshots(), 16..=400);
    assert!(trimmed > 1000, "only {trimmed} trimmed blocks were checked");
    assert!(
        found.is_empty(),
        "{} orphans, the first: {:?}",
        found.len(),
        found.first()
    );
}

#[test]
fn the_easter_egg_quotation_is_kept_or_dropped_whole() {
    // The issue's case: server-everything's quoted answer at o200k 180-250,
    // in the built-in template.
    let s = common::snapshot("server-everything");
    let quote = "respond with \"🎉 Server instructions are working!";
    let tail = "This demonstrates MCP's instructions feature in action.";
    let mut kept = 0;
    for budget in 180..=250 {
        let a = Assembler::new()
            .budget(budget)
            .assemble(std::slice::from_ref(&s))
            .unwrap();
        let text = &a.servers()[0].text;
        assert_eq!(
            text.contains(quote),
            text.contains(tail),
            "{budget}:\n{text}"
        );
        kept += usize::from(text.contains(tail));
    }
    assert!(kept < 71, "the budget never dropped the quotation");
}

#[test]
fn a_continuation_goes_with_the_sentence_it_continues() {
    let s = ServerSnapshot::new("notes").with_instructions(
        "Notes are plain markdown files kept in a folder that you can browse and search freely. \
         This makes them easy to diff. Never delete a note without asking the user first.",
    );
    for budget in 16..=80 {
        let a = Assembler::new()
            .template(marked_template())
            .budget(budget)
            .assemble(std::slice::from_ref(&s))
            .unwrap();
        let shown = shown_instructions(&a.servers()[0].text);
        if shown.contains("This makes them") {
            assert!(shown.contains("Notes are plain"), "{budget}: {shown}");
        }
    }
}

#[test]
fn a_cut_never_ends_inside_a_quotation_or_a_code_block() {
    let long = "word ".repeat(40);
    for text in [
        format!("Always answer \"{long}\" when asked."),
        format!("```\n{long}\n```"),
    ] {
        let s = ServerSnapshot::new("q").with_instructions(text.clone());
        for budget in [12, 20, 30, 40] {
            let a = Assembler::new()
                .template(marked_template())
                .budget(budget)
                .assemble(std::slice::from_ref(&s))
                .unwrap();
            let shown = shown_instructions(&a.servers()[0].text);
            assert!(
                balanced(shown, "\"") && balanced(shown, "fence"),
                "{budget}: {shown}"
            );
        }
    }
}
