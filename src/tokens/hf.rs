//! Hugging Face `tokenizer.json` counters (feature `tokenizers`): the
//! tokenizers crate, and a truthful answer to the memo's question.

use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use super::TokenCounter;
use crate::error::{Error, ErrorKind, Result, read_file};
use crate::support::hash::sha256_hex;

/// A [`TokenCounter`] from a Hugging Face `tokenizer.json` file (Llama 3,
/// Qwen 3, Gemma 3, DeepSeek and most open-weight models publish one).
///
/// Counts are the tokenizer's own on the text as it is, without the
/// tokens a chat template or post-processor adds (`<bos>`, `<|begin_of_text|>`):
/// those depend on the host, not on the section. Special tokens' text in a
/// server's instructions (`<|eot_id|>`) is counted as the characters it is,
/// as [`TokenCounter`] asks; the model's other added tokens (Qwen's
/// `<tool_call>`) count as the tokenizer counts them.
///
/// [`TokenCounter::splits_after_newline`] is answered from the file: `true`
/// only for the pre-tokenizer shapes known to cut before a word after a
/// newline (the Llama 3 and Qwen 2/3 splits), else `false`, so the
/// assembler counts the section whole.
///
/// ```no_run
/// use mcp_preamble::Assembler;
/// use mcp_preamble::tokens::HfTokenizer;
/// let llama = HfTokenizer::from_file("models/llama-3.1/tokenizer.json")?;
/// let assembler = Assembler::new().token_counter(llama).budget(300);
/// # let _ = assembler;
/// # Ok::<(), mcp_preamble::Error>(())
/// ```
#[derive(Clone)]
pub struct HfTokenizer {
    name: String,
    tokenizer: Arc<tokenizers::Tokenizer>,
    splits_after_newline: bool,
}

impl std::fmt::Debug for HfTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HfTokenizer")
            .field("name", &self.name)
            .field("splits_after_newline", &self.splits_after_newline)
            .finish()
    }
}

/// The parts of a `tokenizer.json` that decide whether a cut after a newline
/// changes a count.
#[derive(Deserialize)]
struct Shape {
    #[serde(default)]
    normalizer: Value,
    #[serde(default)]
    pre_tokenizer: Value,
    #[serde(default)]
    added_tokens: Vec<Added>,
}

#[derive(Deserialize)]
struct Added {
    content: String,
    #[serde(default)]
    special: bool,
}

/// Split patterns whose matches never cross a newline followed by a
/// character other than whitespace: `\s*[\r\n]+` comes before `\s+(?!\S)`,
/// so a run of newlines ends where the next word starts whether or not the
/// text goes on (the property tiktoken's o200k and cl100k patterns have).
/// GPT-2's pattern is not here: without `\s*[\r\n]+` the last newline of a
/// piece joins a different match when the piece is cut.
const SAFE_SPLITS: &[&str] = &[
    // Llama 3 (and DeepSeek's byte-level models with the same split).
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    // Qwen 2, 2.5 and 3.
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
];

impl Shape {
    /// Whether counting a text in pieces cut after a newline (before a
    /// character other than whitespace or `/`) gives the count of the whole:
    /// no normalizer that joins across characters (none, or NFC, where a
    /// newline is a starter that composes with nothing), a pre-tokenizer of
    /// a known safe split then byte-level bytes without a prefix space, and
    /// no added token that spans such a place. Anything else is `false`.
    fn splits_after_newline(&self) -> bool {
        let normalizer_ok = match &self.normalizer {
            Value::Null => true,
            n => n.get("type").and_then(Value::as_str) == Some("NFC"),
        };
        let Some(steps) = self
            .pre_tokenizer
            .get("pretokenizers")
            .and_then(Value::as_array)
            .filter(|_| self.pre_tokenizer.get("type").and_then(Value::as_str) == Some("Sequence"))
        else {
            return false;
        };
        let [split, bytes] = steps.as_slice() else {
            return false;
        };
        let split_ok = split.get("type").and_then(Value::as_str) == Some("Split")
            && split.get("behavior").and_then(Value::as_str) == Some("Isolated")
            && split.get("invert").and_then(Value::as_bool) == Some(false)
            && split
                .get("pattern")
                .and_then(|p| p.get("Regex"))
                .and_then(Value::as_str)
                .is_some_and(|p| SAFE_SPLITS.contains(&p));
        let bytes_ok = bytes.get("type").and_then(Value::as_str) == Some("ByteLevel")
            && bytes.get("add_prefix_space").and_then(Value::as_bool) == Some(false)
            && bytes.get("use_regex").and_then(Value::as_bool) == Some(false);
        // Special tokens are split as text; the others are matched first.
        let added_ok = self
            .added_tokens
            .iter()
            .filter(|a| !a.special)
            .all(|a| !spans_a_cut(&a.content));
        normalizer_ok && split_ok && bytes_ok && added_ok
    }
}

/// Whether `s` holds a newline followed by a character other than
/// whitespace or `/` (a place the memo may cut).
fn spans_a_cut(s: &str) -> bool {
    let b = s.as_bytes();
    b.windows(2)
        .any(|w| w[0] == b'\n' && !w[1].is_ascii_whitespace() && w[1] != b'/')
}

impl HfTokenizer {
    /// Loads a `tokenizer.json`. Its name in reports is the file name and
    /// the first 12 hex digits of the file's SHA-256
    /// (`tokenizer.json sha256:0123456789ab`), the same wherever the file
    /// lies; [`HfTokenizer::named`] gives it another.
    ///
    /// Fails with [`ErrorKind::Io`] when the file cannot be read (or is over
    /// [`MAX_FILE_BYTES`](crate::files::MAX_FILE_BYTES)) and with
    /// [`ErrorKind::InvalidTokenizer`] when it is not a tokenizer the
    /// tokenizers crate loads.
    pub fn from_file(path: impl AsRef<Path>) -> Result<HfTokenizer> {
        let path = path.as_ref();
        let json = read_file(path)?;
        let file = path
            .file_name()
            .map_or_else(|| "tokenizer.json".into(), |n| n.to_string_lossy());
        let name = format!("{file} sha256:{}", &sha256_hex(json.as_bytes())[..12]);
        HfTokenizer::from_json(&json)
            .map(|t| t.named(name))
            .map_err(|e| Error::new(e.kind(), format!("{}: {e}", path.display())))
    }

    /// A tokenizer from the text of a `tokenizer.json`, named `tokenizer.json`
    /// until [`HfTokenizer::named`]. Fails with
    /// [`ErrorKind::InvalidTokenizer`].
    pub fn from_json(json: &str) -> Result<HfTokenizer> {
        let invalid = |why: String| Error::new(ErrorKind::InvalidTokenizer, why);
        let shape: Shape = serde_json::from_str(json).map_err(|e| invalid(e.to_string()))?;
        // The tokenizers crate is not written for hostile files: a panic
        // while loading one is an error here, never the host's crash.
        let loaded = std::panic::catch_unwind(|| json.parse::<tokenizers::Tokenizer>())
            .map_err(|_| invalid("the tokenizers crate could not load it".into()))?;
        let mut tokenizer = loaded.map_err(|e| invalid(e.to_string()))?;
        tokenizer.set_encode_special_tokens(true);
        Ok(HfTokenizer {
            name: "tokenizer.json".into(),
            tokenizer: Arc::new(tokenizer),
            splits_after_newline: shape.splits_after_newline(),
        })
    }

    /// The same tokenizer under another name in reports.
    pub fn named(mut self, name: impl Into<String>) -> HfTokenizer {
        self.name = name.into();
        self
    }
}

impl TokenCounter for HfTokenizer {
    fn name(&self) -> &str {
        &self.name
    }

    /// The tokenizer's count; where it fails on a text (or panics), the
    /// text's UTF-8 bytes, never fewer than its tokens (each token of a
    /// BPE, Unigram or WordPiece model covers at least one byte).
    fn count(&self, text: &str) -> usize {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.tokenizer.encode_fast(text, false).map(|e| e.len())
        }))
        .ok()
        .and_then(|r| r.ok())
        .unwrap_or(text.len())
    }

    fn splits_after_newline(&self) -> bool {
        self.splits_after_newline
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(json: &str) -> Shape {
        serde_json::from_str(json).unwrap()
    }

    fn llama_like(pattern: &str, normalizer: &str, added: &str) -> String {
        format!(
            r#"{{"normalizer": {normalizer}, "added_tokens": {added}, "pre_tokenizer": {{"type": "Sequence", "pretokenizers": [
                {{"type": "Split", "pattern": {{"Regex": {}}}, "behavior": "Isolated", "invert": false}},
                {{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}}]}}}}"#,
            serde_json::to_string(pattern).unwrap()
        )
    }

    #[test]
    fn only_known_safe_shapes_split_after_newline() {
        assert!(shape(&llama_like(SAFE_SPLITS[0], "null", "[]")).splits_after_newline());
        assert!(
            shape(&llama_like(SAFE_SPLITS[1], r#"{"type": "NFC"}"#, "[]")).splits_after_newline()
        );
        // GPT-2's split, another normalizer, an added token across a newline.
        let gpt2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
        assert!(!shape(&llama_like(gpt2, "null", "[]")).splits_after_newline());
        assert!(
            !shape(&llama_like(SAFE_SPLITS[0], r#"{"type": "NFKC"}"#, "[]")).splits_after_newline()
        );
        let added = r#"[{"content": "\nA", "special": false}]"#;
        assert!(!shape(&llama_like(SAFE_SPLITS[0], "null", added)).splits_after_newline());
        let special = r#"[{"content": "\nA", "special": true}]"#;
        assert!(shape(&llama_like(SAFE_SPLITS[0], "null", special)).splits_after_newline());
        // No pre-tokenizer (SentencePiece-style BPE over the whole text).
        assert!(!shape(r#"{"normalizer": null, "pre_tokenizer": null}"#).splits_after_newline());
    }

    #[test]
    fn a_broken_file_is_a_typed_error() {
        for json in ["", "{", "[]", r#"{"model": 5}"#, r#"{"version": "1.0"}"#] {
            let e = HfTokenizer::from_json(json).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidTokenizer, "{json}");
        }
    }

    #[test]
    fn a_tiny_word_level_tokenizer_counts() {
        let json = r#"{"version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
            "normalizer": null, "pre_tokenizer": {"type": "Whitespace"}, "post_processor": null,
            "decoder": null, "model": {"type": "WordLevel", "vocab": {"a": 0, "b": 1, "[UNK]": 2},
            "unk_token": "[UNK]"}}"#;
        let t = HfTokenizer::from_json(json).unwrap();
        assert_eq!(t.count("a b a c"), 4);
        assert!(!t.splits_after_newline());
        assert_eq!(t.named("tiny").name(), "tiny");
    }
}
