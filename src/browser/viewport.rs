//! The viewport: its size, parsing `WxH`, and the CDP override that applies it.

use std::fmt;
use std::str::FromStr;

use chromiumoxide::cdp::browser_protocol::emulation::SetDeviceMetricsOverrideParams;

/// Viewport size in CSS pixels, at device scale factor 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Viewport {
    /// Width in CSS pixels.
    pub width: u32,
    /// Height in CSS pixels.
    pub height: u32,
}

impl Default for Viewport {
    fn default() -> Self {
        Self {
            width: 1280,
            height: 800,
        }
    }
}

/// Largest side accepted: beyond it screenshots get huge and Chromium slow.
const MAX_SIDE: u32 = 8192;

impl FromStr for Viewport {
    type Err = String;

    /// Parses `1280x800` (also `1280X800` and `1280×800`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("malformed viewport {s:?}: expected WIDTHxHEIGHT, e.g. 1280x800");
        let (w, h) = s.trim().split_once(['x', 'X', '×']).ok_or_else(bad)?;
        let width: u32 = w.trim().parse().map_err(|_| bad())?;
        let height: u32 = h.trim().parse().map_err(|_| bad())?;
        if !(100..=MAX_SIDE).contains(&width) || !(100..=MAX_SIDE).contains(&height) {
            return Err(format!(
                "viewport {width}x{height} out of range: each side must be 100 to {MAX_SIDE} pixels"
            ));
        }
        Ok(Self { width, height })
    }
}

impl fmt::Display for Viewport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.width, self.height)
    }
}

impl Viewport {
    pub(crate) fn to_cdp(self) -> chromiumoxide::handler::viewport::Viewport {
        chromiumoxide::handler::viewport::Viewport {
            width: self.width,
            height: self.height,
            device_scale_factor: Some(1.0),
            emulating_mobile: false,
            is_landscape: false,
            has_touch: false,
        }
    }

    pub(crate) fn metrics_override(self) -> SetDeviceMetricsOverrideParams {
        SetDeviceMetricsOverrideParams::new(self.width as i64, self.height as i64, 1.0, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_width_by_height() {
        assert_eq!(
            "1920x1080".parse::<Viewport>(),
            Ok(Viewport {
                width: 1920,
                height: 1080
            })
        );
        assert_eq!("800×600".parse::<Viewport>().map(|v| v.width), Ok(800));
    }

    #[test]
    fn malformed_viewport_is_a_clear_error() {
        for bad in ["", "1280", "x800", "1280x", "axb", "-5x10", "1280x800x2"] {
            let err = bad.parse::<Viewport>().unwrap_err();
            assert!(err.contains("expected WIDTHxHEIGHT"), "{bad}: {err}");
        }
        let err = "10x10".parse::<Viewport>().unwrap_err();
        assert!(err.contains("out of range"), "{err}");
    }
}
