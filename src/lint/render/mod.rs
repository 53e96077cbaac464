//! The renderers of a [`LintReport`](super::LintReport): text for people,
//! JSON for scripts, SARIF 2.1.0 for code-scanning tools.

mod json;
mod sarif;
mod text;
