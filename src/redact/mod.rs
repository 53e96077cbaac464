//! Redaction of what a program prints: secret-shaped values (the lint's
//! detectors, see `MCP005`) and the query strings of URLs.
//!
//! The `mcp-preamble` binary passes everything it prints through these
//! functions: [`printed`] for errors, connection rows, URLs and stderr
//! tails (text that may quote a config's URL or a server's environment),
//! [`secrets`] for server text shown for review (the section, findings),
//! whose URLs are part of what is reviewed. Hosts that print connection
//! errors or stderr tails can do the same.
//!
//! Both are idempotent and deterministic; neither touches text without a
//! secret or a query string (they return it borrowed).
//!
//! ```
//! use mcp_preamble::redact;
//!
//! let err = "error sending request for url (https://api.example/mcp?key=abc&v=2)";
//! assert_eq!(
//!     redact::printed(err),
//!     "error sending request for url (https://api.example/mcp?key=[redacted]&v=[redacted])"
//! );
//! let key = ["sk-proj-", "9fK2mQ7xLp4Rt8Zb3Nc6Vd1Wy5Hs0Ja2"].concat();
//! assert_eq!(
//!     redact::secrets(&format!("token={key}")),
//!     "token=[redacted: sk-p…, 40 characters]"
//! );
//! ```

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

pub(crate) mod scan;

/// What replaces a query value.
const MASK: &str = "[redacted]";

/// `text` with every secret-shaped value replaced by its redacted form in
/// brackets (`[redacted: sk-p…, 40 characters]`): private keys, cloud and
/// platform tokens, JWTs, passwords in URLs, labelled credentials
/// (`api_key=…`). URLs otherwise stay as they are.
pub fn secrets(text: &str) -> Cow<'_, str> {
    let found = scan::find_secrets(text);
    if found.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for s in found {
        if s.start < at {
            continue;
        }
        out.push_str(&text[at..s.start]);
        out.push_str("[redacted: ");
        out.push_str(&s.redacted);
        out.push(']');
        at = s.end;
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}

/// `text` with the value of every query parameter of every URL replaced by
/// `[redacted]` (`https://api.example/mcp?key=[redacted]`; a parameter
/// without `=` is replaced whole), and the URL's fragment too. Names stay,
/// so a reader still sees which parameters were sent.
pub fn query_strings(text: &str) -> Cow<'_, str> {
    // A scheme, then up to the query: no whitespace, quote or bracket that
    // ends a URL in prose, JSON or a Rust error's `(url)`.
    static URL_QUERY: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"[A-Za-z][A-Za-z0-9+.\-]*://[^\s?#"'<>`()\[\]{}]*([?#][^\s"'<>`()]*)"#)
            .expect("static regex")
    });
    let mut out = String::new();
    let mut at = 0;
    for caps in URL_QUERY.captures_iter(text) {
        let Some(tail) = caps.get(1) else { continue };
        let masked = mask_tail(tail.as_str());
        if masked == tail.as_str() {
            continue;
        }
        out.push_str(&text[at..tail.start()]);
        out.push_str(&masked);
        at = tail.end();
    }
    if at == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}

/// `?a=1&b#frag` as `?a=[redacted]&[redacted]#[redacted]`.
fn mask_tail(tail: &str) -> String {
    let (query, fragment) = match tail.find('#') {
        Some(i) => (&tail[..i], Some(&tail[i + 1..])),
        None => (tail, None),
    };
    let mut out = String::with_capacity(tail.len());
    if let Some(q) = query.strip_prefix('?') {
        out.push('?');
        for (i, pair) in q.split('&').enumerate() {
            if i > 0 {
                out.push('&');
            }
            match pair.split_once('=') {
                Some((name, value)) if !value.is_empty() => {
                    out.push_str(name);
                    out.push('=');
                    out.push_str(MASK);
                }
                Some(_) => out.push_str(pair),
                None if pair.is_empty() || pair == MASK => out.push_str(pair),
                None => out.push_str(MASK),
            }
        }
    }
    if let Some(f) = fragment {
        out.push('#');
        if !f.is_empty() {
            out.push_str(MASK);
        }
    }
    out
}

/// `text` as a program should print it when it is not server text under
/// review (an error, a connection row, a URL, a stderr tail): query strings
/// redacted ([`query_strings`]), then secret-shaped values ([`secrets`]).
pub fn printed(text: &str) -> Cow<'_, str> {
    match query_strings(text) {
        Cow::Borrowed(t) => secrets(t),
        Cow::Owned(t) => Cow::Owned(secrets(&t).into_owned()),
    }
}

/// Every string of a JSON value, object keys included, passed through
/// `redact` ([`secrets`], [`printed`]…): a report made safe to print before
/// it is serialized. Numbers, booleans and the order of keys are kept.
///
/// ```
/// use mcp_preamble::redact;
///
/// let key = ["sk-proj-", "9fK2mQ7xLp4Rt8Zb3Nc6Vd1Wy5Hs0Ja2"].concat();
/// let mut report = serde_json::json!({"url": "https://h/mcp?k=1", "seen": [key], "n": 2});
/// redact::json_strings(&mut report, redact::printed);
/// assert_eq!(report["url"], "https://h/mcp?k=[redacted]");
/// assert_eq!(report["seen"][0], "[redacted: sk-p…, 40 characters]");
/// assert_eq!(report["n"], 2);
/// ```
pub fn json_strings(value: &mut serde_json::Value, redact: impl Fn(&str) -> Cow<'_, str>) {
    walk(value, &redact);
}

fn walk(v: &mut serde_json::Value, f: &dyn Fn(&str) -> Cow<'_, str>) {
    use serde_json::Value;
    match v {
        Value::String(s) => {
            if let Cow::Owned(t) = f(s) {
                *s = t;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| walk(i, f)),
        Value::Object(map) => {
            *map = std::mem::take(map)
                .into_iter()
                .map(|(k, mut v)| {
                    walk(&mut v, f);
                    (f(&k).into_owned(), v)
                })
                .collect();
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_redacts_values_and_keys_everywhere() {
        let key = ["ghp_", "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"].concat();
        let mut v = serde_json::json!({
            "z": [{"deep": format!("token={key}")}, 1, null, true],
            (format!("token={key}")): "https://h/p?a=b",
            "a": "plain",
        });
        json_strings(&mut v, printed);
        let text = v.to_string();
        assert!(!text.contains(&key[4..12]), "{text}");
        assert_eq!(v["z"][0]["deep"], printed(&format!("token={key}")).as_ref());
        assert_eq!(v["z"][1], 1);
        assert_eq!(v["a"], "plain");
        let redacted_key = printed(&format!("token={key}")).into_owned();
        assert_eq!(v[&redacted_key], "https://h/p?a=[redacted]");
        // Keys keep their order (the map's own), and a second pass changes nothing.
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        let mut again = v.clone();
        json_strings(&mut again, printed);
        assert_eq!(again, v);
        assert_eq!(keys.len(), 3);
        // `secrets` leaves query strings alone.
        let mut url = serde_json::json!(["https://h/p?a=b"]);
        json_strings(&mut url, secrets);
        assert_eq!(url[0], "https://h/p?a=b");
    }

    #[test]
    fn query_values_are_masked_names_kept() {
        for (input, want) in [
            (
                "see https://a.example/mcp?key=abc&x=1 now",
                "see https://a.example/mcp?key=[redacted]&x=[redacted] now",
            ),
            (
                "(http://h:9/p?sk-abc#frag), again",
                "(http://h:9/p?[redacted]#[redacted]), again",
            ),
            ("\"wss://h/p?a=&b\"", "\"wss://h/p?a=&[redacted]\""),
            ("https://h/p?", "https://h/p?"),
            ("no url ?key=1", "no url ?key=1"),
            ("https://h/path only", "https://h/path only"),
        ] {
            assert_eq!(query_strings(input), want, "{input}");
            assert_eq!(query_strings(want), want, "{want}: not idempotent");
        }
        assert!(matches!(
            query_strings("https://h/p and more"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn printed_masks_both() {
        let key = ["ghp_", "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"].concat();
        let t = format!("url (https://h/p?k={key}) stderr: token={key}");
        let once = printed(&t);
        assert!(!once.contains(&key[4..12]), "{once}");
        assert!(once.starts_with("url (https://h/p?k=[redacted]) stderr: token=[redacted: "));
        assert_eq!(printed(&once), once);
        assert!(matches!(printed("nothing here"), Cow::Borrowed(_)));
    }
}
