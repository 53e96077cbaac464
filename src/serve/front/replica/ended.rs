//! Sessions a `DELETE` ended before their ids expire: the id still opens
//! with the key, so each replica keeps the ended ones and refuses them.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use super::unix_now;

/// The most ended sessions a replica keeps. None is forgotten before its
/// id expires: past this many, a `DELETE` here is refused (503, the
/// session stays open) until some expire, so a flood of opened and ended
/// sessions can never bring an ended one back.
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

impl List {
    fn put(&mut self, sid: &str, exp: u64) {
        if let Some(old) = self.expiry.insert(sid.to_string(), exp) {
            self.by_expiry.remove(&(old, sid.to_string()));
        }
        self.by_expiry.insert((exp, sid.to_string()));
    }
}

/// The sessions ended, here or on another replica.
pub(in crate::serve) struct Ended {
    list: Mutex<List>,
    tell: Mutex<Option<Tell>>,
    /// [`MAX_ENDED`], smaller in tests.
    cap: usize,
}

impl Default for Ended {
    fn default() -> Self {
        Ended::with_cap(MAX_ENDED)
    }
}

impl Ended {
    fn list(&self) -> MutexGuard<'_, List> {
        self.list.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(in crate::serve) fn with_cap(cap: usize) -> Ended {
        Ended {
            list: Mutex::default(),
            tell: Mutex::default(),
            cap,
        }
    }

    /// Records `sid` ended until `exp`, told by another replica: kept
    /// whatever the count (that replica refused past its own cap, and the
    /// shared state past its own), never pushing another one out.
    #[cfg_attr(not(feature = "state-redis"), allow(dead_code))]
    pub(in crate::serve) fn insert(&self, sid: &str, exp: u64) {
        if exp < unix_now() || sid.len() > MAX_SID {
            return;
        }
        self.list().put(sid, exp);
    }

    /// Records `sid` ended until `exp` before a `DELETE` here ends it,
    /// when there is room (ids already expired are dropped first); `false`
    /// when the record is full: the `DELETE` is refused.
    pub(super) fn reserve(&self, sid: &str, exp: u64) -> bool {
        if sid.len() > MAX_SID {
            return false;
        }
        let mut list = self.list();
        let now = unix_now();
        while let Some((first, _)) = list.by_expiry.first()
            && *first < now
        {
            if let Some((_, gone)) = list.by_expiry.pop_first() {
                list.expiry.remove(&gone);
            }
        }
        if !list.expiry.contains_key(sid) && list.expiry.len() >= self.cap {
            return false;
        }
        list.put(sid, exp);
        true
    }

    /// A reservation whose `DELETE` failed: the session was not ended.
    pub(super) fn unreserve(&self, sid: &str) {
        let mut list = self.list();
        if let Some(exp) = list.expiry.remove(sid) {
            list.by_expiry.remove(&(exp, sid.to_string()));
        }
    }

    pub(super) fn contains(&self, sid: &str) -> bool {
        self.list().expiry.contains_key(sid)
    }

    /// A session a `DELETE` ended here (recorded by [`Ended::reserve`]):
    /// told on.
    pub(super) fn end(&self, sid: &str, exp: u64) {
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

    /// The flood of issue 54 (65,600 sessions opened and ended) in small:
    /// a cap of 8, and 20 more ended sessions tried. No ended id is
    /// forgotten before it expires; past the cap a `DELETE` is refused.
    #[test]
    fn a_flood_of_ended_sessions_never_brings_one_back() {
        let ended = Ended::with_cap(8);
        let far = unix_now() + 1_000;
        assert!(ended.reserve("victim", unix_now() + 10));
        for i in 0..7 {
            assert!(ended.reserve(&format!("s{i}"), far + i));
        }
        for i in 7..27 {
            assert!(!ended.reserve(&format!("s{i}"), far + i), "{i}");
        }
        assert!(ended.contains("victim"), "the soonest to expire is kept");
        assert_eq!(ended.len(), 8);
        // Ended again (a second DELETE of the same id): room for it.
        assert!(ended.reserve("s3", far + 50));
        assert_eq!(ended.len(), 8);
        // A DELETE that failed gives its room back.
        ended.unreserve("s3");
        assert!(ended.reserve("new", far));
        // Told by another replica: kept past the cap.
        ended.insert("elsewhere", far);
        assert_eq!(ended.len(), 9);
        assert!(ended.contains("elsewhere"));
        // Expired ids make room.
        let short = Ended::with_cap(2);
        short.list().put("gone", unix_now() - 5);
        short.list().put("gone-too", unix_now() - 1);
        assert!(short.reserve("next", far));
        assert!(!short.contains("gone"));
        assert_eq!(short.len(), 1);
    }
}
