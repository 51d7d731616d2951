//! What a caller refused by a concurrency limit sees: an HTTP status (Netflix's
//! servlet filter answers 429, Envoy's adaptive concurrency filter 503) or gRPC's
//! UNAVAILABLE ("Server concurrency limit reached", Netflix's gRPC server
//! interceptor). Written `status = 429`, `status = 503` or `status = "unavailable"`.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::model::field::{inline_schema, shown, Ctx, R};

/// `status` as written: a number or a name, checked by [`StatusFile::validate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatusFile {
    /// A number (`429`, `503`).
    Code(i64),
    /// A name (`"unavailable"`).
    Name(String),
}

impl Serialize for StatusFile {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            StatusFile::Code(c) => s.serialize_i64(*c),
            StatusFile::Name(n) => s.serialize_str(n),
        }
    }
}

impl<'de> Deserialize<'de> for StatusFile {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = StatusFile;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("429, 503 or \"unavailable\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<StatusFile, E> {
                Ok(StatusFile::Code(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<StatusFile, E> {
                Ok(StatusFile::Code(i64::try_from(v).unwrap_or(i64::MAX)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<StatusFile, E> {
                Ok(StatusFile::Name(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

inline_schema!(StatusFile, "RejectStatus", |_g| schemars::json_schema!({
    "anyOf": [{ "enum": [429, 503] }, { "const": "unavailable" }],
}));

/// What a refused caller is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejected {
    /// An HTTP status: 429 or 503.
    Status(u16),
    /// gRPC UNAVAILABLE.
    Unavailable,
}

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Rejected::Status(s) => write!(f, "{s}"),
            Rejected::Unavailable => f.write_str("gRPC UNAVAILABLE"),
        }
    }
}

impl StatusFile {
    /// The validated answer; `p` is the path of the `status` field.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<Rejected> {
        match self {
            StatusFile::Code(429) => Ok(Rejected::Status(429)),
            StatusFile::Code(503) => Ok(Rejected::Status(503)),
            StatusFile::Name(n) if n == "unavailable" => Ok(Rejected::Unavailable),
            StatusFile::Code(n) => c.err(
                p,
                format!("must be 429, 503 or \"unavailable\" (found {n})"),
            ),
            StatusFile::Name(n) => c.err(
                p,
                format!(
                    "must be 429, 503 or \"unavailable\" (found \"{}\")",
                    shown(n)
                ),
            ),
        }
    }
}

/// The validated `status` of table `p`, `default` when absent.
pub(crate) fn rejected_of(
    c: &Ctx,
    p: &str,
    status: &Option<StatusFile>,
    default: Rejected,
) -> R<Rejected> {
    match status {
        Some(s) => s.validate(c, &format!("{p}.status")),
        None => Ok(default),
    }
}
