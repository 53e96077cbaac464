//! A server's block as a namespace description: what Codex and OpenAI tool
//! search show per server, of which about the first 512 characters are
//! surfaced. A room per server, so it starts with the one-line framing
//! the built-ins give a block in a room of its own (who wrote the text and
//! what it cannot do, `template::FRAMING`), not the section's heading and
//! paragraph; then whole units, constraints first, within a character cap.
//! A cap too small for the framing and a few words of text gets the text
//! alone.

use std::collections::{HashMap, HashSet};

use super::prepare::Prepared;
use crate::dedup;
use crate::report::Namespace;
use crate::segment;
use crate::template::FRAMING;

/// The fewest characters of text a framed description leaves room for.
const LEAST_TEXT: usize = 40;

/// The namespace description of `p` within `max` characters; `texts` are
/// every server's de-duplicated instructions by shown name (a twin uses
/// its first's). `None` for a server with no instructions.
pub(super) fn describe(
    p: &Prepared,
    texts: &HashMap<String, Option<String>>,
    max: usize,
) -> Option<Namespace> {
    let own = p.whole.clone().or_else(|| p.view.instructions.clone());
    let text = match &p.twin_of {
        Some(first) => texts.get(first).cloned().flatten().or(own)?,
        None => own?,
    };
    let names: HashSet<String> = p
        .view
        .tools
        .iter()
        .chain(&p.view.deferred)
        .map(|t| dedup::normalize(&t.name))
        .collect();
    let units = segment::units(&text);
    let mut order: Vec<(usize, dedup::Priority)> = units
        .iter()
        .enumerate()
        .map(|(k, u)| (k, dedup::priority(u, u.text(&text), &names)))
        .collect();
    // Constraints first; the text's own order within a priority.
    order.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let framing = FRAMING.chars().count() + 1;
    let framed = max >= framing + LEAST_TEXT;
    let room = if framed { max - framing } else { max };
    let mut out = String::new();
    let mut chars = 0;
    let mut kept = 0;
    for (k, _) in order {
        let unit = units[k].text(&text).trim();
        let len = unit.chars().count();
        let sep = usize::from(!out.is_empty());
        if chars + sep + len <= room {
            if sep == 1 {
                out.push('\n');
            }
            out.push_str(unit);
            chars += sep + len;
            kept += 1;
        } else if out.is_empty() && room > 0 {
            // The first unit alone is over the cap: cut at a word.
            let head: String = unit.chars().take(room - 1).collect();
            let at = head
                .rfind(' ')
                .filter(|at| *at > head.len() / 2)
                .unwrap_or(head.len());
            out = format!("{}…", head[..at].trim_end());
            chars = out.chars().count();
            kept += 1;
        }
    }
    if framed {
        out = format!("{FRAMING}\n{out}");
        chars += framing;
    }
    Some(Namespace {
        text: out,
        chars,
        max_chars: max,
        units_left_out: units.len() - kept,
    })
}
