//! Config files as people write them: VS Code's `mcp.json` is JSONC (`//`
//! and `/* */` comments, trailing commas), and editors leave a byte-order
//! mark or CRLF line ends. [`to_json`] makes such a text JSON by turning
//! each comment and trailing comma into spaces, so that a JSON parser's
//! error positions stay those of the file.

/// `text` as JSON: its leading byte-order mark dropped, comments and
/// trailing commas outside strings blanked (line ends kept). Anything
/// else, valid or not, is left for the JSON parser to judge.
pub(super) fn to_json(text: &str) -> String {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = text.as_bytes().to_vec();
    let mut i = 0;
    // The last comma not yet followed by anything but space or comments.
    let mut comma: Option<usize> = None;
    while i < out.len() {
        match (out[i], out.get(i + 1)) {
            (b'"', _) => {
                comma = None;
                i = string_end(&out, i);
                continue;
            }
            (b'/', Some(b'/')) => {
                let end = (i..out.len())
                    .find(|&j| out[j] == b'\n')
                    .unwrap_or(out.len());
                blank(&mut out[i..end]);
                i = end;
                continue;
            }
            (b'/', Some(b'*')) => {
                let end = (i + 2..out.len().saturating_sub(1))
                    .find(|&j| out[j] == b'*' && out[j + 1] == b'/')
                    .map_or(out.len(), |j| j + 2);
                blank(&mut out[i..end]);
                i = end;
                continue;
            }
            (b',', _) => comma = Some(i),
            (b'}' | b']', _) => {
                if let Some(at) = comma.take() {
                    out[at] = b' ';
                }
            }
            (b' ' | b'\t' | b'\r' | b'\n', _) => {}
            _ => comma = None,
        }
        i += 1;
    }
    // Only ASCII bytes and whole comments (every byte of them) were
    // replaced, so the text is still UTF-8.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// The index just past the string that opens at `start`.
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut j = start + 1;
    while j < bytes.len() {
        match bytes[j] {
            b'\\' => j += 2,
            b'"' => return j + 1,
            _ => j += 1,
        }
    }
    bytes.len()
}

/// Spaces in place of `bytes`, line ends kept.
fn blank(bytes: &mut [u8]) {
    for b in bytes.iter_mut().filter(|b| !matches!(b, b'\n' | b'\r')) {
        *b = b' ';
    }
}

#[cfg(test)]
mod tests {
    use super::to_json;

    #[test]
    fn comments_trailing_commas_and_a_bom_become_json() {
        let text = "\u{feff}{\r\n  // a server\r\n  \"servers\": {\"a\": {\"args\": [\"//x\", \"/*y*/\", \"a,]\",],}, /* b */},\r\n}";
        let json = to_json(text);
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(
            value["servers"]["a"]["args"],
            serde_json::json!(["//x", "/*y*/", "a,]"])
        );
        // Line ends stay where they were: the parser's line numbers are the file's.
        assert_eq!(json.matches("\r\n").count(), 3);
    }

    #[test]
    fn broken_text_stays_broken_for_the_parser_to_name() {
        for text in [
            "{\"a\": 1,, }",
            "{\"a\": \"open",
            "{ /* open",
            "[1,]]",
            "\"\\",
            "/",
        ] {
            let json = to_json(text);
            assert_eq!(json.len(), text.len(), "{text:?}");
            assert!(
                serde_json::from_str::<serde_json::Value>(&json).is_err(),
                "{text:?}"
            );
        }
        // Multi-byte text in a comment is blanked whole.
        let text = "1 // é😀";
        assert_eq!(to_json(text), format!("1{}", " ".repeat(text.len() - 1)));
    }
}
