//! What a step's prompt costs in tokens, counted before it is sent: the text
//! with OpenAI's tokenizer (`tiktoken-rs`: `o200k_base` for the GPT-4o
//! family and later, `cl100k_base` for GPT-4 and 3.5), the images with each
//! provider's published formula. Anthropic publishes no tokenizer: its text
//! is counted with `o200k_base`, an estimate (its own count is in the usage
//! it reports after the call).

use base64::Engine;
use serde::{Deserialize, Serialize};
use tiktoken_rs::tokenizer::{get_tokenizer, Tokenizer};

use super::{Image, Prompt};

/// A step's prompt in tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptTokens {
    /// The system prompt and the step's text.
    pub text: usize,
    /// The images.
    pub images: usize,
    /// Both.
    pub total: usize,
}

/// Which provider's rules count a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// OpenAI and OpenAI-compatible servers.
    OpenAi,
    /// Anthropic.
    Anthropic,
}

impl Provider {
    /// The provider of a model name (`anthropic/…`; every other one counts
    /// as OpenAI's, as compatible servers do).
    pub fn of(model: &str) -> Provider {
        if model.starts_with("anthropic/") {
            Provider::Anthropic
        } else {
            Provider::OpenAi
        }
    }
}

/// Tokens of `text` for `model` (`openai/gpt-4o`, `anthropic/…`).
pub fn text_tokens(model: &str, text: &str) -> usize {
    let name = model.rsplit('/').next().unwrap_or(model);
    let bpe = match get_tokenizer(name) {
        Some(Tokenizer::Cl100kBase) => tiktoken_rs::cl100k_base_singleton(),
        _ => tiktoken_rs::o200k_base_singleton(),
    };
    bpe.encode_ordinary(text).len()
}

/// Tokens of an image of `width`×`height` pixels as the provider counts it.
///
/// OpenAI (GPT-4o, detail high): scaled to fit 2048×2048, then its short side
/// to at most 768; 85 plus 170 per 512-pixel tile. Anthropic: scaled to a
/// long edge of at most 1568 and at most 1092×1092 pixels in area; width × height /
/// 750.
pub fn image_tokens(provider: Provider, width: u32, height: u32) -> usize {
    let (mut w, mut h) = (f64::from(width.max(1)), f64::from(height.max(1)));
    match provider {
        Provider::OpenAi => {
            let fit = (2048.0 / w.max(h)).min(1.0);
            (w, h) = (w * fit, h * fit);
            let short = (768.0 / w.min(h)).min(1.0);
            (w, h) = (w * short, h * short);
            let tiles = (w / 512.0).ceil() * (h / 512.0).ceil();
            85 + 170 * tiles as usize
        }
        Provider::Anthropic => {
            let edge = (1568.0 / w.max(h)).min(1.0);
            (w, h) = (w * edge, h * edge);
            let area = (1_192_464.0 / (w * h)).sqrt().min(1.0);
            (w, h) = ((w * area).floor(), (h * area).floor());
            (w * h / 750.0).ceil() as usize
        }
    }
}

/// Width and height of a PNG from its header, or of a JPEG: None for other
/// bytes.
fn image_size(image: &Image) -> Option<(u32, u32)> {
    // The PNG header and the IHDR chunk are the first 24 bytes: 32 base64
    // characters.
    let head = image.base64.get(..32)?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(head)
        .ok()?;
    if bytes.get(..8)? != b"\x89PNG\r\n\x1a\n" {
        return None;
    }
    let w = u32::from_be_bytes(bytes.get(16..20)?.try_into().ok()?);
    let h = u32::from_be_bytes(bytes.get(20..24)?.try_into().ok()?);
    Some((w, h))
}

/// Counts a prompt for `model`.
pub fn count(model: &str, prompt: &Prompt) -> PromptTokens {
    let provider = Provider::of(model);
    let text = text_tokens(model, &prompt.system) + text_tokens(model, &prompt.text);
    let images = prompt
        .images
        .iter()
        .map(|i| {
            let (w, h) = image_size(i).unwrap_or((1280, 800));
            image_tokens(provider, w, h)
        })
        .sum();
    PromptTokens {
        text,
        images,
        total: text + images,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_cost_what_the_providers_publish() {
        // OpenAI's own examples: 1024×1024 is 765 tokens, 2048×4096 is 1105.
        assert_eq!(image_tokens(Provider::OpenAi, 1024, 1024), 765);
        assert_eq!(image_tokens(Provider::OpenAi, 2048, 4096), 1105);
        assert_eq!(image_tokens(Provider::OpenAi, 1280, 800), 1105);
        // Anthropic's: 1092×1092 is about 1590 tokens; 200×200 about 54.
        assert_eq!(image_tokens(Provider::Anthropic, 1092, 1092), 1590);
        assert_eq!(image_tokens(Provider::Anthropic, 200, 200), 54);
        assert_eq!(image_tokens(Provider::Anthropic, 1280, 800), 1366);
    }

    #[test]
    fn text_is_counted_with_the_models_tokenizer() {
        assert_eq!(text_tokens("openai/gpt-4o", "hello world"), 2);
        assert_eq!(text_tokens("openai/gpt-4", "hello world"), 2);
        assert!(text_tokens("anthropic/claude-sonnet-4-5", "CLICK:3 \"Search\"") > 3);
    }

    #[test]
    fn the_size_of_a_png_is_read_from_its_header() {
        let mut png = Vec::new();
        image::RgbImage::new(640, 400)
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        let img = Image {
            media_type: "image/png".into(),
            base64: base64::engine::general_purpose::STANDARD.encode(&png),
        };
        assert_eq!(image_size(&img), Some((640, 400)));
        let bad = Image {
            media_type: "image/png".into(),
            base64: "not an image".into(),
        };
        assert_eq!(image_size(&bad), None);
    }
}
