//! Cleaning of server-supplied text before anything else reads it.
//!
//! Everything a server sends is untrusted: instructions, tool names and
//! descriptions, `serverInfo`. The rules are listed in the crate docs under
//! "Sanitizing"; this module is the only place that implements them.

/// Longest server or tool name kept, in characters.
pub(crate) const MAX_LINE_CHARS: usize = 100;

/// Whether `c` is dropped from server text.
fn is_dropped(c: char) -> bool {
    matches!(c,
        // C0 controls except tab and newline (CR is handled before), DEL, C1 controls.
        '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        // Bidi embeddings, overrides, isolates and marks.
        | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}'
        // Zero-width and invisible characters.
        | '\u{200b}'..='\u{200d}' | '\u{2060}'..='\u{2064}' | '\u{feff}'
        // Unicode tag characters (can smuggle invisible ASCII).
        | '\u{e0000}'..='\u{e007f}'
        // Noncharacters (not allowed in XML).
        | '\u{fdd0}'..='\u{fdef}'
    ) || (c as u32 & 0xfffe) == 0xfffe
}

/// Sanitizes a block of server text (instructions, descriptions).
///
/// CRLF, CR and the Unicode line/paragraph separators become LF; dropped
/// characters are removed; the common indentation is removed the way Python's
/// `inspect.cleandoc` does (first line stripped, the rest dedented by their
/// shared prefix); trailing whitespace is cut; runs of blank lines become one;
/// leading and trailing blank lines go. The result is empty exactly when the
/// input held nothing visible.
pub(crate) fn text(raw: &str) -> String {
    let mut cleaned = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                cleaned.push('\n');
            }
            '\u{2028}' | '\u{2029}' => cleaned.push('\n'),
            c if is_dropped(c) => {}
            c => cleaned.push(c),
        }
    }

    let lines: Vec<&str> = cleaned.split('\n').map(|l| l.trim_end()).collect();
    let indent = common_indent(lines.iter().skip(1).copied());

    let mut out = String::with_capacity(cleaned.len());
    let mut pending_blank = false;
    for (i, line) in lines.iter().enumerate() {
        let line = if i == 0 {
            line.trim_start_matches([' ', '\t'])
        } else if line.is_empty() {
            line
        } else {
            &line[indent.len()..]
        };
        if line.is_empty() {
            pending_blank = !out.is_empty();
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
            if pending_blank {
                out.push('\n');
            }
        }
        pending_blank = false;
        out.push_str(line);
    }
    out
}

/// The longest run of spaces and tabs that starts every non-blank line.
fn common_indent<'a>(lines: impl Iterator<Item = &'a str>) -> &'a str {
    let mut common: Option<&str> = None;
    for line in lines.filter(|l| !l.is_empty()) {
        let ws = &line[..line.len() - line.trim_start_matches([' ', '\t']).len()];
        common = Some(match common {
            None => ws,
            Some(c) => {
                let n = c
                    .bytes()
                    .zip(ws.bytes())
                    .take_while(|(a, b)| a == b)
                    .count();
                &c[..n]
            }
        });
    }
    common.unwrap_or("")
}

/// Sanitizes a name into one safe line: [`text`], then every run of
/// whitespace becomes one space, and the result is cut to
/// [`MAX_LINE_CHARS`] characters (with `…`).
pub(crate) fn line(raw: &str) -> String {
    // Most names are already one clean line: skip the work.
    let clean = raw.len() <= MAX_LINE_CHARS
        && !raw.starts_with(' ')
        && !raw.ends_with(' ')
        && !raw.contains("  ")
        && raw
            .chars()
            .all(|c| !is_dropped(c) && (c == ' ' || !c.is_whitespace()));
    if clean {
        return raw.to_string();
    }
    let cleaned = text(raw);
    let mut out = String::with_capacity(cleaned.len());
    for (n, word) in cleaned.split_whitespace().enumerate() {
        if n > 0 {
            out.push(' ');
        }
        out.push_str(word);
    }
    crate::text::cut_chars(&out, MAX_LINE_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newlines_are_normalized() {
        assert_eq!(text("a\r\nb\rc\u{2028}d"), "a\nb\nc\nd");
    }

    #[test]
    fn hidden_characters_are_removed() {
        let raw = "a\u{0}\u{7}b\u{1b}[31mc\u{85}d\u{202e}e\u{2066}f\u{200b}g\u{feff}h\u{e0041}\u{e0049}i\u{ffff}";
        assert_eq!(text(raw), "ab[31mcdefghi");
        assert_eq!(text("tab\tkept"), "tab\tkept");
    }

    #[test]
    fn python_indentation_is_removed() {
        let raw = "\n    # Title\n\n    Body line.\n      nested\n    ";
        assert_eq!(text(raw), "# Title\n\nBody line.\n  nested");
        let cleandoc = "First line.\n    second\n    third";
        assert_eq!(text(cleandoc), "First line.\nsecond\nthird");
    }

    #[test]
    fn mixed_indentation_keeps_what_is_not_shared() {
        assert_eq!(text("x\n\t a\n  b"), "x\n\t a\n  b");
    }

    #[test]
    fn blank_runs_collapse_and_trailing_space_goes() {
        assert_eq!(text("a  \n\n\n\n b\t\n\n"), "a\n\nb");
    }

    #[test]
    fn whitespace_and_invisible_only_is_empty() {
        for raw in [" ", "\n\t \u{3000}\u{a0}", "\u{200b}\u{feff}", "\r\n"] {
            assert_eq!(text(raw), "", "{raw:?}");
        }
    }

    #[test]
    fn names_become_one_line() {
        assert_eq!(line("evil\n## name \"x\"\r\n"), "evil ## name \"x\"");
        let long = "n".repeat(300);
        let cut = line(&long);
        assert_eq!(cut.chars().count(), MAX_LINE_CHARS);
        assert!(cut.ends_with('…'));
    }
}
