//! Rules of a layer's `hedging = { max_attempts, delay, non_fatal, cancel_losers }`:
//! hedging replaces the layer's retries, so the layer makes one call (`max_attempts =
//! 1`), and the per-attempt parts of a retry loop that hedging has no place for are
//! refused by name.

use crate::model::config::{HedgingConfig, MAX_HORIZON};
use crate::model::field::{at_most_dur, Ctx, Limit, R};

use super::super::file::{HedgingFile, LayerFile};
use super::fleet::class_set;

/// Most copies of a hedged call.
pub(super) const MAX_HEDGES: u64 = 16;

/// The hedging of the layer at `p`.
pub(super) fn validate_hedging(
    c: &Ctx,
    p: &str,
    l: &LayerFile,
    h: &HedgingFile,
) -> R<HedgingConfig> {
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
        ("attempt_timeout", l.attempt_timeout.is_some()),
        ("total_timeout", l.total_timeout.is_some()),
        ("breaker", l.breaker.is_some()),
        ("limiter", l.limiter.is_some()),
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
        h.delay.map_or(0, |d| d.0),
        MAX_HORIZON,
    )?;
    let non_fatal = match &h.non_fatal {
        None => crate::model::outcome::ClassSet::EMPTY,
        Some(list) => class_set(c, &format!("{q}.non_fatal"), list)?,
    };
    Ok(HedgingConfig {
        max_attempts: h.max_attempts as u32,
        delay,
        non_fatal,
        cancel_losers: h.cancel_losers.unwrap_or(true),
    })
}
