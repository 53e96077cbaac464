//! Which counter the settings choose: `encoding`, `model`, `tokenizer`.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Deserialize;

use super::{Defaults, Layer, Settings};
use crate::assemble::Assembler;
use crate::error::Result;
use crate::tokens::{Encoding, Model, Tiktoken, TokenCounter};

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

/// A model name, checked where it is written.
pub(super) fn model_name<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<String>, D::Error> {
    let name = String::deserialize(d)?;
    Model::from_name(&name).map_err(serde::de::Error::custom)?;
    Ok(Some(name))
}
