//! Seeded random streams: one `ChaCha8Rng` stream per random source.
//!
//! Every source (a fleet's arrivals, the service times, a layer's jitter, ...) gets its
//! own stream, chosen by a stable id derived from the source's name. Adding a source or
//! drawing more from one never shifts the draws of another, so runs that differ only in
//! policy see the same arrivals (common random numbers).

use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The stream id of a named source: FNV-1a (64-bit) of its UTF-8 name.
///
/// Stable across versions and platforms; part of the output contract.
///
/// ```
/// assert_eq!(retrysim::engine::stream_id(""), 0xcbf2_9ce4_8422_2325);
/// assert_ne!(retrysim::engine::stream_id("arrivals/web"), retrysim::engine::stream_id("service"));
/// ```
pub fn stream_id(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The random stream of source `name` in a run seeded with `seed`.
///
/// The ChaCha key is expanded from `seed` by `SeedableRng::seed_from_u64` and the
/// ChaCha stream (nonce) is [`stream_id`]`(name)`.
pub fn stream(seed: u64, name: &str) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream_id(name));
    rng
}

/// SplitMix64: a bijective mixer, used to derive replication seeds.
///
/// ```
/// assert_eq!(retrysim::engine::rng::splitmix64(0), 0xe220_a839_7b1d_cdaf);
/// ```
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn streams_of_different_sources_differ_and_repeat() {
        let a1: Vec<u64> = (0..4).map(|_| stream(7, "a").next_u64()).collect();
        let mut a = stream(7, "a");
        let mut b = stream(7, "b");
        let xa: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        assert_ne!(xa, xb);
        assert_eq!(a1[0], xa[0]);
        let mut a2 = stream(7, "a");
        let ya: Vec<u64> = (0..4).map(|_| a2.next_u64()).collect();
        assert_eq!(xa, ya);
    }

    #[test]
    fn stream_values_are_pinned() {
        // Value stability: if this changes, every published output changes.
        let mut r = stream(42, "arrivals/web");
        let v = r.next_u64();
        assert_eq!(v, PINNED);
    }
    const PINNED: u64 = 12_701_770_476_523_727_585;
}
