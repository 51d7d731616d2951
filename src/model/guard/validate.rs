//! Rules of a call's guards: `max_concurrent` and `bulkhead_queue` (a bulkhead) and
//! `pool = { size, acquire_timeout, hold_during_backoff }` (a connection pool), on a
//! `[[fleets]]` entry or a `[[services.calls]]` entry, and their rules with the
//! layers they guard (hedging's included).

use crate::engine::Nanos;
use crate::model::config::{LayerConfig, MAX_HORIZON};
use crate::model::field::{at_most_dur, Ctx, Limit, R};

use super::config::{BulkheadConfig, Guards, PoolConfig};
use super::PoolFile;

/// Largest `max_concurrent`, `bulkhead_queue` and pool `size`.
pub(crate) const MAX_GUARD_SIZE: u64 = 10_000_000;

/// The guards of the entry at `p` with `layers` retry layers, as written.
pub(crate) fn validate(
    c: &Ctx,
    p: &str,
    max_concurrent: Option<Limit>,
    bulkhead_queue: Option<u64>,
    pool: Option<&PoolFile>,
    layers: &[LayerConfig],
) -> R<Guards> {
    let count = |field: &str, v: u64, min: u64| -> R<u32> {
        if v < min || v > MAX_GUARD_SIZE {
            return c.err(
                field,
                format!("must be between {min} and {MAX_GUARD_SIZE} (found {v})"),
            );
        }
        Ok(v as u32)
    };
    let bulkhead = match (max_concurrent, bulkhead_queue) {
        (None, None) => None,
        // "unlimited": no bulkhead (so a sweep can turn one off); its queue is unused.
        (Some(Limit::Unlimited), _) => None,
        (None, Some(_)) => {
            return c.err(
                format!("{p}.bulkhead_queue"),
                "needs max_concurrent: it is the waiting room of a bulkhead",
            )
        }
        (Some(Limit::Finite(m)), q) => Some(BulkheadConfig {
            max_concurrent: count(&format!("{p}.max_concurrent"), m, 1)?,
            queue: count(
                &format!("{p}.bulkhead_queue"),
                q.unwrap_or(super::DEFAULT_BULKHEAD_QUEUE),
                0,
            )?,
        }),
    };
    let pool = match pool {
        None => None,
        Some(pf) => {
            let acquire_timeout: Nanos = at_most_dur(
                c,
                &format!("{p}.pool.acquire_timeout"),
                pf.acquire_timeout
                    .map_or(super::DEFAULT_ACQUIRE_TIMEOUT, |d| d.0),
                MAX_HORIZON,
            )?;
            Some(PoolConfig {
                size: count(&format!("{p}.pool.size"), pf.size, 1)?,
                acquire_timeout,
                hold_during_backoff: pf
                    .hold_during_backoff
                    .unwrap_or(super::DEFAULT_HOLD_DURING_BACKOFF),
            })
        }
    };
    let g = Guards { bulkhead, pool };
    if !g.is_empty() {
        crate::model::hedge::check_guarded(c, p, layers)?;
    }
    if !g.is_empty() && layers.is_empty() {
        let key = if g.bulkhead.is_some() {
            "max_concurrent"
        } else {
            "pool"
        };
        return c.err(
            format!("{p}.{key}"),
            "needs at least one retry layer in `layers`: it guards the attempts the innermost layer sends (add a layer with max_attempts = 1 for none)",
        );
    }
    Ok(g)
}
