//! The sliding-window counters of the retry libraries, each exactly as its library
//! slices time: the budgets and breakers of the presets are built on them.
//!
//! | counter | library | slicing |
//! | --- | --- | --- |
//! | [`WindowedAdder`] | twitter/util `WindowedAdder` (Finagle's `RetryBudget`) | `slices` slices of `range/slices` ms; a slice ends at the first operation a slice-width after the last expiry, which re-anchors the grid there |
//! | [`TpsBucket`] | tower `TpsBucket` (`TpsBudget`) | 10 slots of `ttl/10`; the slot being replaced is still summed until it is overwritten |
//! | [`EpochWindow`] | Resilience4j `SlidingTimeWindowMetrics` | one bucket per epoch second, the last `n` seconds including the current one |
//! | [`CountWindow`] | Resilience4j `FixedSizeSlidingWindowMetrics` | the last `n` calls |
//! | [`SlicedTimes`] | retrysim's `ratio` and `sre` budgets | 64 slices of `window/64` (fewer with very many instances); an entry expires with its earliest event (calls) or its latest (retries) |
//! | [`HealthMetrics`] | Polly `RollingHealthMetrics` / `SingleHealthMetrics` | 10 windows of `sampling/10` ticks, each started by the first call after the previous one's width; one window below 200 ms |
//!
//! Simulated time starts at an epoch-second boundary, so `t = 0` is the start of an
//! epoch second for Resilience4j and of a millisecond for Finagle.

use std::collections::VecDeque;

use crate::engine::Nanos;

/// twitter/util `WindowedAdder` (`util-core/.../WindowedAdder.scala`): a sum over the
/// last `range` milliseconds, kept in a writer (the current slice) and a ring of
/// `slices − 1` older slices.
#[derive(Debug, Clone)]
pub(crate) struct WindowedAdder {
    window: i64,
    buf: Vec<i64>,
    i: usize,
    old: i64,
    writer: i64,
}

impl WindowedAdder {
    /// An empty adder over `range_ms` in `slices` slices (`slices > 1`), created at
    /// `now_ms`.
    pub(crate) fn new(range_ms: i64, slices: usize, now_ms: i64) -> WindowedAdder {
        let slices = slices.max(2);
        WindowedAdder {
            window: (range_ms / slices as i64).max(1),
            buf: vec![0; slices - 1],
            i: 0,
            old: now_ms,
            writer: 0,
        }
    }

    fn expired(&mut self, now: i64) {
        let n = self.buf.len();
        self.buf[self.i] = std::mem::take(&mut self.writer);
        self.i = (self.i + 1) % n;
        // Scala: math.min(((now() - old) / window - 1).toInt, N)
        let nskip = (((now - self.old) / self.window - 1) as i32).min(n as i32);
        if nskip > 0 {
            let nskip = nskip as usize;
            let r = nskip.min(n - self.i);
            self.buf[self.i..self.i + r].fill(0);
            self.buf[..nskip - r].fill(0);
            self.i = (self.i + nskip) % n;
        }
        self.old = now;
    }

    /// Adds `x` at `now_ms`.
    pub(crate) fn add(&mut self, now_ms: i64, x: i64) {
        if now_ms - self.old >= self.window {
            self.expired(now_ms);
        }
        self.writer += x;
    }

    /// The sum at `now_ms`.
    pub(crate) fn sum(&mut self, now_ms: i64) -> i64 {
        if now_ms - self.old >= self.window {
            self.expired(now_ms);
        }
        self.writer + self.buf.iter().sum::<i64>()
    }
}

/// tower `TpsBucket` (`tower/src/retry/budget/tps_budget.rs`): 10 slots of `ttl/10`
/// plus a writer and a reserve.
#[derive(Debug, Clone)]
pub(crate) struct TpsBucket {
    slots: [i64; 10],
    writer: i64,
    index: usize,
    time: Nanos,
    window: Nanos,
    reserve: i64,
}

impl TpsBucket {
    /// An empty bucket of `ttl` with `reserve`, created at `now`.
    pub(crate) fn new(ttl: Nanos, reserve: i64, now: Nanos) -> TpsBucket {
        TpsBucket {
            slots: [0; 10],
            writer: 0,
            index: 0,
            time: now,
            window: (ttl / 10).max(1),
            reserve,
        }
    }

    fn expire(&mut self, now: Nanos) {
        let diff = now.saturating_sub(self.time);
        if diff < self.window {
            return;
        }
        self.slots[self.index] = std::mem::take(&mut self.writer);
        let mut idx = (self.index + 1) % 10;
        // `while diff > window { slots[idx] = 0; diff -= window; idx += 1 }` runs
        // ceil(diff / window) − 1 times; zeroing more than 10 slots changes nothing more.
        let runs = (diff - 1) / self.window;
        for _ in 0..runs.min(10) {
            self.slots[idx] = 0;
            idx = (idx + 1) % 10;
        }
        idx = (idx + ((runs - runs.min(10)) % 10) as usize) % 10;
        self.index = idx;
        self.time = now;
    }

    /// Writer, slots and reserve, as `sum()` adds them (saturating).
    fn sum(&self) -> i64 {
        let windowed = self.slots.iter().fold(0i64, |a, &s| a.saturating_add(s));
        self.writer
            .saturating_add(windowed)
            .saturating_add(self.reserve)
    }

    /// `put(amt)` at `now`.
    pub(crate) fn put(&mut self, now: Nanos, amt: i64) {
        self.expire(now);
        self.writer += amt;
    }

    /// `try_get(amt)` at `now`.
    pub(crate) fn try_get(&mut self, now: Nanos, amt: i64) -> bool {
        self.expire(now);
        if self.sum() >= amt {
            self.writer -= amt;
            true
        } else {
            false
        }
    }

    /// The balance at `now` (`sum()`), without changing the bucket.
    pub(crate) fn balance(&self, now: Nanos) -> i64 {
        let mut c = self.clone();
        c.expire(now);
        c.sum()
    }
}

/// Counts of a Resilience4j aggregation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Agg {
    /// Calls.
    pub calls: u32,
    /// Failed calls.
    pub failed: u32,
    /// Slow calls (successful or failed).
    pub slow: u32,
}

impl Agg {
    fn add(&mut self, failed: bool, slow: bool) {
        self.calls += 1;
        self.failed += u32::from(failed);
        self.slow += u32::from(slow);
    }

    fn remove(&mut self, other: &Agg) {
        self.calls -= other.calls;
        self.failed -= other.failed;
        self.slow -= other.slow;
    }

    /// `SnapshotImpl.getFailureRate`: `failed·100f / calls` in `f32` (0 without calls).
    pub(crate) fn failure_rate(&self) -> f32 {
        if self.calls == 0 {
            0.0
        } else {
            self.failed as f32 * 100.0 / self.calls as f32
        }
    }

    /// `SnapshotImpl.getSlowCallRate`, as the failure rate.
    pub(crate) fn slow_call_rate(&self) -> f32 {
        if self.calls == 0 {
            0.0
        } else {
            self.slow as f32 * 100.0 / self.calls as f32
        }
    }
}

/// Resilience4j `SlidingTimeWindowMetrics`: the calls of the last `n` epoch seconds.
#[derive(Debug, Clone)]
pub(crate) struct EpochWindow {
    buckets: Vec<(i64, Agg)>,
    head: usize,
    total: Agg,
}

impl EpochWindow {
    /// A window of `seconds` buckets, created at `now`.
    pub(crate) fn new(seconds: u32, now: Nanos) -> EpochWindow {
        let n = seconds.max(1) as usize;
        let start = epoch_second(now);
        EpochWindow {
            buckets: (0..n).map(|i| (start + i as i64, Agg::default())).collect(),
            head: 0,
            total: Agg::default(),
        }
    }

    fn move_to(&mut self, now: Nanos) {
        let current = epoch_second(now);
        let diff = current - self.buckets[self.head].0;
        if diff == 0 {
            return;
        }
        let n = self.buckets.len() as i64;
        let mut to_move = diff.min(n);
        loop {
            to_move -= 1;
            self.head = (self.head + 1) % self.buckets.len();
            let (epoch, agg) = &mut self.buckets[self.head];
            self.total.remove(agg);
            *agg = Agg::default();
            *epoch = current - to_move;
            if to_move <= 0 {
                break;
            }
        }
    }

    /// Records one call at `now` and returns the window's totals.
    pub(crate) fn record(&mut self, now: Nanos, failed: bool, slow: bool) -> Agg {
        self.total.add(failed, slow);
        self.move_to(now);
        self.buckets[self.head].1.add(failed, slow);
        self.total
    }

    /// The window's totals at `now`.
    pub(crate) fn snapshot(&mut self, now: Nanos) -> Agg {
        self.move_to(now);
        self.total
    }
}

/// The epoch second of simulated time `t` (the run starts at an epoch-second boundary).
fn epoch_second(t: Nanos) -> i64 {
    (t / 1_000_000_000) as i64
}

/// Resilience4j `FixedSizeSlidingWindowMetrics`: the last `n` calls.
#[derive(Debug, Clone)]
pub(crate) struct CountWindow {
    ring: Vec<(bool, bool)>,
    filled: Vec<bool>,
    head: usize,
    total: Agg,
}

impl CountWindow {
    /// A window of the last `n` calls.
    pub(crate) fn new(n: u32) -> CountWindow {
        let n = n.max(1) as usize;
        CountWindow {
            ring: vec![(false, false); n],
            filled: vec![false; n],
            head: 0,
            total: Agg::default(),
        }
    }

    /// Records one call and returns the window's totals.
    pub(crate) fn record(&mut self, failed: bool, slow: bool) -> Agg {
        self.total.add(failed, slow);
        self.head = (self.head + 1) % self.ring.len();
        if self.filled[self.head] {
            let (f, s) = self.ring[self.head];
            let mut old = Agg::default();
            old.add(f, s);
            self.total.remove(&old);
        }
        self.ring[self.head] = (failed, slow);
        self.filled[self.head] = true;
        self.total
    }

    /// The window's totals.
    #[cfg(test)]
    pub(crate) fn snapshot(&self) -> Agg {
        self.total
    }
}

/// Polly's health metrics (`RollingHealthMetrics`, or `SingleHealthMetrics` when the
/// sampling duration is below 10 × 20 ms), in .NET ticks of 100 ns.
#[derive(Debug, Clone)]
pub(crate) struct HealthMetrics {
    sampling: i64,
    window: i64,
    rolling: bool,
    /// (started at, successes, failures), oldest first; the last is the current one.
    windows: VecDeque<(i64, u32, u32)>,
    successes: u32,
    failures: u32,
    started: i64,
}

/// Ticks of simulated time.
fn ticks(t: Nanos) -> i64 {
    (t / 100) as i64
}

impl HealthMetrics {
    /// Metrics over `sampling`, created at `now` (`HealthMetrics.Create`).
    pub(crate) fn new(sampling: Nanos, now: Nanos) -> HealthMetrics {
        let sampling = ticks(sampling);
        // ResolutionOfCircuitTimer (20 ms) × NumberOfWindows (10), in ticks.
        let rolling = sampling >= 200_000 * 10;
        HealthMetrics {
            sampling,
            window: sampling / 10,
            rolling,
            windows: VecDeque::new(),
            successes: 0,
            failures: 0,
            started: ticks(now),
        }
    }

    fn update(&mut self, now: i64) {
        if self.rolling {
            let new = match self.windows.back() {
                None => true,
                Some(&(started, _, _)) => now - started >= self.window,
            };
            if new {
                self.windows.push_back((now, 0, 0));
            }
            while let Some(&(started, s, f)) = self.windows.front() {
                if now - started >= self.sampling {
                    self.windows.pop_front();
                    self.successes -= s;
                    self.failures -= f;
                } else {
                    break;
                }
            }
        } else if now - self.started >= self.sampling {
            self.reset_at(now);
        }
    }

    fn reset_at(&mut self, now: i64) {
        self.windows.clear();
        self.successes = 0;
        self.failures = 0;
        self.started = now;
    }

    /// `Reset()` at `now` (the circuit closed).
    pub(crate) fn reset(&mut self, now: Nanos) {
        self.reset_at(ticks(now));
    }

    /// `IncrementSuccess()` / `IncrementFailure()` at `now`.
    pub(crate) fn increment(&mut self, now: Nanos, failure: bool) {
        let now = ticks(now);
        self.update(now);
        if failure {
            self.failures += 1;
        } else {
            self.successes += 1;
        }
        if self.rolling {
            if let Some(w) = self.windows.back_mut() {
                if failure {
                    w.2 += 1;
                } else {
                    w.1 += 1;
                }
            }
        }
    }

    /// `GetHealthInfo()` at `now`: (throughput, failure rate).
    pub(crate) fn health(&mut self, now: Nanos) -> (u32, f64) {
        self.update(ticks(now));
        let total = self.successes + self.failures;
        if total == 0 {
            (0, 0.0)
        } else {
            (total, f64::from(self.failures) / f64::from(total))
        }
    }
}

/// Times of events in a trailing window `(now − window, now]`, in bounded memory: the
/// events of one slice of width `window / slices` share an entry (their count and one
/// time), so at most `slices + 2` entries are held whatever the rate (the `ratio` and
/// `sre` budgets count calls and retries in it). Events further apart than a slice
/// are counted exactly. Within a slice the entry keeps the earliest time
/// ([`SlicedTimes::new`]: its events leave together, up to a slice width early) or
/// the latest ([`SlicedTimes::lasting`]: up to a slice width late); a budget keeps its
/// calls the first way and its retries the second, so slicing never allows a retry
/// the exact window would deny.
#[derive(Debug, Clone)]
pub(crate) struct SlicedTimes {
    /// `(time, count)` per slice, oldest first.
    runs: VecDeque<(Nanos, u64)>,
    /// Events held.
    total: u64,
    window: Nanos,
    width: Nanos,
    /// Whether an entry keeps its latest time (else its earliest).
    latest: bool,
}

impl SlicedTimes {
    /// Most slices per window.
    pub(crate) const SLICES: u64 = 64;
    /// Bytes all the windows of one budget layer should hold together at most: with
    /// many instances each window gets fewer slices ([`SlicedTimes::slices_for`]).
    pub(crate) const LAYER_BYTES: u64 = 256 << 20;

    /// An empty window of length `window` in `slices` slices whose entries keep their
    /// earliest time.
    pub(crate) fn new(window: Nanos, slices: u64) -> SlicedTimes {
        let slices = slices.clamp(1, Self::SLICES);
        SlicedTimes {
            runs: VecDeque::new(),
            total: 0,
            window,
            width: (window / slices).max(1),
            latest: false,
        }
    }

    /// As [`SlicedTimes::new`], but entries keep their latest time.
    pub(crate) fn lasting(window: Nanos, slices: u64) -> SlicedTimes {
        SlicedTimes {
            latest: true,
            ..SlicedTimes::new(window, slices)
        }
    }

    /// Slices per window when a layer has `instances` instances, each with two
    /// windows: 64, or fewer so that they hold at most [`SlicedTimes::LAYER_BYTES`]
    /// together (at least 1).
    pub(crate) fn slices_for(instances: u64) -> u64 {
        let per_window = Self::LAYER_BYTES / instances.max(1) / 2;
        let entries = per_window / std::mem::size_of::<(Nanos, u64)>() as u64;
        // A deque's capacity is a power of two, at least 4, holding slices + 2.
        let cap = if entries < 4 {
            4
        } else {
            1 << (63 - entries.leading_zeros())
        };
        (cap - 2).clamp(1, Self::SLICES)
    }

    /// Most bytes one window of `slices` slices holds, its deque grown to the
    /// capacity that holds `slices + 2` entries.
    pub(crate) fn max_bytes(slices: u64) -> u64 {
        (slices.clamp(1, Self::SLICES) + 2)
            .next_power_of_two()
            .max(4)
            * std::mem::size_of::<(Nanos, u64)>() as u64
    }

    /// Drops the events that left the window by `now` (none before a whole window has
    /// passed).
    pub(crate) fn evict(&mut self, now: Nanos) {
        if now < self.window {
            return;
        }
        let from = now - self.window;
        while let Some(&(t, n)) = self.runs.front() {
            if t > from {
                break;
            }
            self.total -= n;
            self.runs.pop_front();
        }
    }

    /// Records an event at `now` (times never decrease).
    pub(crate) fn push(&mut self, now: Nanos) {
        self.evict(now);
        self.total += 1;
        if let Some(back) = self.runs.back_mut() {
            if back.0 / self.width == now / self.width {
                back.1 += 1;
                if self.latest {
                    back.0 = now;
                }
                return;
            }
        }
        self.runs.push_back((now, 1));
    }

    /// Events held (as of the last [`SlicedTimes::evict`] or push).
    pub(crate) fn len(&self) -> u64 {
        self.total
    }

    /// Events in the window at `now`, without evicting.
    pub(crate) fn count(&self, now: Nanos) -> u64 {
        let from = now.saturating_sub(self.window);
        self.runs
            .iter()
            .rev()
            .take_while(|&&(t, _)| t > from || now < self.window)
            .map(|&(_, n)| n)
            .sum()
    }

    /// Entries held (at most `slices + 2`).
    #[cfg(test)]
    fn entries(&self) -> usize {
        self.runs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// twitter/util WindowedAdderTest, "maintains a sliding window when slices are
    /// skipped": 3 s in 3 slices, time in ms.
    #[test]
    fn windowed_adder_skips_slices_like_twitter_util() {
        let mut w = WindowedAdder::new(3_000, 3, 0);
        w.add(0, 1);
        assert_eq!(w.sum(0), 1);
        w.add(1_000, 2);
        assert_eq!(w.sum(1_000), 3);
        w.add(2_000, 1);
        assert_eq!(w.sum(2_000), 4);
        // Two slices later only the last slice's 1 is left, then nothing.
        assert_eq!(w.sum(4_000), 1);
        assert_eq!(w.sum(5_000), 0);
        // A slice ends a window's width after the last expiry, not on a fixed grid:
        // expiry at 5_500 re-anchors the slices there.
        let mut w = WindowedAdder::new(3_000, 3, 0);
        w.add(1_500, 5); // expires the first slice at 1.5 s
        assert_eq!(w.sum(2_400), 5);
        assert_eq!(w.sum(2_500), 5); // expiry at 2.5 s: 5 moves to the ring
        assert_eq!(w.sum(3_499), 5);
        assert_eq!(w.sum(3_500), 5); // the ring holds 2 slices: still there
        assert_eq!(w.sum(4_500), 0);
    }

    /// tower tps_budget tests `tps_slots` with its own numbers: ttl 1 s, 100 ms slots.
    #[test]
    fn tps_bucket_expires_like_tower() {
        let ms = 1_000_000;
        let mut b = TpsBucket::new(1_000 * ms, 0, 0);
        b.put(0, 1);
        b.put(0, 1);
        assert!(b.try_get(901 * ms, 2)); // both deposits still count at 901 ms
        let t = 901 * ms + 2_001 * ms; // blank slate
        b.put(t, 1);
        b.put(t + 301 * ms, 1);
        b.put(t + 1_102 * ms, 1);
        // The first deposit has expired; the second and third make 2.
        assert!(b.try_get(t + 1_102 * ms, 2));
        assert!(!b.try_get(t + 1_102 * ms, 1));
    }

    #[test]
    fn tps_bucket_keeps_the_slot_being_replaced_until_it_is_overwritten() {
        let ms = 1_000_000;
        let mut b = TpsBucket::new(1_000 * ms, 0, 0);
        b.put(0, 1); // writer, committed to slot 0 at the next expiry
        b.put(100 * ms, 0); // slot 0 = 1, index 1
        for i in 2..=10 {
            b.put(i * 100 * ms, 0); // slots 1..9, index back to 0
        }
        // 1 s after the deposit tower still counts it: slot 0 is overwritten only at the
        // next expiry, so a deposit lives between ttl and 1.1 × ttl.
        assert_eq!(b.balance(1_000 * ms), 1);
        assert_eq!(b.balance(1_099 * ms), 1);
        assert_eq!(b.balance(1_100 * ms), 0);
    }

    #[test]
    fn epoch_window_keeps_the_last_n_seconds() {
        let s = 1_000_000_000;
        let mut w = EpochWindow::new(3, 0);
        w.record(0, true, false);
        w.record(s + 1, false, false);
        w.record(2 * s, true, true);
        assert_eq!(
            w.snapshot(2 * s + 5),
            Agg {
                calls: 3,
                failed: 2,
                slow: 1
            }
        );
        // At 3 s the bucket of second 0 leaves the window.
        assert_eq!(w.snapshot(3 * s).calls, 2);
        assert_eq!(w.snapshot(10 * s), Agg::default());
        assert_eq!(w.record(10 * s, true, false).failure_rate(), 100.0);
    }

    #[test]
    fn count_window_keeps_the_last_n_calls() {
        let mut w = CountWindow::new(3);
        w.record(true, false);
        w.record(true, true);
        w.record(false, false);
        assert_eq!(w.snapshot().failed, 2);
        let a = w.record(false, false);
        assert_eq!((a.calls, a.failed, a.slow), (3, 1, 1));
        assert!((a.failure_rate() - 100.0 / 3.0).abs() < 1e-4);
    }

    #[test]
    fn polly_rolling_health_metrics_start_windows_at_calls() {
        let ms = 1_000_000;
        // 1 s sampling: 10 windows of 100 ms.
        let mut h = HealthMetrics::new(1_000 * ms, 0);
        h.increment(50 * ms, true); // window started at 50 ms
        h.increment(149 * ms, false); // same window
        h.increment(150 * ms, true); // new window at 150 ms
        assert_eq!(h.health(1_049 * ms), (3, 2.0 / 3.0));
        assert_eq!(h.health(1_050 * ms), (1, 1.0)); // the 50 ms window expires
        assert_eq!(h.health(1_150 * ms), (0, 0.0));
        // Below 200 ms: one window, reset when the sampling duration has passed.
        let mut h = HealthMetrics::new(100 * ms, 0);
        h.increment(10 * ms, true);
        assert_eq!(h.health(99 * ms), (1, 1.0));
        assert_eq!(h.health(100 * ms), (0, 0.0));
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn windowedadder_example() {
        use crate::model::windows::WindowedAdder;
        // WindowedAdderTest "maintains a sliding window": 3 s in 3 slices.
        let mut w = WindowedAdder::new(3_000, 3, 0);
        w.add(0, 1);
        w.add(1_000, 2);
        assert_eq!(w.sum(2_000), 3);
        assert_eq!(w.sum(3_000), 2);
        assert_eq!(w.sum(4_000), 0);
    }

    #[test]
    fn slicedtimes_example() {
        use crate::model::windows::SlicedTimes;
        let mut w = SlicedTimes::lasting(64, 64);
        for t in 0..1_000_000 {
            w.push(t);
        }
        assert_eq!(w.count(999_999), 64);
        assert!(w.entries() <= 64 + 2);
    }
}
