//! `pin --review` and `pin --approve DIGEST`: an approval pins exactly
//! the text that was reviewed, or nothing.

use std::collections::BTreeMap;

use mcp_preamble::pin::{Approval, Lock, LockEntry, PinState};
use mcp_preamble::settings::{ServerKey, ToolFilter};
use mcp_preamble::{Limits, ServerSnapshot};

use crate::emit::emit_line;
use crate::error::CliError;

/// The servers to pin, by the key they are pinned under.
pub type Servers<'g> = BTreeMap<ServerKey, &'g ServerSnapshot>;

/// The entry `pin` writes for `s`: what the policy's filter sends of it.
pub fn entry_of(s: &ServerSnapshot, filter: Option<&ToolFilter>) -> LockEntry {
    LockEntry::sent(s, filter, &Limits::default())
}

/// A `--approve` value that names a review's digest: 12 to 64 lowercase
/// hex digits, `sha256:` before them allowed.
fn as_digest(value: &str) -> Option<&str> {
    let hex = value.strip_prefix("sha256:").unwrap_or(value);
    let ok = (12..=64).contains(&hex.len())
        && hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    ok.then_some(hex)
}

/// The `--approve` values as aliases: an alias stays itself; a digest
/// becomes the alias whose text has it now. A digest no server's text has
/// is refused, naming each server that changed since its pin, so that
/// nothing the reviewer did not see is pinned.
pub fn resolve(
    values: &[String],
    servers: &Servers,
    filters: &BTreeMap<String, ToolFilter>,
    old: &Lock,
) -> Result<Vec<String>, CliError> {
    let mut aliases = Vec::new();
    for value in values {
        let digest = match as_digest(value) {
            Some(d) if !servers.contains_key(value.as_str()) => d,
            _ => {
                aliases.push(value.clone());
                continue;
            }
        };
        let found = servers.iter().find(|(key, s)| {
            entry_of(s, filters.get(key.as_str()))
                .digest()
                .starts_with(digest)
        });
        match found {
            Some((key, _)) => aliases.push(key.as_str().to_string()),
            None => return Err(moved_on(value, servers, filters, old)),
        }
    }
    Ok(aliases)
}

/// The refusal of a digest no server says now, naming what they say.
fn moved_on(
    value: &str,
    servers: &Servers,
    filters: &BTreeMap<String, ToolFilter>,
    old: &Lock,
) -> CliError {
    let mut newer = Vec::new();
    for (key, s) in servers {
        let pin = check(old, s, filters.get(key.as_str()));
        if matches!(pin.state, PinState::Changed | PinState::New) {
            let now = entry_of(s, filters.get(key.as_str())).digest();
            newer.push(format!("{key} now has {} ({})", &now[..12], pin.summary()));
            for line in pin.diff.as_deref().unwrap_or("").lines() {
                emit_line(&format!("{key}:     {line}"));
            }
        }
    }
    let newer = if newer.is_empty() {
        "no server differs from its pin".to_string()
    } else {
        newer.join("; ")
    };
    CliError::Pin(format!(
        "--approve {value}: no server says the reviewed text any more; it changed since the review: {newer}; nothing was pinned (review it again: pin --review)"
    ))
}

fn check(old: &Lock, s: &ServerSnapshot, filter: Option<&ToolFilter>) -> mcp_preamble::pin::Pin {
    match filter {
        Some(f) => old.check_sent(s, f),
        None => old.check(s),
    }
}

/// `pin --review`: each new or changed server's diff and the digest to
/// approve exactly that text with; writes nothing.
pub fn review(servers: &Servers, filters: &BTreeMap<String, ToolFilter>, old: &Lock) -> usize {
    let mut waiting = 0;
    for (key, s) in servers {
        let pin = check(old, s, filters.get(key.as_str()));
        let what = match pin.state {
            PinState::New => "new".to_string(),
            PinState::Changed => format!("changed ({})", pin.summary()),
            _ => continue,
        };
        waiting += 1;
        let digest = entry_of(s, filters.get(key.as_str())).digest();
        emit_line(&format!("{key}: {what}, sha256 {digest}"));
        for line in pin.diff.as_deref().unwrap_or("").lines() {
            emit_line(&format!("    {line}"));
        }
        emit_line(&format!(
            "    approve exactly this: --approve {}",
            &digest[..12]
        ));
    }
    if waiting == 0 {
        emit_line("nothing awaits review");
    }
    waiting
}

/// Who approves: `--approver`, else the OS user.
pub fn approver(flag: Option<&str>) -> String {
    flag.map(str::to_string)
        .or_else(|| std::env::var("USER").ok().filter(|u| !u.is_empty()))
        .or_else(|| std::env::var("LOGNAME").ok().filter(|u| !u.is_empty()))
        .unwrap_or_else(os_uid)
}

/// The process's user id, for an environment without `USER`.
fn os_uid() -> String {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self")
        .map_or_else(|_| "unknown".to_string(), |m| format!("uid {}", m.uid()))
}

/// Records `by` on each entry of `lock` whose text differs from `old`'s;
/// an entry pinned again unchanged keeps its first approval (the same
/// servers give the same bytes).
pub fn record(old: &Lock, lock: &mut Lock, by: &str) {
    let keys: Vec<String> = lock.keys().map(str::to_string).collect();
    for key in keys {
        let Some(mut entry) = lock.get(&key).cloned() else {
            continue;
        };
        let before = old.get(&key);
        let approved = match before {
            Some(b) if b.digest() == entry.digest() => b.approved.clone(),
            _ => Some(Approval::now(by)),
        };
        if entry.approved != approved {
            entry.approved = approved;
            lock.insert(key, entry);
        }
    }
}
