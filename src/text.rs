//! Small text helpers shared by the renderers, the lint, the test kit and the
//! CLI. Sanitizing server text is [`crate::sanitize`]'s job, not this one's.

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
    fn xml_escaping() {
        assert_eq!(
            xml_text("</server><server name=\"x\">&"),
            "&lt;/server&gt;&lt;server name=\"x\"&gt;&amp;"
        );
        assert_eq!(xml_attr("a\"b'<c>"), "a&quot;b&apos;&lt;c&gt;");
    }
}
