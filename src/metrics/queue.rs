//! Measurements of the message queues of queue fleets (`arrival = { kind = "queue" }`):
//! per bucket the time-weighted mean of visible messages, the age of the oldest visible
//! message at the bucket's end, redeliveries and dead-lettered messages; over the run
//! the message counts and the end-to-end latency (publish to successful handling).
//!
//! Several queue fleets are measured together: depths and counts are summed, the
//! oldest age is the oldest over every queue. Like [`super::recorder`], the series
//! covers `[0, duration)` and the totals count the drain too.

use hdrhistogram::Histogram;

use crate::engine::Nanos;

use super::quantiles::new_histogram;

/// One bucket of the queue series.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueRow {
    /// ∫ visible messages dt, in message·ns.
    pub depth_area: u128,
    /// Age of the oldest visible message at the bucket's end (0 when none).
    pub oldest_age: Nanos,
    /// Receives of messages received before (the second receive on).
    pub redeliveries: u64,
    /// Messages moved to the dead-letter queue.
    pub dlq: u64,
}

/// Whole-run counts of the queues.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueueTotals {
    /// Messages published.
    pub messages: u64,
    /// Receives (handler runs), the first of each message included.
    pub deliveries: u64,
    /// Receives after a message's first.
    pub redeliveries: u64,
    /// Receives of a message while an earlier handler of it was still running (its
    /// visibility timeout ended first).
    pub duplicate_deliveries: u64,
    /// Messages deleted after a successful handling.
    pub deleted: u64,
    /// Messages moved to the dead-letter queue.
    pub dlq: u64,
    /// Messages neither deleted nor dead-lettered when the run ended.
    pub left: u64,
}

/// The queue measurements of a finished run.
#[derive(Debug, Clone)]
pub struct QueueMetrics {
    /// One row per bucket of `[0, duration)`.
    pub rows: Vec<QueueRow>,
    /// Whole-run counts.
    pub totals: QueueTotals,
    /// Publish to successful handling of every deleted message, in microseconds.
    pub end_to_end: Histogram<u64>,
}

/// The live queue series.
#[derive(Debug)]
pub(crate) struct QueueSeries {
    bucket: Nanos,
    duration: Nanos,
    rows: Vec<QueueRow>,
    /// Time up to which the depth has been integrated.
    last: Nanos,
    /// Visible messages since `last`.
    depth: u64,
    /// Publish time of the oldest visible message since `last`.
    oldest: Option<Nanos>,
    totals: QueueTotals,
    end_to_end: Histogram<u64>,
}

impl QueueSeries {
    /// A series of `ceil(duration / bucket)` buckets.
    pub(crate) fn new(duration: Nanos, bucket: Nanos) -> QueueSeries {
        QueueSeries {
            bucket,
            duration,
            rows: vec![QueueRow::default(); duration.div_ceil(bucket) as usize],
            last: 0,
            depth: 0,
            oldest: None,
            totals: QueueTotals::default(),
            end_to_end: new_histogram(),
        }
    }

    /// Integrates the depth up to `now` (at most the series' end), noting the oldest
    /// age at every bucket end passed.
    fn accrue(&mut self, now: Nanos) {
        let now = now.min(self.duration);
        while self.last < now {
            let i = (self.last / self.bucket) as usize;
            let end = ((i as Nanos + 1) * self.bucket).min(self.duration);
            let to = end.min(now);
            let row = &mut self.rows[i];
            row.depth_area += u128::from(self.depth) * u128::from(to - self.last);
            if to == end {
                row.oldest_age = self.oldest.map_or(0, |p| end.saturating_sub(p));
            }
            self.last = to;
        }
    }

    /// The visible messages changed at `now`: `depth` of them, the oldest published at
    /// `oldest`.
    pub(crate) fn set_visible(&mut self, now: Nanos, depth: u64, oldest: Option<Nanos>) {
        self.accrue(now);
        self.depth = depth;
        self.oldest = oldest;
    }

    /// The row of time `now`, if it is in the series.
    fn row(&mut self, now: Nanos) -> Option<&mut QueueRow> {
        if now >= self.duration {
            return None;
        }
        self.rows.get_mut((now / self.bucket) as usize)
    }

    /// A message was published.
    pub(crate) fn published(&mut self) {
        self.totals.messages += 1;
    }

    /// A message was received: `again` when it was received before, `duplicate` when
    /// an earlier handler of it still runs.
    pub(crate) fn received(&mut self, now: Nanos, again: bool, duplicate: bool) {
        self.totals.deliveries += 1;
        if again {
            self.totals.redeliveries += 1;
            if let Some(r) = self.row(now) {
                r.redeliveries += 1;
            }
        }
        if duplicate {
            self.totals.duplicate_deliveries += 1;
        }
    }

    /// A message was deleted `latency` after it was published.
    pub(crate) fn deleted(&mut self, latency: Nanos) {
        self.totals.deleted += 1;
        let _ = self.end_to_end.record(latency.div_ceil(1000).max(1));
    }

    /// A message went to the dead-letter queue.
    pub(crate) fn dead_lettered(&mut self, now: Nanos) {
        self.totals.dlq += 1;
        if let Some(r) = self.row(now) {
            r.dlq += 1;
        }
    }

    /// Closes the series at `end`, with `left` messages still in the queues.
    pub(crate) fn finish(mut self, end: Nanos, left: u64) -> QueueMetrics {
        self.accrue(end.max(self.duration));
        self.totals.left = left;
        QueueMetrics {
            rows: self.rows,
            totals: self.totals,
            end_to_end: self.end_to_end,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_is_split_at_bucket_ends_and_the_oldest_age_read_there() {
        let mut q = QueueSeries::new(3_000, 1_000);
        q.set_visible(500, 2, Some(400)); // 2 visible from 500, the oldest from 400
        q.set_visible(1_500, 1, Some(1_200));
        q.set_visible(2_200, 0, None);
        q.received(100, false, false);
        q.received(1_100, true, true);
        q.dead_lettered(2_900);
        q.dead_lettered(3_000); // after the series: counted in the totals only
        let m = q.finish(5_000, 0);
        let area: Vec<u128> = m.rows.iter().map(|r| r.depth_area).collect();
        assert_eq!(area, vec![1_000, 1_000 + 500, 200]);
        let age: Vec<Nanos> = m.rows.iter().map(|r| r.oldest_age).collect();
        assert_eq!(age, vec![600, 800, 0]);
        assert_eq!(m.rows[1].redeliveries, 1);
        assert_eq!(m.rows[2].dlq, 1);
        assert_eq!(m.totals.dlq, 2);
        assert_eq!(
            (m.totals.deliveries, m.totals.redeliveries),
            (2, 1),
            "{:?}",
            m.totals
        );
        assert_eq!(m.totals.duplicate_deliveries, 1);
    }
}
