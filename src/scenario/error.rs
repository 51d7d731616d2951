//! Errors of reading, parsing and validating a scenario. Every message names the file,
//! the field and the rule, and all of them mean exit code 2 (bad input).

use thiserror::Error;

pub use crate::model::field::{clip, shown, MAX_VALUE_SHOWN};

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
    #[error("scenario '{path}' is not valid TOML: {}", clip_message(.message))]
    Syntax {
        /// File as given.
        path: String,
        /// Parser message, with line and column.
        message: String,
    },
    /// A field breaks a rule.
    #[error("scenario '{path}': {}: {}", clip(.field, MAX_KEY_SHOWN), clip_message(.message))]
    Field {
        /// File as given.
        path: String,
        /// Dotted path of the field (`fleets[0].layers[1].max_attempts`).
        field: String,
        /// The rule and the value found.
        message: String,
    },
    /// A `[sweep]` entry is not usable.
    #[error("scenario '{path}': sweep key '{}': {}", clip(.key, MAX_KEY_SHOWN), clip_message(.message))]
    Sweep {
        /// File as given.
        path: String,
        /// The swept key.
        key: String,
        /// Why.
        message: String,
    },
    /// A `--set KEY=VALUE` override cannot be applied.
    #[error("scenario '{path}': --set {}: {}", clip(.key, MAX_KEY_SHOWN), clip_message(.message))]
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

/// Most characters of a field path or key a message shows.
pub const MAX_KEY_SHOWN: usize = 200;
/// Most characters of one line of a message.
pub const MAX_LINE_SHOWN: usize = 400;
/// Most lines of a message.
pub const MAX_LINES_SHOWN: usize = 40;

/// A message (perhaps quoting what the user wrote, as serde and the TOML parser do)
/// as it is shown: each line escaped and cut with [`clip`], long runs without spaces
/// (a quoted value) cut to [`MAX_VALUE_SHOWN`], and at most [`MAX_LINES_SHOWN`] lines.
pub fn clip_message(m: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    for (n, line) in m.lines().enumerate() {
        if n == MAX_LINES_SHOWN {
            lines.push(format!("… ({} bytes in all)", m.len()));
            break;
        }
        let cut: Vec<String> = line
            .split(' ')
            .map(|w| {
                if w.chars().count() > MAX_VALUE_SHOWN + 20 {
                    shown(w)
                } else {
                    clip(w, usize::MAX)
                }
            })
            .collect();
        lines.push(clip(&cut.join(" "), MAX_LINE_SHOWN));
    }
    lines.join("\n")
}
