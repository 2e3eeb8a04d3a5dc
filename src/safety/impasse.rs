//! Impasses the orchestrator recognises by itself, so that a run does not spin
//! on them: CAPTCHA widgets and bot-check pages, login walls, HTTP error pages.

use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use chromiumoxide::Page;
use serde::Serialize;

/// An impasse on the page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Impasse {
    /// A CAPTCHA or bot check: reCAPTCHA, hCaptcha, Turnstile, DataDome, an interstitial.
    Captcha {
        /// Which one.
        which: String,
    },
    /// A page that wants a login before anything else.
    LoginWall,
    /// The server answered with an error status.
    HttpError {
        /// The status.
        status: i64,
    },
}

impl Impasse {
    /// What the model is told.
    pub fn describe(&self) -> String {
        match self {
            Impasse::Captcha { which } => format!(
                "this page shows a CAPTCHA ({which}): a person must solve it. Do not try to solve \
                 it; STOP with that reason unless it goes away"
            ),
            Impasse::LoginWall => "this page asks to sign in (a login wall) and no secret was \
                 given for it: sign in only with credentials the task gives, else STOP with that reason"
                .into(),
            Impasse::HttpError { status } => {
                format!("the server answered HTTP {status}: this is an error page")
            }
        }
    }
}

/// Reads the page (nothing is changed) for signs of an impasse.
const PROBE_JS: &str = r#"(() => {
  const q = s => document.querySelector(s);
  const frames = [...document.querySelectorAll('iframe')].map(f => f.src || '');
  const has = re => frames.some(s => re.test(s));
  const text = (document.body ? document.body.innerText : '').slice(0, 8000).toLowerCase();
  const title = (document.title || '').toLowerCase();
  let captcha = null;
  if (q('.g-recaptcha, #g-recaptcha, .grecaptcha-badge') || has(/recaptcha/)) captcha = 'reCAPTCHA';
  else if (q('.h-captcha') || has(/hcaptcha\.com/)) captcha = 'hCaptcha';
  else if (q('.cf-turnstile') || has(/challenges\.cloudflare\.com/)) captcha = 'Cloudflare Turnstile';
  else if (has(/captcha-delivery\.com|geo\.captcha/)) captcha = 'DataDome';
  else if (/just a moment|attention required|access denied|pardon our interruption/.test(title)
           || q('#challenge-form, #cf-challenge-running, #challenge-stage')) captcha = 'a bot-check page';
  else if (/verify (that )?you are (a )?human|are you a robot|not a robot|complete the security check/.test(text)) captcha = 'a human check';
  const pw = [...document.querySelectorAll('input[type=password]')]
    .some(i => i.getClientRects().length > 0 && getComputedStyle(i).visibility !== 'hidden');
  const login = pw && /sign in|log in|login|sign-in|log-in/.test(text + ' ' + title) && text.length < 3000;
  const nav = performance.getEntriesByType('navigation')[0];
  return { captcha, login, status: (nav && nav.responseStatus) || 0 };
})()"#;

/// The impasse the page shows, if any (a CAPTCHA first, then an error status,
/// then a login wall).
pub async fn detect(page: &Page) -> Option<Impasse> {
    let mut params = EvaluateParams::new(PROBE_JS);
    params.return_by_value = Some(true);
    let reply = page.execute(params).await.ok()?;
    let v = reply.result.result.value.clone()?;
    if let Some(which) = v["captcha"].as_str() {
        return Some(Impasse::Captcha {
            which: which.to_string(),
        });
    }
    let status = v["status"].as_i64().unwrap_or(0);
    if status >= 400 {
        return Some(Impasse::HttpError { status });
    }
    (v["login"] == serde_json::Value::Bool(true)).then_some(Impasse::LoginWall)
}
