//! Prices per model, from `data/prices.json` (built in) and a file the user
//! adds. A model without a price shows its tokens and no cost.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::Usage;

/// USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct Price {
    /// Per million prompt tokens.
    pub input: f64,
    /// Per million answer tokens.
    pub output: f64,
}

impl Price {
    /// The cost of `usage` in USD.
    pub fn cost(&self, usage: Usage) -> f64 {
        (usage.input as f64 * self.input + usage.output as f64 * self.output) / 1e6
    }
}

#[derive(Debug, Deserialize)]
struct PriceFile {
    models: BTreeMap<String, Price>,
}

/// The price list.
#[derive(Debug, Clone, Default)]
pub struct Prices {
    models: BTreeMap<String, Price>,
}

const BUILT_IN: &str = include_str!("../../data/prices.json");

/// Why a price file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PriceFileError {
    /// It cannot be read.
    #[error("cannot read the price file {}: {cause}", .path.display())]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        cause: std::io::Error,
    },
    /// It is not a table of prices.
    #[error(
        "the price file {} is not {{\"models\": {{\"provider/model\": {{\"input\": USD, \
         \"output\": USD}}}}}}: {cause}",
        .path.display()
    )]
    NotPrices {
        /// The file.
        path: std::path::PathBuf,
        /// Where and why it does not parse.
        cause: serde_json::Error,
    },
}

impl Prices {
    /// The built-in list.
    pub fn built_in() -> Prices {
        // The file is ours and tested; an unreadable one would only mean no costs.
        let models = serde_json::from_str::<PriceFile>(BUILT_IN)
            .map(|f| f.models)
            .unwrap_or_default();
        Prices { models }
    }

    /// The built-in list with a user's file over it.
    pub fn with_file(path: &Path) -> Result<Prices, PriceFileError> {
        let text = std::fs::read_to_string(path).map_err(|cause| PriceFileError::Read {
            path: path.to_path_buf(),
            cause,
        })?;
        let extra: PriceFile =
            serde_json::from_str(&text).map_err(|cause| PriceFileError::NotPrices {
                path: path.to_path_buf(),
                cause,
            })?;
        let mut prices = Prices::built_in();
        prices.models.extend(extra.models);
        Ok(prices)
    }

    /// The price of a model: its exact name, else the longest listed prefix
    /// (`openai/gpt-4o-2024-08-06` is priced as `openai/gpt-4o`).
    pub fn of(&self, model: &str) -> Option<Price> {
        if let Some(p) = self.models.get(model) {
            return Some(*p);
        }
        self.models
            .iter()
            .filter(|(name, _)| model.starts_with(name.as_str()))
            .max_by_key(|(name, _)| name.len())
            .map(|(_, p)| *p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_list_reads_and_prefixes_match_the_longest() {
        let p = Prices::built_in();
        let mini = p.of("openai/gpt-4o-mini-2024-07-18").unwrap();
        assert_eq!(mini.input, 0.15);
        assert_eq!(p.of("openai/gpt-4o-2024-08-06").unwrap().input, 2.50);
        assert!(p.of("openai/some-local-model").is_none());
        let cost = Price {
            input: 2.5,
            output: 10.0,
        }
        .cost(Usage {
            input: 1_000_000,
            output: 100_000,
        });
        assert!((cost - 3.5).abs() < 1e-9);
    }

    #[test]
    fn a_user_file_adds_and_overrides() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("p.json");
        std::fs::write(&f, r#"{"models": {"openai/llava": {"input": 0, "output": 0}, "openai/gpt-4o": {"input": 1, "output": 2}}}"#).unwrap();
        let p = Prices::with_file(&f).unwrap();
        assert_eq!(p.of("openai/llava").unwrap().output, 0.0);
        assert_eq!(p.of("openai/gpt-4o").unwrap().input, 1.0);
        std::fs::write(&f, "not json").unwrap();
        assert!(Prices::with_file(&f)
            .unwrap_err()
            .to_string()
            .contains("is not"));
    }
}
