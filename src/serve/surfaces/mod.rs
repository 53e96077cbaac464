//! What the gateway serves besides tools: prompts, resources, skills,
//! subscriptions and the notifications that tell hosts of changes.

pub(crate) mod catalog;
pub(crate) mod lists;
pub(crate) mod notify;
pub(crate) mod prompts;
pub(crate) mod resources;
pub(crate) mod skills;
pub(crate) mod subscribe;
pub(crate) mod uri;
