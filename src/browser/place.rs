//! Where the browser believes it is: its time zone and its locale
//! (`--timezone`, `--locale`), so that a site shows the dates and the
//! formats the task means, and the prompt's clock reads as the page's.

use chromiumoxide::cdp::browser_protocol::emulation::{
    SetLocaleOverrideParams, SetTimezoneOverrideParams,
};
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use chromiumoxide::error::CdpError;
use chromiumoxide::Page;
use std::time::{SystemTime, UNIX_EPOCH};

/// A time zone and a locale for every tab of a session; `None` keeps the
/// machine's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Place {
    /// An IANA time zone, e.g. `Europe/Paris`.
    pub timezone: Option<String>,
    /// A BCP 47 locale, e.g. `de-DE`.
    pub locale: Option<String>,
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
