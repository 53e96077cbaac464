//! Cleaning of server-supplied text before anything else reads it.
//!
//! Everything a server sends is untrusted: instructions, tool names and
//! descriptions, `serverInfo`. The rules are listed in the crate docs under
//! "Sanitizing"; this module is the only place that implements them.

use icu_properties::props::{
    DefaultIgnorableCodePoint, GeneralCategory, VariationSelector as VariationSelectorProperty,
};
use icu_properties::{CodePointMapData, CodePointSetData};
use serde::Serialize;

/// Longest server or tool name kept, in characters.
pub(crate) const MAX_LINE_CHARS: usize = 100;

/// Hidden characters removed from one server's text, by kind.
///
/// Counted over what the section can show: instructions, server and tool
/// names and titles, and tool descriptions when they are shown. In the JSON
/// report as `hidden_characters`, zero kinds left out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[non_exhaustive]
pub struct HiddenChars {
    /// C0 and C1 control characters (not tab or newline) and DEL.
    #[serde(skip_serializing_if = "is_zero")]
    pub control: usize,
    /// Format characters (`Cf`): bidi controls, zero-width characters and
    /// joiners, word joiners, tags, the soft hyphen, annotation characters.
    #[serde(skip_serializing_if = "is_zero")]
    pub format: usize,
    /// Variation selectors (U+FE00–U+FE0F, U+E0100–U+E01EF, the Mongolian ones).
    #[serde(skip_serializing_if = "is_zero")]
    pub variation_selector: usize,
    /// Private-use characters (`Co`).
    #[serde(skip_serializing_if = "is_zero")]
    pub private_use: usize,
    /// Unassigned code points and noncharacters (`Cn`).
    #[serde(skip_serializing_if = "is_zero")]
    pub unassigned: usize,
    /// Other default-ignorable or blank-looking characters: Hangul fillers,
    /// U+034F, U+2800 and the rest of `Default_Ignorable_Code_Point`.
    #[serde(skip_serializing_if = "is_zero")]
    pub invisible: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl HiddenChars {
    /// How many were removed in all.
    pub fn total(&self) -> usize {
        self.control
            + self.format
            + self.variation_selector
            + self.private_use
            + self.unassigned
            + self.invisible
    }

    /// Whether none were removed.
    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }

    /// Adds the counts of `other`.
    pub(crate) fn add(&mut self, other: HiddenChars) {
        self.control += other.control;
        self.format += other.format;
        self.variation_selector += other.variation_selector;
        self.private_use += other.private_use;
        self.unassigned += other.unassigned;
        self.invisible += other.invisible;
    }

    pub(crate) fn tally(&mut self, kind: Hidden) {
        *match kind {
            Hidden::Control => &mut self.control,
            Hidden::Format => &mut self.format,
            Hidden::VariationSelector => &mut self.variation_selector,
            Hidden::PrivateUse => &mut self.private_use,
            Hidden::Unassigned => &mut self.unassigned,
            Hidden::Invisible => &mut self.invisible,
        } += 1;
    }
}

/// `3 format, 127 variation selector`: the kinds present, in field order.
impl std::fmt::Display for HiddenChars {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kinds = [
            (self.control, "control"),
            (self.format, "format"),
            (self.variation_selector, "variation selector"),
            (self.private_use, "private use"),
            (self.unassigned, "unassigned"),
            (self.invisible, "invisible"),
        ];
        let mut first = true;
        for (n, kind) in kinds.into_iter().filter(|(n, _)| *n > 0) {
            if !first {
                f.write_str(", ")?;
            }
            write!(f, "{n} {kind}")?;
            first = false;
        }
        Ok(())
    }
}

/// The kind of a character sanitizing removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hidden {
    Control,
    Format,
    VariationSelector,
    PrivateUse,
    Unassigned,
    Invisible,
}

/// Why `c` is dropped from server text, or `None` when it stays.
///
/// By Unicode properties, not a list: every `Cc` but tab and newline, every
/// `Cf`, `Co`, `Cn` (unassigned code points and noncharacters) and `Cs`,
/// every variation selector, the rest of `Default_Ignorable_Code_Point`, and
/// U+2800 (blank in every font, but a symbol to Unicode). CR, U+2028 and
/// U+2029 are line breaks, handled before this.
pub(crate) fn hidden(c: char) -> Option<Hidden> {
    if c.is_ascii() {
        return (c.is_ascii_control() && c != '\n' && c != '\t').then_some(Hidden::Control);
    }
    if CodePointSetData::new::<VariationSelectorProperty>().contains(c) {
        return Some(Hidden::VariationSelector);
    }
    match CodePointMapData::<GeneralCategory>::new().get(c) {
        GeneralCategory::Control => return Some(Hidden::Control),
        GeneralCategory::Format => return Some(Hidden::Format),
        GeneralCategory::PrivateUse => return Some(Hidden::PrivateUse),
        GeneralCategory::Unassigned | GeneralCategory::Surrogate => {
            return Some(Hidden::Unassigned);
        }
        _ => {}
    }
    (CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c) || c == '\u{2800}')
        .then_some(Hidden::Invisible)
}

/// A space separator (`Zs`) other than U+0020: U+00A0, U+1680,
/// U+2000–U+200A, U+202F, U+205F, U+3000. They look like a space but are
/// not one to every renderer (cmark-gfm ends a URL only at an ASCII space)
/// nor to every reader, so they become a plain space. U+00A0 too: a
/// no-break space keeps a line together, which matters in typography, not
/// in a model's context.
fn is_unicode_space(c: char) -> bool {
    // The only ASCII space separator is U+0020: no property lookup for ASCII.
    !c.is_ascii()
        && CodePointMapData::<GeneralCategory>::new().get(c) == GeneralCategory::SpaceSeparator
}

fn is_dropped(c: char) -> bool {
    hidden(c).is_some()
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
    text_counting(raw, &mut HiddenChars::default())
}

/// [`text`], counting what it drops into `hidden`.
pub(crate) fn text_counting(raw: &str, removed: &mut HiddenChars) -> String {
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
            c if is_unicode_space(c) => cleaned.push(' '),
            c => match hidden(c) {
                Some(kind) => removed.tally(kind),
                None => cleaned.push(c),
            },
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
    line_counting(raw, &mut HiddenChars::default())
}

/// [`line`], counting what it drops into `removed`.
pub(crate) fn line_counting(raw: &str, removed: &mut HiddenChars) -> String {
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
    let cleaned = text_counting(raw, removed);
    let mut out = String::with_capacity(cleaned.len());
    for (n, word) in cleaned.split_whitespace().enumerate() {
        if n > 0 {
            out.push(' ');
        }
        out.push_str(word);
    }
    crate::text::cut_chars(&out, MAX_LINE_CHARS)
}

/// Whether a JSON string changes at `c`: what sanitizing drops, but a
/// carriage return (a line break, and JSON shows it escaped), and the
/// Unicode line and paragraph separators (line breaks JSON shows raw:
/// they become `\n`, as in text).
fn dropped_in_json(c: char) -> bool {
    (c != '\r' && is_dropped(c)) || matches!(c, '\u{2028}' | '\u{2029}')
}

/// `raw` with the characters sanitizing drops removed, U+2028 and U+2029
/// as `\n`, and nothing else changed (no other line or whitespace rule: a
/// schema's `default`, `enum` or `pattern` keeps its meaning, carriage
/// returns too); borrowed when there are none.
fn stripped<'a>(raw: &'a str, removed: &mut HiddenChars) -> std::borrow::Cow<'a, str> {
    if !raw.chars().any(dropped_in_json) {
        return std::borrow::Cow::Borrowed(raw);
    }
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        match hidden(c).filter(|_| c != '\r') {
            Some(kind) => removed.tally(kind),
            None if matches!(c, '\u{2028}' | '\u{2029}') => out.push('\n'),
            None => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A JSON value from a server (a tool's `inputSchema`) with the characters
/// sanitizing drops removed from every string in it, object keys included
/// (descriptions, titles, defaults, enums, examples, property names), and
/// nothing else changed; `None` when it holds none, so a clean schema is
/// served byte for byte. A key that strips to one sent clean (or to an
/// earlier stripped one) is left out. Walks without recursion, so any depth is safe.
pub(crate) fn json_counting(
    value: &serde_json::Value,
    removed: &mut HiddenChars,
) -> Option<serde_json::Value> {
    use serde_json::Value;
    let mut stack = vec![value];
    let mut dirty = false;
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => dirty |= s.chars().any(dropped_in_json),
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => {
                dirty |= map.keys().any(|k| k.chars().any(dropped_in_json));
                stack.extend(map.values());
            }
            _ => {}
        }
        if dirty {
            break;
        }
    }
    if !dirty {
        return None;
    }
    let mut out = value.clone();
    let mut stack = vec![&mut out];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => {
                if let std::borrow::Cow::Owned(clean) = stripped(s, removed) {
                    *s = clean;
                }
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => {
                if map.keys().any(|k| k.chars().any(dropped_in_json)) {
                    // Clean keys first: a key cannot take over one sent clean.
                    let (dirty, mut clean): (serde_json::Map<_, _>, _) = std::mem::take(map)
                        .into_iter()
                        .partition(|(k, _)| k.chars().any(dropped_in_json));
                    for (k, item) in dirty {
                        let k = stripped(&k, removed).into_owned();
                        clean.entry(k).or_insert(item);
                    }
                    *map = clean;
                }
                stack.extend(map.values_mut());
            }
            _ => {}
        }
    }
    Some(out)
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
    fn unicode_spaces_become_plain_spaces() {
        let raw = "a\u{a0}b\u{1680}c\u{2000}d\u{200a}e\u{202f}f\u{205f}g\u{3000}h";
        assert_eq!(text(raw), "a b c d e f g h");
        assert_eq!(line(raw), "a b c d e f g h");
        assert_eq!(text("x\u{2003}\u{2003}y\u{3000}"), "x  y");
        // Not space separators: kept.
        assert_eq!(text("a\u{2028}b"), "a\nb");
        assert_eq!(text("a\tb"), "a\tb");
    }

    #[test]
    fn names_become_one_line() {
        assert_eq!(line("evil\n## name \"x\"\r\n"), "evil ## name \"x\"");
        let long = "n".repeat(300);
        let cut = line(&long);
        assert_eq!(cut.chars().count(), MAX_LINE_CHARS);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn json_strings_and_keys_lose_hidden_characters_and_nothing_else() {
        use serde_json::json;
        let clean = json!({"type": "object", "properties": {"a b": {"default": "  x\r\n"}}});
        assert_eq!(json_counting(&clean, &mut HiddenChars::default()), None);
        let raw = json!({
            "type": "object",
            "properties": {
                "p\u{e0041}": {"description": "find\u{202e} it", "default": " d\u{200b} ",
                                 "enum": ["a\u{2066}", 1, null], "examples": [{"t": "\u{1b}[2Kx"}]},
                "q\u{200b}": {"type": "number"},
                "q": {"type": "string"},
            },
            "required": ["p\u{e0041}"],
        });
        let mut removed = HiddenChars::default();
        let out = json_counting(&raw, &mut removed).unwrap();
        let text = out.to_string();
        assert!(!text.chars().any(|c| hidden(c).is_some()), "{text}");
        let p = &out["properties"]["p"];
        assert_eq!(p["description"], "find it");
        assert_eq!(p["default"], " d ");
        assert_eq!(p["enum"], json!(["a", 1, null]));
        assert_eq!(p["examples"][0]["t"], "[2Kx");
        assert_eq!(out["properties"]["q"], json!({"type": "string"}));
        assert_eq!(out["required"], json!(["p"]));
        assert_eq!(out["properties"].as_object().unwrap().len(), 2);
        assert_eq!(removed.total(), 7);
    }

    #[test]
    fn json_line_separators_become_line_feeds() {
        // Found by the serve_upstream fuzz target: serde_json writes
        // U+2028 raw, so it reached the host inside a served schema.
        use serde_json::json;
        let raw = json!({"properties": {"m": {"description": "a\u{2028}b\u{2029}c\r\nd"}}});
        let out = json_counting(&raw, &mut HiddenChars::default()).unwrap();
        assert_eq!(out["properties"]["m"]["description"], "a\nb\nc\r\nd");
    }
}
