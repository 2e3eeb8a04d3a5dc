//! Confirmation before destructive actions: a click or a key that would
//! delete, pay, send, or submit a form with a password or payment field waits
//! for a person's yes. Without a person to ask, the policy decides (deny by
//! default).

use std::path::PathBuf;
use std::sync::Arc;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// Words that make an action destructive, matched as whole words in the
/// element's name or its form's name.
pub const DEFAULT_WORDS: &[&str] = &[
    "delete",
    "remove",
    "purchase",
    "buy",
    "pay",
    "place order",
    "checkout",
    "cancel",
    "unsubscribe",
    "transfer",
    "send",
    "submit order",
    "close account",
    "deactivate",
];

/// What to do with a destructive action when nobody can be asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConfirmPolicy {
    /// Ask a person when one is there (a [`Confirmer`]); else deny.
    #[default]
    Ask,
    /// Never do it.
    Deny,
    /// Do it without asking.
    Allow,
    /// Hold it and end the run needing a person's answer, so that nothing
    /// waits on a terminal (`seamark serve`'s workers): `seamark resume
    /// --answer yes` (or `no`) gives it, and the run goes on.
    Park,
}

impl std::str::FromStr for ConfirmPolicy {
    type Err = crate::errors::UnknownWord;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "ask" => Ok(Self::Ask),
            "deny" => Ok(Self::Deny),
            "allow" => Ok(Self::Allow),
            "park" => Ok(Self::Park),
            other => Err(crate::errors::UnknownWord::new(
                other,
                "--confirm",
                "ask, deny, allow or park",
            )),
        }
    }
}

/// Roles whose actions are undone as easily as done: never held.
const REVERSIBLE: &[&str] = &[
    "checkbox",
    "radio",
    "switch",
    "textbox",
    "searchbox",
    "combobox",
    "option",
    "slider",
    "spinbutton",
    "tab",
    "treeitem",
    "listbox",
];

/// Whether an action on an element of `role` is undone as easily as done
/// (a box ticked, an option picked): such an action is never held.
pub fn is_reversible(role: &str) -> bool {
    REVERSIBLE.contains(&role)
}

/// What makes a click or an Enter destructive, as the page tells it: whether
/// it submits a form, the form's name, and the password or payment fields in
/// it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Danger {
    /// It submits a form.
    pub submits: bool,
    /// The form has a password field.
    pub password: bool,
    /// How many of its password fields hold something.
    pub passwords_filled: u32,
    /// The form has a payment field (a card number, a CVV).
    pub payment: bool,
    /// The form's name (its label, name or id).
    pub form: String,
    /// The text of what is acted on.
    pub text: String,
}

/// Why an action waits for a person's yes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HoldReason {
    /// Its name or text has a destructive word.
    Named(String),
    /// It submits a form whose name has one.
    FormNamed {
        /// The form's name.
        form: String,
        /// The word.
        word: String,
    },
    /// It submits a form with a payment field.
    Payment,
    /// It submits a form with a password field (and nothing else makes it
    /// destructive): a sign-in with the person's own secrets goes through.
    Password,
}

impl std::fmt::Display for HoldReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HoldReason::Named(w) => write!(f, "its name says \"{w}\""),
            HoldReason::FormNamed { form, word } => {
                write!(f, "it submits a form named \"{form}\" (\"{word}\")")
            }
            HoldReason::Payment => f.write_str("it submits a form with a payment field"),
            HoldReason::Password => f.write_str("it submits a form with a password field"),
        }
    }
}

/// An action held for confirmation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hold {
    /// The command, e.g. `CLICK:7`.
    pub command: String,
    /// The element, e.g. `button "Delete account"`.
    pub element: String,
    /// Why it is held, e.g. `its name says "delete"`.
    pub why: String,
    /// The page.
    pub url: String,
    /// The marked screenshot of the step, when there is one.
    pub screenshot: Option<PathBuf>,
}

impl Hold {
    /// The question a parked hold puts to the person.
    pub fn question(&self) -> String {
        format!(
            "Approve? seamark would {} on {} at {}, held because {}. Answer yes or no.",
            self.command, self.element, self.url, self.why
        )
    }
}

/// Who decided on a hold that waits for a person's answer after the run
/// (`--confirm park`).
pub const PARKED: &str = "parked for a person";

/// The decision, as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// What was held.
    pub hold: Hold,
    /// Whether it went ahead.
    pub allowed: bool,
    /// Who decided: `a person`, `--confirm allow`, `--confirm deny`, `no one to ask`.
    pub by: String,
}

impl Decision {
    /// Whether the hold was parked: the run ends and waits for the person.
    pub fn parked(&self) -> bool {
        !self.allowed && self.by == PARKED
    }
}

/// A person's answer to a parked hold, given when the run goes on: taken by
/// the first hold of the same element on the same page.
#[derive(Debug, Clone)]
struct Given {
    element: String,
    url: String,
    allowed: bool,
}

/// Someone who can say yes or no.
pub trait Confirmer: Send + Sync {
    /// Asks; true means go ahead.
    fn confirm(&self, hold: &Hold) -> bool;

    /// Why no one can be asked now (the action is then refused, and this is
    /// recorded as who decided); `None` when someone can.
    fn unavailable(&self) -> Option<String> {
        None
    }
}

/// The rule set: words, policy, and who to ask.
#[derive(Clone)]
pub struct ConfirmGuard {
    /// The policy.
    pub policy: ConfirmPolicy,
    words: Vec<(String, Regex)>,
    confirmer: Option<Arc<dyn Confirmer>>,
    /// Why even `allow` waits for a person now (a resumed run whose last
    /// commands' outcome is unknown): a destructive action is asked, or
    /// refused when no one can be asked.
    strict: Option<String>,
    /// The person's answer to the hold the run was parked on.
    given: Arc<std::sync::Mutex<Option<Given>>>,
    /// Whether what would be asked is parked instead: nobody is at the
    /// terminal, and a person answers later (`seamark resume --park`).
    park_asks: bool,
}

impl std::fmt::Debug for ConfirmGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfirmGuard")
            .field("policy", &self.policy)
            .field(
                "words",
                &self.words.iter().map(|(w, _)| w).collect::<Vec<_>>(),
            )
            .field("confirmer", &self.confirmer.is_some())
            .finish()
    }
}

impl Default for ConfirmGuard {
    fn default() -> Self {
        Self::new(
            ConfirmPolicy::default(),
            DEFAULT_WORDS.iter().map(|w| w.to_string()).collect(),
            None,
        )
    }
}

impl ConfirmGuard {
    /// A guard with these words (matched as whole words, any case).
    pub fn new(
        policy: ConfirmPolicy,
        words: Vec<String>,
        confirmer: Option<Arc<dyn Confirmer>>,
    ) -> Self {
        let words = words
            .into_iter()
            .filter(|w| !w.trim().is_empty())
            .filter_map(|w| {
                let pattern = format!(r"(?i)\b{}\b", regex::escape(w.trim()).replace(' ', r"\s+"));
                Regex::new(&pattern).ok().map(|r| (w, r))
            })
            .collect();
        Self {
            policy,
            words,
            confirmer,
            strict: None,
            given: Arc::default(),
            park_asks: false,
        }
    }

    /// Who is asked, if anyone.
    pub fn confirmer(&self) -> Option<Arc<dyn Confirmer>> {
        self.confirmer.clone()
    }

    /// The words that make an action destructive.
    pub fn words(&self) -> Vec<String> {
        self.words.iter().map(|(w, _)| w.clone()).collect()
    }

    /// The same rules, where even `allow` asks a person (and refuses when no
    /// one can be asked), for `why`.
    pub fn strict(mut self, why: impl Into<String>) -> Self {
        self.strict = Some(why.into());
        self
    }

    /// The same rules, with the person's answer to the hold a parked run
    /// waited on: the first hold of that element on that page takes it, as
    /// a person's yes or no.
    pub fn answered(mut self, hold: &Hold, allowed: bool) -> Self {
        self.given = Arc::new(std::sync::Mutex::new(Some(Given {
            element: hold.element.clone(),
            url: hold.url.clone(),
            allowed,
        })));
        self
    }

    /// The answer given for this hold, taken once.
    fn given_for(&self, hold: &Hold) -> Option<bool> {
        let mut given = self
            .given
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let fits = given
            .as_ref()
            .is_some_and(|g| g.element == hold.element && g.url == hold.url);
        fits.then(|| given.take().map(|g| g.allowed)).flatten()
    }

    /// The same rules, where what would be asked of a person is parked
    /// for their later answer (as `--confirm park`).
    pub fn parking(mut self) -> Self {
        self.park_asks = true;
        self
    }

    /// The same rules, asking this confirmer.
    pub fn with_confirmer(mut self, confirmer: Arc<dyn Confirmer>) -> Self {
        self.confirmer = Some(confirmer);
        self
    }

    /// The first destructive word found in `text`.
    pub fn word_in(&self, text: &str) -> Option<&str> {
        self.words
            .iter()
            .find(|(_, r)| r.is_match(text))
            .map(|(w, _)| w.as_str())
    }

    /// Why an action on an element of `role` named `name` must wait for a
    /// person, given what the page says of it (`danger`: none when it acts
    /// on nothing that submits or destroys); `None` when it may go.
    /// Ticking a box or picking an option is undone as easily, so only what
    /// acts (buttons, links, menu items, Enter in a form) is ever held.
    pub fn hold_reason(
        &self,
        role: Option<&str>,
        name: &str,
        danger: Option<&Danger>,
    ) -> Option<HoldReason> {
        if role.is_some_and(is_reversible) {
            return None;
        }
        let danger = danger?;
        if let Some(w) = self.word_in(name).or_else(|| self.word_in(&danger.text)) {
            return Some(HoldReason::Named(w.to_string()));
        }
        if danger.submits {
            if let Some(w) = self.word_in(&danger.form) {
                return Some(HoldReason::FormNamed {
                    form: danger.form.clone(),
                    word: w.to_string(),
                });
            }
            if danger.payment {
                return Some(HoldReason::Payment);
            }
            if danger.password {
                return Some(HoldReason::Password);
            }
        }
        None
    }

    /// Decides on a held action.
    pub fn decide(&self, hold: Hold) -> Decision {
        let policy = match (&self.strict, self.policy) {
            (Some(_), ConfirmPolicy::Allow) => ConfirmPolicy::Ask,
            (_, p) => p,
        };
        let policy = match policy {
            ConfirmPolicy::Ask if self.park_asks => ConfirmPolicy::Park,
            p => p,
        };
        let (allowed, by) = match (policy, &self.confirmer) {
            (ConfirmPolicy::Park, _) => match self.given_for(&hold) {
                Some(allowed) => (allowed, "a person".to_string()),
                None => (false, PARKED.to_string()),
            },
            (ConfirmPolicy::Ask, None) if self.strict.is_some() => (
                false,
                format!(
                    "{}, and no one to ask (no terminal)",
                    self.strict.as_deref().unwrap_or_default()
                ),
            ),
            (ConfirmPolicy::Allow, _) => (true, "--confirm allow".to_string()),
            (ConfirmPolicy::Deny, _) => (false, "--confirm deny".to_string()),
            (ConfirmPolicy::Ask, Some(c)) => match c.unavailable() {
                Some(why) => (false, why),
                None => (c.confirm(&hold), "a person".to_string()),
            },
            (ConfirmPolicy::Ask, None) => (false, "no one to ask (no terminal)".to_string()),
        };
        Decision { hold, allowed, by }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn submit(form: &str) -> Danger {
        Danger {
            submits: true,
            form: form.into(),
            text: "Go".into(),
            ..Danger::default()
        }
    }

    #[test]
    fn what_is_held_and_why_is_told_from_the_name_the_form_and_its_fields() {
        let guard = ConfirmGuard::default();
        let hold = |role: Option<&str>, name: &str, d: Option<&Danger>| {
            guard.hold_reason(role, name, d).map(|r| r.to_string())
        };
        // A destructive name holds, whatever the page says of a form.
        assert_eq!(
            hold(Some("button"), "Delete account", Some(&Danger::default())).as_deref(),
            Some("its name says \"delete\"")
        );
        // Nothing that submits or destroys: it goes.
        assert_eq!(hold(Some("button"), "Delete", None), None);
        // A box ticked is undone as easily: never held.
        assert_eq!(
            hold(Some("checkbox"), "Delete my data", Some(&submit(""))),
            None
        );
        // The form's name, then its fields, in that order.
        assert_eq!(
            hold(Some("button"), "Go", Some(&submit("checkout"))).as_deref(),
            Some("it submits a form named \"checkout\" (\"checkout\")")
        );
        let card = Danger {
            payment: true,
            password: true,
            ..submit("billing")
        };
        assert_eq!(
            guard.hold_reason(Some("button"), "Go", Some(&card)),
            Some(HoldReason::Payment)
        );
        let sign_in = Danger {
            password: true,
            ..submit("login")
        };
        assert_eq!(
            guard.hold_reason(None, "", Some(&sign_in)),
            Some(HoldReason::Password)
        );
        // A plain form that submits nothing dangerous goes.
        assert_eq!(
            hold(Some("button"), "Search", Some(&submit("search"))),
            None
        );
        // A link that does not submit, named harmlessly: it goes.
        let link = Danger {
            text: "Pricing".into(),
            ..Danger::default()
        };
        assert_eq!(hold(Some("link"), "Pricing", Some(&link)), None);
    }

    #[test]
    fn words_match_whole_words_in_any_case() {
        let g = ConfirmGuard::default();
        assert_eq!(g.word_in("Delete account"), Some("delete"));
        assert_eq!(g.word_in("PLACE   ORDER"), Some("place order"));
        assert_eq!(g.word_in("Buy now"), Some("buy"));
        assert_eq!(g.word_in("Buyer's guide"), None);
        assert_eq!(g.word_in("Payment history"), None);
        assert_eq!(g.word_in("Search"), None);
    }

    #[test]
    fn the_policy_decides_when_no_one_can_be_asked() {
        let hold = Hold {
            command: "CLICK:3".into(),
            element: "button \"Delete\"".into(),
            why: "its name says \"delete\"".into(),
            url: "http://x/".into(),
            screenshot: None,
        };
        let decide = |p| ConfirmGuard::new(p, vec!["delete".into()], None).decide(hold.clone());
        assert!(!decide(ConfirmPolicy::Ask).allowed);
        assert!(!decide(ConfirmPolicy::Deny).allowed);
        assert!(decide(ConfirmPolicy::Allow).allowed);
        struct Yes;
        impl Confirmer for Yes {
            fn confirm(&self, _: &Hold) -> bool {
                true
            }
        }
        let g = ConfirmGuard::new(
            ConfirmPolicy::Ask,
            vec!["delete".into()],
            Some(Arc::new(Yes)),
        );
        let d = g.decide(hold);
        assert!(d.allowed && d.by == "a person");
        assert_eq!("DENY".parse::<ConfirmPolicy>(), Ok(ConfirmPolicy::Deny));
        assert!("maybe".parse::<ConfirmPolicy>().is_err());
    }

    fn hold(element: &str) -> Hold {
        Hold {
            command: "CLICK:3".into(),
            element: element.into(),
            why: "its name says \"delete\"".into(),
            url: "http://127.0.0.1/a".into(),
            screenshot: None,
        }
    }

    #[test]
    fn a_parked_hold_takes_the_persons_answer_once_and_for_its_element_only() {
        let guard = ConfirmGuard::new(ConfirmPolicy::Park, vec!["delete".into()], None);
        let first = guard.decide(hold("button \"Delete\""));
        assert!(first.parked(), "{first:?}");
        assert!(first
            .hold
            .question()
            .starts_with("Approve? seamark would CLICK:3"));
        let answered = guard.answered(&hold("button \"Delete\""), true);
        let other = answered.decide(hold("button \"Delete all\""));
        assert!(other.parked(), "another element waits again");
        let yes = answered.decide(hold("button \"Delete\""));
        assert!(yes.allowed && yes.by == "a person", "{yes:?}");
        assert!(answered.decide(hold("button \"Delete\"")).parked(), "once");
    }

    #[test]
    fn parking_turns_what_would_be_asked_into_a_parked_hold() {
        let strict = ConfirmGuard::new(ConfirmPolicy::Allow, vec!["delete".into()], None)
            .strict("resumed after an unknown outcome");
        assert!(!strict.decide(hold("b")).parked(), "refused: no one to ask");
        assert!(strict.parking().decide(hold("b")).parked());
    }
}
