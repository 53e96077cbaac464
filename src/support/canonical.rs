//! Canonical JSON: object keys sorted (byte order) at every depth and no
//! whitespace, whatever map type serde_json was built with. Lock-file pins
//! and discovery-cache keys hash these bytes, so they must never change.

use serde_json::Value;

/// Nesting written in full; deeper values are written as serde_json's own
/// compact text (which serde_json bounds when parsing), so a hostile schema
/// cannot overflow the stack here.
pub(crate) const MAX_DEPTH: usize = 64;

/// Appends the canonical JSON of `value` to `out`.
pub(crate) fn write(value: &Value, out: &mut Vec<u8>) {
    write_at(value, 0, out);
}

/// The canonical JSON of `value`.
// Only the discovery cache wants text; it needs `rmcp`.
#[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
pub(crate) fn to_string(value: &Value) -> String {
    let mut out = Vec::new();
    write(value, &mut out);
    // serde_json writes UTF-8, and so does everything above.
    String::from_utf8(out).unwrap_or_default()
}

fn write_at(v: &Value, depth: usize, out: &mut Vec<u8>) {
    match v {
        Value::Object(map) if depth < MAX_DEPTH => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push(b'{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_compact(&Value::String(k.clone()), out);
                out.push(b':');
                write_at(&map[k], depth + 1, out);
            }
            out.push(b'}');
        }
        Value::Array(items) if depth < MAX_DEPTH => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_at(item, depth + 1, out);
            }
            out.push(b']');
        }
        other => write_compact(other, out),
    }
}

fn write_compact(v: &Value, out: &mut Vec<u8>) {
    // Writing a Value into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, v);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_sorted_at_every_depth() {
        let a = json!({"b": {"y": 1, "x": [true, null]}, "a": "s"});
        assert_eq!(to_string(&a), r#"{"a":"s","b":{"x":[true,null],"y":1}}"#);
        let mut out = b"prefix:".to_vec();
        write(&a, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"prefix:{"a":"s","b":{"x":[true,null],"y":1}}"#
        );
    }

    #[test]
    fn keys_sort_by_bytes_and_text_is_escaped() {
        let v = json!({"b": 1, "B": 2, "é": "q\"\n", "a b": [1.5, -2, "\u{1}"]});
        assert_eq!(
            to_string(&v),
            "{\"B\":2,\"a b\":[1.5,-2,\"\\u0001\"],\"b\":1,\"é\":\"q\\\"\\n\"}"
        );
    }

    #[test]
    fn nesting_past_the_cap_is_written_compact() {
        let mut v = json!({"b": 1, "a": 2});
        for _ in 0..MAX_DEPTH + 3 {
            v = json!([v]);
        }
        let text = to_string(&v);
        let open = MAX_DEPTH + 3;
        assert!(text.starts_with(&"[".repeat(open)));
        assert!(text.ends_with(&"]".repeat(open)));
        // The innermost object is serde_json's own text (key order is its map's).
        let inner = &text[open..text.len() - open];
        assert_eq!(
            inner,
            serde_json::to_string(&json!({"b": 1, "a": 2})).unwrap()
        );
    }
}
