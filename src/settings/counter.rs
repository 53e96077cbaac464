//! Which counter the settings choose: `encoding`, `model`, `tokenizer`.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Deserialize;

use super::{Defaults, Layer, Settings};
use crate::assemble::Assembler;
use crate::error::{Error, ErrorKind, Result};
use crate::tokens::{Encoding, Model, ModelCounter, Tiktoken, TokenCounter};

impl Settings {
    /// The counter tokens are counted with: the top layer that sets any of
    /// `encoding`, `model` and `tokenizer` decides (so `--encoding` on the
    /// command line wins over the file's `model`); within it `model` (with
    /// `tokenizer`, its file), else `tokenizer`, else `encoding`; with none
    /// set, `o200k_base`. Loads the tokenizer file, if any.
    ///
    /// Fails as [`Settings::encoding`], [`Model::counter`] and
    /// [`Assembler::tokenizer_file`] do, naming the file and key for a
    /// value of the file.
    pub fn token_counter(&self) -> Result<Arc<dyn TokenCounter>> {
        Ok(self
            .chosen_counter()?
            .unwrap_or_else(|| Arc::new(Tiktoken::new(Encoding::O200kBase))))
    }

    /// The counter set in a layer, if any, loaded.
    pub(super) fn chosen_counter(&self) -> Result<Option<Arc<dyn TokenCounter>>> {
        let sets =
            |d: &Defaults| d.encoding.is_some() || d.model.is_some() || d.tokenizer.is_some();
        let (d, layer) = if sets(&self.overrides) {
            (&self.overrides, Layer::Overrides)
        } else if sets(&self.defaults) {
            (&self.defaults, Layer::File)
        } else {
            return Ok(None);
        };
        let path = d.tokenizer.as_ref().map(|t| match (layer, &self.base_dir) {
            (Layer::File, Some(dir)) => dir.join(t),
            _ => PathBuf::from(t),
        });
        if let Some(name) = &d.model {
            let model = Model::from_name(name).map_err(|e| self.named(layer, "model", e))?;
            if let Some(encoding) = &d.encoding {
                disagree(&model, encoding).map_err(|e| self.named(layer, "encoding", e))?;
            }
            let key = if path.is_some() { "tokenizer" } else { "model" };
            return model
                .counter(path.as_deref())
                .map(Some)
                .map_err(|e| self.named(layer, key, e));
        }
        if let Some(path) = path {
            let a = Assembler::new()
                .tokenizer_file(&path)
                .map_err(|e| self.named(layer, "tokenizer", e))?;
            return Ok(Some(a.counter_arc()));
        }
        Ok(self
            .chosen_encoding()?
            .map(|e| Arc::new(Tiktoken::new(e)) as Arc<dyn TokenCounter>))
    }
}

impl Settings {
    /// Warnings about the counter the settings choose: a tokenizer file
    /// given with a model whose family's marker token (Llama 3
    /// `<|begin_of_text|>`, Qwen `<|im_start|>`, Gemma `<start_of_turn>`,
    /// DeepSeek `<｜begin▁of▁sentence｜>`) is not among the file's added
    /// tokens, naming both; the counts follow the file. Reads the file's
    /// added tokens only; a file that does not read gives no warning here
    /// ([`Settings::token_counter`] fails on it).
    pub fn counter_warnings(&self) -> Vec<String> {
        let sets =
            |d: &Defaults| d.encoding.is_some() || d.model.is_some() || d.tokenizer.is_some();
        let (d, layer) = if sets(&self.overrides) {
            (&self.overrides, Layer::Overrides)
        } else {
            (&self.defaults, Layer::File)
        };
        let (Some(name), Some(file)) = (&d.model, &d.tokenizer) else {
            return Vec::new();
        };
        let Ok(model) = Model::from_name(name) else {
            return Vec::new();
        };
        let Some(marker) = family_marker(model.name) else {
            return Vec::new();
        };
        let path = match (layer, &self.base_dir) {
            (Layer::File, Some(dir)) => dir.join(file),
            _ => PathBuf::from(file),
        };
        let Ok(json) = crate::error::read_file(&path) else {
            return Vec::new();
        };
        #[derive(Deserialize)]
        struct Added {
            #[serde(default)]
            content: String,
        }
        #[derive(Deserialize)]
        struct Shape {
            #[serde(default)]
            added_tokens: Vec<Added>,
        }
        let Ok(shape) = serde_json::from_str::<Shape>(&json) else {
            return Vec::new();
        };
        if shape.added_tokens.iter().any(|a| a.content == marker) {
            return Vec::new();
        }
        vec![format!(
            "tokenizer {:?} does not match model {:?}: its vocabulary has no {marker:?}, which every {} tokenizer has; tokens are counted with the file",
            path.display().to_string(),
            model.name,
            model.name
        )]
    }
}

/// The added token every tokenizer of a model family has.
fn family_marker(model: &str) -> Option<&'static str> {
    [
        ("llama-3", "<|begin_of_text|>"),
        ("qwen-", "<|im_start|>"),
        ("gemma-3", "<start_of_turn>"),
        ("deepseek-", "<｜begin▁of▁sentence｜>"),
    ]
    .iter()
    .find(|(prefix, _)| model.starts_with(prefix))
    .map(|(_, marker)| *marker)
}

/// `model` and `encoding` set together must agree: an OpenAI model's own
/// encoding, and no encoding for a model counted otherwise.
fn disagree(model: &Model, encoding: &str) -> Result<()> {
    let given = Encoding::from_name(encoding)?;
    let own = match model.counter {
        ModelCounter::Tiktoken(e) if e == given => return Ok(()),
        ModelCounter::Tiktoken(e) => e.name().to_string(),
        ModelCounter::TokenizerFile { .. } => "its tokenizer.json".to_string(),
        _ => "an estimate".to_string(),
    };
    Err(Error::new(
        ErrorKind::InvalidConfig,
        format!(
            "settings that disagree: model {:?} counts with {own}, not encoding {encoding:?}; give one of them",
            model.name
        ),
    ))
}

/// A model name, checked where it is written.
pub(super) fn model_name<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<String>, D::Error> {
    let name = String::deserialize(d)?;
    Model::from_name(&name).map_err(serde::de::Error::custom)?;
    Ok(Some(name))
}
