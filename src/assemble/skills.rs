//! A server's skills (`skills/list`, the Skills extension) into its view:
//! sanitized to lines (names, descriptions and URIs by the rules of tool
//! descriptions, hidden characters counted in the report), de-duplicated
//! by URI, and, while a change awaits review under `hold` or `drop`,
//! without the skills the lock does not pin as they are.

use std::sync::Arc;

use super::prepare::Prepared;
use crate::dedup;
use crate::model::{ServerSnapshot, Skill};
use crate::pin::{Effect, Pin};
use crate::report::{ExposedSkill, Omission, ServerDiagnostic};
use crate::sanitize::{self, HiddenChars};
use crate::template::SkillView;

/// Puts the skills of `s` (within its limits) into `p`'s view and
/// exposure; a server with skills gets a block even without instructions.
pub(super) fn attach(p: &mut Prepared, s: &ServerSnapshot, (pin, effect): (&Pin, &Effect)) {
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
    let withheld = |v: &SkillView| {
        !matches!(effect, Effect::AsIs)
            && (pin.skills_added.contains(&v.uri) || pin.skills_changed.contains(&v.uri))
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
    let shown: Vec<_> = shown
        .into_iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(x, _)| x)
        .collect();
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
