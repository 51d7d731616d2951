//! Errors of reading, parsing and validating a scenario. Every message names the file,
//! the field and the rule, and all of them mean exit code 2 (bad input).

use thiserror::Error;

/// What is wrong with a scenario file.
#[derive(Debug, Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("cannot read scenario '{path}': {source}")]
    Read {
        /// File as given.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file holds nothing.
    #[error(
        "scenario '{path}' is empty: it needs at least `duration`, a `[dependency]` table and one `[[fleets]]`"
    )]
    Empty {
        /// File as given.
        path: String,
    },
    /// The file is not TOML.
    #[error("scenario '{path}' is not valid TOML: {message}")]
    Syntax {
        /// File as given.
        path: String,
        /// Parser message, with line and column.
        message: String,
    },
    /// A field breaks a rule.
    #[error("scenario '{path}': {field}: {message}")]
    Field {
        /// File as given.
        path: String,
        /// Dotted path of the field (`fleets[0].layers[1].max_attempts`).
        field: String,
        /// The rule and the value found.
        message: String,
    },
    /// A `[sweep]` entry is not usable.
    #[error("scenario '{path}': sweep key '{key}': {message}")]
    Sweep {
        /// File as given.
        path: String,
        /// The swept key.
        key: String,
        /// Why.
        message: String,
    },
    /// A `--set KEY=VALUE` override cannot be applied.
    #[error("scenario '{path}': --set {key}: {message}")]
    Override {
        /// File as given.
        path: String,
        /// The key.
        key: String,
        /// Why.
        message: String,
    },
}

impl ScenarioError {
    /// The field the error is about, if any.
    pub fn field(&self) -> Option<&str> {
        match self {
            ScenarioError::Field { field, .. } => Some(field),
            ScenarioError::Override { key, .. } | ScenarioError::Sweep { key, .. } => Some(key),
            _ => None,
        }
    }
}
