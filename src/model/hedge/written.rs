//! Hedging as written: a layer's `hedging = { max_attempts, delay, non_fatal,
//! cancel_losers }`, with its defaults (`delay` 0s: all copies at once;
//! `non_fatal` none; `cancel_losers` true) applied by [`HedgingFile::validate`].

use serde::{Deserialize, Serialize};

use crate::engine::Nanos;
use crate::model::field::Dur;

/// Wait before each further copy when `delay` is not written: none (all at once).
pub(crate) const DEFAULT_DELAY: Nanos = 0;

/// Whether the copies still going are cancelled once the call is decided, when
/// `cancel_losers` is not written.
pub(crate) const DEFAULT_CANCEL_LOSERS: bool = true;

/// Hedged requests (`hedging = { max_attempts, delay, non_fatal, cancel_losers }`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HedgingFile {
    /// Copies sent at most, the first included.
    pub max_attempts: u64,
    /// Wait before each further copy (default 0s: all at once).
    #[schemars(extend("default" = crate::model::field::duration_text(DEFAULT_DELAY)))]
    pub delay: Option<Dur>,
    /// Failure classes that send the next copy at once instead of failing the call.
    pub non_fatal: Option<Vec<String>>,
    /// Whether the copies still going are cancelled once the call is decided
    /// (default true).
    #[schemars(extend("default" = DEFAULT_CANCEL_LOSERS))]
    pub cancel_losers: Option<bool>,
}
