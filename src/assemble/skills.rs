//! A server's skills (`skills/list`, the Skills extension) into its view:
//! sanitized to lines (names, descriptions and URIs by the rules of tool
//! descriptions, hidden characters counted in the report), de-duplicated
//! by URI, and, while a change awaits review under `hold` or `drop`,
//! without the skills the lock does not pin as they are.
//!
//! For a gateway (an assembler that keeps exposures) each URI is shown
//! under its server's alias, as the gateway serves it ([`gateway_uri`]):
//! behind one gateway two servers may serve the same URI, and a skill is
//! identified by its server and its URI together.

use std::sync::Arc;

use super::prepare::Prepared;
use crate::dedup;
use crate::model::{ServerSnapshot, Skill};
use crate::pin::{Effect, Pin, PinState};
use crate::report::{ExposedSkill, Omission, ServerDiagnostic};
use crate::sanitize::{self, HiddenChars};
use crate::template::SkillView;

/// Puts the skills of `s` (within its limits) into `p`'s view and
/// exposure; a server with skills gets a block even without instructions.
pub(super) fn attach(
    p: &mut Prepared,
    s: &ServerSnapshot,
    (pin, effect): (&Pin, &Effect),
    gateway: bool,
) {
    let mut skipped = s.skills_skipped.clone();
    let unread = skipped.len();
    if let Some(e) = &s.skills_error {
        skipped.push(format!("skills/list failed: {} ({})", e.message, e.code));
    }
    if s.skills.is_empty() || p.report.omitted == Some(Omission::Excluded) {
        note_skipped(p, skipped, unread);
        return;
    }
    // Pins name skills by their URI as one line, as the view does.
    // A server new to the lock has no skill pinned.
    let withheld = |v: &SkillView| {
        !matches!(effect, Effect::AsIs)
            && (pin.state == PinState::New
                || pin.skills_added.contains(&v.uri)
                || pin.skills_changed.contains(&v.uri))
    };
    let hidden = &mut p.report.hidden_characters;
    let listed: Vec<(&Skill, SkillView)> = s
        .skills
        .iter()
        .map(|k| (k, view(k, hidden)))
        .filter(|(_, v)| !withheld(v))
        .collect();
    let count = listed.len();
    let shown: Vec<(&Skill, SkillView)> = listed
        .into_iter()
        .filter(|(_, v)| !v.name.is_empty())
        .collect();
    let unnamed = count - shown.len();
    if unnamed > 0 {
        skipped.push(format!("{unnamed} with a name empty once sanitized"));
    }
    let keep = dedup::skills_to_keep(shown.iter().map(|(_, v)| v.uri.as_str()));
    let repeats = keep.iter().filter(|k| !**k).count();
    if repeats > 0 {
        skipped.push(format!(
            "{repeats} listed under the URI of an earlier skill"
        ));
    }
    let mut shown: Vec<_> = shown
        .into_iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(x, _)| x)
        .collect();
    if let Some(alias) = s.alias.as_deref().filter(|_| gateway) {
        for (_, v) in &mut shown {
            v.uri = gateway_uri(alias, &v.uri);
        }
    }
    if let Some(exposure) = p.exposure.as_mut().and_then(Arc::get_mut) {
        exposure.skills = shown.iter().map(|(k, v)| exposed(k, v)).collect();
    }
    p.view.skills = shown.into_iter().map(|(_, v)| v).collect();
    if !p.view.skills.is_empty()
        && matches!(p.report.omitted, Some(Omission::Empty | Omission::ToolOnly))
    {
        let gone = p.report.omitted.take().map(ServerDiagnostic::Omitted);
        p.report.notes.retain(|n| Some(n) != gone.as_ref());
    }
    note_skipped(p, skipped, unread + unnamed + repeats);
}

/// The skill as the template sees it.
fn view(k: &Skill, hidden: &mut HiddenChars) -> SkillView {
    SkillView {
        name: sanitize::line_counting(&k.name, hidden),
        description: sanitize::line_counting(&k.description, hidden),
        uri: sanitize::line_counting(&k.uri, hidden),
    }
}

/// The skill as the gateway serves it.
fn exposed(k: &Skill, v: &SkillView) -> ExposedSkill {
    let mut frontmatter = k.frontmatter.clone();
    if let Some(f) = frontmatter.as_object_mut() {
        f.insert("name".into(), v.name.clone().into());
        f.insert("description".into(), v.description.clone().into());
    } else {
        frontmatter = serde_json::json!({"name": v.name, "description": v.description});
    }
    ExposedSkill {
        uri: k.uri.clone(),
        shown_uri: v.uri.clone(),
        name: v.name.clone(),
        description: v.description.clone(),
        frontmatter,
        resources: k.resources.clone(),
    }
}

/// Reports the `count` skills not shown (and a failed `skills/list`), with why.
fn note_skipped(p: &mut Prepared, reasons: Vec<String>, count: usize) {
    if reasons.is_empty() {
        return;
    }
    let reasons = reasons.iter().map(|r| sanitize::line(r)).collect();
    p.report
        .note(ServerDiagnostic::SkillsSkipped { count, reasons });
}

/// The URI a gateway serves the skill file `uri` of upstream `alias` under:
/// the alias, percent-encoded, as the first segment after the scheme
/// (`skill://refunds/SKILL.md` of `billing` is
/// `skill://billing/refunds/SKILL.md`): an organizational prefix, so the
/// last segment is still the skill's name. A URI without `://` goes under
/// `skill://<alias>/`.
pub(crate) fn gateway_uri(alias: &str, uri: &str) -> String {
    let segment = percent_encode(alias);
    match uri.split_once("://") {
        Some((scheme, rest)) => format!("{scheme}://{segment}/{rest}"),
        None => format!("skill://{segment}/{uri}"),
    }
}

/// The upstream alias and URI of a URI made by [`gateway_uri`] from one
/// with a scheme; `None` when it has no alias segment.
#[cfg_attr(not(feature = "serve"), allow(dead_code))]
pub(crate) fn upstream_uri(uri: &str) -> Option<(String, String)> {
    let (scheme, rest) = uri.split_once("://")?;
    let (segment, rest) = rest.split_once('/')?;
    let alias = percent_decode(segment)?;
    Some((alias, format!("{scheme}://{rest}")))
}

/// Every byte but RFC 3986's unreserved characters as `%XX`.
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg_attr(not(feature = "serve"), allow(dead_code))]
fn percent_decode(s: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(s.len());
    let mut rest = s.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        if b == b'%' {
            let hex = std::str::from_utf8(tail.get(..2)?).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            rest = &tail[2..];
        } else {
            bytes.push(b);
            rest = tail;
        }
    }
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gateway_uris_go_both_ways() {
        for (alias, uri, served) in [
            (
                "billing",
                "skill://refunds/SKILL.md",
                "skill://billing/refunds/SKILL.md",
            ),
            (
                "a b/ü",
                "github://o/r/x/SKILL.md",
                "github://a%20b%2F%C3%BC/o/r/x/SKILL.md",
            ),
        ] {
            assert_eq!(gateway_uri(alias, uri), served);
            assert_eq!(
                upstream_uri(served),
                Some((alias.to_string(), uri.to_string()))
            );
        }
        assert_eq!(upstream_uri("skill://%ZZ/x"), None);
        assert_eq!(upstream_uri("skill://%C3/x"), None);
        assert_eq!(upstream_uri("no-scheme"), None);
    }
}
