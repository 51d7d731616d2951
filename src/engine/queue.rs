//! The pending-event set, ordered by `(time, sequence)`.
//!
//! A 4-ary min-heap whose keys (`time`, `sequence` packed into one `u128`) are kept apart
//! from the events, so sifting compares dense integers and moves little.
//!
//! A sequence number can be *reserved* when something is decided and the event pushed
//! later with it ([`EventQueue::push_with_seq`]): it then sorts exactly as if it had been
//! scheduled at the moment of the reservation. Models use this to keep fixed-delay
//! timers in their own FIFO lanes and put only the earliest live one in the heap.

use super::Nanos;

/// A 4-ary min-heap on packed `(time, sequence)` keys.
#[derive(Debug)]
struct QuadHeap<E> {
    keys: Vec<u128>,
    events: Vec<E>,
}

impl<E: Copy> QuadHeap<E> {
    fn new() -> Self {
        QuadHeap {
            keys: Vec::new(),
            events: Vec::new(),
        }
    }

    #[inline]
    fn pack(time: Nanos, seq: u64) -> u128 {
        (u128::from(time) << 64) | u128::from(seq)
    }

    #[inline]
    fn peek_time(&self) -> Option<Nanos> {
        self.keys.first().map(|k| (k >> 64) as u64)
    }

    #[inline]
    fn push(&mut self, time: Nanos, seq: u64, event: E) {
        let key = Self::pack(time, seq);
        let mut i = self.keys.len();
        self.keys.push(key);
        self.events.push(event);
        while i > 0 {
            let parent = (i - 1) / 4;
            if self.keys[parent] <= key {
                break;
            }
            self.keys[i] = self.keys[parent];
            self.events[i] = self.events[parent];
            i = parent;
        }
        self.keys[i] = key;
        self.events[i] = event;
    }

    #[inline]
    fn pop(&mut self) -> Option<(Nanos, E)> {
        let top_key = *self.keys.first()?;
        let top_event = self.events[0];
        let last_key = self.keys.pop().expect("non-empty");
        let last_event = self.events.pop().expect("non-empty");
        let n = self.keys.len();
        if n > 0 {
            let mut i = 0;
            loop {
                let first = 4 * i + 1;
                if first >= n {
                    break;
                }
                let end = (first + 4).min(n);
                let mut best = first;
                let mut best_key = self.keys[first];
                for c in first + 1..end {
                    let k = self.keys[c];
                    if k < best_key {
                        best = c;
                        best_key = k;
                    }
                }
                if best_key >= last_key {
                    break;
                }
                self.keys[i] = best_key;
                self.events[i] = self.events[best];
                i = best;
            }
            self.keys[i] = last_key;
            self.events[i] = last_event;
        }
        Some(((top_key >> 64) as u64, top_event))
    }
}

/// Events ordered by time, ties broken by insertion (or reservation) order.
///
/// ```
/// use retrysim::engine::EventQueue;
/// let mut q = EventQueue::new();
/// q.push(20, 'b');
/// q.push(10, 'a');
/// let early = q.reserve_seq();
/// q.push(20, 'c');
/// q.push_with_seq(20, early, 'r'); // sorts as if pushed before 'c'
/// assert_eq!(q.pop(), Some((10, 'a')));
/// assert_eq!(q.pop(), Some((20, 'b'))); // same time: first scheduled runs first
/// assert_eq!(q.pop(), Some((20, 'r')));
/// assert_eq!(q.pop(), Some((20, 'c')));
/// assert_eq!(q.pop(), None);
/// ```
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: QuadHeap<E>,
    seq: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        EventQueue {
            heap: QuadHeap::new(),
            seq: 0,
        }
    }

    /// Number of pending events.
    #[inline]
    pub fn len(&self) -> usize {
        self.heap.keys.len()
    }

    /// Whether no event is pending.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.keys.is_empty()
    }

    /// Takes the next sequence number without scheduling anything.
    #[inline]
    pub fn reserve_seq(&mut self) -> u64 {
        let s = self.seq;
        self.seq += 1;
        s
    }

    /// Schedules `event` at `time`.
    #[inline]
    pub fn push(&mut self, time: Nanos, event: E) {
        let seq = self.reserve_seq();
        self.heap.push(time, seq, event);
    }

    /// Schedules `event` at `time` with a sequence number reserved earlier.
    #[inline]
    pub fn push_with_seq(&mut self, time: Nanos, seq: u64, event: E) {
        debug_assert!(
            seq < self.seq,
            "the sequence number must come from reserve_seq"
        );
        self.heap.push(time, seq, event);
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        self.heap.pop()
    }

    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<Nanos> {
        self.heap.peek_time()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn matches_a_sorted_reference_on_random_input() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut q = EventQueue::new();
        let mut reference = Vec::new();
        let mut reserved = Vec::new();
        for i in 0..20_000u64 {
            let t = rng.next_u64() % 1000;
            match rng.next_u32() % 4 {
                0 => reserved.push((t, q.reserve_seq(), i)),
                _ => {
                    let seq = q.seq;
                    q.push(t, i);
                    reference.push(((t, seq), i));
                }
            }
            // Sometimes push a reserved one, out of order.
            if rng.next_u32() % 3 == 0 {
                if let Some((t, s, id)) = reserved.pop() {
                    q.push_with_seq(t, s, id);
                    reference.push(((t, s), id));
                }
            }
            // Interleave pops with pushes, as a simulation does.
            if rng.next_u32() % 5 == 0 {
                reference.sort();
                let want = reference.remove(0);
                assert_eq!(q.pop(), Some((want.0 .0, want.1)));
            }
        }
        for (t, s, id) in reserved {
            q.push_with_seq(t, s, id);
            reference.push(((t, s), id));
        }
        reference.sort();
        let got: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        let want: Vec<_> = reference.into_iter().map(|((t, _), id)| (t, id)).collect();
        assert_eq!(got, want);
    }
}
