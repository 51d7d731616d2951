//! Netflix's `WindowedLimit` (`limit/WindowedLimit.java` and
//! `limit/window/ImmutableAverageSampleWindow.java` at 78a74b9): samples are
//! collected into a window (minimum RTT, RTT sum, largest in-flight, any drop) and
//! the window is handed to the wrapped limit as one sample.
//!
//! A sample with `rtt < min_rtt_threshold` (default 100us) is ignored. Otherwise it
//! joins the window; when it ends (`start + rtt`) after `next_update_time` (0 at
//! first, so the first sample closes a window of one), the window is closed:
//! `next_update_time = end + clamp(2·min_rtt, min_window, max_window)`, and if it
//! holds at least `window_size` samples (default 10) the limit gets one sample with
//! `rtt = sum / count` (integer division), `inflight = max`, `didDrop = any`, and the
//! start time of the closing sample. A window with fewer samples is discarded.
//! Defaults: `min_window = max_window = 1s`, each at least 100ms.

use serde::{Deserialize, Serialize};

use crate::engine::time::{MICROSECOND, MILLISECOND, SECOND};
use crate::engine::Nanos;
use crate::model::field::{duration_text, Ctx, Dur, R};
use crate::model::text::fmt_time;

/// Default shortest window.
pub(crate) const DEFAULT_MIN_WINDOW: Nanos = SECOND;
/// Default longest window.
pub(crate) const DEFAULT_MAX_WINDOW: Nanos = SECOND;
/// Default samples a window needs to count.
pub(crate) const DEFAULT_WINDOW_SIZE: u64 = 10;
/// Default RTT below which a sample is ignored.
pub(crate) const DEFAULT_MIN_RTT_THRESHOLD: Nanos = 100 * MICROSECOND;
/// WindowedLimit refuses a window shorter than this.
pub(crate) const MIN_WINDOW_TIME: Nanos = 100 * MILLISECOND;

/// `window = { ... }` as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WindowFile {
    /// Shortest window (at least 100ms).
    #[schemars(extend("default" = duration_text(DEFAULT_MIN_WINDOW)))]
    pub min_window: Option<Dur>,
    /// Longest window (at least 100ms).
    #[schemars(extend("default" = duration_text(DEFAULT_MAX_WINDOW)))]
    pub max_window: Option<Dur>,
    /// Samples a window needs to count (at least 10).
    #[schemars(extend("default" = DEFAULT_WINDOW_SIZE))]
    pub window_size: Option<u64>,
    /// Samples faster than this are ignored.
    #[schemars(extend("default" = duration_text(DEFAULT_MIN_RTT_THRESHOLD)))]
    pub min_rtt_threshold: Option<Dur>,
}

/// Validated window settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Shortest window (ns).
    pub min_window: Nanos,
    /// Longest window (ns).
    pub max_window: Nanos,
    /// Samples a window needs to count.
    pub window_size: u32,
    /// Samples faster than this are ignored (ns).
    pub min_rtt_threshold: Nanos,
}

impl Default for Config {
    /// WindowedLimit's defaults.
    fn default() -> Config {
        Config {
            min_window: DEFAULT_MIN_WINDOW,
            max_window: DEFAULT_MAX_WINDOW,
            window_size: DEFAULT_WINDOW_SIZE as u32,
            min_rtt_threshold: DEFAULT_MIN_RTT_THRESHOLD,
        }
    }
}

/// The validated `window` of table `p`, if written.
pub(crate) fn validate(c: &Ctx, p: &str, w: &Option<WindowFile>) -> R<Option<Config>> {
    let Some(w) = w else { return Ok(None) };
    let time = |k: &str, v: Option<Dur>, d: Nanos| -> R<Nanos> {
        let v = v.map_or(d, |v| v.0);
        if v < MIN_WINDOW_TIME {
            return c.err(
                format!("{p}.window.{k}"),
                format!(
                    "must be at least 100ms, as WindowedLimit requires (found {})",
                    fmt_time(v)
                ),
            );
        }
        Ok(v)
    };
    let min_window = time("min_window", w.min_window, DEFAULT_MIN_WINDOW)?;
    let max_window = time("max_window", w.max_window, DEFAULT_MAX_WINDOW)?;
    if max_window < min_window {
        return c.err(
            format!("{p}.window.max_window"),
            format!(
                "must be at least min_window {} (found {})",
                fmt_time(min_window),
                fmt_time(max_window)
            ),
        );
    }
    let f = format!("{p}.window.window_size");
    let size = c.at_least(&f, w.window_size.unwrap_or(DEFAULT_WINDOW_SIZE), 10)?;
    let size = super::java_int(c, &f, size)? as u32;
    Ok(Some(Config {
        min_window,
        max_window,
        window_size: size,
        min_rtt_threshold: w
            .min_rtt_threshold
            .map_or(DEFAULT_MIN_RTT_THRESHOLD, |d| d.0),
    }))
}

/// What explain adds for a window (empty without one).
pub(crate) fn describe(w: &Option<Config>) -> String {
    match w {
        None => String::new(),
        Some(w) => format!(
            "; samples are averaged per window (Netflix WindowedLimit: a window lasts twice its minimum RTT, within [{}, {}], counts only with at least {} samples, and ignores RTTs below {})",
            fmt_time(w.min_window),
            fmt_time(w.max_window),
            w.window_size,
            fmt_time(w.min_rtt_threshold)
        ),
    }
}

/// One aggregated sample handed to the wrapped limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sample {
    /// Start time of the sample that closed the window (ns).
    pub start: Nanos,
    /// Mean RTT of the window (ns, integer division).
    pub rtt: Nanos,
    /// Largest in-flight count of the window.
    pub inflight: u32,
    /// Whether any sample of the window was a drop.
    pub dropped: bool,
}

/// The window being collected: five words, O(1) per sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    cfg: Config,
    next_update: Nanos,
    min_rtt: Nanos,
    sum: u128,
    max_inflight: u32,
    count: u32,
    dropped: bool,
}

impl Window {
    /// An empty window; the first sample closes it.
    pub(crate) fn new(cfg: Config) -> Window {
        Window {
            cfg,
            next_update: 0,
            min_rtt: Nanos::MAX,
            sum: 0,
            max_inflight: 0,
            count: 0,
            dropped: false,
        }
    }

    /// A sample; the aggregate to hand to the limit when it closes a full window.
    pub(crate) fn add(
        &mut self,
        start: Nanos,
        rtt: Nanos,
        inflight: u32,
        dropped: bool,
    ) -> Option<Sample> {
        if rtt < self.cfg.min_rtt_threshold {
            return None;
        }
        let end = start.saturating_add(rtt);
        self.min_rtt = self.min_rtt.min(rtt);
        self.sum += u128::from(rtt);
        self.max_inflight = self.max_inflight.max(inflight);
        self.count = self.count.saturating_add(1);
        self.dropped |= dropped;
        if end <= self.next_update {
            return None;
        }
        let (min_rtt, sum, count) = (self.min_rtt, self.sum, self.count);
        let (max_inflight, any_drop) = (self.max_inflight, self.dropped);
        self.next_update = end.saturating_add(
            min_rtt
                .saturating_mul(2)
                .max(self.cfg.min_window)
                .min(self.cfg.max_window),
        );
        *self = Window {
            next_update: self.next_update,
            ..Window::new(self.cfg)
        };
        (min_rtt < Nanos::MAX && count >= self.cfg.window_size).then(|| Sample {
            start,
            rtt: (sum / u128::from(count)) as Nanos,
            inflight: max_inflight,
            dropped: any_drop,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_sample_closes_a_window_of_one_which_is_discarded() {
        let mut w = Window::new(Config::default());
        assert_eq!(w.add(0, 10 * MILLISECOND, 5, false), None);
        // next update at 10ms + clamp(20ms, 1s, 1s) = 1.01s
        for i in 0..10 {
            assert_eq!(w.add(i * MILLISECOND, 10 * MILLISECOND, 3, false), None);
        }
        // 11th sample ends after 1.01s: a window of 11 samples, mean of them.
        let s = w.add(SECOND, 21 * MILLISECOND, 7, true).unwrap();
        assert_eq!(s.start, SECOND);
        assert_eq!(s.rtt, (10 * 10 + 21) * MILLISECOND / 11);
        assert_eq!(s.inflight, 7);
        assert!(s.dropped);
        // the next window starts empty
        assert_eq!(
            w.add(2 * SECOND + 40 * MILLISECOND, MILLISECOND, 1, false),
            None
        );
    }

    #[test]
    fn fast_samples_are_ignored_and_a_short_window_is_discarded() {
        let mut w = Window::new(Config::default());
        assert_eq!(w.add(0, 99 * MICROSECOND, 5, false), None);
        assert_eq!(
            w.next_update, 0,
            "an ignored sample does not close a window"
        );
        w.add(0, MILLISECOND, 1, false); // closes a window of one
        for i in 0..7 {
            w.add(i, MILLISECOND, 1, false);
        }
        // ends exactly at next_update (1ms + 1s): the window stays open (8 samples)
        assert_eq!(w.add(SECOND, MILLISECOND, 1, false), None);
        assert_eq!(w.next_update, MILLISECOND + SECOND);
        // the 9th ends after it: closed, and discarded (fewer than 10)
        assert_eq!(w.add(SECOND, 2 * MILLISECOND, 1, false), None);
        assert_eq!(w.next_update, SECOND + 2 * MILLISECOND + SECOND);
        assert_eq!(w.count, 0);
    }

    #[test]
    fn the_window_is_twice_the_minimum_rtt_within_its_bounds() {
        let cfg = Config {
            min_window: 100 * MILLISECOND,
            max_window: SECOND,
            ..Config::default()
        };
        let mut w = Window::new(cfg);
        w.add(0, 300 * MILLISECOND, 1, false);
        assert_eq!(w.next_update, 900 * MILLISECOND);
    }
}
