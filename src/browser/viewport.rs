//! The viewport: its size, its device scale factor, parsing `WxH` and `N`,
//! and the CDP override that applies them.

use std::fmt;
use std::str::FromStr;

use chromiumoxide::cdp::browser_protocol::emulation::SetDeviceMetricsOverrideParams;

/// Viewport size in CSS pixels, and the device pixels per CSS pixel its
/// screenshots are taken at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Viewport {
    /// Width in CSS pixels.
    pub width: u32,
    /// Height in CSS pixels.
    pub height: u32,
    /// Device scale factor (`--scale`): 2 takes screenshots of twice the
    /// width and height, as on a high-density screen.
    #[serde(default)]
    pub scale: DeviceScale,
}

impl Default for Viewport {
    fn default() -> Self {
        Self {
            width: 1280,
            height: 800,
            scale: DeviceScale::default(),
        }
    }
}

/// Device pixels per CSS pixel, from 0.5 to 4 (1 by default).
#[derive(Debug, Clone, Copy, PartialOrd, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct DeviceScale(f64);

impl DeviceScale {
    /// The factor.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl Default for DeviceScale {
    fn default() -> Self {
        Self(1.0)
    }
}

// Only finite values in range are ever built, so equality is total.
impl PartialEq for DeviceScale {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for DeviceScale {}

/// Why a viewport or a device scale cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ViewportError {
    /// Not `WIDTHxHEIGHT`.
    #[error("malformed viewport {0:?}: expected WIDTHxHEIGHT, e.g. 1280x800")]
    Malformed(String),
    /// A side out of range.
    #[error("viewport {0}x{1} out of range: each side must be 100 to {MAX_SIDE} pixels")]
    OutOfRange(u32, u32),
    /// A scale that is not a number.
    #[error("malformed device scale {0:?}: expected a number, e.g. 2")]
    MalformedScale(String),
    /// A scale out of range.
    #[error(
        "device scale {0} out of range: it must be from 0.5 to 4 (2 for a high-density screen)"
    )]
    ScaleOutOfRange(f64),
    /// Screenshots too large to decode.
    #[error(
        "viewport {viewport} at scale {scale} makes screenshots of {width}x{height} device pixels: \
         at most {MAX_SIDE} a side can be decoded (width or height × scale); make the viewport \
         or the scale smaller"
    )]
    TooLarge {
        /// The viewport, as given.
        viewport: String,
        /// Its scale.
        scale: f64,
        /// Screenshots' width in device pixels.
        width: u32,
        /// Their height.
        height: u32,
    },
}

impl TryFrom<f64> for DeviceScale {
    type Error = ViewportError;

    fn try_from(n: f64) -> Result<Self, Self::Error> {
        if (0.5..=4.0).contains(&n) {
            Ok(Self(n))
        } else {
            Err(ViewportError::ScaleOutOfRange(n))
        }
    }
}

impl From<DeviceScale> for f64 {
    fn from(s: DeviceScale) -> f64 {
        s.0
    }
}

impl FromStr for DeviceScale {
    type Err = ViewportError;

    /// Parses `2`, `1.5`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let n: f64 = s
            .trim()
            .parse()
            .map_err(|_| ViewportError::MalformedScale(s.to_string()))?;
        Self::try_from(n)
    }
}

impl fmt::Display for DeviceScale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Largest side accepted: beyond it screenshots get huge and Chromium slow.
const MAX_SIDE: u32 = 8192;

impl FromStr for Viewport {
    type Err = ViewportError;

    /// Parses `1280x800` (also `1280X800` and `1280×800`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || ViewportError::Malformed(s.to_string());
        let (w, h) = s.trim().split_once(['x', 'X', '×']).ok_or_else(bad)?;
        let width: u32 = w.trim().parse().map_err(|_| bad())?;
        let height: u32 = h.trim().parse().map_err(|_| bad())?;
        if !(100..=MAX_SIDE).contains(&width) || !(100..=MAX_SIDE).contains(&height) {
            return Err(ViewportError::OutOfRange(width, height));
        }
        Ok(Self {
            width,
            height,
            scale: DeviceScale::default(),
        })
    }
}

impl fmt::Display for Viewport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.width, self.height)
    }
}

impl Viewport {
    /// Refuses a size and scale whose screenshots could not be decoded: a
    /// side of more than `MAX_SIDE` device pixels (4000x4000 at scale 4
    /// is 16000 a side, a gigabyte a screenshot, past the decoder's limit).
    pub fn check_device_size(self) -> Result<Self, ViewportError> {
        let (width, height) = self.device_size();
        if width > MAX_SIDE || height > MAX_SIDE {
            return Err(ViewportError::TooLarge {
                viewport: self.to_string(),
                scale: self.scale.get(),
                width,
                height,
            });
        }
        Ok(self)
    }

    /// The size of its screenshots in device pixels.
    pub fn device_size(self) -> (u32, u32) {
        let s = self.scale.get();
        (
            (f64::from(self.width) * s).round() as u32,
            (f64::from(self.height) * s).round() as u32,
        )
    }

    pub(crate) fn to_cdp(self) -> chromiumoxide::handler::viewport::Viewport {
        chromiumoxide::handler::viewport::Viewport {
            width: self.width,
            height: self.height,
            device_scale_factor: Some(self.scale.get()),
            emulating_mobile: false,
            is_landscape: false,
            has_touch: false,
        }
    }

    pub(crate) fn metrics_override(self) -> SetDeviceMetricsOverrideParams {
        SetDeviceMetricsOverrideParams::new(
            self.width as i64,
            self.height as i64,
            self.scale.get(),
            false,
        )
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
                height: 1080,
                scale: DeviceScale::default(),
            })
        );
        assert_eq!("800×600".parse::<Viewport>().map(|v| v.width), Ok(800));
    }

    #[test]
    fn malformed_viewport_is_a_clear_error() {
        for bad in ["", "1280", "x800", "1280x", "axb", "-5x10", "1280x800x2"] {
            let err = bad.parse::<Viewport>().unwrap_err().to_string();
            assert!(err.contains("expected WIDTHxHEIGHT"), "{bad}: {err}");
        }
        let err = "10x10".parse::<Viewport>().unwrap_err().to_string();
        assert!(err.contains("out of range"), "{err}");
    }

    #[test]
    fn a_device_scale_is_a_number_in_range() {
        assert_eq!("2".parse::<DeviceScale>().map(DeviceScale::get), Ok(2.0));
        assert_eq!("1.5".parse::<DeviceScale>().map(DeviceScale::get), Ok(1.5));
        for bad in ["", "two", "0", "8", "NaN", "inf"] {
            assert!(bad.parse::<DeviceScale>().is_err(), "{bad}");
        }
        let vp = Viewport {
            scale: DeviceScale(2.0),
            ..Viewport::default()
        };
        assert_eq!(vp.device_size(), (2560, 1600));
    }
}
