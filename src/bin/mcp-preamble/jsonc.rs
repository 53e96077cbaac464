//! A small JSONC reader for editing host configs in place: values with
//! their byte spans, so an edit splices text and leaves comments, key
//! order, whitespace and unknown keys as they were. JSON plus `//` and
//! `/* */` comments and trailing commas (VS Code's `mcp.json`).

use std::ops::Range;

/// A value and where it is in the text.
#[derive(Debug, Clone)]
pub struct Node {
    pub span: Range<usize>,
    pub kind: Kind,
}

#[derive(Debug, Clone)]
pub enum Kind {
    Object(Vec<Member>),
    Array(Vec<Node>),
    String(String),
    /// A number, `true`, `false` or `null`.
    Scalar,
}

#[derive(Debug, Clone)]
pub struct Member {
    pub key: String,
    /// The key's span, quotes included (an edit that replaces a member).
    pub key_span: Range<usize>,
    pub value: Node,
}

impl Node {
    /// The member `key` of an object (the last, as JSON parsers take it).
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.kind {
            Kind::Object(members) => members
                .iter()
                .rev()
                .find(|m| m.key == key)
                .map(|m| &m.value),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::String(s) => Some(s),
            _ => None,
        }
    }
}

/// The deepest nesting read (a config is a few levels deep).
const MAX_DEPTH: usize = 64;

/// Reads `text` as one JSONC value; the error names the line and column.
pub fn parse(text: &str) -> Result<Node, String> {
    let mut p = Parser { text, at: 0 };
    let node = p.value(0)?;
    p.skip()?;
    if p.at < text.len() {
        return Err(p.error("more after the end of the value"));
    }
    Ok(node)
}

struct Parser<'t> {
    text: &'t str,
    at: usize,
}

impl Parser<'_> {
    fn error(&self, what: &str) -> String {
        let before = &self.text[..self.at.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        format!("line {line}, column {column}: {what}")
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    /// Skips whitespace and comments.
    fn skip(&mut self) -> Result<(), String> {
        loop {
            let rest = &self.text[self.at..];
            let trimmed = rest.trim_start_matches([' ', '\t', '\n', '\r', '\u{feff}']);
            self.at += rest.len() - trimmed.len();
            if trimmed.starts_with("//") {
                self.at += trimmed.find('\n').unwrap_or(trimmed.len());
            } else if let Some(body) = trimmed.strip_prefix("/*") {
                let end = body
                    .find("*/")
                    .ok_or_else(|| self.error("a comment that never ends"))?;
                self.at += 2 + end + 2;
            } else {
                return Ok(());
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, String> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deep"));
        }
        self.skip()?;
        let start = self.at;
        let kind = match self.peek() {
            Some(b'{') => Kind::Object(self.object(depth)?),
            Some(b'[') => Kind::Array(self.array(depth)?),
            Some(b'"') => Kind::String(self.string()?),
            Some(b'-' | b'0'..=b'9' | b't' | b'f' | b'n') => self.scalar()?,
            Some(_) => return Err(self.error("expected a value")),
            None => return Err(self.error("the file ends where a value should be")),
        };
        Ok(Node {
            span: start..self.at,
            kind,
        })
    }

    fn scalar(&mut self) -> Result<Kind, String> {
        let rest = &self.text[self.at..];
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || "+-.".contains(c)))
            .unwrap_or(rest.len());
        serde_json::from_str::<serde_json::Value>(&rest[..len])
            .map_err(|_| self.error("expected a value"))?;
        self.at += len;
        Ok(Kind::Scalar)
    }

    fn string(&mut self) -> Result<String, String> {
        let bytes = self.text.as_bytes();
        let start = self.at;
        let mut i = start + 1;
        while i < bytes.len() {
            match bytes[i] {
                b'\\' => i += 2,
                b'"' => {
                    let literal = &self.text[start..=i];
                    let value = serde_json::from_str(literal)
                        .map_err(|e| self.error(&format!("a string does not read ({e})")))?;
                    self.at = i + 1;
                    return Ok(value);
                }
                _ => i += 1,
            }
        }
        Err(self.error("a string that never ends"))
    }

    /// Items separated by commas up to `close`, a trailing comma allowed.
    fn items(
        &mut self,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Result<(), String>,
    ) -> Result<(), String> {
        self.at += 1;
        loop {
            self.skip()?;
            if self.peek() == Some(close) {
                self.at += 1;
                return Ok(());
            }
            item(self)?;
            self.skip()?;
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(c) if c == close => {}
                _ => return Err(self.error(&format!("expected `,` or `{}`", close as char))),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Vec<Member>, String> {
        let mut members = Vec::new();
        self.items(b'}', |p| {
            if p.peek() != Some(b'"') {
                return Err(p.error("expected a key in double quotes"));
            }
            let key_start = p.at;
            let key = p.string()?;
            let key_span = key_start..p.at;
            p.skip()?;
            if p.peek() != Some(b':') {
                return Err(p.error("expected `:` after a key"));
            }
            p.at += 1;
            let value = p.value(depth + 1)?;
            members.push(Member {
                key,
                key_span,
                value,
            });
            Ok(())
        })?;
        Ok(members)
    }

    fn array(&mut self, depth: usize) -> Result<Vec<Node>, String> {
        let mut items = Vec::new();
        self.items(b']', |p| {
            items.push(p.value(depth + 1)?);
            Ok(())
        })?;
        Ok(items)
    }
}

/// `text` with each `(span, replacement)` spliced in (spans must not overlap).
pub fn splice(text: &str, mut edits: Vec<(Range<usize>, String)>) -> String {
    edits.sort_by_key(|(span, _)| std::cmp::Reverse(span.start));
    let mut out = text.to_string();
    for (span, with) in edits {
        out.replace_range(span, &with);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_trailing_commas_read_and_spans_point_at_values() {
        let text = "// c\n{\n  \"a\": [1, \"x\\\"y\", ], /* b */\n  \"b\": {\"c\": null,},\n}\n";
        let node = parse(text).unwrap();
        let a = node.get("a").unwrap();
        assert_eq!(&text[a.span.clone()], "[1, \"x\\\"y\", ]");
        let Kind::Array(items) = &a.kind else {
            panic!()
        };
        assert_eq!(items[1].as_str(), Some("x\"y"));
        assert_eq!(&text[node.get("b").unwrap().span.clone()], "{\"c\": null,}");
        let edited = splice(text, vec![(a.span.clone(), "[]".into())]);
        assert!(edited.starts_with("// c\n{\n  \"a\": [], /* b */"));
    }

    proptest::proptest! {
        /// Any text reads or is refused, never a panic; JSON reads as JSON.
        #[test]
        fn any_text_reads_or_is_refused(text in r#"[{}\[\]",:/*\\ \n\ta-z0-9éü😀-]{0,64}"#) {
            let _ = parse(&text);
            if let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) {
                let node = parse(&text).unwrap();
                let whole = &text[node.span.clone()];
                let again: serde_json::Value = serde_json::from_str(whole).unwrap();
                proptest::prop_assert_eq!(again, value);
            }
        }
    }

    #[test]
    fn malformed_text_is_an_error_with_its_place() {
        assert_eq!(
            parse("{\n  \"a\": 1\n  \"b\": 2}").unwrap_err(),
            "line 3, column 3: expected `,` or `}`"
        );
        assert_eq!(
            parse("{\"a\": /* x").unwrap_err(),
            "line 1, column 7: a comment that never ends"
        );
        assert_eq!(
            parse("[\"abc").unwrap_err(),
            "line 1, column 2: a string that never ends"
        );
        assert!(parse("{} x").unwrap_err().contains("more after the end"));
        assert!(
            parse(&"[".repeat(1000))
                .unwrap_err()
                .contains("nested too deep")
        );
        assert!(parse("").is_err());
        assert!(parse("\"\\").is_err());
    }
}
