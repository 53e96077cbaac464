//! Each stdio server starts as the leader of a process group of its own, so
//! ending it ends what it started too: `npx` starts `node`, and killing
//! `npx` alone leaves `node` running with no parent. Every group still
//! alive is listed, so that [`end_servers`] can end them all when the host
//! process is told to stop (a signal's default action runs no destructor).

use std::collections::BTreeSet;
use std::process::ExitStatus;
use std::sync::Mutex;
use std::time::Duration;

use tokio::process::{Child, Command};

/// How long a server's group has after SIGTERM before SIGKILL.
pub(crate) const TERM_WAIT: Duration = Duration::from_millis(300);

/// The groups started and not yet ended, by id (the leader's pid).
static LIVE: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

/// Makes the process `command` starts the leader of a new process group.
pub(crate) fn own_group(command: &mut Command) -> &mut Command {
    #[cfg(unix)]
    command.process_group(0);
    command
}

/// A started server's process group: listed while it lives; dropping it
/// kills every member that is left.
#[derive(Debug)]
pub(crate) struct Group(Option<u32>);

impl Group {
    /// The group `child` leads (started through [`own_group`]).
    pub fn of(child: &Child) -> Group {
        let id = child.id();
        if let Some(id) = id {
            crate::support::lock(&LIVE).insert(id);
        }
        Group(id)
    }

    /// Ends the group: SIGTERM to every member, SIGKILL to what is left
    /// after [`TERM_WAIT`]; then the leader's status.
    pub async fn end(mut self, child: &mut Child) -> std::io::Result<ExitStatus> {
        if let Some(id) = self.0 {
            signal(id, Stop::Term);
            settle(&[id], TERM_WAIT).await;
        }
        self.kill();
        child.wait().await
    }

    /// After the leader ended on its own: what it left behind is ended too.
    pub async fn left_behind(mut self) {
        if let Some(id) = self.0
            && alive(id)
        {
            signal(id, Stop::Term);
            settle(&[id], TERM_WAIT).await;
        }
        self.kill();
    }

    fn kill(&mut self) {
        if let Some(id) = self.0.take() {
            signal(id, Stop::Kill);
            crate::support::lock(&LIVE).remove(&id);
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Ends every stdio server this process started and has not ended yet,
/// with what each started (their process groups): SIGTERM to all, SIGKILL
/// to what is left 300 ms later. For a host's SIGTERM or Ctrl-C handler,
/// where the process is about to exit without running destructors;
/// `mcp-preamble wrap` and `serve` call it on both. Returns how many
/// groups it signalled.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// // Nothing started: nothing to end.
/// assert_eq!(mcp_preamble::connect::end_servers().await, 0);
/// # }
/// ```
pub async fn end_servers() -> usize {
    let ids: Vec<u32> = std::mem::take(&mut *crate::support::lock(&LIVE))
        .into_iter()
        .collect();
    for &id in &ids {
        signal(id, Stop::Term);
    }
    settle(&ids, TERM_WAIT).await;
    for &id in &ids {
        signal(id, Stop::Kill);
    }
    ids.len()
}

/// Waits until none of the groups `ids` has a member left, or `wait`.
async fn settle(ids: &[u32], wait: Duration) {
    let deadline = tokio::time::Instant::now() + wait;
    while ids.iter().any(|&id| alive(id)) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[derive(Clone, Copy)]
enum Stop {
    Term,
    Kill,
}

#[cfg(unix)]
fn pgid(id: u32) -> Option<nix::unistd::Pid> {
    // 0 and 1 are not groups of ours (0 would be this process's own).
    i32::try_from(id)
        .ok()
        .filter(|&id| id > 1)
        .map(nix::unistd::Pid::from_raw)
}

#[cfg(unix)]
fn signal(id: u32, stop: Stop) {
    use nix::sys::signal::{Signal, killpg};
    let sig = match stop {
        Stop::Term => Signal::SIGTERM,
        Stop::Kill => Signal::SIGKILL,
    };
    if let Some(group) = pgid(id) {
        // ESRCH: the group is gone already.
        let _ = killpg(group, sig);
    }
}

/// Whether the group has a member left (an unreaped leader counts).
#[cfg(unix)]
fn alive(id: u32) -> bool {
    pgid(id).is_some_and(|group| nix::sys::signal::killpg(group, None).is_ok())
}

// Elsewhere the leader alone is killed (tokio's `kill_on_drop`).
#[cfg(not(unix))]
fn signal(_: u32, _: Stop) {}

#[cfg(not(unix))]
fn alive(_: u32) -> bool {
    false
}
