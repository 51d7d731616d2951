//! The pending-event set, ordered by `(time, sequence)`.
//!
//! A 4-ary min-heap holds events at arbitrary times. Beside it, FIFO *lanes* hold
//! timers whose delay is fixed (all attempt timeouts of one layer, say): such timers are
//! pushed in time order, so a ring buffer keeps them sorted for O(1). `pop` takes the
//! smallest `(time, sequence)` over the heap top and every lane front, so the order is
//! exactly the one a single heap would give.

use std::collections::VecDeque;

use super::Nanos;

/// Index of a FIFO lane, from [`EventQueue::add_lane`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaneId(pub(crate) u16);

#[derive(Debug, Clone, Copy)]
struct Entry<E> {
    time: Nanos,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    #[inline]
    fn key(&self) -> (Nanos, u64) {
        (self.time, self.seq)
    }
}

/// A 4-ary min-heap on `(time, sequence)`: keys packed into one `u128` and kept apart
/// from the events, so sifting compares dense integers and moves little.
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
    fn peek_key(&self) -> Option<(Nanos, u64)> {
        self.keys.first().map(|k| ((k >> 64) as u64, *k as u64))
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

/// Events ordered by time, ties broken by insertion order.
///
/// ```
/// use retrysim::engine::EventQueue;
/// let mut q = EventQueue::new();
/// q.push(20, 'b');
/// q.push(10, 'a');
/// q.push(20, 'c');
/// assert_eq!(q.pop(), Some((10, 'a')));
/// assert_eq!(q.pop(), Some((20, 'b'))); // same time: first scheduled runs first
/// assert_eq!(q.pop(), Some((20, 'c')));
/// assert_eq!(q.pop(), None);
/// ```
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: QuadHeap<E>,
    lanes: Vec<VecDeque<Entry<E>>>,
    seq: u64,
    len: usize,
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
            lanes: Vec::new(),
            seq: 0,
            len: 0,
        }
    }

    /// Number of pending events.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no event is pending.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds a FIFO lane for events pushed in non-decreasing time order.
    pub fn add_lane(&mut self) -> LaneId {
        self.lanes.push(VecDeque::new());
        LaneId((self.lanes.len() - 1) as u16)
    }

    #[inline]
    fn next_seq(&mut self) -> u64 {
        let s = self.seq;
        self.seq += 1;
        self.len += 1;
        s
    }

    /// Schedules `event` at `time`.
    #[inline]
    pub fn push(&mut self, time: Nanos, event: E) {
        let seq = self.next_seq();
        self.heap.push(time, seq, event);
    }

    /// Schedules `event` at `time` in a lane. If `time` is earlier than the lane's last
    /// event, the event goes to the heap instead, so the order stays exact.
    #[inline]
    pub fn push_lane(&mut self, lane: LaneId, time: Nanos, event: E) {
        let seq = self.next_seq();
        let q = &mut self.lanes[lane.0 as usize];
        match q.back() {
            Some(last) if last.time > time => self.heap.push(time, seq, event),
            _ => q.push_back(Entry { time, seq, event }),
        }
    }

    /// Index of the lane whose front is the earliest, and its key.
    #[inline]
    fn best_lane(&self) -> Option<(usize, (Nanos, u64))> {
        let mut best: Option<(usize, (Nanos, u64))> = None;
        for (i, q) in self.lanes.iter().enumerate() {
            if let Some(f) = q.front() {
                let k = f.key();
                if best.is_none_or(|(_, bk)| k < bk) {
                    best = Some((i, k));
                }
            }
        }
        best
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        let lane = if self.lanes.is_empty() {
            None
        } else {
            self.best_lane()
        };
        let from_lane = match (lane, self.heap.peek_key()) {
            (None, None) => return None,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some((_, lk)), Some(hk)) => lk < hk,
        };
        self.len -= 1;
        if from_lane {
            let (i, _) = lane.expect("lane chosen");
            let e = self.lanes[i].pop_front().expect("lane front");
            Some((e.time, e.event))
        } else {
            self.heap.pop()
        }
    }

    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<Nanos> {
        let lane = self.best_lane().map(|(_, k)| k);
        let heap = self.heap.peek_key();
        match (lane, heap) {
            (Some(a), Some(b)) => Some(a.min(b).0),
            (a, b) => a.or(b).map(|k| k.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn lanes_and_heap_interleave_in_time_then_sequence_order() {
        let mut q = EventQueue::new();
        let l = q.add_lane();
        q.push_lane(l, 10, 1);
        q.push(10, 2);
        q.push_lane(l, 30, 3);
        q.push(5, 4);
        q.push(30, 5);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(5, 4), (10, 1), (10, 2), (30, 3), (30, 5)]);
    }

    #[test]
    fn out_of_order_lane_push_falls_back_to_the_heap() {
        let mut q = EventQueue::new();
        let l = q.add_lane();
        q.push_lane(l, 50, 'a');
        q.push_lane(l, 20, 'b');
        assert_eq!(q.pop(), Some((20, 'b')));
        assert_eq!(q.pop(), Some((50, 'a')));
        assert!(q.is_empty());
    }

    #[test]
    fn matches_a_sorted_reference_on_random_input() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut q = EventQueue::new();
        let lanes = [q.add_lane(), q.add_lane()];
        let mut reference = Vec::new();
        let mut lane_t = [0u64; 2];
        for seq in 0..5000u64 {
            let pick = rng.next_u32() % 3;
            let t = match pick {
                0 => rng.next_u64() % 1000,
                i => {
                    lane_t[i as usize - 1] += rng.next_u64() % 7;
                    lane_t[i as usize - 1]
                }
            };
            match pick {
                0 => q.push(t, seq),
                i => q.push_lane(lanes[i as usize - 1], t, seq),
            }
            reference.push((t, seq));
        }
        reference.sort();
        let got: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(got, reference);
    }
}
