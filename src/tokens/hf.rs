//! Hugging Face `tokenizer.json` counters (feature `tokenizers`): the
//! tokenizers crate, and a truthful answer to the memo's question.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use super::TokenCounter;
use crate::error::{Error, ErrorKind, Result};

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
/// assembler counts the section whole. [`TokenCounter::splits_before_word`]
/// is `true` only for those splits (whose matches never hold a printable
/// ASCII character and a space after it), with no added token that holds
/// one either or takes the spaces after it (`rstrip`); Gemma 3's
/// whole-text BPE has tokens across such a place (`>▁</`), so `false`.
/// [`TokenCounter::splits_before_newline`] is left `false` (the default):
/// no tokenizer file has been checked for it.
///
/// A file's own `truncation` and `padding` (sentence-embedding files ship
/// `max_length` 128 to 512) are switched off when it is loaded: with them a
/// long text would count as the length cut to, a short one as the padded
/// length. The name in reports says what the file asked for:
/// `tokenizer.json sha256:0123456789ab (ignored: truncation to 8, padding to 4096)`.
///
/// A file whose normalizer can make a text more than 256 times longer, or
/// whose split pattern repeats a repetition in a backtracking engine
/// (`(a+)+` with a look-ahead), is refused at load with
/// [`ErrorKind::InvalidTokenizer`] naming the file: either makes one count
/// cost far more than the text's length.
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
    /// The file's truncation and padding, switched off (empty: none).
    ignored: String,
    tokenizer: Arc<tokenizers::Tokenizer>,
    splits_after_newline: bool,
    splits_before_word: bool,
}

impl std::fmt::Debug for HfTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HfTokenizer")
            .field("name", &self.name)
            .field("splits_after_newline", &self.splits_after_newline)
            .field("splits_before_word", &self.splits_before_word)
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
    #[serde(default)]
    model: ModelShape,
}

/// The model: its type and whether a token of its vocabulary spans a cut.
#[derive(Deserialize, Default)]
struct ModelShape {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default, deserialize_with = "vocab_spans_a_cut")]
    vocab: VocabShape,
    #[serde(default)]
    dropout: Option<f64>,
}

/// What the memo needs to know of a vocabulary, read without keeping it.
#[derive(Default)]
struct VocabShape {
    /// Some token holds a newline followed by a character other than
    /// whitespace or `/`.
    spans_a_cut: bool,
    /// `"\n"` is a token (so it is never an unknown token fused with the
    /// next one).
    has_newline: bool,
}

/// Reads a vocabulary (a map of token to id, or a list of `[token, score]`)
/// into a [`VocabShape`].
fn vocab_spans_a_cut<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<VocabShape, D::Error> {
    use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = VocabShape;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a vocabulary")
        }
        fn visit_map<A: MapAccess<'de>>(
            self,
            mut map: A,
        ) -> std::result::Result<VocabShape, A::Error> {
            let mut shape = VocabShape::default();
            while let Some((token, _)) = map.next_entry::<String, IgnoredAny>()? {
                shape.spans_a_cut |= spans_a_cut(&token);
                shape.has_newline |= token == "\n";
            }
            Ok(shape)
        }
        fn visit_seq<A: SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> std::result::Result<VocabShape, A::Error> {
            // Unigram's list of [token, score]: never taken as safe.
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(VocabShape {
                spans_a_cut: true,
                has_newline: false,
            })
        }
    }
    d.deserialize_any(V)
}

#[derive(Deserialize)]
struct Added {
    content: String,
    #[serde(default)]
    special: bool,
    #[serde(default)]
    rstrip: bool,
}

/// Split patterns whose matches never cross a newline followed by a
/// character other than whitespace: `\s*[\r\n]+` comes before `\s+(?!\S)`,
/// so a run of newlines ends where the next word starts whether or not the
/// text goes on (the property tiktoken's o200k and cl100k patterns have).
/// GPT-2's pattern is not here: without `\s*[\r\n]+` the last newline of a
/// piece joins a different match when the piece is cut.
pub(super) const SAFE_SPLITS: &[&str] = &[
    // Llama 3 (and DeepSeek's byte-level models with the same split).
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    // Qwen 2, 2.5 and 3.
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
];

impl Shape {
    /// Whether counting a text in pieces cut after a newline (before a
    /// character other than whitespace or `/`) gives the count of the whole.
    /// Two shapes are known to, anything else is `false`:
    ///
    /// - a known safe split then byte-level bytes without a prefix space
    ///   ([`Shape::split_then_bytes`]: Llama 3, Qwen);
    /// - a BPE over the whole text whose vocabulary has no token across
    ///   such a place ([`Shape::whole_text_bpe`]: Gemma 3).
    ///
    /// Either way no added token may span such a place (special tokens are
    /// split as text; the others are matched first).
    fn splits_after_newline(&self) -> bool {
        let added_ok = self
            .added_tokens
            .iter()
            .filter(|a| !a.special)
            .all(|a| !spans_a_cut(&a.content));
        added_ok && (self.split_then_bytes() || self.whole_text_bpe())
    }

    /// Whether counting a text in pieces cut just before a space between
    /// two printable ASCII characters gives the count of the whole: only
    /// for a known safe split then byte-level bytes
    /// ([`Shape::split_then_bytes`]). No alternative of those splits
    /// matches a letter, digit or symbol with a space after it, and the
    /// text after such a character does not change how the text before it
    /// is matched, so a piece ends there whole or cut; the piece that
    /// starts at the space is matched alone as in the whole (the patterns
    /// look only forward); NFC composes nothing with a space. No added
    /// token (other than special ones, split as text) may hold such a
    /// place, nor take the spaces after it (`rstrip`).
    fn splits_before_word(&self) -> bool {
        let added_ok = self
            .added_tokens
            .iter()
            .filter(|a| !a.special)
            .all(|a| !a.rstrip && !spans_a_word_cut(&a.content));
        added_ok && self.split_then_bytes()
    }

    /// A BPE (no dropout) over the whole text: no pre-tokenizer, or Gemma's
    /// split on `" "` after a normalizer that replaced every space with
    /// `▁` (so the split finds nothing); a normalizer that maps characters
    /// one by one. Merges only ever make tokens of the vocabulary, so when
    /// none holds a newline followed by another character, no merge joins
    /// the two sides of such a place, and each side merges the same alone.
    /// `"\n"` must be a token, so no unknown-token fusion crosses it.
    fn whole_text_bpe(&self) -> bool {
        let str_of = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let replaces_spaces = str_of(&self.normalizer, "type").as_deref() == Some("Replace")
            && self
                .normalizer
                .get("pattern")
                .and_then(|p| p.get("String"))
                .and_then(Value::as_str)
                == Some(" ")
            && str_of(&self.normalizer, "content").is_some_and(|c| !c.contains(' '));
        let normalizer_ok = matches!(self.normalizer, Value::Null) || replaces_spaces;
        let pre_ok = match &self.pre_tokenizer {
            Value::Null => true,
            p => {
                replaces_spaces
                    && str_of(p, "type").as_deref() == Some("Split")
                    && p.get("pattern")
                        .and_then(|p| p.get("String"))
                        .and_then(Value::as_str)
                        == Some(" ")
            }
        };
        self.model.kind == "BPE"
            && self.model.dropout.is_none()
            && self.model.vocab.has_newline
            && !self.model.vocab.spans_a_cut
            && normalizer_ok
            && pre_ok
    }

    /// No normalizer that joins across characters (none, or NFC, where a
    /// newline is a starter that composes with nothing), a pre-tokenizer of
    /// a known safe split then byte-level bytes without a prefix space.
    fn split_then_bytes(&self) -> bool {
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
        normalizer_ok && split_ok && bytes_ok
    }
}

/// Whether `s` holds a newline followed by a character other than
/// whitespace or `/` (a place the memo may cut).
fn spans_a_cut(s: &str) -> bool {
    let b = s.as_bytes();
    b.windows(2)
        .any(|w| w[0] == b'\n' && !w[1].is_ascii_whitespace() && w[1] != b'/')
}

/// Whether `s` holds a printable ASCII character followed by a space (a
/// place the memo may cut before a word).
fn spans_a_word_cut(s: &str) -> bool {
    s.as_bytes()
        .windows(2)
        .any(|w| w[0].is_ascii_graphic() && w[1] == b' ')
}

/// The file's truncation and padding, as the report names them.
fn ignored_settings(t: &tokenizers::Tokenizer) -> String {
    let mut parts = Vec::new();
    if let Some(tr) = t.get_truncation() {
        parts.push(format!("truncation to {}", tr.max_length));
    }
    if let Some(p) = t.get_padding() {
        parts.push(match p.strategy {
            tokenizers::PaddingStrategy::Fixed(n) => format!("padding to {n}"),
            tokenizers::PaddingStrategy::BatchLongest => "padding".to_string(),
        });
    }
    parts.join(", ")
}

impl HfTokenizer {
    /// A tokenizer from the text of a `tokenizer.json`, named `tokenizer.json`
    /// until [`HfTokenizer::named`]. Fails with
    /// [`ErrorKind::InvalidTokenizer`].
    pub fn from_json(json: &str) -> Result<HfTokenizer> {
        let invalid = |why: String| Error::new(ErrorKind::InvalidTokenizer, why);
        let shape: Shape = serde_json::from_str(json).map_err(|e| invalid(e.to_string()))?;
        // Before the tokenizers crate runs anything of the file.
        if let Some(why) = super::cost::refusal(&shape.normalizer, &shape.pre_tokenizer) {
            return Err(invalid(why));
        }
        // The tokenizers crate is not written for hostile files: a panic
        // while loading one is an error here, never the host's crash.
        let loaded = std::panic::catch_unwind(|| json.parse::<tokenizers::Tokenizer>())
            .map_err(|_| invalid("the tokenizers crate could not load it".into()))?;
        let mut tokenizer = loaded.map_err(|e| invalid(e.to_string()))?;
        tokenizer.set_encode_special_tokens(true);
        let ignored = ignored_settings(&tokenizer);
        tokenizer
            .with_truncation(None)
            .map_err(|e| invalid(e.to_string()))?;
        tokenizer.with_padding(None);
        Ok(HfTokenizer {
            name: "tokenizer.json".into(),
            ignored,
            tokenizer: Arc::new(tokenizer),
            splits_after_newline: shape.splits_after_newline(),
            splits_before_word: shape.splits_before_word(),
        }
        .named("tokenizer.json"))
    }

    /// The same tokenizer under another name in reports (followed by what
    /// the file asked for that counting ignores, if anything).
    pub fn named(mut self, name: impl Into<String>) -> HfTokenizer {
        self.name = name.into();
        if !self.ignored.is_empty() {
            self.name = format!("{} (ignored: {})", self.name, self.ignored);
        }
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

    fn splits_before_word(&self) -> bool {
        self.splits_before_word
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
        // No model: nothing known.
        assert!(!shape(r#"{"normalizer": null, "pre_tokenizer": null}"#).splits_after_newline());
        // A BPE over the whole text: safe unless a token spans a cut.
        let bpe = |vocab: &str, normalizer: &str, pre: &str| {
            shape(&format!(
                r#"{{"normalizer": {normalizer}, "pre_tokenizer": {pre}, "model": {{"type": "BPE", "dropout": null, "vocab": {vocab}}}}}"#
            ))
            .splits_after_newline()
        };
        let gemma_n = r#"{"type": "Replace", "pattern": {"String": " "}, "content": "▁"}"#;
        let gemma_p = r#"{"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious", "invert": false}"#;
        assert!(bpe(r#"{"\n": 0, "a": 1, "\n\n": 2}"#, gemma_n, gemma_p));
        assert!(bpe(r#"{"\n": 0, "a": 1}"#, "null", "null"));
        assert!(!bpe(r#"{"\n": 0, "\na": 1}"#, gemma_n, gemma_p));
        assert!(!bpe(r#"{"a": 1}"#, "null", "null"));
        assert!(!bpe(r#"{"\n": 0}"#, "null", gemma_p));
        assert!(!bpe(r#"{"\n": 0}"#, r#"{"type": "NFKC"}"#, "null"));
    }

    #[test]
    fn only_known_safe_splits_split_before_words() {
        assert!(shape(&llama_like(SAFE_SPLITS[0], "null", "[]")).splits_before_word());
        assert!(
            shape(&llama_like(SAFE_SPLITS[1], r#"{"type": "NFC"}"#, "[]")).splits_before_word()
        );
        let qwen_added = r#"[{"content": "<tool_call>", "special": false}]"#;
        assert!(shape(&llama_like(SAFE_SPLITS[1], "null", qwen_added)).splits_before_word());
        // An added token across the place, one that takes the spaces after
        // it, another split: false. Special tokens are text.
        for added in [
            r#"[{"content": "a b", "special": false}]"#,
            r#"[{"content": "<x>", "special": false, "rstrip": true}]"#,
        ] {
            assert!(!shape(&llama_like(SAFE_SPLITS[0], "null", added)).splits_before_word());
        }
        let special = r#"[{"content": "a b", "special": true}]"#;
        assert!(shape(&llama_like(SAFE_SPLITS[0], "null", special)).splits_before_word());
        let gpt2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
        assert!(!shape(&llama_like(gpt2, "null", "[]")).splits_before_word());
        // A whole-text BPE: never, even where it splits after newlines.
        let bpe = shape(
            r#"{"normalizer": null, "pre_tokenizer": null, "model": {"type": "BPE", "dropout": null, "vocab": {"\n": 0, "a": 1}}}"#,
        );
        assert!(bpe.splits_after_newline() && !bpe.splits_before_word());
    }

    #[test]
    fn a_broken_file_is_a_typed_error() {
        for json in ["", "{", "[]", r#"{"model": 5}"#, r#"{"version": "1.0"}"#] {
            let e = HfTokenizer::from_json(json).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidTokenizer, "{json}");
        }
    }

    fn word_level(truncation: &str, padding: &str) -> String {
        format!(
            r#"{{"version": "1.0", "truncation": {truncation}, "padding": {padding}, "added_tokens": [],
            "normalizer": null, "pre_tokenizer": {{"type": "Whitespace"}}, "post_processor": null,
            "decoder": null, "model": {{"type": "WordLevel", "vocab": {{"a": 0, "b": 1, "[UNK]": 2}},
            "unk_token": "[UNK]"}}}}"#
        )
    }

    #[test]
    fn truncation_and_padding_of_the_file_are_switched_off_and_named() {
        let truncation =
            r#"{"direction": "Right", "max_length": 8, "strategy": "LongestFirst", "stride": 0}"#;
        let padding = r#"{"strategy": {"Fixed": 4096}, "direction": "Right", "pad_to_multiple_of": null,
            "pad_id": 2, "pad_type_id": 0, "pad_token": "[UNK]"}"#;
        let long = "a b ".repeat(1000);
        let t = HfTokenizer::from_json(&word_level(truncation, "null")).unwrap();
        assert_eq!(t.count(&long), 2000);
        assert_eq!(t.name(), "tokenizer.json (ignored: truncation to 8)");
        assert_eq!(t.named("x").name(), "x (ignored: truncation to 8)");
        let t = HfTokenizer::from_json(&word_level("null", padding)).unwrap();
        assert_eq!(t.count("a b"), 2);
        assert_eq!(t.count(""), 0);
        let both = HfTokenizer::from_json(&word_level(truncation, padding)).unwrap();
        assert_eq!(both.count(&long), 2000);
        assert_eq!(
            both.named("f").name(),
            "f (ignored: truncation to 8, padding to 4096)"
        );
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
        assert!(!t.splits_before_word());
        assert_eq!(t.named("tiny").name(), "tiny");
    }
}
