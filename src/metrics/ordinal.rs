//! Outcomes by attempt ordinal: how many first, second, third... attempts each layer
//! made, and how each ended (`attempts_by_ordinal.csv`).
//!
//! A call into layer `i` (depth, 0 = the outermost) makes attempts 1, 2, 3, ...: its
//! first attempt, then its retries; each is a call one level down (into layer `i + 1`,
//! or at the dependency below the innermost layer). Each attempt is counted once, when
//! it ends, under how the layer-`i` call saw it end ([`End`]):
//! - an answer from below: its outcome class (the whole outcome of the call below, its
//!   retries included);
//! - its timer: `timeout`, or `deadline_exceeded` when the request's deadline is what
//!   fired;
//! - refused before it left, by the layer itself: `breaker_open` (an open breaker,
//!   inside or, for the first attempt, outside), `budget_exhausted` (a retry budget
//!   denied the retry, or a client-side limiter refused the attempt), or
//!   `deadline_exceeded` (the request's deadline passed before it could be sent, or
//!   it or the layer's `total_timeout` would pass in the backoff before it);
//! - `cancelled`: the call above gave up on this call while the attempt was in flight
//!   (`cancel_on_timeout`), or the attempt was a hedged copy still out when its call
//!   was decided (a loser, cancelled or left running);
//! - `in_flight`: still out when the run ended.
//!
//! So a call has one row at ordinal 1, and one at ordinal `k + 1` for every retry it
//! decided to make after attempt `k`, whether sent or refused. A call that ends after
//! an attempt (success, a failure not retried, attempts used up) has no further row.
//!
//! Ordinals from [`MAX_ORDINAL`] on share its row: the last row of a layer counts the
//! attempts of that ordinal and above, so the table stays small however many times an
//! unlimited layer retries (each row per ordinal would grow it with every retry).
//!
//! Identities: the rows of layer `i` sum to the calls it made below
//! (`attempts_layer_<i>` × `logical`) plus the attempts it refused before they left;
//! the innermost layer's to `attempts` plus those. A refused retry is counted once
//! where it arises, as the summary counts it, so in a one-layer scenario the
//! `budget_exhausted` rows sum to the summary's `budget_exhausted`; with nested layers
//! the refused inner call is also the outer attempt's `budget_exhausted` answer.

use crate::model::outcome::Class;

/// How an attempt ended, as the layer call that made it saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// It ended with this outcome class.
    Class(Class),
    /// The call above cancelled the call while this attempt was in flight.
    Cancelled,
    /// Still in flight when the run ended.
    InFlight,
}

/// Ways an attempt can end: the thirteen classes, `cancelled`, `in_flight`.
pub(crate) const ENDS: usize = 15;

impl End {
    /// Every end, in file order: the classes in class order, then `cancelled`,
    /// `in_flight`.
    pub const ALL: [End; ENDS] = [
        End::Class(Class::Success),
        End::Class(Class::Rejected),
        End::Class(Class::Error),
        End::Class(Class::Timeout),
        End::Class(Class::BreakerOpen),
        End::Class(Class::BudgetExhausted),
        End::Class(Class::DeadlineExceeded),
        End::Class(Class::Conflict),
        End::Class(Class::Overloaded),
        End::Class(Class::BulkheadFull),
        End::Class(Class::PoolExhausted),
        End::Class(Class::RateLimited),
        End::Class(Class::PriorityShed),
        End::Cancelled,
        End::InFlight,
    ];

    /// Its position in [`End::ALL`].
    #[inline]
    pub fn index(self) -> usize {
        match self {
            End::Class(c) => c as usize,
            End::Cancelled => 13,
            End::InFlight => 14,
        }
    }

    /// The name written in the `outcome` column.
    pub fn name(self) -> &'static str {
        match self {
            End::Class(c) => c.name(),
            End::Cancelled => "cancelled",
            End::InFlight => "in_flight",
        }
    }
}

/// The ordinal whose row also counts every later one ("and above"): attempts can be
/// unlimited, and a row per ordinal would grow the table with every retry.
pub(crate) const MAX_ORDINAL: u32 = 1000;

/// Counts per (layer, ordinal, end). Each layer's table grows with the largest
/// ordinal seen up to [`MAX_ORDINAL`], whose row counts that ordinal and above: at
/// most 1000 rows of 15 counts (120 KB) a layer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ordinals {
    /// `layers[depth][ordinal - 1][end index]`.
    layers: Vec<Vec<[u64; ENDS]>>,
}

impl Ordinals {
    /// Counts for `layers` layer depths.
    pub fn new(layers: usize) -> Ordinals {
        Ordinals {
            layers: vec![Vec::new(); layers],
        }
    }

    /// Attempt `ordinal` (1-based) of a call into layer `layer` ended with `end`
    /// (counted at [`MAX_ORDINAL`] from there on).
    #[inline]
    pub fn record(&mut self, layer: usize, ordinal: u32, end: End) {
        let i = ordinal.clamp(1, MAX_ORDINAL) as usize - 1;
        match self.layers.get_mut(layer).and_then(|t| t.get_mut(i)) {
            Some(row) => row[end.index()] += 1,
            None => self.record_new(layer, i, end),
        }
    }

    /// [`record`](Self::record) of an ordinal (or layer) the table has not reached yet.
    #[cold]
    fn record_new(&mut self, layer: usize, i: usize, end: End) {
        if layer >= self.layers.len() {
            self.layers.resize(layer + 1, Vec::new());
        }
        let t = &mut self.layers[layer];
        if i >= t.len() {
            t.resize(i + 1, [0; ENDS]);
        }
        t[i][end.index()] += 1;
    }

    /// Attempts of ordinal `ordinal` of layer `layer` that ended with `end` (at
    /// [`MAX_ORDINAL`]: of that ordinal and above; 0 past it).
    pub fn count(&self, layer: usize, ordinal: u32, end: End) -> u64 {
        let i = (ordinal as usize).wrapping_sub(1);
        self.layers
            .get(layer)
            .and_then(|t| t.get(i))
            .map_or(0, |c| c[end.index()])
    }

    /// The largest ordinal counted at `layer` (0: none; at most [`MAX_ORDINAL`]).
    pub fn max_ordinal(&self, layer: usize) -> u32 {
        self.layers.get(layer).map_or(0, |t| t.len() as u32)
    }

    /// Layer depths counted.
    pub fn layers(&self) -> usize {
        self.layers.len()
    }

    /// The rows with a count above 0: `(layer, ordinal, end, count)`, ordered by
    /// layer, then ordinal, then end in [`End::ALL`] order; a row at [`MAX_ORDINAL`]
    /// counts that ordinal and above.
    pub fn rows(&self) -> impl Iterator<Item = (usize, u32, End, u64)> + '_ {
        self.layers.iter().enumerate().flat_map(|(layer, t)| {
            t.iter().enumerate().flat_map(move |(i, c)| {
                End::ALL
                    .into_iter()
                    .filter(|e| c[e.index()] > 0)
                    .map(move |e| (layer, i as u32 + 1, e, c[e.index()]))
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_are_in_file_order_with_distinct_names() {
        for (i, e) in End::ALL.iter().enumerate() {
            assert_eq!(e.index(), i);
            assert_eq!(
                Class::from_u8(i as u8).name() == e.name(),
                i < Class::COUNT,
                "{e:?}"
            );
        }
        let mut names: Vec<&str> = End::ALL.iter().map(|e| e.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ENDS);
    }

    #[test]
    fn counts_grow_with_the_ordinal_and_rows_come_in_order() {
        let mut o = Ordinals::new(2);
        o.record(1, 3, End::InFlight);
        o.record(0, 1, End::Class(Class::Error));
        o.record(0, 1, End::Class(Class::Success));
        o.record(0, 1, End::Class(Class::Error));
        o.record(0, 2, End::Cancelled);
        assert_eq!(o.count(0, 1, End::Class(Class::Error)), 2);
        assert_eq!(o.count(0, 0, End::Class(Class::Error)), 0);
        assert_eq!(o.count(5, 1, End::Class(Class::Error)), 0);
        assert_eq!((o.max_ordinal(0), o.max_ordinal(1)), (2, 3));
        let rows: Vec<_> = o.rows().collect();
        assert_eq!(
            rows,
            vec![
                (0, 1, End::Class(Class::Success), 1),
                (0, 1, End::Class(Class::Error), 2),
                (0, 2, End::Cancelled, 1),
                (1, 3, End::InFlight, 1),
            ]
        );
    }

    #[test]
    fn ordinals_from_the_cap_on_share_its_row_and_the_table_stays_small() {
        let mut o = Ordinals::new(1);
        for k in 1..=MAX_ORDINAL + 4000 {
            o.record(0, k, End::Class(Class::Error));
        }
        o.record(0, u32::MAX, End::InFlight);
        assert_eq!(o.max_ordinal(0), MAX_ORDINAL);
        assert_eq!(o.layers[0].len(), MAX_ORDINAL as usize);
        assert_eq!(o.count(0, MAX_ORDINAL - 1, End::Class(Class::Error)), 1);
        assert_eq!(o.count(0, MAX_ORDINAL, End::Class(Class::Error)), 4001);
        assert_eq!(o.count(0, MAX_ORDINAL, End::InFlight), 1);
        assert_eq!(o.count(0, MAX_ORDINAL + 1, End::InFlight), 0);
        let rows: u64 = o.rows().map(|r| r.3).sum();
        assert_eq!(rows, u64::from(MAX_ORDINAL) + 4001);
    }
}
