//! Phones and tablets (`--device`): a small table of current ones, and the
//! emulation that makes a page believe it is on one: its screen, its user
//! agent (and client hints), touch.
//!
//! The page is laid out at the device's width whether or not it has a
//! viewport meta tag. A phone would lay a page without one out 980 pixels
//! wide and zoom it out to fit, which makes its text unreadable in a
//! screenshot and puts the page's pixels where its CSS boxes are not. A page
//! made for phones (the meta tag) looks the same either way, and its media
//! queries, user agent sniffing, `pointer: coarse` and touch events are the
//! phone's.

use chromiumoxide::cdp::browser_protocol::emulation::{
    SetTouchEmulationEnabledParams, SetUserAgentOverrideParams, UserAgentBrandVersion,
    UserAgentMetadata,
};
use chromiumoxide::error::CdpError;
use chromiumoxide::Page;

use super::viewport::{DeviceScale, Viewport};

/// The operating system a device runs, which shapes its user agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceOs {
    /// Apple's iOS or iPadOS, with Safari's user agent.
    Ios,
    /// Android, with Chrome's user agent (of the Chromium that runs).
    Android,
}

/// A phone or a tablet seamark can be.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Device {
    /// Its name, as `--device` takes it (any case; spaces or dashes).
    pub name: &'static str,
    /// Its screen's width in CSS pixels, held upright.
    pub width: u32,
    /// Its screen's height in CSS pixels, held upright.
    pub height: u32,
    /// Device pixels per CSS pixel.
    pub scale: f64,
    /// Its operating system.
    pub os: DeviceOs,
    /// The model as its user agent names it (Android), or the kind (iOS:
    /// `iPhone`, `iPad`).
    pub model: &'static str,
    /// A phone (`Mobile` in its user agent), else a tablet.
    pub mobile: bool,
    /// It has a touch screen: CLICK is a tap, SCROLL a swipe.
    pub touch: bool,
}

/// The devices `--device` knows, as `seamark devices` lists them.
pub const DEVICES: &[Device] = &[
    phone("iPhone 16 Pro", 402, 874, 3.0, DeviceOs::Ios, "iPhone"),
    phone("iPhone 16 Pro Max", 440, 956, 3.0, DeviceOs::Ios, "iPhone"),
    phone("iPhone 15", 393, 852, 3.0, DeviceOs::Ios, "iPhone"),
    phone("iPhone SE", 375, 667, 2.0, DeviceOs::Ios, "iPhone"),
    phone("Pixel 9", 412, 923, 2.625, DeviceOs::Android, "Pixel 9"),
    phone("Pixel 8", 412, 915, 2.625, DeviceOs::Android, "Pixel 8"),
    phone("Galaxy S24", 360, 780, 3.0, DeviceOs::Android, "SM-S921B"),
    phone(
        "Galaxy A55",
        384,
        832,
        2.8125,
        DeviceOs::Android,
        "SM-A556B",
    ),
    tablet("iPad Air", 820, 1180, 2.0, DeviceOs::Ios, "iPad"),
    tablet("iPad mini", 744, 1133, 2.0, DeviceOs::Ios, "iPad"),
    tablet("iPad Pro 13", 1032, 1376, 2.0, DeviceOs::Ios, "iPad"),
    tablet(
        "Galaxy Tab S9",
        800,
        1280,
        2.0,
        DeviceOs::Android,
        "SM-X710",
    ),
];

const fn phone(
    name: &'static str,
    width: u32,
    height: u32,
    scale: f64,
    os: DeviceOs,
    model: &'static str,
) -> Device {
    Device {
        name,
        width,
        height,
        scale,
        os,
        model,
        mobile: true,
        touch: true,
    }
}

const fn tablet(
    name: &'static str,
    width: u32,
    height: u32,
    scale: f64,
    os: DeviceOs,
    model: &'static str,
) -> Device {
    Device {
        mobile: false,
        ..phone(name, width, height, scale, os, model)
    }
}

/// A `--device` name the table does not hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no device is called {name:?}; `seamark devices` lists them: {known}")]
pub struct UnknownDevice {
    /// The name given.
    pub name: String,
    /// The names the table holds.
    pub known: String,
}

/// The name's letters and digits, lowercased: `iphone-15`, `iPhone 15` and
/// `IPHONE_15` are one name.
fn folded(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

impl Device {
    /// The device called `name` (case, spaces, dashes and underscores
    /// aside).
    pub fn named(name: &str) -> Result<&'static Device, UnknownDevice> {
        let wanted = folded(name);
        DEVICES
            .iter()
            .find(|d| folded(d.name) == wanted)
            .ok_or_else(|| UnknownDevice {
                name: name.to_string(),
                known: DEVICES
                    .iter()
                    .map(|d| d.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// Its screen as seamark's viewport.
    pub fn viewport(&self) -> Viewport {
        Viewport {
            width: self.width,
            height: self.height,
            // Every scale of the table is in range (its test).
            scale: DeviceScale::try_from(self.scale).unwrap_or_default(),
        }
    }

    /// The user agent it sends, with `chrome_major` the version of the
    /// Chromium that runs (an Android device's Chrome is that Chromium).
    pub fn user_agent(&self, chrome_major: &str) -> String {
        match (self.os, self.model) {
            (DeviceOs::Ios, kind) => {
                let os = if kind == "iPad" {
                    "CPU OS 18_1"
                } else {
                    "CPU iPhone OS 18_1"
                };
                format!(
                    "Mozilla/5.0 ({kind}; {os} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like \
                     Gecko) Version/18.1 Mobile/15E148 Safari/604.1"
                )
            }
            (DeviceOs::Android, model) => format!(
                "Mozilla/5.0 (Linux; Android 14; {model}) AppleWebKit/537.36 (KHTML, like Gecko) \
                 Chrome/{chrome_major}.0.0.0 {}Safari/537.36",
                if self.mobile { "Mobile " } else { "" }
            ),
        }
    }

    /// What `navigator.platform` says on it.
    fn platform(&self) -> &'static str {
        match (self.os, self.model) {
            (DeviceOs::Ios, "iPad") => "iPad",
            (DeviceOs::Ios, _) => "iPhone",
            (DeviceOs::Android, _) => "Linux armv8l",
        }
    }

    /// The user agent override of a page: the string, the platform, and on
    /// Android the client hints Chrome sends there (`Sec-CH-UA-Mobile`,
    /// `navigator.userAgentData`). Safari sends none.
    fn user_agent_override(&self, chrome_major: &str) -> SetUserAgentOverrideParams {
        let mut params = SetUserAgentOverrideParams::new(self.user_agent(chrome_major));
        params.platform = Some(self.platform().to_string());
        if self.os == DeviceOs::Android {
            let brand = |name: &str, version: &str| UserAgentBrandVersion::new(name, version);
            params.user_agent_metadata = Some(UserAgentMetadata {
                brands: Some(vec![
                    brand("Chromium", chrome_major),
                    brand("Google Chrome", chrome_major),
                    brand("Not-A.Brand", "99"),
                ]),
                full_version_list: None,
                platform: "Android".into(),
                platform_version: "14.0.0".into(),
                architecture: String::new(),
                model: self.model.into(),
                mobile: self.mobile,
                bitness: None,
                wow64: None,
                form_factors: None,
            });
        }
        params
    }

    /// Makes `page` this device: its user agent and platform, and touch
    /// (up to five fingers, as a phone reports). The screen's size and scale
    /// are the session's viewport, set with the rest of its metrics.
    pub(crate) async fn emulate(&self, page: &Page, chrome_major: &str) -> Result<(), CdpError> {
        page.execute(self.user_agent_override(chrome_major)).await?;
        let mut touch = SetTouchEmulationEnabledParams::new(self.touch);
        touch.max_touch_points = self.touch.then_some(5);
        page.execute(touch).await?;
        Ok(())
    }
}

/// The Chromium version an Android user agent names when the running one
/// cannot be read (and in `seamark devices`, where none runs).
pub const FALLBACK_CHROME: &str = "131";

/// The major version in a product string: `HeadlessChrome/156.0.8078.73`
/// or `Chrome/156.0.8078.73` gives `156`.
pub(crate) fn chrome_major(product: &str) -> String {
    product
        .rsplit('/')
        .next()
        .and_then(|v| v.split('.').next())
        .filter(|major| !major.is_empty() && major.chars().all(|c| c.is_ascii_digit()))
        .unwrap_or(FALLBACK_CHROME)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_is_found_by_its_name_in_any_spelling() {
        for name in ["iPhone 15", "iphone-15", "IPHONE_15", " iphone15 "] {
            assert_eq!(Device::named(name).map(|d| d.width), Ok(393), "{name}");
        }
        let err = Device::named("Nokia 3310").unwrap_err();
        assert!(
            err.to_string().contains("Pixel 8") && err.to_string().contains("\"Nokia 3310\""),
            "{err}"
        );
    }

    #[test]
    fn every_device_has_a_name_of_its_own_and_a_screen_seamark_can_shoot() {
        let mut names: Vec<String> = DEVICES.iter().map(|d| folded(d.name)).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), DEVICES.len());
        for d in DEVICES {
            assert!(d.viewport().check_device_size().is_ok(), "{}", d.name);
            assert_eq!(d.viewport().scale.get(), d.scale, "{}", d.name);
        }
    }

    #[test]
    fn user_agents_say_phone_or_tablet_and_the_running_chrome() {
        let pixel = Device::named("Pixel 8").unwrap();
        let ua = pixel.user_agent("156");
        assert!(
            ua.contains("Android 14; Pixel 8") && ua.contains("Chrome/156.0.0.0 Mobile Safari")
        );
        let tab = Device::named("Galaxy Tab S9").unwrap().user_agent("156");
        assert!(!tab.contains("Mobile"), "{tab}");
        let ipad = Device::named("iPad Air").unwrap().user_agent("156");
        assert!(ipad.starts_with("Mozilla/5.0 (iPad; CPU OS"), "{ipad}");
        assert_eq!(chrome_major("HeadlessChrome/156.0.8078.73"), "156");
        assert_eq!(chrome_major("garbage"), "131");
    }
}
