//! nginx `limit_req`: a leaky bucket whose admitted-but-early requests wait. Emulated
//! from `src/http/modules/ngx_http_limit_req_module.c` at nginx commit 481d28c (the
//! form since nginx 1.15.7, which added `delay=`): `ngx_http_limit_req_lookup` (lines
//! 404-529), `ngx_http_limit_req_account` (535-553), the `rate=` parsing of
//! `limit_req_zone` (903-939) and the `burst=`/`delay=`/`nodelay` parsing of `limit_req`
//! (996-1061). The tier is one zone with one key (`limit_req_zone $server_name`).
//!
//! Everything is integer thousandths, as in the C code: `rate` in milli-requests per
//! second (`rate=Nr/s` gives `N·1000`, `rate=Nr/m` gives `N·1000/60`, truncated: here
//! `rate · 1000 · 1s / period`, truncated, so `period = "1s"` and `"60s"` are nginx's
//! two units), `burst` and the `excess` in milli-requests. Time is nginx's
//! `ngx_current_msec`, whole milliseconds: `now_ms = now / 1ms`, truncated. The first
//! request creates the node (`excess = 0`, `last = now_ms`) and passes at once. A later
//! one at `now_ms`:
//!
//! ```text
//! ms = now_ms − last            (clamped: < −60000 → 1, < 0 → 0; never negative here)
//! excess = excess_prev − rate·ms/1000 + 1000 ; if excess < 0: excess = 0
//! excess > burst  → rejected (status 503 by default); the node is NOT updated
//! else            → store excess, and last = now_ms if ms ≠ 0;
//!                   delay_ms = excess ≤ delay ? 0 : (excess − delay)·1000/rate
//! ```
//!
//! `delay = N` is nginx's `delay=N` (`N·1000`), 0 (the default) is no `delay=`, and
//! `"nodelay"` is `NGX_MAX_INT_T_VALUE / 1000 · 1000`: nothing within the burst waits.
//! The C code mixes `ngx_uint_t` and a signed `ms`; after the clamp `ms ≥ 0`, so its
//! unsigned arithmetic is the signed one used here (128-bit, so nothing wraps).
//!
//! A delayed request waits `delay_ms` (nginx's write-event timer) before it goes on to
//! the tier's servers or queue; it holds no server meanwhile (nginx delays in the
//! preaccess phase, before proxying).
//!
//! Drift, pinned by a test: Igor Sysoev's 2008 example (nginx 0.7, nginx mailing list
//! 2008-12, "rate=1r/s burst=5", six simultaneous requests: "1 will be processed, next
//! 4 will be delayed for 1s, 2s, 3s, and 4s, and 6th will be reject[ed]") is not what
//! the code does: the sixth has `excess = 5000 = burst`, which is not over it, so it
//! is delayed 5 s and the seventh is the one rejected.

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use super::{AdmissionConfig, Verdict};
use crate::engine::time::{MILLISECOND, SECOND};
use crate::engine::Nanos;
use crate::model::field::{inline_schema, Ctx, Dur, R};
use crate::model::text::{fmt_num, fmt_time};

/// The `delay` of `limit_req`: a number of requests, or `"nodelay"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DelayParam {
    /// `delay=N`: the first `N` requests of a burst pass at once (0: none do).
    Requests(u64),
    /// `nodelay`: every request within the burst passes at once.
    NoDelay,
}

impl Serialize for DelayParam {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            DelayParam::Requests(n) => s.serialize_u64(*n),
            DelayParam::NoDelay => s.serialize_str("nodelay"),
        }
    }
}

impl<'de> Deserialize<'de> for DelayParam {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = DelayParam;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a whole number of requests (0 or more) or \"nodelay\"")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<DelayParam, E> {
                if s == "nodelay" {
                    Ok(DelayParam::NoDelay)
                } else {
                    Err(E::invalid_value(de::Unexpected::Str(s), &self))
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<DelayParam, E> {
                u64::try_from(v)
                    .map(DelayParam::Requests)
                    .map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<DelayParam, E> {
                Ok(DelayParam::Requests(v))
            }
        }
        d.deserialize_any(V)
    }
}

inline_schema!(DelayParam, "DelayParam", |_g| schemars::json_schema!({
    "anyOf": [{ "type": "integer", "minimum": 0 }, { "const": "nodelay" }],
}));

/// `{ kind = "leaky_bucket", ... }` as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// Requests per period (required, at least 1): nginx's `rate=Nr/s` with period
    /// 1s, `rate=Nr/m` with period 60s.
    pub rate: Option<u64>,
    /// The period of `rate` (default 1s).
    #[schemars(extend("default" = crate::model::field::duration_text(DEFAULT_PERIOD)))]
    pub period: Option<Dur>,
    /// Requests beyond the rate admitted (delayed or not), nginx's `burst=` (default 0).
    #[schemars(extend("default" = DEFAULT_BURST))]
    pub burst: Option<u64>,
    /// Requests of a burst that pass without waiting: a number (nginx's `delay=`;
    /// default 0) or `"nodelay"`.
    #[schemars(extend("default" = DEFAULT_DELAY))]
    pub delay: Option<DelayParam>,
    /// Status of a rejection: 503 (default, nginx's `limit_req_status`) or 429.
    #[schemars(extend("default" = DEFAULT_STATUS))]
    pub status: Option<u16>,
}

/// The period of `rate` when none is written: nginx's `r/s`.
pub(crate) const DEFAULT_PERIOD: Nanos = SECOND;

/// `burst` when none is written: nginx's, none.
pub(crate) const DEFAULT_BURST: u64 = 0;

/// `delay` when none is written: nginx without `delay=`, every burst request waits.
pub(crate) const DEFAULT_DELAY: u64 = 0;

/// The status of a rejection when none is written: nginx's `limit_req_status` 503.
pub(crate) const DEFAULT_STATUS: u16 = 503;

/// nginx's `nodelay`: `NGX_MAX_INT_T_VALUE / 1000`, times 1000 (64-bit).
pub(crate) const NODELAY: u64 = (i64::MAX as u64 / 1000) * 1000;

/// The largest `burst` accepted: its thousandths stay far inside 64 bits.
pub(crate) const MAX_BURST: u64 = 1_000_000_000_000;

/// The longest delay accepted: a day, in ms.
const MAX_DELAY_MS: u128 = 86_400_000;

impl Written {
    /// The validated limiter; `p` is the field path of the table.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<AdmissionConfig> {
        let Some(rate) = self.rate else {
            return c.err(
                format!("{p}.rate"),
                "is required for kind = \"leaky_bucket\" (requests per period, at least 1)",
            );
        };
        let rate = c.at_least(&format!("{p}.rate"), rate, 1)?;
        let period = match self.period {
            Some(d) => c.positive_dur(&format!("{p}.period"), d)?,
            None => DEFAULT_PERIOD,
        };
        // nginx: ctx->rate = rate * 1000 / scale.
        let milli = u128::from(rate) * 1000 * u128::from(SECOND) / u128::from(period);
        if milli == 0 || milli > u128::from(MAX_BURST) * 1000 {
            return c.err(
                format!("{p}.rate"),
                format!(
                    "must give between 0.001 and 10^12 requests per second (found {rate} per {})",
                    fmt_time(period)
                ),
            );
        }
        let burst = self.burst.unwrap_or(DEFAULT_BURST);
        if burst > MAX_BURST {
            return c.err(
                format!("{p}.burst"),
                format!("must be at most {MAX_BURST} (found {burst})"),
            );
        }
        let delay = match self.delay.unwrap_or(DelayParam::Requests(DEFAULT_DELAY)) {
            DelayParam::Requests(n) if n > MAX_BURST => {
                return c.err(
                    format!("{p}.delay"),
                    format!("must be at most {MAX_BURST} or \"nodelay\" (found {n})"),
                );
            }
            DelayParam::Requests(n) => n * 1000,
            DelayParam::NoDelay => NODELAY,
        };
        let cfg = Config {
            rate: milli as u64,
            burst: burst * 1000,
            delay,
            status: super::status_or(c, p, self.status, DEFAULT_STATUS)?,
        };
        if u128::from(cfg.longest_delay_ms()) > MAX_DELAY_MS {
            return c.err(
                format!("{p}.burst"),
                format!(
                    "must keep the longest delay ((burst − delay) / rate) at most 1 day (found {})",
                    fmt_time(cfg.longest_delay_ms().saturating_mul(MILLISECOND))
                ),
            );
        }
        Ok(AdmissionConfig::LeakyBucket(cfg))
    }
}

/// Validated settings, in nginx's thousandths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Milli-requests per second (`ctx->rate`), at least 1.
    pub rate: u64,
    /// Milli-requests (`limit->burst`).
    pub burst: u64,
    /// Milli-requests that pass undelayed (`limit->delay`; [`NODELAY`] for `nodelay`).
    pub delay: u64,
    /// Status of a rejection.
    pub status: u16,
}

impl Config {
    /// nginx's `rate=…r/s burst=… [delay=…|nodelay]`, status 503.
    pub fn new(rate_per_s: u64, burst: u64, delay: DelayParam) -> Config {
        Config {
            rate: rate_per_s * 1000,
            burst: burst * 1000,
            delay: match delay {
                DelayParam::Requests(n) => n * 1000,
                DelayParam::NoDelay => NODELAY,
            },
            status: 503,
        }
    }

    /// The delay (ms) of a request admitted with `excess`.
    fn delay_ms(&self, excess: u64) -> u64 {
        if excess <= self.delay {
            0
        } else {
            ((u128::from(excess - self.delay) * 1000) / u128::from(self.rate)) as u64
        }
    }

    /// The delay (ms) of a request admitted with the whole burst taken.
    pub fn longest_delay_ms(&self) -> u64 {
        self.delay_ms(self.burst)
    }

    /// What explain says of the limiter.
    pub(super) fn describe(&self) -> String {
        let upto = fmt_time(self.longest_delay_ms() * MILLISECOND);
        let waits = if self.delay >= self.burst {
            if self.delay == NODELAY {
                "nodelay: every admitted attempt goes on at once".to_string()
            } else {
                format!(
                    "delay={}: every admitted attempt goes on at once",
                    fmt_num(self.delay as f64 / 1000.0)
                )
            }
        } else {
            let first = if self.delay == 0 {
                "an admitted attempt waits excess / rate".to_string()
            } else {
                format!(
                    "the first {} of a burst go on at once, the others wait (excess − {}) / rate",
                    fmt_num(self.delay as f64 / 1000.0),
                    fmt_num(self.delay as f64 / 1000.0)
                )
            };
            format!(
                "{first} (up to {upto}, in whole ms) before it reaches the servers or the queue, holding no server; cancelled meanwhile (timeout, deadline, hedge), it is dropped"
            )
        };
        format!(
            "leaky bucket (nginx limit_req, 481d28c, as since 1.15.7): drains {}/s in whole milliseconds, each attempt adds 1 to the excess (in milli-requests, as the C code); an attempt taking it over burst {} is answered {} without Retry-After and leaves it unchanged; {}",
            fmt_num(self.rate as f64 / 1000.0),
            fmt_num(self.burst as f64 / 1000.0),
            self.status,
            waits
        )
    }
}

/// The zone's one node: its excess and the millisecond it was last moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bucket {
    cfg: Config,
    /// Milli-requests over the rate (`lr->excess`).
    excess: u64,
    /// `lr->last` (ms), once the node exists.
    last: Option<u64>,
}

/// What `limit_req` decides of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Decision {
    /// The excess it computed (`*ep`), milli-requests.
    pub excess: u64,
    /// Whether it is rejected.
    pub rejected: bool,
    /// How long an admitted request waits (ms).
    pub delay_ms: u64,
}

impl Bucket {
    /// No node yet.
    pub(crate) fn new(cfg: Config) -> Bucket {
        Bucket {
            cfg,
            excess: 0,
            last: None,
        }
    }

    /// `ngx_http_limit_req_lookup` with `account = 1`, then `_account`, at `now`.
    pub(crate) fn decide(&mut self, now: Nanos) -> Decision {
        let now_ms = now / MILLISECOND;
        let Some(last) = self.last else {
            self.last = Some(now_ms);
            self.excess = 0;
            return Decision {
                excess: 0,
                rejected: false,
                delay_ms: 0,
            };
        };
        let mut ms = i128::from(now_ms) - i128::from(last);
        if ms < -60_000 {
            ms = 1;
        } else if ms < 0 {
            ms = 0;
        }
        let excess =
            (i128::from(self.excess) - i128::from(self.cfg.rate) * ms / 1000 + 1000).max(0);
        let excess = excess as u64; // at most excess_prev + 1000
        if excess > self.cfg.burst {
            return Decision {
                excess,
                rejected: true,
                delay_ms: 0,
            };
        }
        self.excess = excess;
        if ms != 0 {
            self.last = Some(now_ms);
        }
        Decision {
            excess,
            rejected: false,
            delay_ms: self.cfg.delay_ms(excess),
        }
    }

    /// An attempt arrives at `now`.
    #[inline]
    pub(crate) fn admit(&mut self, now: Nanos) -> Verdict {
        let d = self.decide(now);
        if d.rejected {
            Verdict::Limit(None)
        } else if d.delay_ms == 0 {
            Verdict::Admit
        } else {
            Verdict::Delay(d.delay_ms * MILLISECOND)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(excess: u64, rejected: bool, delay_ms: u64) -> Decision {
        Decision {
            excess,
            rejected,
            delay_ms,
        }
    }

    /// VA4: rate=1r/s burst=5, seven simultaneous requests: the first at once, five
    /// delayed 1..5 s, the seventh rejected 503 (the node unchanged).
    #[test]
    fn nginx_rate_1_burst_5_seven_at_once_one_now_five_delayed_seventh_rejected() {
        let mut b = Bucket::new(Config::new(1, 5, DelayParam::Requests(0)));
        let t = 7 * SECOND + 300 * MILLISECOND;
        let got: Vec<Decision> = (0..7).map(|_| b.decide(t)).collect();
        assert_eq!(
            got,
            [
                d(0, false, 0),
                d(1000, false, 1000),
                d(2000, false, 2000),
                d(3000, false, 3000),
                d(4000, false, 4000),
                d(5000, false, 5000),
                d(6000, true, 0),
            ]
        );
        let mut b = Bucket::new(Config::new(1, 5, DelayParam::Requests(0)));
        let v: Vec<Verdict> = (0..7).map(|_| b.admit(t)).collect();
        let mut want = vec![Verdict::Admit];
        want.extend((1..=5).map(|k| Verdict::Delay(k * SECOND)));
        want.push(Verdict::Limit(None));
        assert_eq!(v, want);
        assert_eq!(b.cfg.status, 503);
        // The rejection left the node as it was: a request 1 s later drains 1000.
        assert_eq!(b.decide(t + SECOND), d(5000, false, 5000));
    }

    /// The drift of VA4: Sysoev's 2008 statement for nginx 0.7 rejects the sixth of six
    /// at burst 5; the code admits it (its excess equals the burst) and rejects the
    /// seventh.
    #[test]
    fn the_sixth_of_six_at_burst_5_is_delayed_not_rejected_as_the_2008_post_says() {
        let mut b = Bucket::new(Config::new(1, 5, DelayParam::Requests(0)));
        let v: Vec<Verdict> = (0..6).map(|_| b.admit(0)).collect();
        assert_eq!(
            v[5],
            Verdict::Delay(5 * SECOND),
            "current code: delayed 5 s"
        );
        assert_ne!(v[5], Verdict::Limit(None), "2008: rejected");
        assert_eq!(b.admit(0), Verdict::Limit(None));
    }

    /// VA4 with `nodelay`: six pass at once and leave a debt of 5 (excess 5000).
    #[test]
    fn with_nodelay_six_pass_at_once_and_leave_a_debt_of_five() {
        let mut b = Bucket::new(Config::new(1, 5, DelayParam::NoDelay));
        let v: Vec<Verdict> = (0..6).map(|_| b.admit(0)).collect();
        assert!(v.iter().all(|x| *x == Verdict::Admit), "{v:?}");
        assert_eq!(b.excess, 5000);
        assert_eq!(b.admit(0), Verdict::Limit(None));
        // The debt drains at the rate: 1 s later one more passes.
        assert_eq!(b.admit(SECOND), Verdict::Admit);
        assert_eq!(b.admit(SECOND), Verdict::Limit(None));
    }

    /// VA4, netdata: rate=10r/s, no burst: a request 10 ms after the first is rejected
    /// (excess = 1000 − 10000·10/1000 = 900 > 0); 100 ms after, it passes.
    #[test]
    fn at_10_per_second_without_burst_a_request_10ms_after_the_first_is_rejected() {
        let mut b = Bucket::new(Config::new(10, 0, DelayParam::Requests(0)));
        assert_eq!(b.decide(5 * SECOND), d(0, false, 0));
        assert_eq!(b.decide(5 * SECOND + 10 * MILLISECOND), d(900, true, 0));
        assert_eq!(b.decide(5 * SECOND + 100 * MILLISECOND), d(0, false, 0));
    }

    /// `delay=N`: the first N of a burst pass at once, the rest wait (excess − N)/rate.
    #[test]
    fn delay_n_lets_n_of_a_burst_through_at_once() {
        let mut b = Bucket::new(Config::new(2, 5, DelayParam::Requests(3)));
        let v: Vec<Verdict> = (0..7).map(|_| b.admit(0)).collect();
        let ms = MILLISECOND;
        assert_eq!(
            v,
            [
                Verdict::Admit,
                Verdict::Admit,
                Verdict::Admit,
                Verdict::Admit,
                Verdict::Delay(500 * ms),
                Verdict::Delay(1000 * ms),
                Verdict::Limit(None),
            ]
        );
    }

    /// nginx's clock is whole milliseconds: 0.9 ms apart is the same millisecond (no
    /// drain), and `last` moves only when a millisecond passed.
    #[test]
    fn time_is_whole_milliseconds_truncated_as_ngx_current_msec() {
        // 1000 r/s: one request per ms drains exactly 1000 per ms.
        let mut b = Bucket::new(Config::new(1000, 0, DelayParam::Requests(0)));
        assert_eq!(b.decide(999_999), d(0, false, 0)); // ms 0
        assert_eq!(b.decide(1_000_100), d(0, false, 0)); // ms 1: drained 1000
        assert_eq!(b.decide(1_900_000), d(1000, true, 0)); // still ms 1
        assert_eq!(b.decide(2_000_000), d(0, false, 0));
        // r/m truncates: 1r/m is 16 milli-requests per second, as 1000/60 in C.
        let c = Config {
            rate: 1000 / 60,
            ..Config::new(1, 1, DelayParam::Requests(0))
        };
        assert_eq!(c.rate, 16);
        assert_eq!(c.longest_delay_ms(), 1000 * 1000 / 16);
    }
}
