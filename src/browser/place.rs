//! Where the browser believes it is: its time zone and its locale
//! (`--timezone`, `--locale`), so that a site shows the dates and the
//! formats the task means, and the prompt's clock reads as the page's.

use chromiumoxide::cdp::browser_protocol::emulation::{
    SetLocaleOverrideParams, SetTimezoneOverrideParams,
};
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use chromiumoxide::error::CdpError;
use chromiumoxide::Page;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// A time zone and a locale for every tab of a session; `None` keeps the
/// machine's. And, for a run done again against a recording, the clock.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Place {
    /// An IANA time zone, e.g. `Europe/Paris`.
    pub timezone: Option<String>,
    /// A BCP 47 locale, e.g. `de-DE`.
    pub locale: Option<String>,
    /// The pages' clock and `Math.random` fixed (`--fixed-clock`).
    pub clock: Option<PageClock>,
}

/// A time zone or a locale the browser would refuse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlaceError {
    /// A time zone IANA's database lacks.
    #[error(
        "{0:?} is not a time zone of IANA's database (e.g. Europe/Paris, America/New_York, UTC)"
    )]
    Zone(String),
    /// A locale that is no BCP 47 tag.
    #[error("{0:?} is not a BCP 47 locale (e.g. de-DE, en-US, pt-BR): {1}")]
    Locale(String, String),
}

impl Place {
    /// `name` when it is a time zone of IANA's database (as bundled, so
    /// the same on every machine), which the browser takes too.
    pub fn checked_zone(name: &str) -> Result<String, PlaceError> {
        let fine = !name.is_empty() && jiff::tz::db().get(name).is_ok();
        fine.then(|| name.to_string())
            .ok_or_else(|| PlaceError::Zone(name.to_string()))
    }

    /// `tag` when it is a well-formed BCP 47 locale, as ICU (the browser's
    /// too) reads one.
    pub fn checked_locale(tag: &str) -> Result<String, PlaceError> {
        icu_locale_core::Locale::try_from_str(tag)
            .map(|_| tag.to_string())
            .map_err(|e| PlaceError::Locale(tag.to_string(), format!("{e:?}")))
    }
}

/// A clock that starts at a given moment when the session starts and runs
/// from there, and a `Math.random` that gives the same numbers each time:
/// a recorded app runs again as it ran (its dates, its shuffles).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageClock {
    /// The moment the clock shows at `since`.
    pub start: SystemTime,
    /// When the session started.
    pub since: Instant,
    /// The seed of `Math.random`.
    pub seed: u32,
}

impl PageClock {
    /// A clock showing `start` now, with the usual seed.
    pub fn starting(start: SystemTime) -> PageClock {
        PageClock {
            start,
            since: Instant::now(),
            seed: 0x5EA_4A2C,
        }
    }

    /// What it shows now.
    pub fn now(&self) -> SystemTime {
        self.start + self.since.elapsed()
    }

    /// The script run in every document before its own: `Date` and
    /// `Date.now()` read this clock (a `Date` of a given time is as ever),
    /// and `Math.random` is a seeded generator (mulberry32).
    fn script(&self) -> String {
        let ms = |t: SystemTime| t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
        let start = ms(self.now());
        // The real moment that `start` is, so each document reads the same
        // clock whenever it loads.
        let real = ms(SystemTime::now());
        let seed = self.seed;
        format!(
            r#"(() => {{
  const Real = Date, realNow = Real.now.bind(Real), shift = {start} - {real};
  const now = () => realNow() + shift;
  function Fixed(...a) {{
    if (!new.target) return new Real(now()).toString();
    return a.length === 0 ? new Real(now()) : new Real(...a);
  }}
  Fixed.prototype = Real.prototype;
  Fixed.now = now; Fixed.parse = Real.parse; Fixed.UTC = Real.UTC;
  Object.defineProperty(Real.prototype, 'constructor', {{ value: Fixed, writable: true, configurable: true }});
  globalThis.Date = Fixed;
  let s = {seed} >>> 0;
  Math.random = () => {{
    s = (s + 0x6D2B79F5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }};
}})();"#
        )
    }
}

impl Place {
    /// Sets the page's time zone and locale (`Emulation.setTimezoneOverride`,
    /// `Emulation.setLocaleOverride`): its `Date` and `Intl` follow them.
    pub(crate) async fn apply(&self, page: &Page) -> Result<(), CdpError> {
        if let Some(tz) = &self.timezone {
            page.execute(SetTimezoneOverrideParams::new(tz.clone()))
                .await?;
        }
        if let Some(locale) = &self.locale {
            page.execute(SetLocaleOverrideParams {
                locale: Some(locale.clone()),
            })
            .await?;
        }
        if let Some(clock) = &self.clock {
            super::intercept::script_first(page, &clock.script()).await?;
        }
        Ok(())
    }
}

/// The moment `now` as the prompt tells it, in the page's time zone (its
/// own, or the one `--timezone` set), formatted by the browser's ICU:
/// `2026-12-06 12:40 Sunday, Europe/Paris (GMT+1); 2026-12-06 11:40 UTC`.
/// `None` when the page cannot say (a crashed page): the caller falls back
/// to UTC.
pub async fn local_time(page: &Page, now: SystemTime) -> Option<String> {
    let ms = now.duration_since(UNIX_EPOCH).ok()?.as_millis();
    let js = format!(
        r#"(() => {{
  const d = new Date({ms});
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  const part = (o) => Object.fromEntries(new Intl.DateTimeFormat('en-US', Object.assign({{ timeZone: zone, hourCycle: 'h23' }}, o)).formatToParts(d).map(p => [p.type, p.value]));
  const p = part({{ year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', weekday: 'long', timeZoneName: 'shortOffset' }});
  return `${{p.year}}-${{p.month}}-${{p.day}} ${{p.hour}}:${{p.minute}} ${{p.weekday}}, ${{zone}} (${{p.timeZoneName}})`;
}})()"#
    );
    let params = EvaluateParams::builder()
        .expression(js)
        .return_by_value(true)
        .build()
        .ok()?;
    let answer = tokio::time::timeout(
        std::time::Duration::from_secs(2),
        page.evaluate_expression(params),
    )
    .await
    .ok()?
    .ok()?;
    answer.value()?.as_str().map(str::to_string)
}
