//! Rules of a layer's `hedging`: hedging replaces the layer's retries, so the layer
//! makes one call (`max_attempts = 1`), and the per-attempt parts of a retry loop
//! that hedging has no place for are refused by name; a guarded call's innermost
//! layer may not hedge.

use crate::model::config::{LayerConfig, MAX_HORIZON};
use crate::model::field::{at_most_dur, Ctx, Limit, R};
use crate::model::outcome::{class_set, ClassSet};

use super::{HedgingConfig, HedgingFile};

/// Most copies of a hedged call.
pub(crate) const MAX_HEDGES: u64 = 16;

/// What hedging's rules read of the layer it is on, as written.
#[derive(Debug, Clone, Copy)]
pub struct Host {
    /// The layer's `max_attempts`.
    pub max_attempts: Limit,
    /// Whether it sets `attempt_timeout`.
    pub attempt_timeout: bool,
    /// Whether it sets `total_timeout`.
    pub total_timeout: bool,
    /// Whether it has a `breaker`.
    pub breaker: bool,
    /// Whether it has a `limiter`.
    pub limiter: bool,
}

impl HedgingFile {
    /// The validated hedging of the layer at `p` (`l`: what the layer sets).
    pub fn validate(&self, c: &Ctx, p: &str, l: &Host) -> R<HedgingConfig> {
        let h = self;
        let q = format!("{p}.hedging");
        if l.max_attempts != Limit::Finite(1) {
            let found = match l.max_attempts {
                Limit::Finite(n) => n.to_string(),
                Limit::Unlimited => "\"unlimited\"".to_string(),
            };
            return c.err(
                format!("{p}.max_attempts"),
                format!("must be 1 on a layer with hedging, which replaces its retries: hedging.max_attempts sets the copies (found {found})"),
            );
        }
        let refused = [
            ("attempt_timeout", l.attempt_timeout),
            ("total_timeout", l.total_timeout),
            ("breaker", l.breaker),
            ("limiter", l.limiter),
        ];
        if let Some((key, _)) = refused.iter().find(|(_, set)| *set) {
            return c.err(
                &q,
                format!("cannot be combined with {key} on the same layer (hedged copies have no per-attempt timeout, breaker or limiter here; put them on a layer below, or bound the call with the fleet's deadline)"),
            );
        }
        if !(1..=MAX_HEDGES).contains(&h.max_attempts) {
            return c.err(
                format!("{q}.max_attempts"),
                format!(
                    "must be between 1 and {MAX_HEDGES} copies (1: no hedges) (found {})",
                    h.max_attempts
                ),
            );
        }
        let delay = at_most_dur(
            c,
            &format!("{q}.delay"),
            h.delay.map_or(super::DEFAULT_DELAY, |d| d.0),
            MAX_HORIZON,
        )?;
        let non_fatal = match &h.non_fatal {
            None => ClassSet::EMPTY,
            Some(list) => class_set(c, &format!("{q}.non_fatal"), list)?,
        };
        Ok(HedgingConfig {
            max_attempts: h.max_attempts as u32,
            delay,
            non_fatal,
            cancel_losers: h.cancel_losers.unwrap_or(super::DEFAULT_CANCEL_LOSERS),
        })
    }
}

/// Hedging's rule for a call with a bulkhead or a pool (at `p`, with `layers`): its
/// innermost layer may not hedge, as the copies would share the one slot.
pub(crate) fn check_guarded(c: &Ctx, p: &str, layers: &[LayerConfig]) -> R<()> {
    if layers.last().is_some_and(|l| l.hedging.is_some()) {
        return c.err(
            format!("{p}.layers[{}].hedging", layers.len() - 1),
            "cannot be on the innermost layer of a call with max_concurrent or a pool (its copies would share one slot); hedge at a layer above it",
        );
    }
    Ok(())
}
