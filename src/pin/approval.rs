//! Who approved a pin, and when: recorded in the lock (version 4) and in
//! the shared review state with each entry.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// Who pinned a server's entry and when (lock version 4; absent in older
/// locks and for entries pinned before).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Approval {
    /// The approver: `pin --approver`, else the OS user (one safe line).
    pub by: String,
    /// When, in UTC (RFC 3339, seconds: `2026-12-03T17:40:02Z`).
    pub at: String,
}

impl Approval {
    /// An approval by `by` now.
    pub fn now(by: &str) -> Approval {
        let secs = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Approval::at(by, secs)
    }

    /// An approval by `by` at `unix_seconds`.
    pub fn at(by: &str, unix_seconds: u64) -> Approval {
        Approval {
            by: crate::sanitize::line(by),
            at: rfc3339(unix_seconds),
        }
    }
}

/// `unix_seconds` as an RFC 3339 UTC time (days to a civil date as in
/// Howard Hinnant's public-domain `civil_from_days`).
fn rfc3339(unix_seconds: u64) -> String {
    let days = (unix_seconds / 86_400) as i64;
    let secs = unix_seconds % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_796_319_602), "2026-12-03T17:40:02Z");
        assert_eq!(Approval::at("ann\u{202e}", 0).by, "ann");
    }
}
