//! Small helpers with one home each, shared by the pipeline's stages:
//! edit distance (did-you-mean suggestions), hashing (FNV-1a, SHA-256 hex),
//! canonical JSON (keys sorted, for stable hashes and cache keys) and the
//! [`string_enum!`] macro for fieldless enums with a wire name per variant.
//!
//! Nothing here is public, and nothing here imports the rest of the crate:
//! it sits below every other module.

pub(crate) mod canonical;
pub(crate) mod distance;
pub(crate) mod hash;
mod string_enum;

pub(crate) use string_enum::string_enum;
