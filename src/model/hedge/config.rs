//! Hedging as validated, and what it bounds: the calls into the layer below per call
//! (explain's worst case) and the copies held at once (the memory estimate,
//! `model::limits`).

use crate::engine::Nanos;
use crate::model::bound::Bound;
use crate::model::config::{LayerConfig, Scenario};
use crate::model::outcome::ClassSet;

/// Hedged requests (gRPC's hedging policy, A6): a copy of the call below is sent
/// every `delay` until one succeeds or `max_attempts` copies are out; a failure whose
/// class is in `non_fatal` sends the next copy at once, any other failure ends the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HedgingConfig {
    /// Copies at most, the first included.
    pub max_attempts: u32,
    /// Wait before each further copy.
    pub delay: Nanos,
    /// Failure classes that do not end the call.
    pub non_fatal: ClassSet,
    /// Whether the copies still going are cancelled once the call is decided.
    pub cancel_losers: bool,
}

impl LayerConfig {
    /// Calls into the layer below per call into this one, at most: a hedging
    /// layer's copies, else `max_attempts`.
    pub fn calls_below(&self) -> Bound {
        match self.hedging {
            Some(h) => Bound::Finite(u64::from(h.max_attempts)),
            None => self.max_attempts.bound(),
        }
    }

    /// Calls into the layer below one call into this one holds at once, at most: a
    /// hedging layer's copies (each with all below it), else one.
    pub fn calls_held_below(&self) -> u64 {
        self.hedging.map_or(1, |h| u64::from(h.max_attempts))
    }
}

impl Scenario {
    /// Whether a fleet's or a service call's layer hedges.
    pub fn uses_hedging(&self) -> bool {
        self.fleets
            .iter()
            .flat_map(|f| &f.layers)
            .chain(
                self.services
                    .iter()
                    .flat_map(|s| &s.calls)
                    .flat_map(|c| &c.layers),
            )
            .any(|l| l.hedging.is_some())
    }
}
