//! What `retrysim explain` says of a layer's hedging.

use crate::model::outcome::Class;
use crate::model::text::fmt_time;

use super::HedgingConfig;

impl HedgingConfig {
    /// explain's line for the hedging of a layer: copies, delay, non-fatal classes and
    /// what becomes of the losers.
    pub fn describe(&self) -> String {
        let non_fatal: Vec<&str> = Class::FAILURES
            .iter()
            .filter(|c| self.non_fatal.contains(**c))
            .map(|c| c.name())
            .collect();
        format!(
            "hedging: up to {} copies, {} apart; non-fatal: {}; losers {}",
            self.max_attempts,
            fmt_time(self.delay),
            if non_fatal.is_empty() {
                "none".to_string()
            } else {
                non_fatal.join(", ")
            },
            if self.cancel_losers {
                "cancelled"
            } else {
                "left running"
            }
        )
    }
}
