//! One reading of Rust source for both scans of `src/` (`layers.rs`,
//! `hosts.rs`): what is code, what is a string, what is a comment. Not a
//! full lexer: enough for the crate's own sources, which rustfmt keeps tidy.

/// A source file taken apart.
pub struct Lexed {
    /// The code without comments, `#[cfg(test)]` items and string contents
    /// (each string left as `""` around its line breaks); every line break
    /// stays, so lines keep their numbers.
    pub code: String,
    /// Each string literal's contents, as written (escapes not decoded).
    pub strings: Vec<String>,
    /// Each `///` line's text (the binary's help comes from them).
    pub docs: Vec<String>,
}

pub fn lex(text: &str) -> Lexed {
    let mut out = Lexed {
        code: String::with_capacity(text.len()),
        strings: Vec::new(),
        docs: Vec::new(),
    };
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            if let Some(doc) = rest[..end].strip_prefix("///") {
                out.docs.push(doc.to_owned());
            }
            i += end;
        } else if rest.starts_with("/*") {
            let end = rest.find("*/").map_or(rest.len(), |e| e + 2);
            out.code.push_str(&newlines(&rest[..end]));
            i += end;
        } else if let Some(raw) = rest.strip_prefix("r#\"") {
            let end = raw.find("\"#").unwrap_or(raw.len());
            string(&mut out, &raw[..end]);
            i += (3 + end + 2).min(rest.len());
        } else if rest.starts_with("r\"") && !ident_before(&text[..i]) {
            let end = rest[2..].find('"').unwrap_or(rest.len() - 2);
            string(&mut out, &rest[2..2 + end]);
            i += (2 + end + 1).min(rest.len());
        } else if b[i] == b'\'' && rest[1..].starts_with('\\') {
            // A char literal with an escape: '\n', '\'', '\u{..}'.
            i += 2 + rest[2..].find('\'').map_or(rest.len() - 2, |e| e + 1);
        } else if b[i] == b'\'' && rest[1..].chars().nth(1) == Some('\'') {
            i += 2 + rest[1..].chars().next().unwrap().len_utf8();
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            string(&mut out, &text[i + 1..j.min(b.len())]);
            i = (j + 1).min(b.len());
        } else if rest.starts_with("#[cfg(test)]") {
            let end = item_end(b, i + "#[cfg(test)]".len());
            out.code.push_str(&newlines(&text[i..end]));
            i = end;
        } else {
            let ch = rest.chars().next().unwrap();
            out.code.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// Keeps a string's contents apart and its place in the code.
fn string(out: &mut Lexed, contents: &str) {
    out.strings.push(contents.to_owned());
    out.code.push('"');
    out.code.push_str(&newlines(contents));
    out.code.push('"');
}

/// Where the item starting at `from` ends: after its matching brace, or
/// after its `;` when it has no body.
fn item_end(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < b.len() {
        match b[i] {
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            b';' if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// The line breaks of `skipped`, to keep in place of it.
fn newlines(skipped: &str) -> String {
    "\n".repeat(skipped.matches('\n').count())
}

/// Whether `before` ends in a letter, digit or `_`.
pub fn ident_before(before: &str) -> bool {
    before
        .chars()
        .next_back()
        .is_some_and(|c| c.is_alphanumeric() || c == '_')
}

#[test]
fn code_strings_and_docs_come_apart_and_lines_stay() {
    let text = "/// Help for `codex`.\nfn f() -> &'static str {\n    let c = '\"';\n    \
                // \"not a string\"\n    /* a\n block */ g(r\"raw\\\", \"two\nlines\", r#\"x\"#)\n}\n\
                #[cfg(test)]\nmod tests { const N: usize = 4000; }\nconst L: char = '\\n';\n";
    let lexed = lex(text);
    assert_eq!(lexed.docs, [" Help for `codex`."]);
    assert_eq!(lexed.strings, ["raw\\", "two\nlines", "x"]);
    assert_eq!(
        lexed.code,
        "\nfn f() -> &'static str {\n    let c = ;\n    \n    \n g(\"\", \"\n\", \"\")\n}\n\
         \n\nconst L: char = ;\n"
    );
    assert_eq!(lexed.code.lines().count(), text.lines().count());
    assert!(!lexed.code.contains("4000") && !lexed.code.contains("not a string"));
}
