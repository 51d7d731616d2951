//! The events of the model and their packed form, both generated from one table.
//!
//! The event queue stores a [`Packed`] event: two words instead of an enum with
//! padding (moving two whole words is cheaper; the compiler splits copies of a padded
//! enum into overlapping moves that defeat store-to-load forwarding). The table in
//! this file lists each [`Event`] variant once, with its tag and the slot of every
//! field, and the encoder, the decoder and the list of tags are generated from it, so
//! they cannot disagree. Decoding is exhaustive: a tag (or an outcome class) that no
//! variant has is a [`DecodeError`], never some other event.
//!
//! Layout: word 0 holds the tag (bits 0–7), the outcome class (8–15) and slot `A`
//! (32–63); word 1 holds slot `B` (0–31) and an outcome's Retry-After code (32–47),
//! or slot `W1` (all of it).

use std::fmt;

use super::outcome::{Class, Outcome};

/// An [`Event`] packed into two words: what the event queue stores (see the module
/// docs for the layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Packed([u64; 2]);

/// A packed event that no [`Event`] variant encodes to: a bug, since only
/// `From<Event>` makes a [`Packed`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DecodeError {
    /// The tag of no variant.
    UnknownTag(u8),
    /// The outcome class of an answer is no [`Class`].
    UnknownClass(u8),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::UnknownTag(t) => write!(f, "packed event with unknown tag {t}"),
            DecodeError::UnknownClass(c) => write!(f, "packed answer with unknown class {c}"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Bits of word 0 that hold the tag.
const TAG_MASK: u64 = 0xff;

/// Where a field of type `T` lives in the two words.
trait Slot<T> {
    /// The bits of `[word 0, word 1]` the slot occupies.
    const MASK: [u64; 2];
    /// Writes `v` into its (zeroed) bits.
    fn put(w: &mut [u64; 2], v: T);
    /// Reads the field back.
    fn get(w: &[u64; 2]) -> Result<T, DecodeError>;
}

/// Word 0, bits 32–63.
struct A;
/// Word 1, bits 0–31.
struct B;
/// Word 1, whole.
struct W1;
/// Word 0, bits 8–15 (class) and word 1, bits 32–47 (Retry-After code): an
/// [`Outcome`].
struct Aux;
/// Word 0, bits 24–31.
struct Cp;

impl Slot<u8> for Cp {
    const MASK: [u64; 2] = [0xff << 24, 0];
    #[inline(always)]
    fn put(w: &mut [u64; 2], v: u8) {
        w[0] |= u64::from(v) << 24;
    }
    #[inline(always)]
    fn get(w: &[u64; 2]) -> Result<u8, DecodeError> {
        Ok((w[0] >> 24) as u8)
    }
}

impl Slot<u32> for A {
    const MASK: [u64; 2] = [0xffff_ffff << 32, 0];
    #[inline(always)]
    fn put(w: &mut [u64; 2], v: u32) {
        w[0] |= u64::from(v) << 32;
    }
    #[inline(always)]
    fn get(w: &[u64; 2]) -> Result<u32, DecodeError> {
        Ok((w[0] >> 32) as u32)
    }
}

impl Slot<u16> for A {
    const MASK: [u64; 2] = [0xffff << 32, 0];
    #[inline(always)]
    fn put(w: &mut [u64; 2], v: u16) {
        w[0] |= u64::from(v) << 32;
    }
    #[inline(always)]
    fn get(w: &[u64; 2]) -> Result<u16, DecodeError> {
        Ok((w[0] >> 32) as u16)
    }
}

impl Slot<u32> for B {
    const MASK: [u64; 2] = [0, 0xffff_ffff];
    #[inline(always)]
    fn put(w: &mut [u64; 2], v: u32) {
        w[1] |= u64::from(v);
    }
    #[inline(always)]
    fn get(w: &[u64; 2]) -> Result<u32, DecodeError> {
        Ok(w[1] as u32)
    }
}

impl Slot<u64> for W1 {
    const MASK: [u64; 2] = [0, u64::MAX];
    #[inline(always)]
    fn put(w: &mut [u64; 2], v: u64) {
        w[1] |= v;
    }
    #[inline(always)]
    fn get(w: &[u64; 2]) -> Result<u64, DecodeError> {
        Ok(w[1])
    }
}

impl Slot<Outcome> for Aux {
    const MASK: [u64; 2] = [0xff << 8, 0xffff << 32];
    #[inline(always)]
    fn put(w: &mut [u64; 2], v: Outcome) {
        w[0] |= u64::from(v.class as u8) << 8;
        w[1] |= u64::from(v.code()) << 32;
    }
    #[inline(always)]
    fn get(w: &[u64; 2]) -> Result<Outcome, DecodeError> {
        let raw = (w[0] >> 8) as u8;
        let class = Class::from_u8(raw);
        if class as u8 != raw {
            return Err(DecodeError::UnknownClass(raw));
        }
        Ok(Outcome::with_code(class, (w[1] >> 32) as u16))
    }
}

/// Whether no two of `masks` (and the tag) share a bit.
const fn disjoint(masks: &[[u64; 2]]) -> bool {
    let mut used = [TAG_MASK, 0];
    let mut i = 0;
    while i < masks.len() {
        let m = masks[i];
        if used[0] & m[0] != 0 || used[1] & m[1] != 0 {
            return false;
        }
        used[0] |= m[0];
        used[1] |= m[1];
        i += 1;
    }
    true
}

/// The table: each variant once, `tag => Name { field @ slot: type, ... }`.
macro_rules! events {
    ($(
        $(#[doc = $doc:literal])*
        $tag:literal => $name:ident {
            $( $(#[doc = $fdoc:literal])* $field:ident @ $slot:ident : $ty:ty ),* $(,)?
        }
    ),* $(,)?) => {
        /// Everything that can happen.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum Event {
            $(
                $(#[doc = $doc])*
                $name {
                    $( $(#[doc = $fdoc])* $field: $ty, )*
                },
            )*
        }

        impl Event {
            /// The tag of every variant, in table order.
            #[cfg(test)]
            pub(crate) const TAGS: &'static [u8] = &[$($tag),*];

            /// This event's tag.
            #[cfg(test)]
            pub(crate) fn tag(&self) -> u8 {
                match self {
                    $( Event::$name { .. } => $tag, )*
                }
            }
        }

        // Fields of one variant must not overlap each other or the tag.
        $(
            const _: () = assert!(
                disjoint(&[$(<$slot as Slot<$ty>>::MASK),*]),
                concat!("overlapping slots in event ", stringify!($name)),
            );
        )*

        impl From<Event> for Packed {
            #[inline]
            fn from(e: Event) -> Packed {
                match e {
                    $(
                        Event::$name { $($field),* } => {
                            #[allow(unused_mut)]
                            let mut w = [$tag, 0];
                            $( <$slot as Slot<$ty>>::put(&mut w, $field); )*
                            Packed(w)
                        }
                    )*
                }
            }
        }

        impl TryFrom<Packed> for Event {
            type Error = DecodeError;

            #[inline]
            #[deny(unreachable_patterns)] // two variants with one tag
            fn try_from(p: Packed) -> Result<Event, DecodeError> {
                let w = p.0;
                match (w[0] & TAG_MASK) as u8 {
                    $(
                        $tag => Ok(Event::$name {
                            $( $field: <$slot as Slot<$ty>>::get(&w)?, )*
                        }),
                    )*
                    t => Err(DecodeError::UnknownTag(t)),
                }
            }
        }
    };
}

events! {
    /// Next open-loop arrival of a fleet.
    0 => Arrival {
        /// Fleet.
        fleet @ A: u16,
    },
    /// All requests of a burst fleet.
    1 => Burst {
        /// Fleet.
        fleet @ A: u16,
    },
    /// A closed-loop client sends its next request.
    2 => ClientSend {
        /// Fleet.
        fleet @ A: u16,
        /// Client.
        client @ B: u32,
    },
    /// A node reaches its layer or the dependency after the hop.
    3 => Deliver {
        /// Node.
        node @ A: u32,
        /// Its generation.
        gen @ B: u32,
    },
    /// The outcome of a node's current attempt reaches it after the hop back.
    4 => Answer {
        /// The waiting layer node.
        node @ A: u32,
        /// Its generation when the attempt was made.
        gen @ B: u32,
        /// The outcome.
        outcome @ Aux: Outcome,
        /// Which copy of a hedging call it answers (0 for any other call).
        copy @ Cp: u8,
    },
    /// A layer attempt's timeout cut short by the request's deadline (timeouts at
    /// their full delay go through the layer's timer lane).
    5 => Timeout {
        /// Node.
        node @ A: u32,
        /// Generation.
        gen @ B: u32,
    },
    /// A layer's backoff is over.
    6 => Retry {
        /// Node.
        node @ A: u32,
        /// Generation.
        gen @ B: u32,
    },
    /// The dependency finished serving an attempt.
    7 => ServiceDone {
        /// Node.
        node @ A: u32,
        /// Generation.
        gen @ B: u32,
    },
    /// The front timer of a timer lane is due (a layer's attempt timeout, or a
    /// fleet's deadline).
    8 => Lane {
        /// Lane index: layers' timeout lanes first (by global layer index), then one
        /// deadline lane per fleet.
        lane @ A: u32,
        /// Sequence number of the timer it was armed for.
        seq @ W1: u64,
    },
    /// An outage window starts.
    9 => OutageStart {
        /// Window index.
        window @ A: u32,
    },
    /// An outage window ends.
    10 => OutageEnd {
        /// Window index.
        window @ A: u32,
    },
    /// An OCC attempt's conditional write reaches the record (after the read's answer
    /// and the write's request legs).
    11 => OccWrite {
        /// Node.
        node @ A: u32,
        /// Generation.
        gen @ B: u32,
    },
    /// An open breaker's timer ran out.
    12 => BreakerTimer {
        /// Global layer index.
        layer @ A: u16,
        /// Instance.
        instance @ B: u32,
    },
    /// A queue message's visibility timeout, or its redelivery delay, ended.
    13 => Visibility {
        /// Message slot.
        msg @ A: u32,
        /// Its generation when the timer was set.
        gen @ B: u32,
    },
    /// A consumer of a queue became free: it receives the oldest visible message.
    14 => Receive {
        /// Queue index (queue fleets in fleet order).
        queue @ A: u16,
    },
    /// A call's wait for a bulkhead slot or a pooled connection ran out (its pool's
    /// `acquire_timeout`, or its deadline).
    15 => GuardTimer {
        /// Node.
        node @ A: u32,
        /// Generation.
        gen @ B: u32,
    },
    /// The delay before a hedging call's next copy is over.
    16 => HedgeTimer {
        /// Node.
        node @ A: u32,
        /// Its timer sequence number when armed.
        seq @ B: u32,
    },
    /// A server finished spending the tier's `reject_cost` on a rejection.
    17 => RejectDone {
        /// Node.
        node @ A: u32,
        /// Generation.
        gen @ B: u32,
    },
    /// An attempt a limiter admitted with a delay (nginx `limit_req`) is done
    /// waiting: it goes on to the servers or the queue.
    18 => AdmissionDelay {
        /// Node.
        node @ A: u32,
        /// Its generation when delayed.
        gen @ B: u32,
    },
    /// A tier's concurrency limit's timer is due (Envoy's limit updates and minRTT
    /// windows).
    19 => LimitTick {
        /// Tier (service index).
        tier @ A: u32,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant with extreme field values, some twice.
    fn samples() -> Vec<Event> {
        let max = u32::MAX;
        vec![
            Event::Arrival { fleet: 7 },
            Event::Arrival { fleet: u16::MAX },
            Event::Burst { fleet: u16::MAX },
            Event::ClientSend {
                fleet: u16::MAX,
                client: max,
            },
            Event::Deliver { node: max, gen: 1 },
            Event::Answer {
                node: max,
                gen: max,
                outcome: Outcome::configured(Class::Rejected, true),
                copy: u8::MAX,
            },
            Event::Answer {
                node: 2,
                gen: 3,
                outcome: Outcome::of(Class::Conflict),
                copy: 3,
            },
            Event::Answer {
                node: 0,
                gen: 0,
                outcome: Outcome::of(Class::Success),
                copy: 0,
            },
            Event::Timeout { node: 4, gen: max },
            Event::Retry { node: max, gen: 7 },
            Event::ServiceDone { node: 8, gen: max },
            Event::Lane {
                lane: max,
                seq: u64::MAX,
            },
            Event::OutageStart { window: max },
            Event::OutageEnd { window: 11 },
            Event::OccWrite { node: max, gen: 13 },
            Event::BreakerTimer {
                layer: u16::MAX,
                instance: max,
            },
            Event::Visibility { msg: max, gen: max },
            Event::Receive { queue: u16::MAX },
            Event::GuardTimer { node: max, gen: 9 },
            Event::HedgeTimer { node: 3, seq: max },
            Event::RejectDone { node: max, gen: 2 },
            Event::AdmissionDelay { node: 5, gen: max },
            Event::LimitTick { tier: max },
        ]
    }

    #[test]
    fn every_variant_survives_packing() {
        let s = samples();
        for &tag in Event::TAGS {
            assert!(
                s.iter().any(|e| e.tag() == tag),
                "no sample of the event with tag {tag}"
            );
        }
        for e in s {
            assert_eq!(Event::try_from(Packed::from(e)), Ok(e));
        }
        for class in [Class::Success].into_iter().chain(Class::FAILURES) {
            for code in [0, 1, 17, Outcome::MAX_SECS as u16, Outcome::CONFIGURED] {
                let e = Event::Answer {
                    node: 1,
                    gen: 2,
                    outcome: Outcome::with_code(class, code),
                    copy: 15,
                };
                assert_eq!(Event::try_from(Packed::from(e)), Ok(e));
            }
        }
        assert_eq!(std::mem::size_of::<Packed>(), 16);
    }

    #[test]
    fn tags_are_the_variant_indices_and_unknown_ones_are_errors() {
        let n = Event::TAGS.len();
        assert_eq!(Event::TAGS, (0..n as u8).collect::<Vec<_>>());
        for tag in n as u8..=u8::MAX {
            assert_eq!(
                Event::try_from(Packed([u64::from(tag) | (5 << 32), 6])),
                Err(DecodeError::UnknownTag(tag))
            );
        }
    }

    #[test]
    fn an_unknown_outcome_class_is_an_error() {
        let p = Packed::from(Event::Answer {
            node: 1,
            gen: 2,
            outcome: Outcome::of(Class::Conflict),
            copy: 0,
        });
        let bad = Packed([p.0[0] | (0xf0 << 8), p.0[1]]);
        assert_eq!(Event::try_from(bad), Err(DecodeError::UnknownClass(0xf7)));
        assert_eq!(
            DecodeError::UnknownTag(200).to_string(),
            "packed event with unknown tag 200"
        );
    }
}
