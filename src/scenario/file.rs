//! The scenario file as written: a serde mirror of the TOML, unknown keys rejected.
//!
//! Values here are as the user wrote them (durations already in nanoseconds, but no
//! cross-field rules checked); [`super::validate`] turns them into a typed
//! [`crate::model::config::Scenario`].

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

use super::inputs::profile::{Files, Format, Interpolate, Recorded, Values};

pub(crate) use crate::model::field::{DistOrDur, Dur, Limit};
pub(crate) use crate::model::guard::PoolFile;

/// How a fleet's logical requests arrive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ArrivalFile {
    /// Open loop, exponential inter-arrival times.
    Poisson {
        /// Logical requests per second for the whole fleet (required, unless
        /// `load_profile.file` gives the rate).
        rate: Option<f64>,
        /// Clients the requests are spread over, in turn.
        clients: Option<u64>,
    },
    /// Open loop, evenly spaced.
    Constant {
        /// Logical requests per second (required, unless `load_profile.file` gives
        /// the rate).
        rate: Option<f64>,
        /// Clients the requests are spread over, in turn.
        clients: Option<u64>,
    },
    /// Closed loop: each client waits for its request, thinks, then sends the next.
    Closed {
        /// Number of clients.
        clients: u64,
        /// Pause between a response and the next request.
        think_time: DistOrDur,
    },
    /// `count` requests at one instant.
    Burst {
        /// When.
        at: Dur,
        /// How many.
        count: u64,
        /// Clients the requests are spread over (default: one per request).
        clients: Option<u64>,
    },
    /// A message queue the fleet consumes: messages published by an open process
    /// (`publish`), each handled by one of the fleet's `consumers`.
    Queue(crate::model::broker::Written),
    /// Requests replayed from a trace file, one per row, at the times it gives.
    Trace(super::inputs::trace::TraceFile),
}

/// One point of a load profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProfilePoint {
    /// From when.
    pub at: Dur,
    /// Factor applied to the arrival rate.
    pub multiplier: f64,
}

/// Steps `[{ at, multiplier }]`, `{ ramp = [...] }` (linear between points), or a
/// recording `{ file = ..., ... }` ([`crate::scenario::inputs::profile`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum LoadProfileFile {
    /// Piecewise constant.
    Steps(Vec<ProfilePoint>),
    /// Piecewise linear.
    Ramp {
        /// The points.
        ramp: Vec<ProfilePoint>,
    },
    /// A recorded series: the fleet's rate as a monitoring system exported it.
    Recorded(Recorded),
}

impl<'de> Deserialize<'de> for LoadProfileFile {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // One table for both kinds, so an unknown key lists every key allowed.
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct ProfileTable {
            ramp: Option<Vec<ProfilePoint>>,
            file: Option<Files>,
            format: Option<Format>,
            time: Option<String>,
            value: Option<String>,
            values: Option<Values>,
            series: Option<std::collections::BTreeMap<String, String>>,
            scale: Option<f64>,
            speed: Option<f64>,
            interpolate: Option<Interpolate>,
        }
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LoadProfileFile;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a list of { at, multiplier } steps, a table { ramp = [...] } or a recording { file = ... }",
                )
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<LoadProfileFile, A::Error> {
                Vec::<ProfilePoint>::deserialize(de::value::SeqAccessDeserializer::new(seq))
                    .map(LoadProfileFile::Steps)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<LoadProfileFile, A::Error> {
                let t = ProfileTable::deserialize(de::value::MapAccessDeserializer::new(map))?;
                match (t.ramp, t.file) {
                    (Some(_), Some(_)) => Err(de::Error::custom(
                        "`ramp` and `file` are two kinds of load profile: write one",
                    )),
                    (Some(ramp), None) => {
                        let recorded = [
                            t.format.is_some(),
                            t.time.is_some(),
                            t.value.is_some(),
                            t.values.is_some(),
                            t.series.is_some(),
                            t.scale.is_some(),
                            t.speed.is_some(),
                            t.interpolate.is_some(),
                        ];
                        if recorded.contains(&true) {
                            return Err(de::Error::custom(
                                "a `ramp` takes no other key: format, time, value, values, series, scale, speed and interpolate are a recording's (`file = ...`)",
                            ));
                        }
                        Ok(LoadProfileFile::Ramp { ramp })
                    }
                    (None, Some(file)) => Ok(LoadProfileFile::Recorded(Recorded {
                        file,
                        format: t.format,
                        time: t.time,
                        value: t.value,
                        values: t.values,
                        series: t.series,
                        scale: t.scale,
                        speed: t.speed,
                        interpolate: t.interpolate,
                        points: None,
                    })),
                    (None, None) => Err(de::Error::missing_field("ramp")),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// A client fleet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FleetFile {
    /// Unique name.
    pub name: String,
    /// Arrival process.
    pub arrival: ArrivalFile,
    /// Optional multiplier over time.
    pub load_profile: Option<LoadProfileFile>,
    /// End-to-end budget of a logical request.
    pub deadline: Option<Dur>,
    /// Fraction of non-idempotent writes (default 0).
    #[schemars(extend("default" = crate::model::config::DEFAULT_WRITES))]
    pub writes: Option<f64>,
    /// Whether writes carry an idempotency key (default false).
    #[schemars(extend("default" = crate::model::config::DEFAULT_IDEMPOTENCY_KEYS))]
    pub idempotency_keys: Option<bool>,
    /// Retry layers, top first.
    #[serde(default)]
    pub layers: Vec<LayerFile>,
    /// The service the fleet calls (default: the only service).
    pub target: Option<String>,
    /// Whether the remaining deadline travels with the attempts (default false).
    #[schemars(extend("default" = crate::model::config::DEFAULT_PROPAGATE_DEADLINE))]
    pub propagate_deadline: Option<bool>,
    /// Queue fleets: concurrent handlers.
    pub consumers: Option<u64>,
    /// Queue fleets: a received message reappears after this (default 30s).
    #[schemars(extend("default" = crate::model::field::duration_text(crate::model::broker::DEFAULT_VISIBILITY_TIMEOUT)))]
    pub visibility_timeout: Option<Dur>,
    /// Queue fleets: receives before the dead-letter queue (default unlimited).
    pub max_receive_count: Option<Limit>,
    /// Queue fleets: extra delay before a failed message is visible again (default 0s).
    #[schemars(extend("default" = crate::model::field::duration_text(crate::model::broker::DEFAULT_REDELIVERY_DELAY)))]
    pub redelivery_delay: Option<Dur>,
    /// Queue fleets: fraction of messages whose handling always fails (default 0).
    #[schemars(extend("default" = crate::model::broker::DEFAULT_POISON))]
    pub poison: Option<f64>,
    /// Bulkhead: attempts the innermost layer may have in flight at once
    /// (`"unlimited"`: no bulkhead).
    pub max_concurrent: Option<Limit>,
    /// Attempts that may wait for a bulkhead slot (default 0: refuse at once).
    #[schemars(extend("default" = crate::model::guard::DEFAULT_BULKHEAD_QUEUE))]
    pub bulkhead_queue: Option<u64>,
    /// Connection pool of the innermost layer's attempts.
    pub pool: Option<PoolFile>,
    /// The class of its requests and of every call and attempt they cause, downstream
    /// tiers included (default `"critical"`).
    #[schemars(extend("default" = crate::model::field::default_of::<crate::model::criticality::Criticality>()))]
    pub criticality: Option<crate::model::criticality::Criticality>,
}

/// A retry layer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LayerFile {
    /// Name (default `layer<i>`).
    pub name: Option<String>,
    /// Attempts per call, the first included.
    pub max_attempts: Limit,
    /// Per-attempt timeout.
    pub attempt_timeout: Option<Dur>,
    /// Whether a timed-out attempt cancels the work below (default false).
    #[schemars(extend("default" = crate::model::config::DEFAULT_CANCEL_ON_TIMEOUT))]
    pub cancel_on_timeout: Option<bool>,
    /// Backoff (default none).
    pub backoff: Option<crate::model::backoff::BackoffFile>,
    /// Retried outcome classes.
    pub retry_on: Option<Vec<String>>,
    /// Whether ambiguous writes without keys are retried (default false).
    #[schemars(extend("default" = crate::model::config::DEFAULT_RETRY_AMBIGUOUS_WRITES))]
    pub retry_ambiguous_writes: Option<bool>,
    /// Whether Retry-After is honoured (default true).
    #[schemars(extend("default" = crate::model::config::DEFAULT_RESPECT_RETRY_AFTER))]
    pub respect_retry_after: Option<bool>,
    /// Independent copies of the layer's state.
    pub instances: Option<u64>,
    /// Retry budget.
    pub budget: Option<crate::model::budget::BudgetFile>,
    /// Circuit breaker.
    pub breaker: Option<crate::model::breaker::BreakerFile>,
    /// Network delay to the layer below and back.
    pub hop_latency: Option<DistOrDur>,
    /// Named preset for the whole policy (resolved before parsing).
    pub preset: Option<String>,
    /// The policy from a configuration file (resolved before presets; keys written
    /// beside it win; not with `preset`).
    pub import: Option<ImportFile>,
    /// Largest `max_attempts` (gRPC clamps larger values to 5).
    pub max_attempts_cap: Option<u64>,
    /// Time a call may take, all attempts and backoff included.
    pub total_timeout: Option<Dur>,
    /// Client-side rate limiter.
    pub limiter: Option<crate::model::limiter::LimiterFile>,
    /// Client-side concurrency limit per instance (Netflix's client limiter).
    pub concurrency_limit: Option<crate::model::concurrency::client::ClientLimitFile>,
    /// Hedged requests instead of retries.
    pub hedging: Option<crate::model::hedge::HedgingFile>,
    /// The class its retries (attempts after the first) and all they cause are sent
    /// at: the lower of it and the call's; a fleet layer's may not be above the
    /// fleet's `criticality`.
    pub retry_criticality: Option<crate::model::criticality::Criticality>,
    /// Presets of the parts, taken out of the part tables before parsing.
    #[serde(skip)]
    pub part_presets: crate::model::config::PartPresets,
}

/// `import = { format, file, <selector> }`: a layer read from a configuration file (a
/// gRPC service config, an Envoy route configuration, an Istio VirtualService, a
/// Linkerd ServiceProfile, a Spring Boot application.yml, an AWS shared config
/// file), checked by its importer before parsing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportFile {
    /// The file's format: `"grpc_service_config"`, `"envoy"`, `"istio"`, `"linkerd"`,
    /// `"resilience4j"` or `"aws_config"`.
    pub format: String,
    /// The file, relative to the scenario; recorded with its SHA-256 in the manifest.
    pub file: String,
    /// `grpc_service_config`: the full service name (`pkg.Service`); without it, only
    /// the default method config (service empty) matches.
    pub service: Option<String>,
    /// `grpc_service_config`: the method; without it, the service's entry or the
    /// default matches.
    pub method: Option<String>,
    /// `envoy`: the route's `name` (`virtual_hosts[].routes[].name`); `istio`: the
    /// HTTP route's `name` (`spec.http[].name`) or place (`http[1]`); `linkerd`: the
    /// route's `name` (`spec.routes[].name`).
    pub route: Option<String>,
    /// `envoy`: the virtual host's `name`, when route names repeat.
    pub virtual_host: Option<String>,
    /// `envoy`: a request path (`/pkg.Svc/Method`); the first route that matches it,
    /// as Envoy matches, for routes without names.
    pub path: Option<String>,
    /// `envoy`: a request's host; the virtual host Envoy picks for it by its `domains`.
    pub authority: Option<String>,
    /// `istio`: the VirtualService's `metadata.name`, when the file holds several.
    pub virtual_service: Option<String>,
    /// `linkerd`: the ServiceProfile's `metadata.name`, when the file holds several.
    pub service_profile: Option<String>,
    /// `resilience4j`: the instance's name (`resilience4j.retry.instances.<name>`, and
    /// the circuit breaker of the same name).
    pub instance: Option<String>,
    /// `aws_config`: the profile (`[profile NAME]`); without it, `default`.
    pub profile: Option<String>,
}

/// The dependency every fleet calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DependencyFile {
    /// `"queue"` (default) or `"occ"` (one record under optimistic concurrency).
    #[schemars(extend("default" = crate::model::field::default_of::<crate::model::config::DependencyKind>()))]
    pub kind: Option<crate::model::config::DependencyKind>,
    /// Attempts served at once (queue only; required there).
    pub servers: Option<Limit>,
    /// Attempts that may wait (default unlimited).
    pub queue_limit: Option<Limit>,
    /// 503 (default) or 429.
    #[schemars(extend("default" = crate::model::config::DEFAULT_REJECT_STATUS))]
    pub reject_status: Option<u16>,
    /// Retry-After carried by rejections.
    pub retry_after: Option<Dur>,
    /// Service time (queue only; required there).
    pub service_time: Option<DistOrDur>,
    /// Extra service time per attempt already in service (default 0s).
    #[schemars(extend("default" = crate::model::field::duration_text(crate::model::config::DEFAULT_PER_CONCURRENT)))]
    pub per_concurrent: Option<Dur>,
    /// `"fifo"` (default) or `"lifo"`.
    #[schemars(extend("default" = crate::model::field::default_of::<crate::model::config::Discipline>()))]
    pub discipline: Option<crate::model::config::Discipline>,
    /// Skip queued attempts nobody waits for (default false).
    #[schemars(extend("default" = crate::model::config::DEFAULT_DROP_EXPIRED))]
    pub drop_expired: Option<bool>,
    /// Independent transient failure probability (default 0).
    #[schemars(extend("default" = crate::model::config::DEFAULT_ERROR_RATE))]
    pub error_rate: Option<f64>,
    /// A limiter in front of the queue.
    pub admission: Option<crate::model::admission::AdmissionFile>,
    /// Server time a rejection takes (default 0s).
    #[schemars(extend("default" = crate::model::field::duration_text(crate::model::config::DEFAULT_REJECT_COST)))]
    pub reject_cost: Option<Dur>,
    /// Priority shedding: the load from which each class is shed, lower first.
    pub shed_by_criticality: Option<crate::model::criticality::ShedFile>,
    /// What the queue does under load (CoDel, adaptive LIFO), beside `discipline`.
    pub queue_policy: Option<crate::model::queue_policy::QueuePolicyFile>,
    /// A concurrency limit: attempts in flight at the tier (in service and queued) at
    /// most the limit, fixed or sized from measured latency; one over it is refused at
    /// once.
    pub concurrency_limit: Option<crate::model::concurrency::ConcurrencyLimitFile>,
}

/// What an outage does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ModeFile {
    /// Every attempt fails after `after`.
    Fail {
        /// Time to fail (default 1ms).
        #[schemars(extend("default" = crate::model::field::duration_text(crate::model::config::DEFAULT_FAIL_AFTER)))]
        after: Option<Dur>,
    },
    /// Attempts fail with probability `p`.
    ErrorRate {
        /// Probability.
        p: f64,
    },
    /// Service times multiplied by `factor`.
    Slow {
        /// Factor.
        factor: f64,
    },
    /// Fewer servers.
    Capacity {
        /// Servers during the outage.
        servers: u64,
    },
    /// No answers (a table with no other key).
    Blackhole {},
}

/// How an outage is timed.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum OutageKind {
    /// From `start` to `end`.
    #[default]
    Window,
    /// Alternating up and down times, exponentially distributed.
    Markov,
}

/// A correlated fault: a window, or a Markov on/off process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutageFile {
    /// `"window"` (default) or `"markov"`.
    #[schemars(extend("default" = crate::model::field::default_of::<OutageKind>()))]
    pub kind: Option<OutageKind>,
    /// Window start.
    pub start: Option<Dur>,
    /// Window end.
    pub end: Option<Dur>,
    /// Markov: mean up time.
    pub mean_up: Option<Dur>,
    /// Markov: mean down time.
    pub mean_down: Option<Dur>,
    /// What happens (required, unless `file` gives a timeline).
    pub mode: Option<ModeFile>,
    /// The service it hits (default: every service).
    pub target: Option<String>,
    /// An incident timeline: a CSV file of one outage window per row (`start`, `end`,
    /// `mode` and its parameter, `target`), relative to the scenario file; the entry
    /// then takes no other key but `target`, the rows' default.
    pub file: Option<String>,
}

/// A service of a graph (`[[services]]`): the dependency's capacity keys, a name,
/// and the calls it makes while serving a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServiceFile {
    /// Unique name.
    pub name: String,
    /// Requests served at once (threads); required.
    pub servers: Option<Limit>,
    /// Requests that may wait (default unlimited).
    pub queue_limit: Option<Limit>,
    /// 503 (default) or 429.
    #[schemars(extend("default" = crate::model::config::DEFAULT_REJECT_STATUS))]
    pub reject_status: Option<u16>,
    /// Retry-After carried by rejections.
    pub retry_after: Option<Dur>,
    /// The service's own work per request; required.
    pub service_time: Option<DistOrDur>,
    /// Extra service time per request already in service (default 0s).
    #[schemars(extend("default" = crate::model::field::duration_text(crate::model::config::DEFAULT_PER_CONCURRENT)))]
    pub per_concurrent: Option<Dur>,
    /// `"fifo"` (default) or `"lifo"`.
    #[schemars(extend("default" = crate::model::field::default_of::<crate::model::config::Discipline>()))]
    pub discipline: Option<crate::model::config::Discipline>,
    /// Skip queued requests nobody waits for (default false).
    #[schemars(extend("default" = crate::model::config::DEFAULT_DROP_EXPIRED))]
    pub drop_expired: Option<bool>,
    /// Independent transient failure probability of its own work (default 0).
    #[schemars(extend("default" = crate::model::config::DEFAULT_ERROR_RATE))]
    pub error_rate: Option<f64>,
    /// Whether a thread is held for the whole request (default true).
    #[schemars(extend("default" = crate::model::config::DEFAULT_HOLD_THREADS))]
    pub hold_threads: Option<bool>,
    /// `"error"` (default) or `"overloaded"`: how a failed request is answered.
    #[schemars(extend("default" = crate::model::field::default_of::<crate::model::config::OnFailure>()))]
    pub on_failure: Option<crate::model::config::OnFailure>,
    /// Whether a rejection for capacity is answered `overloaded` (default false).
    #[schemars(extend("default" = crate::model::config::DEFAULT_OVERLOADED_STATUS))]
    pub overloaded_status: Option<bool>,
    /// A limiter in front of the queue.
    pub admission: Option<crate::model::admission::AdmissionFile>,
    /// Server time a rejection takes (default 0s).
    #[schemars(extend("default" = crate::model::field::duration_text(crate::model::config::DEFAULT_REJECT_COST)))]
    pub reject_cost: Option<Dur>,
    /// Priority shedding: the load from which each class is shed, lower first.
    pub shed_by_criticality: Option<crate::model::criticality::ShedFile>,
    /// What the queue does under load (CoDel, adaptive LIFO), beside `discipline`.
    pub queue_policy: Option<crate::model::queue_policy::QueuePolicyFile>,
    /// A concurrency limit: attempts in flight at the tier (in service and queued) at
    /// most the limit, fixed or sized from measured latency; one over it is refused at
    /// once.
    pub concurrency_limit: Option<crate::model::concurrency::ConcurrencyLimitFile>,
    /// Downstream calls, in order.
    #[serde(default)]
    pub calls: Vec<CallFile>,
}

impl ServiceFile {
    /// The capacity keys as a `[dependency]` table, for the same rules.
    pub fn capacity(&self) -> DependencyFile {
        DependencyFile {
            kind: None,
            servers: self.servers,
            queue_limit: self.queue_limit,
            reject_status: self.reject_status,
            retry_after: self.retry_after,
            service_time: self.service_time.clone(),
            per_concurrent: self.per_concurrent,
            discipline: self.discipline,
            drop_expired: self.drop_expired,
            error_rate: self.error_rate,
            admission: self.admission.clone(),
            reject_cost: self.reject_cost,
            shed_by_criticality: self.shed_by_criticality,
            queue_policy: self.queue_policy.clone(),
            concurrency_limit: self.concurrency_limit.clone(),
        }
    }
}

/// The callee of a call: one service, or a list for a parallel fan-out.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ToFile {
    /// `to = "backend"`.
    One(String),
    /// `to = ["users", "orders"]`.
    Many(Vec<String>),
}

impl<'de> Deserialize<'de> for ToFile {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ToFile;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a service name (to = \"backend\") or a list of them (to = [\"users\", \"orders\"])",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ToFile, E> {
                Ok(ToFile::One(v.to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<ToFile, A::Error> {
                Vec::<String>::deserialize(de::value::SeqAccessDeserializer::new(seq))
                    .map(ToFile::Many)
            }
        }
        d.deserialize_any(V)
    }
}

/// `join = "all" | "any" | { quorum = k }`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum JoinFile {
    /// `"all"` or `"any"`.
    Word(String),
    /// `{ quorum = k }`.
    Quorum {
        /// Successes needed.
        quorum: u64,
    },
}

impl<'de> Deserialize<'de> for JoinFile {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct QuorumTable {
            quorum: toml::Value,
        }
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = JoinFile;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("\"all\", \"any\" or { quorum = k }")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<JoinFile, E> {
                Ok(JoinFile::Word(v.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<JoinFile, A::Error> {
                let q = QuorumTable::deserialize(de::value::MapAccessDeserializer::new(map))?;
                match q.quorum.as_integer().map(u64::try_from) {
                    Some(Ok(quorum)) => Ok(JoinFile::Quorum { quorum }),
                    _ => Err(de::Error::custom(format!(
                        "quorum must be a whole number of callees, at least 1 (found {})",
                        q.quorum
                    ))),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// One downstream call of a service (`[[services.calls]]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallFile {
    /// Callee, or callees of a fan-out.
    pub to: ToFile,
    /// When a fan-out succeeds (default `"all"`).
    #[schemars(extend("default" = "all"))]
    pub join: Option<JoinFile>,
    /// Whether the callees still going are cancelled once the join is decided
    /// (default true).
    #[schemars(extend("default" = crate::model::config::DEFAULT_CANCEL_REST))]
    pub cancel_rest: Option<bool>,
    /// Whether the remaining deadline travels with the attempts (default false).
    #[schemars(extend("default" = crate::model::config::DEFAULT_PROPAGATE_DEADLINE))]
    pub propagate_deadline: Option<bool>,
    /// The call's retry layers, outermost first.
    #[serde(default)]
    pub layers: Vec<LayerFile>,
    /// Bulkhead: attempts the innermost layer may have in flight at once
    /// (`"unlimited"`: no bulkhead).
    pub max_concurrent: Option<Limit>,
    /// Attempts that may wait for a bulkhead slot (default 0: refuse at once).
    #[schemars(extend("default" = crate::model::guard::DEFAULT_BULKHEAD_QUEUE))]
    pub bulkhead_queue: Option<u64>,
    /// Connection pool of the innermost layer's attempts.
    pub pool: Option<PoolFile>,
}

/// What an expectation's bound applies to in a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Per {
    /// The mean over a cell's replications.
    Cell,
    /// Every run.
    Run,
}

/// An assertion on a summary column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectFile {
    /// Summary column.
    pub metric: String,
    /// Lower bound.
    pub min: Option<f64>,
    /// Upper bound.
    pub max: Option<f64>,
    /// Cell filter: swept key → value.
    #[serde(rename = "where")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub where_: Option<toml::Table>,
    /// What a bound applies to in a sweep: `"cell"` (the mean over a cell's
    /// replications, the default) or `"run"` (every run).
    pub per: Option<Per>,
}

/// Settings of `retrysim check`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckFile {
    /// Per-metric baseline tolerance (`latency_p99_ms = "20%"`), overriding `--tolerance`.
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub tolerance: Option<toml::Table>,
}

/// Safety caps on one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitsFile {
    /// Logical requests in flight at once.
    pub max_in_flight: Option<u64>,
    /// Events per run.
    pub max_events: Option<u64>,
}

/// Request traces (`trace = { sample = 20, seed = 7 }`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceFile {
    /// Logical requests to trace, drawn uniformly over the run.
    pub sample: u64,
    /// Seed of the draw (default: the run's seed).
    pub seed: Option<u64>,
}

/// The whole scenario file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Name (default: the file stem).
    pub name: Option<String>,
    /// Free text.
    pub description: Option<String>,
    /// Base seed.
    #[schemars(extend("default" = crate::scenario::validate::DEFAULT_SEED))]
    pub seed: Option<u64>,
    /// Arrival window.
    pub duration: Dur,
    /// Longest drain after `duration`.
    #[schemars(extend("default" = crate::model::field::duration_text(crate::scenario::validate::DEFAULT_DRAIN)))]
    pub drain: Option<Dur>,
    /// Time-series bucket.
    #[schemars(extend("default" = crate::model::field::duration_text(crate::scenario::validate::DEFAULT_BUCKET)))]
    pub bucket: Option<Dur>,
    /// Start of the recovery baseline.
    #[schemars(extend("default" = crate::model::field::duration_text(crate::scenario::validate::DEFAULT_WARMUP)))]
    pub warmup: Option<Dur>,
    /// Tolerance below baseline that counts as recovered.
    #[schemars(extend("default" = crate::scenario::validate::DEFAULT_RECOVERY_TOLERANCE))]
    pub recovery_tolerance: Option<f64>,
    /// Buckets the success rate must hold.
    #[schemars(extend("default" = crate::scenario::validate::DEFAULT_RECOVERY_HOLD))]
    pub recovery_hold: Option<u64>,
    /// Repetitions with derived seeds.
    #[schemars(extend("default" = crate::scenario::validate::DEFAULT_REPLICATIONS))]
    pub replications: Option<u64>,
    /// Fine bucket of the herd series.
    #[schemars(extend("default" = crate::model::field::duration_text(crate::scenario::validate::DEFAULT_HERD_BUCKET)))]
    pub herd_bucket: Option<Dur>,
    /// The dependency (or `[[services]]`).
    pub dependency: Option<DependencyFile>,
    /// The services of a graph (instead of `[dependency]`).
    #[serde(default)]
    pub services: Vec<ServiceFile>,
    /// Client fleets.
    pub fleets: Vec<FleetFile>,
    /// Correlated faults.
    #[serde(default)]
    pub outages: Vec<OutageFile>,
    /// Swept keys.
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub sweep: Option<toml::Table>,
    /// Expectations.
    #[serde(default)]
    pub expect: Vec<ExpectFile>,
    /// Settings of `retrysim check`.
    pub check: Option<CheckFile>,
    /// Caps.
    pub limits: Option<LimitsFile>,
    /// Request traces of `retrysim run`.
    pub trace: Option<TraceFile>,
}

crate::model::field::inline_schema!(LoadProfileFile, "LoadProfile", |g| schemars::json_schema!({
    "anyOf": [
        { "type": "array", "items": g.subschema_for::<ProfilePoint>() },
        {
            "type": "object",
            "properties": { "ramp": { "type": "array", "items": g.subschema_for::<ProfilePoint>() } },
            "required": ["ramp"],
        },
        g.subschema_for::<Recorded>(),
    ],
}));

crate::model::field::inline_schema!(ToFile, "To", |_g| schemars::json_schema!({
    "anyOf": [{ "type": "string" }, { "type": "array", "items": { "type": "string" } }],
}));

crate::model::field::inline_schema!(JoinFile, "Join", |_g| schemars::json_schema!({
    "anyOf": [
        { "enum": ["all", "any"] },
        {
            "type": "object",
            "properties": { "quorum": { "type": "integer", "minimum": 1 } },
            "required": ["quorum"],
        },
    ],
}));
