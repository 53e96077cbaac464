//! A tool's input schema, measured once when it is made.
//!
//! Every assembly checks every schema against the [`Limits`](crate::Limits);
//! walking them all was half of a repeat assembly's time on a cache other
//! work had filled. A schema that cannot change is measured once, so the
//! check reads two numbers.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// A tool's `inputSchema`: a JSON value that cannot change once made, with
/// its size as compact JSON and its depth measured when it was made.
/// Clones share the value.
///
/// ```
/// use mcp_preamble::InputSchema;
/// use serde_json::json;
///
/// let schema = InputSchema::new(json!({"type": "object", "properties": {}}));
/// assert_eq!(schema.json_bytes(), r#"{"type":"object","properties":{}}"#.len());
/// assert_eq!(schema.depth(), 2);
/// assert_eq!(schema.as_value()["type"], "object");
/// ```
///
/// It serializes as the value alone, and [`Tool`](crate::Tool)'s
/// `inputSchema` reads into one.
#[derive(Clone)]
pub struct InputSchema(Arc<Measured>);

struct Measured {
    value: Value,
    bytes: usize,
    depth: usize,
}

impl InputSchema {
    /// Measures `value` (one walk, without recursion, so any depth is safe).
    pub fn new(value: Value) -> InputSchema {
        let (bytes, depth) = measure(&value);
        InputSchema(Arc::new(Measured {
            value,
            bytes,
            depth,
        }))
    }

    /// The schema as sent.
    pub fn as_value(&self) -> &Value {
        &self.0.value
    }

    /// The schema as sent, taken out (copied when a clone shares it).
    pub fn into_value(self) -> Value {
        match Arc::try_unwrap(self.0) {
            Ok(measured) => measured.value,
            Err(shared) => shared.value.clone(),
        }
    }

    /// Bytes of the schema as compact JSON (as `serde_json::to_string`
    /// writes it), saturating at `usize::MAX`.
    pub fn json_bytes(&self) -> usize {
        self.0.bytes
    }

    /// Levels of nested arrays and objects: 0 for a scalar, 1 for `{}`.
    pub fn depth(&self) -> usize {
        self.0.depth
    }
}

impl Default for InputSchema {
    /// `null`, as for a tool that sent no `inputSchema`.
    fn default() -> InputSchema {
        InputSchema::new(Value::Null)
    }
}

impl From<Value> for InputSchema {
    fn from(value: Value) -> InputSchema {
        InputSchema::new(value)
    }
}

impl From<InputSchema> for Value {
    fn from(schema: InputSchema) -> Value {
        schema.into_value()
    }
}

impl AsRef<Value> for InputSchema {
    fn as_ref(&self) -> &Value {
        self.as_value()
    }
}

impl PartialEq for InputSchema {
    fn eq(&self, other: &InputSchema) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.value == other.0.value
    }
}

impl Eq for InputSchema {}

impl PartialEq<Value> for InputSchema {
    fn eq(&self, other: &Value) -> bool {
        self.0.value == *other
    }
}

impl PartialEq<InputSchema> for Value {
    fn eq(&self, other: &InputSchema) -> bool {
        *self == other.0.value
    }
}

impl fmt::Debug for InputSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0.value, f)
    }
}

impl fmt::Display for InputSchema {
    /// Compact JSON.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0.value, f)
    }
}

impl Serialize for InputSchema {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.value.serialize(s)
    }
}

impl<'de> Deserialize<'de> for InputSchema {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<InputSchema, D::Error> {
        Value::deserialize(d).map(InputSchema::new)
    }
}

/// Bytes of `v` as compact JSON and its levels of containers, with an
/// explicit stack: a hostile schema must not cost recursion depth.
fn measure(v: &Value) -> (usize, usize) {
    let mut stack = vec![(v, 0usize)];
    let (mut bytes, mut depth) = (0usize, 0usize);
    while let Some((v, d)) = stack.pop() {
        let size = match v {
            Value::Null | Value::Bool(true) => 4,
            Value::Bool(false) => 5,
            Value::Number(x) => number_size(x),
            Value::String(s) => string_size(s),
            Value::Array(a) => {
                depth = depth.max(d + 1);
                stack.extend(a.iter().map(|c| (c, d + 1)));
                2 + a.len().saturating_sub(1)
            }
            Value::Object(o) => {
                depth = depth.max(d + 1);
                let mut n = 2 + o.len().saturating_sub(1);
                for (k, c) in o {
                    n = n.saturating_add(string_size(k) + 1);
                    stack.push((c, d + 1));
                }
                n
            }
        };
        bytes = bytes.saturating_add(size);
    }
    (bytes, depth)
}

/// Bytes of a JSON number as serde_json writes it.
fn number_size(x: &serde_json::Number) -> usize {
    if let Some(n) = x.as_u64() {
        return digits(n);
    }
    if let Some(n) = x.as_i64() {
        return 1 + digits(n.unsigned_abs());
    }
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut n = Count(0);
    // Writing into a counter cannot fail.
    let _ = serde_json::to_writer(&mut n, x);
    n.0
}

/// Decimal digits of `n`.
fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |l| l as usize + 1)
}

/// Bytes of a JSON string with its quotes: serde_json escapes `"`, `\`
/// and control characters (`\n`-style where there is one, else `\u00XX`),
/// nothing else.
fn string_size(s: &str) -> usize {
    // Most strings have nothing to escape: checked 16 bytes at a time,
    // which the compiler vectorizes.
    let special = |b: &u8| *b < 0x20 || *b == b'"' || *b == b'\\';
    let mut chunks = s.as_bytes().chunks_exact(16);
    let plain = chunks.all(|c| !c.iter().fold(false, |any, b| any | special(b)))
        && !chunks.remainder().iter().any(special);
    if plain {
        return s.len() + 2;
    }
    let extra: usize = s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 1,
            0..0x20 => 5,
            _ => 0,
        })
        .sum();
    s.len() + extra + 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Levels of containers, by recursion (the tests' values are shallow).
    fn depth_by_recursion(v: &Value) -> usize {
        match v {
            Value::Array(a) => 1 + a.iter().map(depth_by_recursion).max().unwrap_or(0),
            Value::Object(o) => 1 + o.values().map(depth_by_recursion).max().unwrap_or(0),
            _ => 0,
        }
    }

    /// Every `inputSchema` in the corpus's captures, as sent.
    fn corpus_schemas() -> Vec<Value> {
        fn collect(v: &Value, out: &mut Vec<Value>) {
            match v {
                Value::Object(o) => {
                    for (k, c) in o {
                        if k == "inputSchema" {
                            out.push(c.clone());
                        } else {
                            collect(c, out);
                        }
                    }
                }
                Value::Array(a) => a.iter().for_each(|c| collect(c, out)),
                _ => {}
            }
        }
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
        let mut schemas = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                let text = std::fs::read_to_string(&path).unwrap();
                collect(&serde_json::from_str(&text).unwrap(), &mut schemas);
            }
        }
        schemas
    }

    #[test]
    fn the_size_is_the_serialized_length_and_the_depth_the_nesting() {
        let mut values = vec![
            json!(null),
            json!("x"),
            json!([]),
            json!({}),
            json!([
                true,
                false,
                null,
                0,
                -12,
                3.5,
                1e300,
                18446744073709551615u64
            ]),
            json!({"a\"b\\c\n\r\t\u{8}\u{c}\u{1}\u{1f}\u{7f}": "é€😀\u{2028}</x>"}),
            json!({"type": "object", "properties": {"a": {"type": "array", "items": [1, [2, {}]]}}}),
            json!({"d": "\u{1}".repeat(40), "e": [[[{"f": 1.5}]]], "g": null}),
        ];
        let from_corpus = corpus_schemas();
        assert!(from_corpus.len() > 500, "{}", from_corpus.len());
        values.extend(from_corpus);
        for v in values {
            let (bytes, depth) = (
                serde_json::to_string(&v).unwrap().len(),
                depth_by_recursion(&v),
            );
            let schema = InputSchema::new(v);
            assert_eq!(schema.json_bytes(), bytes, "{schema}");
            assert_eq!(schema.depth(), depth, "{schema}");
        }
    }

    #[test]
    fn a_deep_schema_is_measured_without_recursion() {
        let mut v = json!(1);
        for _ in 0..100_000 {
            v = Value::Array(vec![v]);
        }
        let schema = InputSchema::new(v);
        assert_eq!(schema.depth(), 100_000);
        assert_eq!(schema.json_bytes(), 2 * 100_000 + 1);
        // serde_json drops a Value by recursion: unwind it by hand.
        let mut v = schema.into_value();
        while let Value::Array(mut a) = v {
            v = a.pop().unwrap_or(Value::Null);
        }
    }

    #[test]
    fn it_reads_and_writes_as_the_bare_value() {
        // Keys in the order serde_json keeps them (sorted).
        let text = r#"{"required":["id"],"type":"object"}"#;
        let schema: InputSchema = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&schema).unwrap(), text);
        assert_eq!(schema.to_string(), text);
        assert_eq!(format!("{schema:?}"), format!("{:?}", schema.as_value()));
        assert_eq!(schema, json!({"type": "object", "required": ["id"]}));
        assert_eq!(
            schema,
            InputSchema::from(json!({"required": ["id"], "type": "object"}))
        );
        assert_ne!(schema, InputSchema::default());
        assert_eq!(InputSchema::default(), Value::Null);
        assert_eq!(Value::Null, InputSchema::default());
        let shared = schema.clone();
        assert_eq!(Value::from(shared), *schema.as_value());
    }
}
