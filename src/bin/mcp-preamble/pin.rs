//! `mcp-preamble pin`: what the servers say now, written to a lock file.

use std::collections::BTreeMap;
use std::process::ExitCode;

use mcp_preamble::ServerSnapshot;
use mcp_preamble::pin::{Lock, LockFile, PinState};
use mcp_preamble::settings::{ServerKey, ToolFilter};

use crate::approve::{self, Servers};
use crate::args::PinArgs;
use crate::emit::{emit_err, emit_line};
use crate::error::CliError;
use crate::load::{Gathered, load_inputs};
use crate::review::Review;
use crate::source::Source;

pub async fn pin(mut a: PinArgs) -> Result<ExitCode, CliError> {
    let filters = read_policy(&mut a)?;
    let mut gathered = load_inputs(&a.files, &a.connect).await?;
    gathered.close().await;
    let (servers, failed) = by_key(&gathered)?;
    let review = Review::open(a.lock.as_deref(), a.state.as_deref())?;
    // From reading the lock file to writing it, other `pin` runs wait:
    // each keeps the pins the others wrote. A shared state sets only the
    // pins that changed, each its own field.
    let file = match &review {
        Review::File(path) => Some(LockFile::open(path)?),
        _ => None,
    };
    let old = match &file {
        Some(file) => file.read()?,
        None => review.load().await?.unwrap_or_default(),
    };
    if a.review {
        approve::review(&servers, &filters, &old);
        return Ok(ExitCode::SUCCESS);
    }
    a.update = approve::resolve(&a.update, &servers, &filters, &old)?;
    check_updates(&a.update, &servers, &failed)?;

    // With --all the lock is made afresh: a failed server keeps its old
    // pin, a server no longer given loses it. Otherwise every pin is kept
    // and only new servers and the --update aliases are pinned.
    let mut lock = if a.all {
        let mut fresh = Lock::new();
        for key in &failed {
            if let Some(entry) = old.get(key.as_str()) {
                fresh.insert(key.as_str(), entry.clone());
            }
        }
        fresh
    } else {
        old.clone()
    };
    let mut held_back = Vec::new();
    for (key, s) in &servers {
        let key = key.as_str();
        if !pin_one(&a, &old, &mut lock, key, s, filters.get(key)) {
            held_back.push(key);
        }
    }
    report_left_out(&a, &old, &servers, &failed, &gathered.sources);
    approve::record(&old, &mut lock, &approve::approver(a.approver.as_deref()));

    match &review {
        Review::Shared(state) => match state.write(&old, &lock).await? {
            Some(revision) => emit_line(&format!("wrote {} (revision {revision})", state.shown())),
            None => emit_line(&format!("{}: no pin changed", state.shown())),
        },
        Review::File(path) => {
            if let Some(file) = &file {
                file.write(&lock)?;
            }
            emit_line(&format!("wrote {}", path.display()));
        }
        Review::None => {}
    }
    drop(file);
    if !held_back.is_empty() {
        emit_err(&format!(
            "changed since pinned and not pinned again: {} (review the diff, then pin with --update ALIAS or --all)",
            held_back.join(", ")
        ));
    }
    Ok(if failed.is_empty() && held_back.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The policy file's `[client]`: pin as the host that shares it; its
/// tool filters, by alias: pin what the model is sent.
fn read_policy(a: &mut PinArgs) -> Result<BTreeMap<String, ToolFilter>, CliError> {
    let mut filters = BTreeMap::new();
    if let Some(path) = &a.policy {
        let settings = mcp_preamble::settings::Settings::from_path(path)?;
        for (alias, s) in &settings.servers {
            if let Some(f) = s.tools.clone().filter(|f| !f.is_empty()) {
                filters.insert(alias.clone(), f);
            }
        }
        a.connect.client = settings.client;
    }
    Ok(filters)
}

/// The servers to pin, by the key they are pinned under, and the keys of
/// those that failed. Two servers under one key would overwrite each
/// other's pin.
fn by_key(gathered: &Gathered) -> Result<(Servers<'_>, Vec<ServerKey>), CliError> {
    let mut servers = Servers::new();
    for s in &gathered.snapshots {
        let key = ServerKey::of(s);
        if servers.insert(key.clone(), s).is_some() {
            return Err(invalid(format!(
                "two servers are named {:?}: give them different aliases",
                key.as_str()
            )));
        }
    }
    // Keyed as pins are. A server whose tools/list failed is not pinned
    // either: its tools are unknown.
    let mut failed: Vec<ServerKey> = gathered
        .sources
        .iter()
        .filter(|s| !s.ok)
        .map(|s| key_of(&s.alias))
        .collect();
    for (key, s) in &servers {
        if let Some(e) = &s.tools_error {
            emit_err(&format!(
                "{key}: tools/list failed ({}: {}); not pinned",
                e.code, e.message
            ));
            failed.push(key.clone());
        }
    }
    servers.retain(|key, _| !failed.contains(key));
    Ok((servers, failed))
}

/// The key a source's alias is pinned under.
fn key_of(alias: &str) -> ServerKey {
    ServerKey::alias(alias)
}

/// Each `--update` alias is a server's (one that failed counts).
fn check_updates(
    update: &[String],
    servers: &Servers,
    failed: &[ServerKey],
) -> Result<(), CliError> {
    for alias in update {
        if !servers.contains_key(alias.as_str()) && !failed.iter().any(|k| k == alias.as_str()) {
            let known: Vec<&str> = servers.keys().map(ServerKey::as_str).collect();
            return Err(invalid(format!(
                "--update {alias:?}: no server has this alias (known: {})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )));
        }
    }
    Ok(())
}

/// Pins one server into `lock` and says what happened; `false` when it
/// changed and is held back (neither `--all` nor `--update` for it).
fn pin_one(
    a: &PinArgs,
    old: &Lock,
    lock: &mut Lock,
    key: &str,
    s: &ServerSnapshot,
    filter: Option<&ToolFilter>,
) -> bool {
    let before = match filter {
        Some(f) => old.check_sent(s, f),
        None => old.check(s),
    };
    if before.state == PinState::Changed && !a.all && !a.update.iter().any(|u| u == key) {
        emit_line(&format!(
            "{key}: changed, not pinned again ({}); to accept: --update {key}",
            before.summary()
        ));
        for line in before.diff.as_deref().unwrap_or("").lines() {
            emit_line(&format!("    {line}"));
        }
        return false;
    }
    match filter {
        Some(f) => lock.pin_sent(s, f, &mcp_preamble::Limits::default()),
        None => lock.pin(s),
    }
    // Name and version are recorded but not compared: say when they moved.
    let moved = match (old.get(key), lock.get(key)) {
        (Some(a), Some(b)) if (&a.name, &a.version) != (&b.name, &b.version) => Some(format!(
            "{} {} -> {} {}",
            a.name, a.version, b.name, b.version
        )),
        _ => None,
    };
    let what = match (before.state, moved) {
        (PinState::Same, None) => "unchanged".to_string(),
        (PinState::Same, Some(moved)) => format!("pinned again ({moved}; same text)"),
        (PinState::New, _) => "pinned (new)".to_string(),
        (_, _) => format!("pinned again ({})", before.summary()),
    };
    emit_line(&format!("{key}: {what}"));
    true
}

/// The pins of servers no longer given, and the servers that failed.
fn report_left_out(
    a: &PinArgs,
    old: &Lock,
    servers: &Servers,
    failed: &[ServerKey],
    sources: &[Source],
) {
    for key in old
        .keys()
        .filter(|k| !servers.contains_key(*k) && !failed.iter().any(|f| f == k))
    {
        emit_line(&format!(
            "{key}: no longer given; {}",
            if a.all {
                "pin removed"
            } else {
                "pin kept (--all removes it)"
            }
        ));
    }
    for f in sources.iter().filter(|c| !c.ok) {
        let kept = if old.get(key_of(&f.alias).as_str()).is_some() {
            "its old pin is kept"
        } else {
            "not pinned"
        };
        emit_err(&format!(
            "{}: {}; {kept}",
            f.alias,
            f.error.as_deref().unwrap_or("failed")
        ));
        for line in f.stderr.lines() {
            emit_err(&format!("    stderr: {line}"));
        }
    }
}

fn invalid(detail: String) -> CliError {
    CliError::Pin(detail)
}
