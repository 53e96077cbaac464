//! Bounds on the work one server's data can cost the host.
//!
//! The library runs before every model request, so a hostile server's size
//! is the host's latency and memory. Past a limit the server is cut, with a
//! diagnostic naming the limit; the other servers are never touched.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::support::string_enum;

/// Bounds on one server's data, with defaults well above what real servers
/// send (the largest in `tests/corpus/`: 123 tools, about 4,000 characters
/// of instructions, 11 KB in one tool description).
///
/// ```
/// use mcp_preamble::{Assembler, Limits};
/// let assembler = Assembler::new().limits(Limits::default().tools(5_000));
/// # let _ = assembler;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Limits {
    pub(crate) instructions_bytes: usize,
    pub(crate) tools: usize,
    pub(crate) tool_description_bytes: usize,
    pub(crate) schema_depth: usize,
    pub(crate) schema_bytes: usize,
    pub(crate) dedup_units: usize,
    pub(crate) tool_pages: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            instructions_bytes: 64 * 1024,
            tools: 1_000,
            tool_description_bytes: 16 * 1024,
            schema_depth: 32,
            schema_bytes: 64 * 1024,
            dedup_units: 2_000,
            tool_pages: 100,
        }
    }
}

macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {
        impl Limits {
            $(
                $(#[$doc])*
                pub fn $name(mut self, n: usize) -> Limits {
                    self.$name = n;
                    self
                }
            )*
        }
    };
}

setters! {
    /// Bytes of instructions read (default 64 KiB); the rest is cut at a
    /// character boundary.
    instructions_bytes,
    /// Tools read per server (default 1,000); later ones are not listed.
    tools,
    /// Bytes of each tool description read (default 16 KiB).
    tool_description_bytes,
    /// Deepest input schema kept (default 32 levels); a deeper one is
    /// replaced by `{}`. Assembly never reads schemas; the lint and pins do.
    schema_depth,
    /// Largest input schema kept, in bytes of JSON (default 64 KiB).
    schema_bytes,
    /// Units (sentences, list items…) of instructions checked by
    /// de-duplication (default 2,000); later ones are kept as they are.
    dedup_units,
    /// `tools/list` pages read from a live server (default 100).
    tool_pages,
}

impl Limits {
    /// See [`Limits::tools`].
    pub fn max_tools(&self) -> usize {
        self.tools
    }

    /// See [`Limits::tool_pages`].
    pub fn max_tool_pages(&self) -> usize {
        self.tool_pages
    }

    /// See [`Limits::dedup_units`].
    /// Instructions cut to [`Limits::instructions_bytes`], at a character.
    pub(crate) fn cut_instructions<'s>(&self, text: &'s str) -> &'s str {
        prefix(text, self.instructions_bytes)
    }

    pub(crate) fn max_dedup_units(&self) -> usize {
        self.dedup_units
    }

    pub(crate) fn schema_fits(&self, schema: &serde_json::Value) -> bool {
        let (depth, bytes) = (self.schema_depth, self.schema_bytes);
        // Bounds first: they read no string's bytes, only lengths, and
        // decide all but schemas within a few times the limit. Reading
        // every string of every schema was a quarter of a cold assembly's
        // time and two thirds of a repeat's (cache misses, not instructions).
        if depth > RECURSION_DEPTH {
            // Past what the bounds walk recurses: the exact walk, with a
            // stack of its own, decides alone.
            return json_size_within(schema, depth, bytes).is_some();
        }
        match json_size_bounds(schema, depth, bytes) {
            None => false,
            Some((_, most)) if most <= bytes => true,
            Some((least, _)) if least > bytes => false,
            // Between the bounds: the exact size decides.
            Some(_) => json_size_within(schema, depth, bytes).is_some(),
        }
    }
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
pub(crate) fn prefix(s: &str, max: usize) -> &str {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Bytes of `v` as compact JSON.
pub(crate) fn json_size(v: &serde_json::Value) -> usize {
    json_size_within(v, usize::MAX, usize::MAX).unwrap_or(usize::MAX)
}

/// Bytes of `v` as compact JSON (as `serde_json::to_writer` writes it),
/// added up without writing it; `None` once a container lies `max_depth`
/// levels down or the bytes pass `max_bytes`. Serializing every schema
/// cost an assembly more than a tenth of its time.
fn json_size_within(v: &serde_json::Value, max_depth: usize, max_bytes: usize) -> Option<usize> {
    use serde_json::Value;
    // An explicit stack: a hostile schema must not cost recursion depth.
    let mut stack = vec![(v, 0usize)];
    let mut n = 0usize;
    while let Some((v, d)) = stack.pop() {
        let size = match v {
            Value::Null | Value::Bool(true) => 4,
            Value::Bool(false) => 5,
            Value::Number(x) => number_size(x),
            Value::String(s) => string_size(s),
            Value::Array(a) => {
                if d >= max_depth {
                    return None;
                }
                stack.extend(a.iter().map(|c| (c, d + 1)));
                2 + a.len().saturating_sub(1)
            }
            Value::Object(o) => {
                if d >= max_depth {
                    return None;
                }
                let mut keys = 2 + o.len().saturating_sub(1);
                for (k, c) in o {
                    keys = keys.saturating_add(string_size(k) + 1);
                    stack.push((c, d + 1));
                }
                keys
            }
        };
        n = n.saturating_add(size);
        if n > max_bytes {
            return None;
        }
    }
    Some(n)
}

/// Bounds on the bytes of `v` as compact JSON, from the lengths of its
/// strings (each between its bytes and six times that, plus quotes)
/// without reading them; `None` once a container lies `max_depth` levels
/// down (as [`json_size_within`]). The walk stops early, with the least
/// bound past `max_bytes`, when that alone decides. It recurses, so
/// `max_depth` is at most [`RECURSION_DEPTH`].
fn json_size_bounds(
    v: &serde_json::Value,
    max_depth: usize,
    max_bytes: usize,
) -> Option<(usize, usize)> {
    debug_assert!(max_depth <= RECURSION_DEPTH);
    let mut sum = (0, 0);
    match bounds_in_order(v, max_depth, max_bytes, &mut sum) {
        Err(Stop::Deep) => None,
        Ok(()) | Err(Stop::Over) => Some(sum),
    }
}

/// Deepest limit [`json_size_bounds`] walks by recursion (each level a
/// small frame); a deeper limit is checked by the exact walk alone.
const RECURSION_DEPTH: usize = 64;

/// Why [`bounds_in_order`] stopped early.
enum Stop {
    /// A container lies `max_depth` levels down.
    Deep,
    /// The least bound passed `max_bytes`.
    Over,
}

/// A string's bounds with its quotes: `\u00XX` is the longest escape, six
/// bytes for one.
fn string_bounds(len: usize) -> (usize, usize) {
    (len + 2, len.saturating_mul(6).saturating_add(2))
}

/// [`json_size_bounds`] by recursion, adding into `sum`: each value right
/// after its key, in the order the parser allocated them. On a cold cache
/// that was a fifth faster than a walk with a stack, which visits each
/// container's children last first (the schemas are megabytes of small
/// nodes, and this walk was the largest cost of a cold assembly).
fn bounds_in_order(
    v: &serde_json::Value,
    levels: usize,
    max_bytes: usize,
    sum: &mut (usize, usize),
) -> Result<(), Stop> {
    use serde_json::Value;
    let mut add = |(lo, hi): (usize, usize)| {
        sum.0 = sum.0.saturating_add(lo);
        sum.1 = sum.1.saturating_add(hi);
        if sum.0 > max_bytes {
            Err(Stop::Over)
        } else {
            Ok(())
        }
    };
    match v {
        Value::Null | Value::Bool(true) => add((4, 4)),
        Value::Bool(false) => add((5, 5)),
        Value::Number(x) => {
            let n = number_size(x);
            add((n, n))
        }
        Value::String(s) => add(string_bounds(s.len())),
        Value::Array(a) => {
            if levels == 0 {
                return Err(Stop::Deep);
            }
            let n = 2 + a.len().saturating_sub(1);
            add((n, n))?;
            a.iter()
                .try_for_each(|c| bounds_in_order(c, levels - 1, max_bytes, sum))
        }
        Value::Object(o) => {
            if levels == 0 {
                return Err(Stop::Deep);
            }
            let n = 2 + o.len().saturating_sub(1);
            add((n, n))?;
            for (k, c) in o {
                let (lo, hi) = string_bounds(k.len());
                sum.0 = sum.0.saturating_add(lo + 1);
                sum.1 = sum.1.saturating_add(hi).saturating_add(1);
                bounds_in_order(c, levels - 1, max_bytes, sum)?;
            }
            if sum.0 > max_bytes {
                return Err(Stop::Over);
            }
            Ok(())
        }
    }
}

/// Bytes of a JSON number as serde_json writes it.
fn number_size(x: &serde_json::Number) -> usize {
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

string_enum! {
    /// Which limit a server reached.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    #[non_exhaustive]
    pub enum Limit {
        /// [`Limits::instructions_bytes`].
        InstructionsBytes => "instructions_bytes",
        /// [`Limits::tools`].
        Tools => "tools",
        /// [`Limits::tool_description_bytes`].
        ToolDescriptionBytes => "tool_description_bytes",
        /// [`Limits::schema_depth`] or [`Limits::schema_bytes`].
        Schema => "schema",
        /// [`Limits::dedup_units`].
        DedupUnits => "dedup_units",
        /// [`Limits::tool_pages`].
        ToolPages => "tool_pages",
        /// The template's fuel for one block, or its size (256 KiB): the block
        /// could not be rendered whole and was cut to what renders.
        RenderFuel => "render_fuel",
    }
    /// The name used in reports, e.g. `tools`.
    fn as_str;
}

/// A limit one server reached: what was allowed and what it sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LimitHit {
    /// The limit.
    pub limit: Limit,
    /// What the limit allows.
    pub allowed: usize,
    /// What the server sent (the largest, when several items were over).
    pub sent: usize,
    /// How many items were over (tool descriptions, schemas); 1 otherwise.
    pub count: usize,
}

impl LimitHit {
    pub(crate) fn new(limit: Limit, allowed: usize, sent: usize) -> LimitHit {
        LimitHit {
            limit,
            allowed,
            sent,
            count: 1,
        }
    }

    pub(crate) fn times(mut self, count: usize) -> LimitHit {
        self.count = count;
        self
    }
}

/// The diagnostic line, e.g. `limit tools reached: 200000 sent, 1000 read`.
impl fmt::Display for LimitHit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let LimitHit {
            limit,
            allowed,
            sent,
            count,
        } = *self;
        match limit {
            Limit::InstructionsBytes => write!(
                f,
                "limit {limit} reached: {sent} bytes of instructions sent, the first {allowed} read"
            ),
            Limit::Tools => write!(
                f,
                "limit {limit} reached: {sent} tools sent, the first {allowed} read"
            ),
            Limit::ToolDescriptionBytes => write!(
                f,
                "limit {limit} reached: {count} tool description(s) over {allowed} bytes (up to {sent}) cut"
            ),
            Limit::Schema => write!(
                f,
                "limit {limit} reached: {count} input schema(s) too deep or over {allowed} bytes (up to {sent}) not read"
            ),
            Limit::DedupUnits => write!(
                f,
                "limit {limit} reached: {sent} units of instructions, the first {allowed} checked for de-duplication"
            ),
            Limit::ToolPages => write!(
                f,
                "limit {limit} reached: tools/list gave more than {allowed} pages; the rest not read"
            ),
            Limit::RenderFuel => write!(
                f,
                "limit {limit} reached: the block ran out of template fuel or grew past 256 KiB and was cut to what renders"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ServerSnapshot, Tool};
    use std::borrow::Cow;

    #[test]
    fn prefix_ends_on_a_character() {
        assert_eq!(prefix("aé", 2), "a");
        assert_eq!(prefix("abc", 10), "abc");
    }

    #[test]
    fn depth_is_counted_without_recursion() {
        let mut v = serde_json::json!("leaf");
        for _ in 0..5 {
            v = serde_json::json!({ "a": v });
        }
        assert!(json_size_within(&v, 5, usize::MAX).is_some());
        assert!(json_size_within(&v, 4, usize::MAX).is_none());
    }

    #[test]
    fn json_size_is_the_serialized_length() {
        let values = [
            serde_json::json!(null),
            serde_json::json!([]),
            serde_json::json!({}),
            serde_json::json!([
                true,
                false,
                null,
                0,
                -12,
                3.5,
                1e300,
                18446744073709551615u64
            ]),
            serde_json::json!({"a\"b\\c\n\r\t\u{8}\u{c}\u{1}\u{1f}\u{7f}": "é€😀\u{2028}</x>"}),
            serde_json::json!({"type": "object", "properties": {"a": {"type": "array", "items": [1, [2, {}]]}}, "required": ["a"]}),
        ];
        for v in &values {
            let want = serde_json::to_string(v).unwrap().len();
            assert_eq!(json_size(v), want, "{v}");
            assert_eq!(json_size_within(v, usize::MAX, want), Some(want), "{v}");
            assert_eq!(json_size_within(v, usize::MAX, want - 1), None, "{v}");
        }
    }

    #[test]
    fn the_bounds_decide_as_the_exact_size_does() {
        let values = [
            serde_json::json!({"type": "object", "properties": {"q": {"type": "string", "description": "plain text"}}}),
            // Escapes only: six bytes for one, so only the exact size decides near the limit.
            serde_json::json!({"d": "\u{1}\u{2}\u{1f}".repeat(20), "e": ["\"\\\n", 1.5, -3, null, true, false]}),
            serde_json::json!({"a": {"b": {"c": {"d": []}}}}),
            serde_json::json!([[[[{}]]]]),
        ];
        for v in &values {
            let size = json_size(v);
            for bytes in size.saturating_sub(8 * size / 10)..size + 5 * size {
                for depth in 0..6 {
                    let limits = Limits::default().schema_bytes(bytes).schema_depth(depth);
                    let exact = json_size_within(v, depth, bytes).is_some();
                    assert_eq!(
                        limits.schema_fits(v),
                        exact,
                        "{v} in {bytes} bytes, {depth} deep"
                    );
                }
            }
        }
    }

    #[test]
    fn the_bounds_hold_the_exact_size_and_decide_as_it_does_at_any_depth() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
        let mut schemas = vec![
            serde_json::json!({"d": "\u{1}".repeat(40), "e": [[[{"f": 1.5}]]], "g": null}),
            serde_json::json!([[], {}, [{}], "x"]),
        ];
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                let server = crate::wire::load_server_file(&path).unwrap();
                schemas.extend(server.tools.into_iter().map(|t| t.input_schema));
            }
        }
        assert!(schemas.len() > 500, "{}", schemas.len());
        for v in &schemas {
            let exact = json_size(v);
            let (least, most) = json_size_bounds(v, RECURSION_DEPTH, usize::MAX).unwrap();
            assert!(
                least <= exact && exact <= most,
                "{v}: {least} <= {exact} <= {most}"
            );
            for bytes in [
                0,
                least / 2,
                least - 1,
                least,
                exact - 1,
                exact,
                most - 1,
                most,
            ] {
                for depth in [0, 1, 2, 3, 5, 8, RECURSION_DEPTH, RECURSION_DEPTH + 1, 200] {
                    let limits = Limits::default().schema_bytes(bytes).schema_depth(depth);
                    assert_eq!(
                        limits.schema_fits(v),
                        json_size_within(v, depth, bytes).is_some(),
                        "{v} in {bytes} bytes, {depth} deep"
                    );
                }
            }
        }
        // Past the recursion's depth the exact walk decides.
        let mut deep = serde_json::json!(1);
        for _ in 0..200 {
            deep = serde_json::json!([deep]);
        }
        let fits = |depth, bytes| {
            Limits::default()
                .schema_depth(depth)
                .schema_bytes(bytes)
                .schema_fits(&deep)
        };
        assert_eq!(json_size_bounds(&deep, RECURSION_DEPTH, usize::MAX), None);
        assert!(!fits(RECURSION_DEPTH, usize::MAX));
        assert!(!fits(RECURSION_DEPTH + 1, usize::MAX));
        assert!(!fits(199, usize::MAX));
        assert!(fits(200, 401));
        assert!(!fits(200, 400));
    }

    #[test]
    fn schemas_over_the_byte_limit_do_not_fit() {
        let v = serde_json::json!({"description": "x".repeat(100)});
        let size = serde_json::to_string(&v).unwrap().len();
        assert!(Limits::default().schema_bytes(size).schema_fits(&v));
        assert!(!Limits::default().schema_bytes(size - 1).schema_fits(&v));
    }

    #[test]
    fn nothing_over_borrows() {
        let s = ServerSnapshot::new("x")
            .with_instructions("Hi.")
            .with_tool(Tool::new("a", "b"));
        let (out, hits) = s.within(&Limits::default());
        assert!(matches!(out, Cow::Borrowed(_)));
        assert!(hits.is_empty());
    }
}
