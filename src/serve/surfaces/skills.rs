//! The Skills extension behind the gateway (`skills/list`, `skills/get`).
//!
//! `skills/list` is every upstream's skills as the hub's assembly exposed
//! them (sanitized and de-duplicated, as the section shows them), in one
//! page, each under the URI the section shows: its upstream's alias as the
//! first segment after the scheme (`skill://billing/refunds/SKILL.md`),
//! so two upstreams' skills never collide and the name (the last segment)
//! is the skill's own. The files of its manifest are renamed the same way.
//! `skills/get` goes to the upstream that owns the URI (a listed one, or
//! one whose first segment names an upstream: the extension lets a host
//! ask for a skill it was not listed), under the upstream's own URI; the
//! answer comes back renamed, its name and description sanitized, and an
//! upstream's error comes back with its code and its message as one line.

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ClientRequest, CustomRequest, GetSkillRequestParams, GetSkillResult, ListSkillsResult,
    ServerResult,
};
use serde_json::{Value, json};

use crate::assemble::skills::{gateway_uri, upstream_uri};
use crate::report::ExposedSkill;
use crate::sanitize;
use crate::serve::surfaces::Surfaces;
use crate::serve::upstream::send::Outbound;

impl Surfaces {
    /// Every upstream's exposed skills, in section order.
    pub(in crate::serve) fn skills_list(&self) -> ListSkillsResult {
        let section = self.hub.section();
        let mut skills = Vec::new();
        for exposure in section.assembly().exposures() {
            let Some(alias) = exposure.alias.as_deref() else {
                continue;
            };
            skills.extend(exposure.skills.iter().filter_map(|k| wire_skill(alias, k)));
        }
        ListSkillsResult::with_all_items(skills)
    }

    /// `skills/get`, forwarded to the upstream that owns `params.uri`.
    pub(in crate::serve) async fn skills_get(
        &self,
        params: GetSkillRequestParams,
    ) -> Result<GetSkillResult, McpError> {
        let unknown = || {
            McpError::invalid_params(
                format!("no skill is served at {}", sanitize::line(&params.uri)),
                None,
            )
        };
        let (alias, own) = self.skill_owner(&params.uri).ok_or_else(unknown)?;
        let request = CustomRequest::new("skills/get", Some(json!({ "uri": own })));
        let out = Outbound::method(&alias, "skills/get", ClientRequest::CustomRequest(request));
        let answer = match self
            .upstreams()
            .send(out.naming_errors(), std::future::pending())
            .await?
        {
            ServerResult::CustomResult(custom) => custom.0,
            other => serde_json::to_value(other).unwrap_or_default(),
        };
        let skill = answer.get("skill").ok_or_else(|| {
            McpError::internal_error(
                format!("upstream {alias:?}: skills/get result has no skill"),
                None,
            )
        })?;
        let read = crate::wire::read_skill(skill).map_err(|why| {
            McpError::internal_error(
                format!("upstream {alias:?}: {}", sanitize::line(&why)),
                None,
            )
        })?;
        let exposed = ExposedSkill {
            shown_uri: gateway_uri(&alias, &sanitize::line(&read.uri)),
            name: sanitize::line(&read.name),
            description: sanitize::line(&read.description),
            frontmatter: read.frontmatter.clone(),
            resources: read.resources.clone(),
            uri: read.uri,
        };
        let wire = wire_skill(&alias, &exposed).ok_or_else(unknown)?;
        Ok(GetSkillResult::new(wire))
    }

    /// The upstream and its own URI of a URI the gateway serves.
    /// The upstream and own URI of a skill's file as `skills/list` serves
    /// it (its `SKILL.md` or a file of its manifest), for `resources/read`;
    /// `None` for any other URI.
    pub(in crate::serve) fn skill_file_owner(&self, uri: &str) -> Option<(String, String)> {
        let section = self.hub.section();
        for exposure in section.assembly().exposures() {
            let Some(alias) = exposure.alias.as_deref() else {
                continue;
            };
            for k in &exposure.skills {
                if k.shown_uri == uri {
                    return Some((alias.to_string(), k.uri.clone()));
                }
                let crate::model::SkillResources::Files(files) = &k.resources else {
                    continue;
                };
                let served = |f: &&crate::model::SkillFile| {
                    gateway_uri(alias, &sanitize::line(&f.uri)) == uri
                };
                if let Some(f) = files.iter().find(served) {
                    return Some((alias.to_string(), f.uri.clone()));
                }
            }
        }
        None
    }

    fn skill_owner(&self, uri: &str) -> Option<(String, String)> {
        let section = self.hub.section();
        for exposure in section.assembly().exposures() {
            let Some(alias) = exposure.alias.as_deref() else {
                continue;
            };
            if let Some(k) = exposure.skills.iter().find(|k| k.shown_uri == uri) {
                return Some((alias.to_string(), k.uri.clone()));
            }
        }
        let (alias, own) = upstream_uri(uri)?;
        self.upstreams().holds(&alias).then_some((alias, own))
    }
}

/// A skill as the gateway serves it: the section's URI, the sanitized name
/// and description over the frontmatter as sent, the files renamed; `None`
/// when rmcp's type cannot hold it.
fn wire_skill(alias: &str, k: &ExposedSkill) -> Option<rmcp::model::Skill> {
    let mut frontmatter = match &k.frontmatter {
        Value::Object(f) => f.clone(),
        _ => serde_json::Map::new(),
    };
    frontmatter.insert("name".into(), k.name.clone().into());
    frontmatter.insert("description".into(), k.description.clone().into());
    let resources = match &k.resources {
        crate::model::SkillResources::Files(files) => Value::Array(
            files
                .iter()
                .map(|f| json!({"uri": gateway_uri(alias, &sanitize::line(&f.uri)), "digest": f.digest, "size": f.size}))
                .collect(),
        ),
        crate::model::SkillResources::Dynamic(_) => json!("dynamic"),
    };
    let skill = json!({"uri": k.shown_uri, "frontmatter": frontmatter, "resources": resources});
    serde_json::from_value(skill).ok()
}
