//! The wall clock, written as the journal, the reports and the logs write it:
//! UTC, to the second, without a time-zone database.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The environment variable that fixes seamark's clock (`2026-03-14T09:26:53Z`):
/// the date and time the prompt tells the model, for tests and for runs
/// that must be replayed as they were.
pub const NOW_ENV: &str = "SEAMARK_NOW";

/// seamark's clock: the moment [`NOW_ENV`] fixes, else the system's.
pub fn now() -> SystemTime {
    std::env::var(NOW_ENV)
        .ok()
        .and_then(|v| parse_utc_rfc3339(&v))
        .unwrap_or_else(SystemTime::now)
}

/// `YYYY-MM-DDTHH:MM:SSZ` (what [`utc_rfc3339`] writes) as a moment.
pub fn parse_utc_rfc3339(text: &str) -> Option<SystemTime> {
    let t = text.trim().strip_suffix('Z')?;
    let (date, time) = t.split_once('T')?;
    let d: Vec<i64> = date
        .split('-')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let h: Vec<i64> = time
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let (&[y, m, d], &[hh, mm, ss]) = (&d[..], &h[..]) else {
        return None;
    };
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    // Howard Hinnant's days-from-civil.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = u64::try_from(days * 86_400 + hh * 3600 + mm * 60 + ss).ok()?;
    Some(UNIX_EPOCH + Duration::from_secs(secs))
}

/// `YYYYMMDD-HHMMSS` in UTC.
pub fn utc_stamp(t: SystemTime) -> String {
    let (y, mo, d, h, mi, s) = civil(t);
    format!("{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}")
}

/// RFC 3339 in UTC, to the second.
pub fn utc_rfc3339(t: SystemTime) -> String {
    let (y, mo, d, h, mi, s) = civil(t);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// A moment as RFC 3339 in UTC to the millisecond
/// (`2026-12-07T21:30:00.123Z`), for records whose order within a second
/// matters.
pub fn utc_rfc3339_millis(t: SystemTime) -> String {
    let (y, mo, d, h, mi, s) = civil(t);
    let ms = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_millis())
        .unwrap_or(0);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z")
}

/// Calendar date and time of a moment, UTC (Howard Hinnant's days-to-civil).
fn civil(t: SystemTime) -> (i64, u32, u32, u32, u32, u32) {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (
        y,
        m,
        d,
        (rem / 3600) as u32,
        (rem % 3600 / 60) as u32,
        (rem % 60) as u32,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_moment_reads_back() {
        for secs in [0, 951_782_400, 1_700_000_000, 1_796_558_400] {
            let t = UNIX_EPOCH + Duration::from_secs(secs);
            assert_eq!(parse_utc_rfc3339(&utc_rfc3339(t)), Some(t));
        }
        for bad in [
            "",
            "2026-13-01T00:00:00Z",
            "2026-01-01 00:00:00",
            "soon",
            "2026-01-01T00:00Z",
        ] {
            assert_eq!(parse_utc_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn dates() {
        let t = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(utc_rfc3339(t), "2023-11-14T22:13:20Z");
        let t = t + Duration::from_millis(7);
        assert_eq!(utc_rfc3339_millis(t), "2023-11-14T22:13:20.007Z");
        assert_eq!(
            utc_stamp(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "20000229-000000"
        );
    }
}
