//! Lints of bulkheads and connection pools: `pool-held-during-backoff`, a pool that
//! keeps its connections through the backoff of a layer that retries.

use crate::model::config::{Guards, LayerConfig, Scenario};

use super::{retries, Found, Rule};

/// A connection pool held through a retrying layer's backoff.
pub(crate) const POOL_HELD_DURING_BACKOFF: Rule = Rule {
    id: "pool-held-during-backoff",
    why: "a connection pool is held through the backoff of a layer that retries, so the dependency's slowdown becomes the caller's pool exhaustion (at most size / (service time + backoff) attempts per second)",
    fires_when: "a fleet or call has a `pool` with `hold_during_backoff = true` and its innermost layer (whose attempts hold the connections) retries. A call's lint names the first fleet whose requests reach it",
    check: held_during_backoff,
};

/// The message of a pool with `size` connections held through `l`'s backoff.
fn message(size: u32, l: &LayerConfig) -> String {
    format!(
        "its pool of {size} connections has hold_during_backoff = true and layer '{}' retries, so each connection is held through the backoff after every failure: while the dependency fails the pool serves at most {size} / (service time + backoff) attempts per second and new requests wait or fail with pool_exhausted, the dependency's slowdown becoming this caller's pool exhaustion; give the connection back before sleeping (hold_during_backoff = false)",
        l.name
    )
}

/// The pool of `g` with `hold_during_backoff`, if its stack's innermost layer retries.
fn held<'a>(g: &Guards, layers: &'a [LayerConfig]) -> Option<(u32, usize, &'a LayerConfig)> {
    let p = g.pool.filter(|p| p.hold_during_backoff)?;
    let li = layers.len().checked_sub(1)?;
    let l = &layers[li];
    retries(l).then_some((p.size, li, l))
}

/// `pool-held-during-backoff`: fleets and calls (on the first fleet that reaches them).
fn held_during_backoff(found: &mut Found, scn: &Scenario) {
    for (fi, f) in scn.fleets.iter().enumerate() {
        if let Some((size, li, l)) = held(&f.guards, &f.layers) {
            found.push(fi, f, Some(li), &POOL_HELD_DURING_BACKOFF, message(size, l));
        }
    }
    let reach: Vec<Vec<bool>> = scn
        .fleets
        .iter()
        .map(|f| super::tiers::reached(scn, f))
        .collect();
    for (si, s) in scn.services.iter().enumerate() {
        let Some(fi) = reach.iter().position(|r| r.get(si) == Some(&true)) else {
            continue;
        };
        let f = &scn.fleets[fi];
        for (j, c) in s.calls.iter().enumerate() {
            let Some((size, li, l)) = held(&c.guards, &c.layers) else {
                continue;
            };
            let call = super::tiers::call_label(scn, s, c);
            found.push_at(
                fi,
                f,
                Some(((si, j), call)),
                Some(li),
                Some(l.name.clone()),
                &POOL_HELD_DURING_BACKOFF,
                message(size, l),
            );
        }
    }
}
