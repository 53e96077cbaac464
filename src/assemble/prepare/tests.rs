use super::tools::{SUMMARY_CHARS, summary};
use super::*;

#[test]
fn summaries_are_first_sentences_cut_at_a_word() {
    assert_eq!(
        summary("Search the web. Then more.").as_deref(),
        Some("Search the web.")
    );
    assert_eq!(
        summary("# Scrape\n\n- Scrape one URL.\n- More.").as_deref(),
        Some("Scrape one URL.")
    );
    assert_eq!(
        summary("## Only a heading").as_deref(),
        Some("Only a heading")
    );
    assert_eq!(summary("```\ncode\n```"), None);
    let long = "word ".repeat(40);
    let s = summary(&long).unwrap();
    assert!(s.chars().count() <= SUMMARY_CHARS, "{s}");
    assert!(s.ends_with("word…"), "{s}");
}

#[test]
fn repeated_tools_are_the_later_ones_of_each_name_in_order() {
    let mut s = ServerSnapshot::new("s");
    for name in ["a", "b", "a", "c", "b", "a"] {
        s.tools.push(crate::model::Tool::new(name, ""));
    }
    assert_eq!(repeated_tools(&s), vec![2, 4, 5]);
    s.tools.truncate(2);
    assert_eq!(repeated_tools(&s), Vec::<usize>::new());
    s.tools.truncate(0);
    assert_eq!(repeated_tools(&s), Vec::<usize>::new());
}
