//! How the model's values are written in a scenario and the rules they must keep.
//!
//! [`Dur`], [`Limit`], [`Span`] and [`DistFile`] are the written forms of a duration, a
//! count that may be unlimited, a window and a delay distribution. [`Ctx`] holds the
//! common rules (finite, positive, a probability...); each broken rule is a
//! [`FieldError`] naming the field path, to which the scenario loader adds the file.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::engine::Nanos;
use crate::model::dist::{Dist, Measured};

/// Largest `duration + drain` (about 11.6 simulated days); also the longest backoff
/// parameter, breaker `open_for` and budget window accepted.
pub(crate) const MAX_HORIZON: Nanos = 1_000_000 * crate::engine::time::SECOND;

/// A rule a field breaks: its dotted path and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// Dotted path of the field (`fleets[0].layers[1].max_attempts`).
    pub field: String,
    /// The rule and the value found.
    pub message: String,
}

/// Most characters of a value a message shows ([`shown`]).
pub(crate) const MAX_VALUE_SHOWN: usize = 60;

/// Result of a rule.
pub(crate) type R<T> = Result<T, FieldError>;

/// The common rules of scenario values; each returns the value or a [`FieldError`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Ctx;

impl Ctx {
    /// A broken rule at `field`.
    pub fn err<T>(&self, field: impl Into<String>, message: impl Into<String>) -> R<T> {
        Err(FieldError {
            field: field.into(),
            message: message.into(),
        })
    }

    /// A finite number.
    pub fn finite(&self, field: &str, v: f64) -> R<f64> {
        if v.is_finite() {
            Ok(v)
        } else {
            self.err(field, format!("must be a finite number (found {v})"))
        }
    }

    /// A finite number above 0.
    pub fn positive(&self, field: &str, v: f64) -> R<f64> {
        let v = self.finite(field, v)?;
        if v > 0.0 {
            Ok(v)
        } else {
            self.err(field, format!("must be greater than 0 (found {v})"))
        }
    }

    /// A finite number in [0, 1].
    pub fn probability(&self, field: &str, v: f64) -> R<f64> {
        let v = self.finite(field, v)?;
        if (0.0..=1.0).contains(&v) {
            Ok(v)
        } else {
            self.err(field, format!("must be between 0 and 1 (found {v})"))
        }
    }

    /// At least `min`.
    pub fn at_least(&self, field: &str, v: u64, min: u64) -> R<u64> {
        if v >= min {
            Ok(v)
        } else {
            self.err(field, format!("must be at least {min} (found {v})"))
        }
    }

    /// A count that fits in 32 bits.
    pub fn u32_field(&self, field: &str, v: u64) -> R<u32> {
        u32::try_from(v)
            .or_else(|_| self.err(field, format!("must be at most {} (found {v})", u32::MAX)))
    }

    /// A duration above 0.
    pub fn positive_dur(&self, field: &str, v: Dur) -> R<Nanos> {
        if v.0 > 0 {
            Ok(v.0)
        } else {
            self.err(field, "must be a positive duration (found 0s)")
        }
    }

    /// A delay distribution, its own rules checked.
    pub fn dist(&self, field: &str, d: &DistFile) -> R<Dist> {
        Ok(match *d {
            DistFile::Histogram {
                ref file, ref le, ..
            } if file.is_some() && le.is_empty() => {
                return self.err(format!("{field}.file"), "was not read")
            }
            DistFile::Histogram {
                ref le,
                ref counts,
                max,
                ..
            } => self.histogram(field, le, counts, max)?,
            DistFile::Hdr { ref measured, .. } | DistFile::Empirical { ref measured, .. } => {
                match measured {
                    Some(m) => Dist::Measured(m.clone()),
                    None => return self.err(format!("{field}.file"), "was not read"),
                }
            }
            DistFile::Quantiles {
                p50,
                p90,
                p99,
                p999,
                max,
            } => self.quantiles(field, [p50, p90, p99, p999], max)?,
            DistFile::Exponential { mean } => {
                let m = self.positive_dur(&format!("{field}.mean"), mean)?;
                Dist::Exponential { mean: m as f64 }
            }
            DistFile::Deterministic { value } => Dist::Deterministic(value.0),
            DistFile::Lognormal { median, p99 } => {
                let m = self.positive_dur(&format!("{field}.median"), median)?;
                if p99.0 < m {
                    return self.err(
                        format!("{field}.p99"),
                        format!(
                            "must be at least the median {} (found {})",
                            crate::engine::time::format(m),
                            crate::engine::time::format(p99.0)
                        ),
                    );
                }
                Dist::lognormal(m, p99.0)
            }
            DistFile::Uniform { min, max } => {
                if max.0 < min.0 {
                    return self.err(
                        format!("{field}.max"),
                        format!(
                            "must be at least min {} (found {})",
                            crate::engine::time::format(min.0),
                            crate::engine::time::format(max.0)
                        ),
                    );
                }
                Dist::Uniform {
                    min: min.0,
                    max: max.0,
                }
            }
            DistFile::Normal { mean, sd } => Dist::Normal {
                mean: mean.0 as f64,
                sd: sd.0 as f64,
            },
        })
    }

    /// A `histogram` distribution: Prometheus classic buckets, their rules checked.
    fn histogram(&self, field: &str, le: &[Dur], counts: &[f64], max: Option<Dur>) -> R<Dist> {
        list_cap(
            self,
            &format!("{field}.le"),
            le.len(),
            MAX_BUCKETS,
            "buckets",
        )?;
        if le.is_empty() {
            return self.err(
                format!("{field}.le"),
                "must list at least one bucket's upper bound (found none)",
            );
        }
        for (i, w) in le.windows(2).enumerate() {
            if w[1].0 <= w[0].0 {
                return self.err(
                    format!("{field}.le[{}]", i + 1),
                    format!(
                        "must be above the bound before it, {} (found {})",
                        crate::engine::time::format(w[0].0),
                        crate::engine::time::format(w[1].0)
                    ),
                );
            }
        }
        if counts.len() != le.len() && counts.len() != le.len() + 1 {
            return self.err(
                format!("{field}.counts"),
                format!(
                    "must have one cumulative count per bound in le ({}), then optionally the +Inf bucket's ({}) (found {})",
                    le.len(),
                    le.len() + 1,
                    counts.len()
                ),
            );
        }
        let mut prev = 0.0;
        for (i, &c) in counts.iter().enumerate() {
            let at = format!("{field}.counts[{i}]");
            if !c.is_finite() || c < 0.0 {
                return self.err(
                    at,
                    format!("must be a finite count of at least 0 (found {c})"),
                );
            }
            if c < prev {
                return self.err(
                    at,
                    format!("must be at least the count before it, {prev}: the counts are cumulative, as Prometheus exports them (found {c})"),
                );
            }
            prev = c;
        }
        if prev <= 0.0 {
            return self.err(
                format!("{field}.counts"),
                "must hold at least one observation (found a total of 0)",
            );
        }
        let last = le[le.len() - 1].0;
        let in_inf = counts.len() > le.len() && counts[le.len()] > counts[le.len() - 1];
        match max {
            None if in_inf => {
                return self.err(
                    format!("{field}.max"),
                    format!(
                        "is required when the +Inf bucket holds observations ({} above {}): it bounds them",
                        counts[le.len()] - counts[le.len() - 1],
                        crate::engine::time::format(last)
                    ),
                );
            }
            Some(m) if m.0 < last => {
                return self.err(
                    format!("{field}.max"),
                    format!(
                        "must be at least the last bound in le, {} (found {})",
                        crate::engine::time::format(last),
                        crate::engine::time::format(m.0)
                    ),
                );
            }
            _ => {}
        }
        let bounds: Vec<f64> = le.iter().map(|d| d.0 as f64).collect();
        Ok(Dist::Measured(std::sync::Arc::new(Measured::histogram(
            &bounds,
            counts,
            max.map(|m| m.0 as f64),
        ))))
    }

    /// A `quantiles` distribution: the quantiles given, in order, and `max` above
    /// them.
    fn quantiles(&self, field: &str, qs: [Option<Dur>; 4], max: Dur) -> R<Dist> {
        let mut points = Vec::with_capacity(4);
        let mut prev: Option<(&str, Nanos)> = None;
        for ((name, p), q) in QUANTILE_KEYS.into_iter().zip(qs) {
            let Some(q) = q else { continue };
            if let Some((before, v)) = prev {
                if q.0 < v {
                    return self.err(
                        format!("{field}.{name}"),
                        format!(
                            "must be at least {before} {} (found {})",
                            crate::engine::time::format(v),
                            crate::engine::time::format(q.0)
                        ),
                    );
                }
            }
            prev = Some((name, q.0));
            points.push((p, q.0 as f64));
        }
        let Some((last_name, last)) = prev else {
            return self.err(
                field,
                "must give at least one of p50, p90, p99 and p999 (found none)",
            );
        };
        if max.0 < last {
            return self.err(
                format!("{field}.max"),
                format!(
                    "must be at least {last_name} {} (found {})",
                    crate::engine::time::format(last),
                    crate::engine::time::format(max.0)
                ),
            );
        }
        Ok(Dist::Measured(std::sync::Arc::new(Measured::quantiles(
            &points,
            max.0 as f64,
        ))))
    }
}

/// Most buckets a `histogram` distribution may list.
pub(crate) const MAX_BUCKETS: usize = 10_000;

/// The keys of a `quantiles` distribution and their probabilities.
pub(crate) const QUANTILE_KEYS: [(&str, f64); 4] =
    [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999)];

/// A duration written as a string with a unit (`"100ms"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Dur(pub Nanos);

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Dur;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration string such as \"100ms\" or \"1.5s\"")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Dur, E> {
                super::duration::parse(s).map(Dur).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Dur, E> {
                if v == 0 {
                    Ok(Dur(0))
                } else {
                    Err(E::custom(format!(
                        "duration {v} has no unit (write e.g. \"{v}ms\" or \"{v}s\")"
                    )))
                }
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Dur, E> {
                Err(E::custom(format!(
                    "duration {v} has no unit (write e.g. \"{v}s\")"
                )))
            }
        }
        d.deserialize_any(V)
    }
}

/// A count that may be `"unlimited"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// A finite count.
    Finite(u64),
    /// No limit.
    Unlimited,
}

impl Serialize for Limit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Limit::Finite(n) => s.serialize_u64(*n),
            Limit::Unlimited => s.serialize_str("unlimited"),
        }
    }
}

impl<'de> Deserialize<'de> for Limit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Limit;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a non-negative integer or \"unlimited\"")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Limit, E> {
                if s == "unlimited" {
                    Ok(Limit::Unlimited)
                } else {
                    Err(E::custom(format!(
                        "expected a non-negative integer or \"unlimited\", found \"{s}\""
                    )))
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Limit, E> {
                u64::try_from(v).map(Limit::Finite).map_err(|_| {
                    E::custom(format!(
                        "expected a non-negative integer or \"unlimited\", found {v}"
                    ))
                })
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Limit, E> {
                Ok(Limit::Finite(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// A time span that may be `"unlimited"` (a window since the start).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span {
    /// A duration.
    Finite(Nanos),
    /// No limit.
    Unlimited,
}

impl Serialize for Span {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Span::Finite(n) => Dur(*n).serialize(s),
            Span::Unlimited => s.serialize_str("unlimited"),
        }
    }
}

impl<'de> Deserialize<'de> for Span {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Span;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration string such as \"10s\", or \"unlimited\"")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Span, E> {
                if s == "unlimited" {
                    Ok(Span::Unlimited)
                } else {
                    super::duration::parse(s)
                        .map(Span::Finite)
                        .map_err(|e| E::custom(format!("{e} (or write \"unlimited\")")))
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Span, E> {
                Err(E::custom(format!(
                    "window {v} has no unit (write e.g. \"{v}s\", or \"unlimited\")"
                )))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Span, E> {
                Err(E::custom(format!(
                    "window {v} has no unit (write e.g. \"{v}s\", or \"unlimited\")"
                )))
            }
        }
        d.deserialize_any(V)
    }
}

/// A random delay: `{ kind = "...", ... }`, or a plain duration string (deterministic).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum DistFile {
    /// Exponential with the given mean.
    Exponential {
        /// Mean.
        mean: Dur,
    },
    /// Always `value`.
    Deterministic {
        /// The value.
        value: Dur,
    },
    /// Log-normal given by its median and 99th percentile.
    Lognormal {
        /// Median.
        median: Dur,
        /// 99th percentile.
        p99: Dur,
    },
    /// Uniform on `[min, max]`.
    Uniform {
        /// Lower bound.
        min: Dur,
        /// Upper bound.
        max: Dur,
    },
    /// The absolute value of a normal draw.
    Normal {
        /// Mean.
        mean: Dur,
        /// Standard deviation.
        sd: Dur,
    },
    /// Measured as a Prometheus classic histogram, sampled from the piecewise-linear
    /// CDF `histogram_quantile` assumes (linear inside each bucket, the first bucket
    /// from 0, or all at 0 when its bound is 0).
    Histogram {
        /// The buckets' upper bounds as durations, increasing (Prometheus'
        /// `le="0.005"` is `"5ms"` or `"0.005s"`); the `+Inf` bucket is not listed.
        /// Not with `file`.
        #[serde(default)]
        le: Vec<Dur>,
        /// The cumulative count of each bound in `le`, as Prometheus exports them
        /// (`_bucket` series), then optionally the `+Inf` bucket's (the total);
        /// counts may be fractional (from `rate()` or `increase()`). Not with `file`.
        #[serde(default)]
        counts: Vec<f64>,
        /// Bounds the `+Inf` bucket: its observations are spread evenly from the
        /// last bound in `le` to `max`, which must be given when that bucket holds
        /// any.
        max: Option<Dur>,
        /// The buckets read from a file instead of `le` and `counts`: a CSV table
        /// with columns `le,count` (cumulative, `+Inf` last if at all), or a
        /// Prometheus query answer of `_bucket` series (by their `le` label).
        file: Option<String>,
        /// What `file` is: `"csv"` or `"prometheus"`; when not written, a name ending
        /// in `.json` is read as `"prometheus"`, any other as `"csv"`.
        format: Option<FileFormat>,
        /// The unit of the bounds in `file` (default `"s"`, Prometheus' base unit).
        #[schemars(extend("default" = "s"))]
        unit: Option<Unit>,
        /// The labels that pick one histogram's `_bucket` series (besides `le`) when
        /// a Prometheus answer holds several.
        series: Option<std::collections::BTreeMap<String, String>>,
        /// The sample of a Prometheus range answer to take, by its time (Unix
        /// seconds; default the last sample of each series).
        time: Option<f64>,
    },
    /// Measured as quantiles: the inverse CDF linear between the points given, from
    /// 0 at p0 to `max` at p100 (at least one of p50, p90, p99, p999).
    Quantiles {
        /// Median.
        p50: Option<Dur>,
        /// 90th percentile.
        p90: Option<Dur>,
        /// 99th percentile.
        p99: Option<Dur>,
        /// 99.9th percentile.
        p999: Option<Dur>,
        /// The largest delay (p100).
        max: Dur,
    },
    /// Measured by HdrHistogram: the intervals of an interval log (`.hlog`) merged,
    /// each recorded value's count spread evenly over its bin (the values the
    /// histogram holds as equivalent).
    Hdr {
        /// The interval log.
        file: String,
        /// Only the intervals with this tag (default: every interval).
        tag: Option<String>,
        /// The unit of the recorded values (default `"ns"`, as jHiccup and
        /// HdrHistogram's log processor take them).
        #[schemars(extend("default" = "ns"))]
        unit: Option<Unit>,
        /// The distribution read (see the `measured` of `Empirical`).
        #[serde(skip)]
        #[schemars(skip)]
        measured: Option<std::sync::Arc<Measured>>,
    },
    /// Raw samples from a CSV column, resampled exactly: each draw is one of the
    /// values, each equally likely (no interpolation between them).
    Empirical {
        /// The CSV table.
        file: String,
        /// The column of samples.
        column: String,
        /// The unit of the samples (default `"s"`).
        #[schemars(extend("default" = "s"))]
        unit: Option<Unit>,
        /// The distribution read from the file (by `scenario::inputs::dists`,
        /// before validation; the model never sees the file).
        #[serde(skip)]
        #[schemars(skip)]
        measured: Option<std::sync::Arc<Measured>>,
    },
}

/// What a data file of buckets is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FileFormat {
    /// A CSV table with a header row.
    Csv,
    /// The JSON answer of a Prometheus query.
    Prometheus,
}

/// The unit of the numbers in a data file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Nanoseconds.
    Ns,
    /// Microseconds.
    Us,
    /// Milliseconds.
    Ms,
    /// Seconds.
    S,
}

impl Unit {
    /// Nanoseconds in one of the unit.
    pub fn ns(self) -> f64 {
        match self {
            Unit::Ns => 1.0,
            Unit::Us => 1e3,
            Unit::Ms => 1e6,
            Unit::S => 1e9,
        }
    }
}

/// A distribution, or a duration string meaning a deterministic delay.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct DistOrDur(pub DistFile);

impl<'de> Deserialize<'de> for DistOrDur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = DistOrDur;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration string or a table { kind = \"exponential\" | \"deterministic\" | \"lognormal\" | \"uniform\" | \"normal\" | \"histogram\" | \"quantiles\" | \"hdr\" | \"empirical\", ... }")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<DistOrDur, E> {
                let v = super::duration::parse(s).map_err(E::custom)?;
                Ok(DistOrDur(DistFile::Deterministic { value: Dur(v) }))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<DistOrDur, A::Error> {
                DistFile::deserialize(de::value::MapAccessDeserializer::new(map)).map(DistOrDur)
            }
        }
        d.deserialize_any(V)
    }
}

/// Refuses a list longer than its cap before any of it is checked.
pub(crate) fn list_cap(c: &Ctx, field: &str, len: usize, max: usize, what: &str) -> R<()> {
    if len > max {
        c.err(
            field,
            format!("at most {max} {what} are allowed (found {len})"),
        )
    } else {
        Ok(())
    }
}

/// A finite number in `[lo, hi]`.
pub(crate) fn in_range(c: &Ctx, field: &str, v: f64, lo: f64, hi: f64) -> R<f64> {
    let v = c.finite(field, v)?;
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        c.err(field, format!("must be between {lo} and {hi} (found {v})"))
    }
}

/// At most `max` (a duration), naming the bound as written.
pub(crate) fn at_most_dur(c: &Ctx, field: &str, v: Nanos, max: Nanos) -> R<Nanos> {
    if v <= max {
        Ok(v)
    } else {
        c.err(
            field,
            format!(
                "must be at most {} (found {})",
                crate::engine::time::format(max),
                crate::engine::time::format(v)
            ),
        )
    }
}

/// A user's value as a message shows it: control characters escaped, and cut to its
/// first [`MAX_VALUE_SHOWN`] characters with `… (N bytes)` when longer.
pub(crate) fn shown(s: &str) -> String {
    clip(s, MAX_VALUE_SHOWN)
}

/// `s` with control characters escaped, cut to `max` characters (`… (N bytes)`).
pub(crate) fn clip(s: &str, max: usize) -> String {
    let mut out = String::new();
    for (n, ch) in s.chars().enumerate() {
        if n == max {
            out.push_str(&format!("… ({} bytes)", s.len()));
            return out;
        }
        if ch.is_control() {
            out.extend(ch.escape_default());
        } else {
            out.push(ch);
        }
    }
    out
}

/// A JSON Schema for a type written as a string or a table in a way serde's derive
/// does not describe: always inlined where it is used.
macro_rules! inline_schema {
    ($ty:ty, $name:literal, |$g:ident| $schema:expr) => {
        impl schemars::JsonSchema for $ty {
            fn inline_schema() -> bool {
                true
            }
            fn schema_name() -> std::borrow::Cow<'static, str> {
                $name.into()
            }
            fn json_schema($g: &mut schemars::SchemaGenerator) -> schemars::Schema {
                $schema
            }
        }
    };
}
pub(crate) use inline_schema;

inline_schema!(Dur, "Duration", |_g| schemars::json_schema!({
    "type": "string",
    "format": "duration",
}));

inline_schema!(Limit, "Limit", |_g| schemars::json_schema!({
    "anyOf": [{ "type": "integer", "minimum": 0 }, { "const": "unlimited" }],
}));

inline_schema!(Span, "Span", |_g| schemars::json_schema!({
    "anyOf": [{ "type": "string", "format": "duration" }, { "const": "unlimited" }],
}));

inline_schema!(DistOrDur, "DistOrDur", |g| schemars::json_schema!({
    "anyOf": [{ "type": "string", "format": "duration" }, g.subschema_for::<DistFile>()],
}));

/// A duration as a scenario file writes it, in the largest unit up to seconds that
/// divides it (`"60s"`, `"10ms"`, `"0s"`): what the schema gives as a default.
pub(crate) fn duration_text(n: Nanos) -> String {
    if n == 0 {
        return "0s".into();
    }
    for (unit, size) in [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)] {
        if n.is_multiple_of(size) {
            return format!("{}{unit}", n / size);
        }
    }
    format!("{n}ns")
}

/// The default of a written enum as the scenario file writes it (`"fifo"`): what the
/// schema gives as a default for a key that validation fills with `unwrap_or_default`.
pub(crate) fn default_of<T: Default + Serialize>() -> serde_json::Value {
    serde_json::to_value(T::default()).unwrap_or(serde_json::Value::Null)
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn shown_example() {
        use crate::model::field::shown;
        assert_eq!(shown("web"), "web");
        assert_eq!(shown("a\x1b]0;x"), "a\\u{1b}]0;x");
        assert_eq!(
            shown(&"x".repeat(100)),
            format!("{}… (100 bytes)", "x".repeat(60))
        );
    }

    #[test]
    fn duration_text_example() {
        use crate::model::field::duration_text;
        assert_eq!(duration_text(60_000_000_000), "60s");
        assert_eq!(duration_text(10_000_000), "10ms");
        assert_eq!(duration_text(1_500_000_000), "1500ms");
        assert_eq!(duration_text(0), "0s");
    }

    #[test]
    fn default_of_example() {
        use crate::model::config::Discipline;
        use crate::model::field::default_of;
        assert_eq!(default_of::<Discipline>(), serde_json::json!("fifo"));
    }
}
