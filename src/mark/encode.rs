//! Encoding the marked image for the model: PNG (fast compression), JPEG or
//! lossless WebP, an optional downscale to a maximum long edge, and a base64
//! data URL.

use std::io::Cursor;
use std::str::FromStr;

use base64::Engine;
use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use image::codecs::webp::WebPEncoder;
use image::{ExtendedColorType, ImageEncoder, RgbImage};

/// Default long edge of the image sent to the model (a common vision-model limit).
pub const DEFAULT_LONG_EDGE: u32 = 1568;

/// Errors of encoding.
#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    /// The encoder failed.
    #[error("cannot encode the image as {0}: {1}")]
    Encode(&'static str, image::ImageError),
}

/// An image format for the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Encoding {
    /// PNG with fast compression: exact, the default.
    #[default]
    Png,
    /// JPEG at the given quality (1–100): smallest, lossy.
    Jpeg(u8),
    /// Lossless WebP.
    Webp,
}

impl Encoding {
    /// MIME type.
    pub fn mime(self) -> &'static str {
        match self {
            Encoding::Png => "image/png",
            Encoding::Jpeg(_) => "image/jpeg",
            Encoding::Webp => "image/webp",
        }
    }

    /// Usual file extension.
    pub fn extension(self) -> &'static str {
        match self {
            Encoding::Png => "png",
            Encoding::Jpeg(_) => "jpg",
            Encoding::Webp => "webp",
        }
    }
}

impl FromStr for Encoding {
    type Err = crate::errors::UnknownWord;

    /// `png`, `webp`, `jpeg` (quality 80) or `jpeg:Q`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim().to_ascii_lowercase();
        match s.as_str() {
            "png" => Ok(Encoding::Png),
            "webp" => Ok(Encoding::Webp),
            "jpeg" | "jpg" => Ok(Encoding::Jpeg(80)),
            other => {
                let q = other
                    .strip_prefix("jpeg:")
                    .or_else(|| other.strip_prefix("jpg:"))
                    .and_then(|q| q.parse::<u8>().ok())
                    .filter(|q| (1..=100).contains(q));
                q.map(Encoding::Jpeg).ok_or_else(|| {
                    crate::errors::UnknownWord::new(
                        &s,
                        "an image format",
                        "png, webp, jpeg or jpeg:QUALITY (1-100)",
                    )
                })
            }
        }
    }
}

/// Encodes an RGB image.
pub fn encode(img: &RgbImage, encoding: Encoding) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::new();
    let (w, h) = img.dimensions();
    match encoding {
        Encoding::Png => {
            PngEncoder::new_with_quality(&mut out, CompressionType::Fast, FilterType::Adaptive)
                .write_image(img.as_raw(), w, h, ExtendedColorType::Rgb8)
                .map_err(|e| EncodeError::Encode("PNG", e))?
        }
        Encoding::Jpeg(q) => JpegEncoder::new_with_quality(Cursor::new(&mut out), q)
            .write_image(img.as_raw(), w, h, ExtendedColorType::Rgb8)
            .map_err(|e| EncodeError::Encode("JPEG", e))?,
        Encoding::Webp => WebPEncoder::new_lossless(&mut out)
            .write_image(img.as_raw(), w, h, ExtendedColorType::Rgb8)
            .map_err(|e| EncodeError::Encode("WebP", e))?,
    }
    Ok(out)
}

/// Shrinks the image so that its long edge is at most `long_edge` (never enlarges).
pub fn downscale(img: &RgbImage, long_edge: u32) -> Option<RgbImage> {
    let (w, h) = img.dimensions();
    let (nw, nh) = sent_size(w, h, long_edge);
    ((nw, nh) != (w, h)).then(|| shrink(img, nw, nh))
}

/// The size an image of `w`×`h` is sent at: shrunk so its long edge is at
/// most `long_edge` (0: never shrunk). Points the model gives are in it.
pub fn sent_size(w: u32, h: u32, long_edge: u32) -> (u32, u32) {
    let long = w.max(h);
    if long_edge == 0 || long <= long_edge {
        return (w, h);
    }
    let f = f64::from(long_edge) / f64::from(long);
    let nw = ((f64::from(w) * f).round() as u32).max(1);
    let nh = ((f64::from(h) * f).round() as u32).max(1);
    (nw, nh)
}

/// The image shrunk to `w`×`h` by area averaging (each output pixel the
/// mean of the input pixels it covers: sharp enough for the digits), with
/// SIMD (`fast_image_resize`: a tenth of the time of `image`'s own
/// `thumbnail`); `image`'s when that cannot run.
pub fn shrink(img: &RgbImage, w: u32, h: u32) -> RgbImage {
    use fast_image_resize::{images::Image, FilterType, PixelType, ResizeAlg, ResizeOptions};
    let src = fast_image_resize::images::ImageRef::new(
        img.width(),
        img.height(),
        img.as_raw(),
        PixelType::U8x3,
    );
    let mut dst = Image::new(w, h, PixelType::U8x3);
    let options = ResizeOptions::new().resize_alg(ResizeAlg::Convolution(FilterType::Box));
    let resized = src.map_err(|e| e.to_string()).and_then(|src| {
        fast_image_resize::Resizer::new()
            .resize(&src, &mut dst, &options)
            .map_err(|e| e.to_string())
    });
    match resized
        .ok()
        .and_then(|()| RgbImage::from_raw(w, h, dst.into_vec()))
    {
        Some(small) => small,
        None => image::imageops::thumbnail(img, w, h),
    }
}

/// The marked image as a run keeps it (PNG, full size) and as the model
/// gets it: PNG, shrunk to a `long_edge` long edge when larger, in base64.
pub fn for_model(img: &RgbImage, long_edge: u32) -> Result<(Vec<u8>, String), EncodeError> {
    let png = encode(img, Encoding::Png)?;
    let sent = match downscale(img, long_edge) {
        Some(small) => encode(&small, Encoding::Png)?,
        None => png.clone(),
    };
    let b64 = base64::engine::general_purpose::STANDARD.encode(sent);
    Ok((png, b64))
}

/// A `data:` URL of encoded bytes.
pub fn data_url(bytes: &[u8], encoding: Encoding) -> String {
    format!(
        "data:{};base64,{}",
        encoding.mime(),
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_parse_and_bad_ones_say_what_is_expected() {
        assert_eq!("PNG".parse(), Ok(Encoding::Png));
        assert_eq!("jpeg:55".parse(), Ok(Encoding::Jpeg(55)));
        assert_eq!("jpg".parse(), Ok(Encoding::Jpeg(80)));
        for bad in ["gif", "jpeg:0", "jpeg:101", "jpeg:x"] {
            let err = bad.parse::<Encoding>().unwrap_err().to_string();
            assert!(err.contains("takes png, webp, jpeg"), "{bad}: {err}");
        }
    }

    #[test]
    fn every_encoding_round_trips_the_size() {
        let img = RgbImage::from_fn(40, 30, |x, y| image::Rgb([x as u8 * 6, y as u8 * 8, 90]));
        for enc in [Encoding::Png, Encoding::Jpeg(80), Encoding::Webp] {
            let bytes = encode(&img, enc).unwrap();
            let back = image::load_from_memory(&bytes).unwrap();
            assert_eq!((back.width(), back.height()), (40, 30), "{enc:?}");
        }
        let png = encode(&img, Encoding::Png).unwrap();
        let back = image::load_from_memory(&png).unwrap().to_rgb8();
        assert_eq!(back, img, "PNG is exact");
    }

    #[test]
    fn downscale_keeps_aspect_and_never_enlarges() {
        let img = RgbImage::new(3136, 1000);
        let small = downscale(&img, 1568).unwrap();
        assert_eq!(small.dimensions(), (1568, 500));
        assert!(downscale(&RgbImage::new(800, 600), 1568).is_none());
    }

    #[test]
    fn data_url_names_the_type() {
        assert!(data_url(b"abc", Encoding::Webp).starts_with("data:image/webp;base64,YWJj"));
    }
}
