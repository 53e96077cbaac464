//! Look-alike tool names (MCP018): a word in the instructions, a tool name
//! or a word of a tool description that is not a tool's name but reads as
//! one, because letters of another script stand in for Latin ones
//! (`dеlete_invoice` with a Cyrillic `е` next to the real `delete_invoice`).
//!
//! Words are compared by a confusable skeleton: each letter that looks like
//! a Latin letter (Cyrillic, Greek, Armenian, dotless `ı`, fullwidth forms)
//! is replaced by that letter. Linear in the text and the tool list: one
//! skeleton per word, looked up in a map of the tools' skeletons, and the
//! instructions' units (sorted by offset) are searched by bisection.

use std::collections::{BTreeSet, HashMap};

use crate::lint::LintCode;
use crate::lint::pass::Pass;
use crate::sanitize;
use crate::segment::{self, Unit};
use crate::support::lookalike::lookalike;

impl<'a> Pass<'a> {
    /// MCP018 over the instructions, the tool names and the tool descriptions.
    pub(super) fn confusable_names(&mut self, instructions: Option<&str>) {
        let server = self.server;
        let mut by_skeleton: HashMap<String, &'a str> = HashMap::new();
        for t in &server.tools {
            // A name without look-alike letters is the one a look-alike imitates.
            if !t.name.chars().any(|c| lookalike(c).is_some()) {
                by_skeleton.entry(skeleton(&t.name)).or_insert(&t.name);
            }
        }
        if by_skeleton.is_empty() {
            return;
        }
        let real: BTreeSet<&str> = server.tools.iter().map(|t| t.name.as_str()).collect();
        // Tool names that imitate another tool's.
        for t in &server.tools {
            let no_tools = BTreeSet::new();
            if let Some(target) = imitated(&t.name, &by_skeleton, &no_tools) {
                self.push_tool(
                    LintCode::ConfusableToolName,
                    LintCode::ConfusableToolName.default_severity(),
                    format!(
                        "tool `{}` looks like tool `{target}` but is another name: {}",
                        t.name,
                        foreign_letters(&t.name)
                    ),
                    &t.name,
                    None,
                    fix(&t.name, target),
                );
            }
        }
        self.confusable_description_words(&by_skeleton, &real);
        if let Some(text) = instructions {
            self.confusable_instruction_words(text, &by_skeleton, &real);
        }
    }

    /// MCP018 over the words of the tool descriptions.
    fn confusable_description_words(
        &mut self,
        by_skeleton: &HashMap<String, &'a str>,
        real: &BTreeSet<&str>,
    ) {
        let server = self.server;
        for t in &server.tools {
            let Some(d) = t.description.as_deref() else {
                continue;
            };
            let d = sanitize::text(d);
            let mut said = BTreeSet::new();
            for w in words(&d) {
                if let Some(target) = imitated(w, by_skeleton, real)
                    && said.insert(w)
                {
                    self.push_tool(
                        LintCode::ConfusableToolName,
                        LintCode::ConfusableToolName.default_severity(),
                        format!(
                            "description of tool `{}` mentions `{w}`, which looks like tool `{target}` but is another name: {}",
                            t.name,
                            foreign_letters(w)
                        ),
                        &t.name,
                        None,
                        fix(w, target),
                    );
                }
            }
        }
    }

    /// MCP018 over the words of the instructions, each at its unit.
    fn confusable_instruction_words(
        &mut self,
        text: &str,
        by_skeleton: &HashMap<String, &'a str>,
        real: &BTreeSet<&str>,
    ) {
        let mut said = BTreeSet::new();
        let mut units: Option<Vec<Unit>> = None;
        for w in words(text) {
            if let Some(target) = imitated(w, by_skeleton, real)
                && said.insert(w)
            {
                // `w` is a slice of `text`: its offset finds its unit.
                let at = w.as_ptr() as usize - text.as_ptr() as usize;
                let units = units.get_or_insert_with(|| segment::units(text));
                let i = units.partition_point(|u| u.end <= at);
                let unit = units.get(i).filter(|u| u.start <= at);
                self.push(
                    LintCode::ConfusableToolName,
                    format!(
                        "instructions mention `{w}`, which looks like tool `{target}` but is another name: {}",
                        foreign_letters(w)
                    ),
                    unit.map(|u| (text, u.text(text), u)),
                    None,
                    fix(w, target),
                );
            }
        }
    }
}

fn fix(word: &str, target: &str) -> String {
    format!(
        "Write `{target}` in plain Latin letters where `{word}` stands; letters of another script that look Latin are a homoglyph attack or a copy-paste accident."
    )
}

/// The tool `word` imitates: not a tool's name itself, with look-alike
/// letters, and the skeleton of a tool's name.
fn imitated<'t>(
    word: &str,
    by_skeleton: &HashMap<String, &'t str>,
    real: &BTreeSet<&str>,
) -> Option<&'t str> {
    if real.contains(word) || !word.chars().any(|c| lookalike(c).is_some()) {
        return None;
    }
    by_skeleton.get(&skeleton(word)).copied()
}

/// Identifier-like words: letters, digits, `_`, `-`, `.` (not at the end).
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.')))
        .map(|w| w.trim_matches(['.', '-']))
        .filter(|w| !w.is_empty())
}

/// `е U+0435 (Cyrillic)`, for each look-alike letter.
fn foreign_letters(word: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    for c in word.chars() {
        if let Some((_, script)) = lookalike(c) {
            let s = format!("`{c}` U+{:04X} ({script})", c as u32);
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
    out.join(", ")
}

/// The word with each look-alike letter replaced by the Latin one.
fn skeleton(word: &str) -> String {
    word.chars()
        .map(|c| lookalike(c).map_or(c, |(l, _)| l))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skeletons_fold_lookalikes_only() {
        assert_eq!(skeleton("dеlete_invoice"), "delete_invoice");
        assert_eq!(skeleton("ｇet_іnvоice"), "get_invoice");
        assert_eq!(skeleton("delete_invoice"), "delete_invoice");
        // Letters that look like no Latin letter stay.
        assert_eq!(skeleton("удалить"), "yдaлить");
        assert_eq!(foreign_letters("dеlete"), "`е` U+0435 (Cyrillic)");
    }
}
