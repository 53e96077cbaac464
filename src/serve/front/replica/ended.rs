//! Sessions a `DELETE` ended before their ids expire: the id still opens
//! with the key, so each replica keeps the ended ones and refuses them.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use super::unix_now;

/// The most ended sessions a replica keeps: past it, each one ended
/// pushes out the one that expires first.
pub(super) const MAX_ENDED: usize = 65_536;

/// The longest local session id recorded as ended (rmcp's are UUIDs).
pub(super) const MAX_SID: usize = 256;

/// Told of each session a `DELETE` ended here: local id and expiry (the
/// shared state, so that other replicas refuse it too).
pub(in crate::serve) type Tell = Arc<dyn Fn(&str, u64) + Send + Sync>;

/// Local session id to expiry, ordered by expiry too.
#[derive(Default)]
struct List {
    expiry: HashMap<String, u64>,
    by_expiry: BTreeSet<(u64, String)>,
}

/// The sessions ended, here or on another replica.
#[derive(Default)]
pub(in crate::serve) struct Ended {
    list: Mutex<List>,
    tell: Mutex<Option<Tell>>,
}

impl Ended {
    fn list(&self) -> MutexGuard<'_, List> {
        self.list.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records `sid` ended until `exp` (from here or another replica).
    pub(in crate::serve) fn insert(&self, sid: &str, exp: u64) {
        if exp < unix_now() || sid.len() > MAX_SID {
            return;
        }
        let mut list = self.list();
        match list.expiry.get(sid) {
            Some(&old) => {
                list.by_expiry.remove(&(old, sid.to_string()));
            }
            // Room for the new one: expired ones sort first, so they go
            // before any live one.
            None if list.expiry.len() >= MAX_ENDED => {
                if let Some((_, first)) = list.by_expiry.pop_first() {
                    list.expiry.remove(&first);
                }
            }
            None => {}
        }
        list.expiry.insert(sid.to_string(), exp);
        list.by_expiry.insert((exp, sid.to_string()));
    }

    pub(super) fn contains(&self, sid: &str) -> bool {
        self.list().expiry.contains_key(sid)
    }

    /// A session a `DELETE` ended here: recorded, and told on.
    pub(super) fn end(&self, sid: &str, exp: u64) {
        self.insert(sid, exp);
        let tell = self.tell.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(tell) = tell {
            tell(sid, exp);
        }
    }

    /// From now on, each session ended here is told to `tell`.
    #[cfg_attr(not(feature = "state-redis"), allow(dead_code))]
    pub(in crate::serve) fn tell(&self, tell: Tell) {
        *self.tell.lock().unwrap_or_else(|e| e.into_inner()) = Some(tell);
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        let list = self.list();
        assert_eq!(list.expiry.len(), list.by_expiry.len());
        list.expiry.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ended_list_forgets_the_soonest_to_expire_first() {
        let ended = Ended::default();
        let far = unix_now() + 1_000;
        for i in 0..MAX_ENDED {
            ended.insert(&format!("s{i}"), far + (i as u64 % 7));
        }
        ended.insert("soon", unix_now() + 10);
        assert_eq!(ended.len(), MAX_ENDED);
        assert!(ended.contains("soon"));
        // Full: the next one pushes out the soonest to expire.
        ended.insert("late", far + 100);
        assert_eq!(ended.len(), MAX_ENDED);
        assert!(!ended.contains("soon"));
        assert!(ended.contains("late"));
        // Recorded again with another expiry: one entry, the new expiry.
        ended.insert("late", far + 200);
        assert_eq!(ended.len(), MAX_ENDED);
        assert!(ended.contains("late"));
    }
}
