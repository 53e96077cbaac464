//! The tools a server's block shows (loaded ones, the index of deferred
//! ones) and the tools the model is sent: one per name.

use crate::dedup;
use crate::model::ServerSnapshot;
use crate::report::ExposedTool;
use crate::sanitize::{self, HiddenChars};
use crate::segment::{self, UnitKind};
use crate::template::ToolView;

use std::collections::BTreeSet;
use std::sync::Arc;

use super::super::builder::Assembler;
use super::super::exposure::ServerNames;
use crate::dedup::ToolText;

/// The positions, ascending, of the tools of `s` whose name an earlier tool
/// has. One sort of borrowed names: this runs for every server of every
/// assembly, and repeats are rare.
pub(super) fn repeated_tools(s: &ServerSnapshot) -> Vec<usize> {
    if s.tools.len() < 2 {
        return Vec::new();
    }
    let mut names: Vec<(&str, usize)> = s
        .tools
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.as_str(), i))
        .collect();
    names.sort_unstable();
    let mut repeated: Vec<usize> = names
        .windows(2)
        .filter(|w| w[0].0 == w[1].0)
        .map(|w| w[1].1)
        .collect();
    repeated.sort_unstable();
    repeated
}

/// The tools as the template sees them, by the names the model sees: loaded ones (with descriptions
/// when `descriptions`), the index of deferred ones (`deferred`: per tool of `s`); with `expose`,
/// also the tools the model is sent, whose descriptions (sanitized once) the views then read.
pub(super) fn tool_views(
    s: &ServerSnapshot,
    deferred: &[bool],
    (descriptions, expose): (bool, bool),
    hidden: &mut HiddenChars,
    (names, repeated): (&ServerNames, &[usize]),
) -> (Vec<ExposedTool>, (Vec<ToolView>, Vec<ToolView>)) {
    let (mut exposed, mut loaded, mut index) = (Vec::new(), Vec::new(), Vec::new());
    for (i, (t, behind)) in s.tools.iter().zip(deferred).enumerate() {
        // One tool per name, the first (model APIs refuse a name twice).
        if !repeated.is_empty() && repeated.binary_search(&i).is_ok() {
            continue;
        }
        let own = sanitize::line_counting(&t.name, hidden);
        if own.is_empty() {
            continue;
        }
        let name = match names.of(&t.name) {
            seen if seen == t.name => own,
            seen => sanitize::line(seen),
        };
        let title = t
            .title
            .as_deref()
            .map(|x| sanitize::line_counting(x, hidden));
        let tool = expose.then(|| {
            let scheme_name = names.exposed(&t.name).cloned();
            ExposedTool::new(t, (name.clone(), scheme_name), title.clone())
        });
        // Hidden characters of a description count where the section shows it.
        let description = match (*behind || descriptions, &tool) {
            (false, _) => None,
            (true, Some(tool)) => {
                let (d, found) = tool.description_counted();
                hidden.add(found);
                d.map(str::to_string)
            }
            (true, None) => t
                .description
                .as_deref()
                .map(|d| sanitize::text_counting(d, hidden))
                .filter(|d| !d.is_empty()),
        };
        if *behind {
            index.push(ToolView {
                name,
                title,
                description: None,
                summary: description.as_deref().and_then(summary),
            });
        } else {
            loaded.push(ToolView {
                name,
                title,
                description,
                summary: None,
            });
        }
        exposed.extend(tool);
    }
    (exposed, (loaded, index))
}

/// Most characters of a summary in the tool index.
pub(crate) const SUMMARY_CHARS: usize = 100;

/// A deferred tool's line in the index: the first sentence (or list item)
/// of its sanitized description, on one line, cut at a word to
/// [`SUMMARY_CHARS`] with `…`.
pub(super) fn summary(description: &str) -> Option<String> {
    let units = segment::units(description);
    let first = units
        .iter()
        .find(|u| matches!(u.kind, UnitKind::Sentence | UnitKind::ListItem))
        .or_else(|| {
            units
                .iter()
                .find(|u| matches!(u.kind, UnitKind::Heading(_)))
        })?;
    let text = first.text(description).trim_start_matches('#');
    let line = sanitize::line(dedup::strip_list_marker(text.trim_start()));
    if line.chars().count() <= SUMMARY_CHARS {
        return Some(line).filter(|l| !l.is_empty());
    }
    let head: String = line.chars().take(SUMMARY_CHARS - 1).collect();
    // At a word when one ends in the second half, else mid-word.
    let cut = match head.rfind(' ') {
        Some(at) if head[..at].chars().count() >= SUMMARY_CHARS / 2 => &head[..at],
        _ => &head,
    };
    Some(format!("{}…", cut.trim_end_matches([' ', ',', ';', ':'])))
}

/// The descriptions de-duplication checks against: of loaded tools, and
/// of deferred ones (`deferred` per tool; under `hold`, `only` the
/// unchanged tools').
pub(super) fn descriptions(
    source: &ServerSnapshot,
    config: &Assembler,
    deferred: &[bool],
    only: Option<&BTreeSet<String>>,
) -> (Vec<Arc<ToolText>>, Vec<Arc<ToolText>>) {
    let (mut loaded, mut behind) = (Vec::new(), Vec::new());
    for (t, is_behind) in source.tools.iter().zip(deferred) {
        if only.is_some_and(|only| !only.contains(&t.name)) {
            continue;
        }
        if let Some(d) = t.description.as_deref() {
            let text = config.tool_texts.get(&t.name, d);
            if *is_behind {
                behind.push(text);
            } else {
                loaded.push(text);
            }
        }
    }
    (loaded, behind)
}
