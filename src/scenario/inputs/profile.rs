//! A load profile recorded by a monitoring system: `load_profile = { file = "day.csv",
//! time = "t", value = "rps" }` (or `format = "prometheus"`). The recording gives the
//! fleet's rate over time; `scale` multiplies it ("what if traffic were 1.5x last
//! Tuesday's?") and `speed` plays it faster (`speed = 60`: a minute of the recording
//! per second of the run, at the rates recorded). The fleet's base rate is the
//! recording's mean, so the profile's multipliers are the recording over its mean;
//! `arrival.rate` is left out.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::series::Point;
use crate::engine::time::SECOND;
use crate::engine::Nanos;
use crate::model::config::LoadProfile;
use crate::model::field::{Ctx, R};
use crate::model::text::{fmt_num, fmt_time};

/// One file or several (the chunks of one recording, in time order).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Files {
    /// One file.
    One(String),
    /// Chunks of one recording, in time order.
    Many(Vec<String>),
}

impl<'de> Deserialize<'de> for Files {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{SeqAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Files;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a file path (file = \"day.csv\") or a list of them (file = [\"am.json\", \"pm.json\"])",
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Files, E> {
                Ok(Files::One(v.to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Files, A::Error> {
                Vec::<String>::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
                    .map(Files::Many)
            }
        }
        d.deserialize_any(V)
    }
}

impl Files {
    /// The paths, in order.
    pub fn paths(&self) -> &[String] {
        match self {
            Files::One(p) => std::slice::from_ref(p),
            Files::Many(v) => v,
        }
    }
}

crate::model::field::inline_schema!(Files, "Files", |_g| schemars::json_schema!({
    "anyOf": [{ "type": "string" }, { "type": "array", "items": { "type": "string" } }],
}));

/// What the file is.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// A CSV table with a header row.
    #[default]
    Csv,
    /// The JSON answer of Prometheus' `/api/v1/query_range`.
    Prometheus,
}

/// What the recorded values are.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Values {
    /// Requests per second (a `rate(...)` query).
    #[default]
    Rate,
    /// Requests counted over the interval from one point to the next (an
    /// `increase(...)` query, or counts per bucket); the last point's interval is the
    /// one before it.
    Count,
}

/// How the rate goes between two points.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Interpolate {
    /// Each point's rate holds until the next point.
    #[default]
    Step,
    /// Linear from one point to the next.
    Linear,
}

/// The column names a CSV recording is read by when none are written.
pub(crate) const DEFAULT_TIME_COLUMN: &str = "time";
/// See [`DEFAULT_TIME_COLUMN`].
pub(crate) const DEFAULT_VALUE_COLUMN: &str = "value";
/// `scale` and `speed` when not written.
pub(crate) const DEFAULT_SCALE: f64 = 1.0;
/// Largest `scale` and `speed`.
pub(crate) const MAX_FACTOR: f64 = 1e6;

/// `load_profile = { file = ..., ... }` as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Recorded {
    /// The recording: a path relative to the scenario file, or a list of paths (the
    /// chunks of one recording, in time order).
    pub file: Files,
    /// `"csv"` (default) or `"prometheus"` (a `query_range` answer).
    #[schemars(extend("default" = crate::model::field::default_of::<Format>()))]
    pub format: Option<Format>,
    /// The CSV column of the times: seconds, or RFC 3339 timestamps (default "time").
    #[schemars(extend("default" = DEFAULT_TIME_COLUMN))]
    pub time: Option<String>,
    /// The CSV column of the values (default "value").
    #[schemars(extend("default" = DEFAULT_VALUE_COLUMN))]
    pub value: Option<String>,
    /// `"rate"` (default: requests per second) or `"count"` (requests from one point to
    /// the next).
    #[schemars(extend("default" = crate::model::field::default_of::<Values>()))]
    pub values: Option<Values>,
    /// Prometheus: the labels of the one series of the answer to use, such as
    /// `{ job = "api" }`.
    pub series: Option<BTreeMap<String, String>>,
    /// Multiplies every rate (default 1).
    #[schemars(extend("default" = DEFAULT_SCALE))]
    pub scale: Option<f64>,
    /// Plays the recording faster: `speed` seconds of it per second of the run, at the
    /// rates recorded (default 1).
    #[schemars(extend("default" = DEFAULT_SCALE))]
    pub speed: Option<f64>,
    /// `"step"` (default: each rate holds until the next point) or `"linear"`.
    #[schemars(extend("default" = crate::model::field::default_of::<Interpolate>()))]
    pub interpolate: Option<Interpolate>,
    /// The points read from the files (times in seconds from the first point, values
    /// as recorded), filled by [`super::read`] before validation.
    #[serde(skip)]
    #[schemars(skip)]
    pub points: Option<Arc<Vec<Point>>>,
}

/// A recorded profile, validated: the fleet's base rate and its multipliers.
#[derive(Debug, Clone)]
pub struct Validated {
    /// The recording's mean rate, scaled: the fleet's base rate.
    pub base: f64,
    /// The multipliers of the base rate over time.
    pub profile: LoadProfile,
    /// What explain says of it.
    pub text: String,
}

impl Recorded {
    /// The profile of the points read; `p` is the field path of the table,
    /// `horizon` the end of the run (points past it are not kept).
    pub fn validate(&self, c: &Ctx, p: &str, horizon: Nanos) -> R<Validated> {
        let Some(points) = &self.points else {
            return c.err(format!("{p}.file"), "was not read");
        };
        let factor = |key: &str, v: Option<f64>| -> R<f64> {
            let v = c.finite(&format!("{p}.{key}"), v.unwrap_or(DEFAULT_SCALE))?;
            if v <= 0.0 || v > MAX_FACTOR {
                return c.err(
                    format!("{p}.{key}"),
                    format!("must be above 0 and at most {MAX_FACTOR} (found {v})"),
                );
            }
            Ok(v)
        };
        let scale = factor("scale", self.scale)?;
        let speed = factor("speed", self.speed)?;
        let values = self.values.unwrap_or_default();
        let interpolate = self.interpolate.unwrap_or_default();
        if values == Values::Count && points.len() < 2 {
            return c.err(
                format!("{p}.values"),
                "\"count\" needs at least two points (a count is over the interval to the next)",
            );
        }
        let t0 = points[0].0;
        // Rates as recorded, per second of the recording.
        let rate = |i: usize| -> f64 {
            let (t, v) = points[i];
            match values {
                Values::Rate => v,
                Values::Count => {
                    let width = match points.get(i + 1) {
                        Some(&(next, _)) => next - t,
                        None => t - points[i - 1].0,
                    };
                    v / width
                }
            }
        };
        // Times in the run, from the recording's first point; the first point past
        // the end is kept, as it bounds the last segment.
        let mut pts: Vec<(Nanos, f64)> = Vec::with_capacity(points.len());
        for (i, &(t, _)) in points.iter().enumerate() {
            let at = ((t - t0) / speed * SECOND as f64).round();
            let at = if at >= Nanos::MAX as f64 {
                Nanos::MAX
            } else {
                at as Nanos
            };
            if pts.last().is_some_and(|&(prev, _)| at <= prev) {
                return c.err(
                    format!("{p}.speed"),
                    format!(
                        "plays two points of the recording at the same nanosecond (at {}): lower it",
                        fmt_time(at)
                    ),
                );
            }
            pts.push((at, rate(i) * scale));
            if at >= horizon {
                break;
            }
        }
        // The mean rate over the part of the recording the run plays.
        let end = pts.last().map_or(0, |l| l.0).min(horizon);
        let span = end - pts[0].0;
        let mean = if span == 0 {
            pts[0].1
        } else {
            let mut area = 0.0;
            for w in pts.windows(2) {
                let ((a, ra), (b, rb)) = (w[0], w[1]);
                if a >= end {
                    break;
                }
                let b2 = b.min(end);
                let width = (b2 - a) as f64;
                area += match interpolate {
                    Interpolate::Step => ra * width,
                    Interpolate::Linear => {
                        let rb2 = ra + (rb - ra) * (width / (b - a) as f64);
                        (ra + rb2) / 2.0 * width
                    }
                };
            }
            area / span as f64
        };
        if mean <= 0.0 || !mean.is_finite() {
            return c.err(
                format!("{p}.file"),
                "records no requests over the run: its rate is 0 throughout",
            );
        }
        let peak = pts.iter().map(|x| x.1).fold(0.0, f64::max);
        if peak > 1e8 {
            return c.err(
                format!("{p}.scale"),
                format!(
                    "gives a peak rate of {} per second, above the 1e8 allowed",
                    fmt_num(peak)
                ),
            );
        }
        let multipliers: Vec<(Nanos, f64)> = pts.iter().map(|&(t, r)| (t, r / mean)).collect();
        let played = fmt_time(span);
        let text = format!(
            "recorded load profile: {} points over {played} of the run ({}{}), mean {}/s, peak {}/s{}",
            pts.len(),
            match interpolate {
                Interpolate::Step => "steps",
                Interpolate::Linear => "linear between points",
            },
            if speed == 1.0 {
                String::new()
            } else {
                format!(", played {}x faster", fmt_num(speed))
            },
            fmt_num(mean),
            fmt_num(peak),
            if scale == 1.0 {
                String::new()
            } else {
                format!(", the recording times {}", fmt_num(scale))
            }
        );
        Ok(Validated {
            base: mean,
            profile: match interpolate {
                Interpolate::Step => LoadProfile::Steps(multipliers),
                Interpolate::Linear => LoadProfile::Ramp(multipliers),
            },
            text,
        })
    }
}
