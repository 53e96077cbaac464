//! Small text helpers shared by the renderers, the lint, the test kit and the
//! CLI. Sanitizing server text for the section happens during assembly;
//! [`terminal_safe`] only makes text safe to print, without removing anything.

use std::borrow::Cow;
use std::fmt::Write as _;

use icu_properties::CodePointMapData;
use icu_properties::props::GeneralCategory;

/// Untrusted text made safe to print to a terminal, for hosts that show
/// server-supplied strings (error messages, stderr, tool and server names)
/// to a person.
///
/// Every character a terminal could act on, or that could change what a
/// reader sees, is replaced by a visible escape, so nothing is silently
/// dropped: C0 controls other than newline and tab, and DEL, become
/// `\x1b`-style escapes; C1 controls (U+0080–U+009F, which some terminals
/// take as CSI or OSC) and format characters (Unicode `Cf`: bidi controls,
/// zero-width characters, the soft hyphen…) become `\u{202e}`-style escapes.
/// No escape sequence can start in the result. Text with none of these is
/// returned borrowed, byte for byte.
///
/// ```
/// use mcp_preamble::text::terminal_safe;
/// assert_eq!(terminal_safe("\x1b]0;pwned\x07ok"), "\\x1b]0;pwned\\x07ok");
/// assert_eq!(terminal_safe("abc\u{202e}fed"), "abc\\u{202e}fed");
/// assert!(matches!(terminal_safe("plain\ttext\n"), std::borrow::Cow::Borrowed(_)));
/// ```
pub fn terminal_safe(s: &str) -> Cow<'_, str> {
    let Some(first) = s.find(needs_escape) else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 8);
    out.push_str(&s[..first]);
    for c in s[first..].chars() {
        if !needs_escape(c) {
            out.push(c);
        } else if c.is_ascii() {
            let _ = write!(out, "\\x{:02x}", u32::from(c));
        } else {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
    }
    Cow::Owned(out)
}

/// JSON text with every character [`terminal_safe`] would escape written as
/// a `\uXXXX` escape instead, for JSON a person may print (reports, lock
/// files). serde_json escapes only C0 controls; DEL, C1
/// and `Cf` characters can only occur inside strings, so the JSON means the
/// same, and is byte-identical when there are none.
pub fn json_safe(json: &str) -> Cow<'_, str> {
    // Past C0 (escaped already): DEL and beyond, as terminal_safe judges them.
    let unsafe_char = |c: char| {
        let mut buf = [0u8; 4];
        c >= '\x7f' && matches!(terminal_safe(c.encode_utf8(&mut buf)), Cow::Owned(_))
    };
    let Some(first) = json.find(unsafe_char) else {
        return Cow::Borrowed(json);
    };
    let mut out = String::with_capacity(json.len() + 16);
    out.push_str(&json[..first]);
    for c in json[first..].chars() {
        if unsafe_char(c) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{u:04x}");
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A control character (`Cc`: C0, DEL, C1) other than newline and tab, or a
/// format character (`Cf`).
fn needs_escape(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_control() && c != '\n' && c != '\t';
    }
    c.is_control() || CodePointMapData::<GeneralCategory>::new().get(c) == GeneralCategory::Format
}

/// Line numbers of byte offsets in one text, without rescanning the text
/// for each offset.
pub(crate) struct Lines {
    newlines: Vec<usize>,
}

impl Lines {
    pub(crate) fn new(text: &str) -> Lines {
        Lines {
            newlines: text.match_indices('\n').map(|(i, _)| i).collect(),
        }
    }

    /// The 1-based line of byte `offset`.
    pub(crate) fn line(&self, offset: usize) -> usize {
        self.newlines.partition_point(|&n| n < offset) + 1
    }
}

/// Whitespace runs collapsed to one space, ends trimmed.
pub(crate) fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for (n, word) in s.split_whitespace().enumerate() {
        if n > 0 {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// `s` cut to at most `max` characters: the first `max - 1`, trailing
/// whitespace trimmed, then `…`. Unchanged when it is short enough.
pub(crate) fn cut_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let head: String = s.chars().take(max.saturating_sub(1)).collect();
    format!("{}…", head.trim_end())
}

/// XML character data: `&`, `<` and `>` escaped.
pub(crate) fn xml_text(s: &str) -> String {
    xml_escape(s, false)
}

/// An XML attribute value (either quote style): also `"` and `'` escaped.
pub(crate) fn xml_attr(s: &str) -> String {
    xml_escape(s, true)
}

fn xml_escape(s: &str, quotes: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if quotes => out.push_str("&quot;"),
            '\'' if quotes => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_offsets() {
        let text = "a\nbc\n\nd";
        let lines = Lines::new(text);
        for offset in 0..=text.len() {
            assert_eq!(lines.line(offset), text[..offset].matches('\n').count() + 1);
        }
    }

    #[test]
    fn json_safe_escapes_what_serde_json_leaves() {
        let value =
            serde_json::json!({"m": "\x1b]0;t\x07 \u{7f} \u{9b}2K \u{202e}x \u{e0041} ok é …"});
        let json = serde_json::to_string(&value).unwrap();
        let safe = json_safe(&json);
        assert_eq!(
            safe,
            r#"{"m":"\u001b]0;t\u0007 \u007f \u009b2K \u202ex \udb40\udc41 ok é …"}"#
        );
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn json_safe_borrows_ordinary_json() {
        let json = serde_json::to_string_pretty(
            &serde_json::json!({"a": ["wörds", "日本語", "🎉", "tab\tnewline\n"], "b": 1}),
        )
        .unwrap();
        assert!(matches!(json_safe(&json), Cow::Borrowed(s) if s == json));
    }

    #[test]
    fn one_line_collapses_whitespace() {
        assert_eq!(one_line("  a\n\tb   c \n"), "a b c");
        assert_eq!(one_line(""), "");
    }

    #[test]
    fn cut_chars_counts_characters() {
        assert_eq!(cut_chars("short", 5), "short");
        assert_eq!(cut_chars("wörds here", 6), "wörds…");
        assert_eq!(cut_chars("ab cd", 4), "ab…");
    }

    #[test]
    fn terminal_safe_escapes_what_a_terminal_acts_on() {
        // ESC sequences: erase line, window title (OSC 0), clipboard (OSC 52).
        assert_eq!(
            terminal_safe("\x1b[2K\x1b]0;title\x07\x1b]52;c;aGk=\x1b\\"),
            "\\x1b[2K\\x1b]0;title\\x07\\x1b]52;c;aGk=\\x1b\\"
        );
        assert_eq!(terminal_safe("a\rb\x00c\x7f"), "a\\x0db\\x00c\\x7f");
        // C1 controls: CSI, OSC, ST, NEL and both ends of the range.
        assert_eq!(
            terminal_safe("\u{9b}2K\u{9d}0;t\u{9c}\u{85}\u{80}\u{9f}"),
            "\\u{9b}2K\\u{9d}0;t\\u{9c}\\u{85}\\u{80}\\u{9f}"
        );
        // Cf: bidi overrides and isolates, zero-width, soft hyphen, BOM, tags.
        assert_eq!(
            terminal_safe("x\u{202e}y\u{2066}z\u{200b}\u{ad}\u{feff}\u{e0041}"),
            "x\\u{202e}y\\u{2066}z\\u{200b}\\u{ad}\\u{feff}\\u{e0041}"
        );
        assert!(!terminal_safe("\u{1b}\u{9b}\u{202e}").contains(['\u{1b}', '\u{9b}', '\u{202e}']));
    }

    #[test]
    fn terminal_safe_borrows_ordinary_text() {
        for s in [
            "",
            "plain",
            "tabs\tand\nnewlines\n",
            "wörds, 日本語, emoji 🎉, arrows → and ellipsis …",
            "backslash \\x1b stays as typed",
            "\u{a0}no-break space, \u{2028} separator",
        ] {
            assert!(
                matches!(terminal_safe(s), Cow::Borrowed(b) if b == s),
                "{s:?}"
            );
        }
    }

    #[test]
    fn xml_escaping() {
        assert_eq!(
            xml_text("</server><server name=\"x\">&"),
            "&lt;/server&gt;&lt;server name=\"x\"&gt;&amp;"
        );
        assert_eq!(xml_attr("a\"b'<c>"), "a&quot;b&apos;&lt;c&gt;");
    }
}
