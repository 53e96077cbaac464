//! What a `tokenizer.json` costs per count, read from the file before the
//! tokenizers crate runs it on server text: a normalizer that multiplies the
//! text's length (a `Replace` of one character by a hundred, in a sequence)
//! or a split pattern that backtracks (nested repetition in a pattern only a
//! backtracking engine runs) makes each count cost far more than the text's
//! length. Such a file is refused at load, with the reason.

use serde_json::Value;

/// The most a normalizer may multiply a text's length by (in bytes). Real
/// files stay far below: NFKC is at most 18, a BERT normalizer 6, Gemma's
/// space replacement 3.
pub(super) const MAX_GROWTH: u64 = 256;

/// Why the file's normalizer or pre-tokenizer makes counting super-linear,
/// if it does.
pub(super) fn refusal(normalizer: &Value, pre_tokenizer: &Value) -> Option<String> {
    let growth = growth(normalizer);
    if growth > MAX_GROWTH {
        return Some(format!(
            "its normalizer can make a text {} times longer (at most {MAX_GROWTH}): counting would cost that much per byte",
            if growth == u64::MAX {
                "unboundedly many".to_string()
            } else {
                growth.to_string()
            }
        ));
    }
    [normalizer, pre_tokenizer]
        .into_iter()
        .flat_map(patterns)
        .find(|p| backtracks(p))
        .map(|p| {
            format!(
                "its pattern {p:?} repeats a repetition in a backtracking engine: counting could take time exponential in a text's length"
            )
        })
}

/// An upper bound of how many times longer the normalizer makes a text,
/// in bytes (saturating).
fn growth(n: &Value) -> u64 {
    let kind = n.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "Sequence" => n
            .get("normalizers")
            .and_then(Value::as_array)
            .map_or(1, |steps| {
                steps.iter().fold(1u64, |g, s| g.saturating_mul(growth(s)))
            }),
        "Replace" => {
            let content = n.get("content").and_then(Value::as_str).map_or(0, str::len) as u64;
            match min_match(n.get("pattern")) {
                0 => content.saturating_add(1),
                m => content.div_ceil(m).max(1),
            }
        }
        "NFKC" | "NFKD" => 18,
        "NFC" | "NFD" | "Precompiled" => 4,
        "Lowercase" | "ByteLevel" => 3,
        "BertNormalizer" => 6,
        // Strip, StripAccents, Prepend (once at the start) and no normalizer.
        _ => 1,
    }
}

/// The shortest text a `Replace` pattern matches, in bytes: a string's
/// length; for a regex 1 when it cannot match the empty text, else 0.
fn min_match(pattern: Option<&Value>) -> u64 {
    let Some(p) = pattern else { return 0 };
    if let Some(s) = p.get("String").and_then(Value::as_str) {
        return s.len() as u64;
    }
    let Some(r) = p.get("Regex").and_then(Value::as_str) else {
        return 0;
    };
    regex::Regex::new(r).map_or(0, |re| u64::from(!re.is_match("")))
}

/// Every regex pattern in a normalizer or pre-tokenizer tree.
fn patterns(v: &Value) -> Vec<&str> {
    let mut out = Vec::new();
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                if let Some(r) = map.get("Regex").and_then(Value::as_str) {
                    out.push(r);
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    out
}

/// Whether `pattern` needs a backtracking engine (the linear `regex` crate
/// does not take it: look-around, back-references) and repeats without
/// bound a group that itself holds an unbounded repetition or an
/// alternation (`(a+)+`, `(?:a|ab)*`): the shapes that backtrack
/// exponentially.
pub(super) fn backtracks(pattern: &str) -> bool {
    if regex::Regex::new(pattern).is_ok() {
        return false;
    }
    let b = pattern.as_bytes();
    // Per open group: whether it holds an unbounded repetition or a `|`.
    let mut groups: Vec<bool> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let (end, closed) = match b[i] {
            b'\\' => (escape_end(b, i), None),
            b'[' => (class_end(b, i), None),
            b'(' => {
                groups.push(false);
                (i + 1, None)
            }
            b'|' => {
                if let Some(g) = groups.last_mut() {
                    *g = true;
                }
                (i + 1, None)
            }
            b')' => (i + 1, Some(groups.pop().unwrap_or(false))),
            _ => (i + 1, None),
        };
        let unbounded = unbounded_at(&b[end.min(b.len())..]);
        if let Some(risky) = closed {
            if risky && unbounded {
                return true;
            }
            if let Some(g) = groups.last_mut() {
                *g |= risky;
            }
        }
        if unbounded {
            groups.iter_mut().for_each(|g| *g = true);
        }
        i = end;
    }
    false
}

/// Whether `rest` starts with a repetition without an upper bound: `+`,
/// `*` or `{n,}`.
fn unbounded_at(rest: &[u8]) -> bool {
    match rest.first() {
        Some(b'+' | b'*') => true,
        Some(b'{') => rest.iter().position(|c| *c == b'}').is_some_and(|e| {
            let inner = &rest[1..e];
            inner.ends_with(b",") && inner[..inner.len() - 1].iter().all(u8::is_ascii_digit)
        }),
        _ => false,
    }
}

/// The end of the escape at `i` (`\\x`, `\\p{…}`).
fn escape_end(b: &[u8], i: usize) -> usize {
    if matches!(b.get(i + 1), Some(b'p' | b'P')) && b.get(i + 2) == Some(&b'{') {
        return b[i..]
            .iter()
            .position(|c| *c == b'}')
            .map_or(b.len(), |n| i + n + 1);
    }
    (i + 2).min(b.len())
}

/// The end of the character class at `i`.
fn class_end(b: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    j += usize::from(b.get(j) == Some(&b'^'));
    j += usize::from(b.get(j) == Some(&b']'));
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b']' => return j + 1,
            _ => j += 1,
        }
    }
    b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponential_shapes_backtrack_and_real_splits_do_not() {
        for p in [
            r"(a+)+(?=b)",
            r"(?:\s*x)*(?!y)",
            r"(a|ab)*\1",
            r"((?:a){2,})+(?=c)",
        ] {
            assert!(backtracks(p), "{p}");
        }
        // Linear engines take these; the Llama 3, Qwen and GPT-2 splits.
        for p in [
            r"(a+)+b",
            super::super::hf::SAFE_SPLITS[0],
            super::super::hf::SAFE_SPLITS[1],
            r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
            r"[(+*]+(?=x)",
        ] {
            assert!(!backtracks(p), "{p}");
        }
    }

    #[test]
    fn growth_multiplies_along_a_sequence() {
        let replace = |from: &str, to: &str| serde_json::json!({"type": "Replace", "pattern": {"String": from}, "content": to});
        assert_eq!(growth(&Value::Null), 1);
        assert_eq!(growth(&replace(" ", "▁")), 3);
        assert_eq!(growth(&replace("a", &"a".repeat(10))), 10);
        let seq = serde_json::json!({"type": "Sequence", "normalizers": [
            replace("a", &"a".repeat(10)), replace("a", &"a".repeat(10)), replace("a", &"a".repeat(10))]});
        assert_eq!(growth(&seq), 1000);
        assert!(
            refusal(&seq, &Value::Null)
                .unwrap()
                .contains("1000 times longer")
        );
        let empty =
            serde_json::json!({"type": "Replace", "pattern": {"Regex": "x*"}, "content": "yy"});
        assert_eq!(growth(&empty), 3);
        let nfkc = serde_json::json!({"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}]});
        assert!(refusal(&nfkc, &Value::Null).is_none());
    }
}
