//! The pending-event set, ordered by `(time, sequence)`.
//!
//! A radix heap on packed `(time, sequence)` keys (one `u128` each). It relies on the
//! simulation's monotonicity: nothing is scheduled before the last event popped, so a
//! key is filed in the bucket of the highest bit in which it differs from the last key
//! popped, and an element only ever moves to lower buckets. Each pop takes the
//! smallest bucket, and when that bucket is not the minimum alone it is redistributed
//! around its minimum. Pushes are O(1) and a key moves at most 128 times over its
//! life, typically a few times; unlike a binary heap, no pop walks a path of cache
//! misses through a large array, which is what made 10^6 pending events slow.
//!
//! With few events pending (the usual single-dependency run holds a few dozen) a plain
//! binary heap is cheaper than filing keys in buckets: the queue stays one until more
//! than [`RADIX_ABOVE`] events are pending, files them in buckets then, and goes back
//! to the heap below [`HEAP_BELOW`]. Either way the order is exactly `(time, sequence)`.
//! In front of both sits one slot for the next event: a key pushed below every key
//! held (often the next arrival, or the service that ends first) waits there and is
//! popped with no heap work; it goes to the heap if a smaller key comes.
//!
//! Beside them sit a few *stream* slots: a source that keeps at most one event pending
//! (a fleet's next arrival) parks it in its own slot, and each pop compares the slots'
//! minimum with the heap's: such an event is never pushed through the heap at all. The
//! slots serve the binary-heap mode; with keys filed in buckets, stream events are
//! filed like any other.
//!
//! A sequence number can be *reserved* when something is decided and the event pushed
//! later with it ([`EventQueue::push_with_seq`]): it then sorts exactly as if it had been
//! scheduled at the moment of the reservation. Models use this to keep fixed-delay
//! timers in their own FIFO lanes and put only the earliest live one in the heap. Such a
//! key can fall below the last key popped (same time, earlier sequence); it waits in a
//! small side heap that is served first, so the order stays exactly `(time, sequence)`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::Nanos;

/// Packs `(time, seq)` into one key whose integer order is the event order.
#[inline]
fn pack(time: Nanos, seq: u64) -> u128 {
    (u128::from(time) << 64) | u128::from(seq)
}

/// An element below the last key popped, ordered by its key alone.
#[derive(Debug, Clone, Copy)]
struct Early<E>(u128, E);

impl<E> PartialEq for Early<E> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}
impl<E> Eq for Early<E> {}
impl<E> PartialOrd for Early<E> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Early<E> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.cmp(&other.0)
    }
}

/// Buckets: 0 holds keys equal to `last`, bucket b (1..=128) keys whose highest bit
/// differing from `last` is bit b − 1.
const BUCKETS: usize = 129;

/// Pending events above which the queue files keys in radix buckets.
const RADIX_ABOVE: usize = 4096;
/// Pending events below which it goes back to a binary heap (the gap keeps it from
/// moving everything back and forth around one size).
const HEAP_BELOW: usize = 1024;

/// Stream slots (see the module docs): stream ids at or above this go to the heap.
const STREAMS: usize = 4;

/// A monotone radix heap on `u128` keys, a binary heap while it holds few.
#[derive(Debug)]
struct RadixHeap<E> {
    /// The last key popped (or the one a redistribution was made around).
    last: u128,
    buckets: Vec<Vec<(u128, E)>>,
    /// Bit b set when bucket b + 1 is non-empty (bucket 0 is checked directly).
    occupied: u128,
    /// Keys pushed below `last` (a reserved sequence at the current time).
    early: BinaryHeap<Reverse<Early<E>>>,
    len: usize,
    /// Whether keys are filed in buckets (else every key is in `early`).
    radix: bool,
    /// The next event, held outside the heap: a key pushed below every key held (the
    /// next arrival, a service that ends first) is popped with no heap work at all.
    /// Every other key is above it.
    next: Option<(u128, E)>,
    /// The stream slots: each holds at most one pending event of its stream.
    streams: [Option<(u128, E)>; STREAMS],
    /// The smallest key in the stream slots (`u128::MAX` when they are all empty).
    stream_min: u128,
    /// The slot holding `stream_min`.
    stream_at: usize,
}

impl<E: Copy> RadixHeap<E> {
    fn new() -> Self {
        RadixHeap {
            last: 0,
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            occupied: 0,
            early: BinaryHeap::new(),
            len: 0,
            radix: false,
            next: None,
            streams: [None; STREAMS],
            stream_min: u128::MAX,
            stream_at: 0,
        }
    }

    /// Parks an event of stream `stream` in its slot; in bucket mode, for a stream
    /// without a slot, or when the slot is taken, it is pushed like any other.
    #[inline(always)]
    fn push_stream(&mut self, stream: usize, time: Nanos, seq: u64, event: E) {
        match self.streams.get_mut(stream) {
            Some(slot @ None) if !self.radix => {
                let key = pack(time, seq);
                *slot = Some((key, event));
                self.len += 1;
                if key < self.stream_min {
                    self.stream_min = key;
                    self.stream_at = stream;
                }
            }
            _ => self.push(time, seq, event),
        }
    }

    /// Takes the stream event with the smallest key (`stream_min` is a slot's key).
    #[inline]
    fn take_stream(&mut self) -> (Nanos, E) {
        let (key, event) = self.streams[self.stream_at]
            .take()
            .expect("stream_min names a full slot");
        self.len -= 1;
        self.stream_min = u128::MAX;
        for (i, slot) in self.streams.iter().enumerate() {
            if let Some((k, _)) = *slot {
                if k < self.stream_min {
                    self.stream_min = k;
                    self.stream_at = i;
                }
            }
        }
        ((key >> 64) as u64, event)
    }

    /// The bucket of `key` relative to `last` (`key >= last`).
    #[inline]
    fn bucket(last: u128, key: u128) -> usize {
        (128 - (key ^ last).leading_zeros()) as usize
    }

    #[inline(always)]
    fn file(&mut self, key: u128, event: E) {
        let b = Self::bucket(self.last, key);
        self.buckets[b].push((key, event));
        if b > 0 {
            self.occupied |= 1u128 << (b - 1);
        }
    }

    #[inline(always)]
    fn push(&mut self, time: Nanos, seq: u64, event: E) {
        let key = pack(time, seq);
        self.len += 1;
        match self.next {
            Some((held, e)) if key < held => {
                self.next = Some((key, event));
                self.hold(held, e);
            }
            Some(_) => self.hold(key, event),
            // Below everything held: the next event (in bucket mode the minimum is not
            // at hand, so keys go to the buckets).
            None if !self.radix
                && self
                    .early
                    .peek()
                    .is_none_or(|Reverse(Early(min, _))| key < *min) =>
            {
                self.next = Some((key, event));
            }
            None => self.hold(key, event),
        }
    }

    /// Puts a key in the heap or the buckets (`len` already counts it).
    #[inline(always)]
    fn hold(&mut self, key: u128, event: E) {
        if !self.radix {
            self.early.push(Reverse(Early(key, event)));
            if self.len > RADIX_ABOVE {
                self.file_all_in_buckets();
            }
        } else if key < self.last {
            self.early.push(Reverse(Early(key, event)));
        } else {
            self.file(key, event);
        }
    }

    /// Removes the smallest filed key, making it the new `last`: the lowest non-empty
    /// bucket holds it, and its other keys are filed again around it (each to a lower
    /// bucket, since they now share more high bits with `last`).
    #[inline]
    fn take_min(&mut self) -> Option<(u128, E)> {
        if let Some(x) = self.buckets[0].pop() {
            return Some(x);
        }
        if self.occupied == 0 {
            return None;
        }
        let b = self.occupied.trailing_zeros() as usize + 1;
        if self.buckets[b].len() == 1 {
            self.occupied &= !(1u128 << (b - 1));
            let (key, event) = self.buckets[b].pop().expect("one key");
            self.last = key;
            return Some((key, event));
        }
        let mut moving = std::mem::take(&mut self.buckets[b]);
        self.occupied &= !(1u128 << (b - 1));
        let (at, _) = moving
            .iter()
            .enumerate()
            .min_by_key(|&(_, &(k, _))| k)
            .expect("occupied bucket");
        let min = moving.swap_remove(at);
        self.last = min.0;
        for &(k, e) in &moving {
            self.file(k, e);
        }
        moving.clear();
        self.buckets[b] = moving;
        Some(min)
    }

    /// Files every key in buckets around the smallest (so none is below `last`).
    #[cold]
    fn file_all_in_buckets(&mut self) {
        let mut held = std::mem::take(&mut self.early).into_vec();
        held.extend(
            self.streams
                .iter_mut()
                .filter_map(|slot| slot.take())
                .map(|(k, e)| Reverse(Early(k, e))),
        );
        self.stream_min = u128::MAX;
        self.last = held
            .iter()
            .map(|Reverse(Early(k, _))| *k)
            .min()
            .unwrap_or(0);
        for Reverse(Early(k, e)) in held {
            self.file(k, e);
        }
        self.radix = true;
    }

    /// Moves every filed key into the binary heap.
    #[cold]
    fn move_all_to_heap(&mut self) {
        let mut held = std::mem::take(&mut self.early).into_vec();
        for b in &mut self.buckets {
            held.extend(b.drain(..).map(|(k, e)| Reverse(Early(k, e))));
        }
        self.occupied = 0;
        self.early = BinaryHeap::from(held);
        self.radix = false;
    }

    // Always inline: both run loops (the untraced world's and the traced one's) want
    // it inline, and with two callers the compiler would stop inlining it.
    #[inline(always)]
    fn pop(&mut self) -> Option<(Nanos, E)> {
        // A stream event goes first when it is below the heap's minimum (the held
        // next event, or the heap's top); the slots are empty in bucket mode.
        if self.stream_min != u128::MAX {
            let main = match self.next {
                Some((k, _)) => k,
                None => self
                    .early
                    .peek()
                    .map_or(u128::MAX, |Reverse(Early(k, _))| *k),
            };
            if self.stream_min < main {
                return Some(self.take_stream());
            }
        }
        if let Some((key, event)) = self.next.take() {
            self.len -= 1;
            return Some(((key >> 64) as u64, event));
        }
        if self.radix && self.len < HEAP_BELOW {
            self.move_all_to_heap();
        }
        if !self.radix {
            let Reverse(Early(key, event)) = self.early.pop()?;
            self.len -= 1;
            return Some(((key >> 64) as u64, event));
        }
        // The side heap is almost always empty: test that inline, not through its pop.
        let early = if self.early.is_empty() {
            None
        } else {
            self.early.pop()
        };
        let (key, event) = match early {
            Some(Reverse(Early(key, event))) => (key, event),
            None => self.take_min()?,
        };
        self.len -= 1;
        Some(((key >> 64) as u64, event))
    }

    fn peek_time(&self) -> Option<Nanos> {
        let main = self.peek_main();
        let stream = (self.stream_min != u128::MAX).then_some(self.stream_min);
        match (main, stream) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
        .map(|k| (k >> 64) as u64)
    }

    /// The smallest key outside the stream slots.
    fn peek_main(&self) -> Option<u128> {
        if let Some((key, _)) = self.next {
            return Some(key);
        }
        let early = self.early.peek().map(|Reverse(Early(k, _))| *k);
        let filed = if let Some(&(k, _)) = self.buckets[0].first() {
            Some(k)
        } else if self.occupied != 0 {
            let b = self.occupied.trailing_zeros() as usize + 1;
            self.buckets[b].iter().map(|&(k, _)| k).min()
        } else {
            None
        };
        match (early, filed) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
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
    heap: RadixHeap<E>,
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
            heap: RadixHeap::new(),
            seq: 0,
        }
    }

    /// Number of pending events.
    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len
    }

    /// Whether no event is pending.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.len == 0
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

    /// Schedules `event` of stream `stream` at `time`: a source that keeps at most one
    /// event pending (see the module docs). The order is exactly that of
    /// [`push`](Self::push); only the work differs.
    ///
    /// ```
    /// use retrysim::engine::EventQueue;
    /// let mut q = EventQueue::new();
    /// q.push(20, 'b');
    /// q.push_stream(0, 10, 'a'); // stream 0's one pending event
    /// q.push_stream(1, 20, 'c'); // at the same time as 'b', scheduled after it
    /// assert_eq!(q.pop(), Some((10, 'a')));
    /// q.push_stream(0, 20, 'd'); // stream 0's next
    /// assert_eq!(q.pop(), Some((20, 'b')));
    /// assert_eq!(q.pop(), Some((20, 'c')));
    /// assert_eq!(q.pop(), Some((20, 'd')));
    /// assert!(q.is_empty());
    /// ```
    #[inline]
    pub fn push_stream(&mut self, stream: usize, time: Nanos, event: E) {
        let seq = self.reserve_seq();
        self.heap.push_stream(stream, time, seq, event);
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

    /// The held next event gives way to a smaller key (a reserved sequence at the same
    /// time included) and stays ahead of every larger one.
    #[test]
    fn the_next_event_is_held_outside_the_heap_in_exact_order() {
        let mut q = EventQueue::new();
        let early = q.reserve_seq();
        q.push(50, 'c'); // held: the queue is empty
        q.push(40, 'b'); // held in its place; 'c' goes to the heap
        let late = q.reserve_seq();
        q.push(60, 'd');
        q.push_with_seq(40, late, 'x'); // after 'b' at 40: to the heap
        q.push_with_seq(40, early, 'a'); // before 'b' at 40: held
        assert_eq!((q.len(), q.peek_time()), (5, Some(40)));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![(40, 'a'), (40, 'b'), (40, 'x'), (50, 'c'), (60, 'd')]
        );
        assert!(q.is_empty());
    }

    /// The simulation's own pattern: pops advance the clock, pushes land at or after it
    /// (many at the same instant), reserved sequences come back late at the current
    /// time; the order must be exactly `(time, sequence)`, and `peek_time` the next pop's.
    #[test]
    fn matches_a_reference_heap_on_a_monotone_workload() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut q = EventQueue::new();
        let mut reference = std::collections::BinaryHeap::new();
        let mut reserved: Vec<u64> = Vec::new();
        let mut now = 0u64;
        for i in 0..200_000u64 {
            let scale = [0, 1, 1_000, 1 << 40][(rng.next_u32() % 4) as usize];
            let t = now
                + if scale == 0 {
                    0
                } else {
                    rng.next_u64() % scale
                };
            if rng.next_u32() % 7 == 0 {
                reserved.push(q.reserve_seq());
            }
            if rng.next_u32() % 5 == 0 {
                if let Some(seq) = reserved.pop() {
                    q.push_with_seq(now, seq, i);
                    reference.push(std::cmp::Reverse((now, seq, i)));
                    continue;
                }
            }
            let seq = q.seq;
            q.push(t, i);
            reference.push(std::cmp::Reverse((t, seq, i)));
            if rng.next_u32() % 2 == 0 {
                let std::cmp::Reverse((t, _, id)) = reference.pop().expect("pushed");
                assert_eq!(q.peek_time(), Some(t));
                assert_eq!(q.pop(), Some((t, id)));
                now = t;
            }
        }
        while let Some(std::cmp::Reverse((t, _, id))) = reference.pop() {
            assert_eq!(q.peek_time(), Some(t));
            assert_eq!(q.pop(), Some((t, id)));
        }
        assert_eq!(q.pop(), None);
        assert!(q.is_empty());
    }

    /// The queue moves from the binary heap to the buckets and back as it fills and
    /// empties, many times, with reserved sequences pushed late: the order stays
    /// exactly `(time, sequence)` across every move.
    #[test]
    fn keeps_the_order_across_the_moves_between_heap_and_buckets() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut q = EventQueue::new();
        let mut reference = std::collections::BinaryHeap::new();
        let mut reserved: Vec<u64> = Vec::new();
        let mut now = 0u64;
        let (mut to_radix, mut to_heap) = (0, 0);
        for round in 0..6u64 {
            for i in 0..(RADIX_ABOVE as u64 * 2) {
                let t = now + rng.next_u64() % [1, 1_000, 1 << 30][(i % 3) as usize];
                if rng.next_u32() % 9 == 0 {
                    reserved.push(q.reserve_seq());
                }
                let id = round << 32 | i;
                let was = q.heap.radix;
                match reserved.pop().filter(|_| rng.next_u32() % 4 == 0) {
                    Some(seq) => {
                        q.push_with_seq(now, seq, id);
                        reference.push(std::cmp::Reverse((now, seq, id)));
                    }
                    None => {
                        let seq = q.seq;
                        q.push(t, id);
                        reference.push(std::cmp::Reverse((t, seq, id)));
                    }
                }
                if rng.next_u32() % 4 == 0 {
                    let std::cmp::Reverse((t, _, id)) = reference.pop().expect("pushed");
                    assert_eq!(q.pop(), Some((t, id)));
                    now = t;
                }
                to_radix += usize::from(!was && q.heap.radix);
            }
            while reference.len() > HEAP_BELOW / 2 {
                let was = q.heap.radix;
                let std::cmp::Reverse((t, _, id)) = reference.pop().expect("pushed");
                assert_eq!(q.peek_time(), Some(t));
                assert_eq!(q.pop(), Some((t, id)));
                now = t;
                to_heap += usize::from(was && !q.heap.radix);
            }
        }
        assert!(
            to_radix >= 6 && to_heap >= 6,
            "{to_radix} and {to_heap} moves"
        );
        while let Some(std::cmp::Reverse((t, _, id))) = reference.pop() {
            assert_eq!(q.pop(), Some((t, id)));
        }
        assert_eq!(q.pop(), None);
    }

    /// Streams with at most one event pending each (one stream without a slot), among
    /// plain pushes and reserved sequences, through the moves to the buckets and back:
    /// the order is exactly `(time, sequence)`, and `peek_time` is the next pop's.
    #[test]
    fn stream_slots_keep_the_exact_order() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut q = EventQueue::new();
        let mut reference = std::collections::BinaryHeap::new();
        // The stream (if any) of each pending id, and which streams have one pending.
        let mut stream_of = std::collections::HashMap::new();
        let mut pending = [false; STREAMS + 1];
        let mut now = 0u64;
        let (mut to_radix, mut streamed, mut was) = (0, 0, false);
        for i in 0..120_000u64 {
            // Fill past the bucket threshold and drain below the heap's, in waves.
            let filling = (i / 15_000) % 2 == 0;
            let t = now + rng.next_u64() % [1, 1_000, 1 << 30][(i % 3) as usize];
            let k = (rng.next_u32() % (STREAMS as u32 + 3)) as usize;
            let seq = q.seq;
            to_radix += usize::from(!was && q.heap.radix);
            was = q.heap.radix;
            if k <= STREAMS && !pending[k] {
                // A stream's next event comes soon (an arrival), or at the same time.
                let t = now + rng.next_u64() % 3 * 500;
                pending[k] = true;
                stream_of.insert(i, k);
                q.push_stream(k, t, i);
                reference.push(std::cmp::Reverse((t, seq, i)));
                streamed += 1;
            } else if rng.next_u32() % 6 == 0 {
                let r = q.reserve_seq();
                q.push(t, i);
                reference.push(std::cmp::Reverse((t, seq + 1, i)));
                q.push_with_seq(now, r, i | 1 << 40);
                reference.push(std::cmp::Reverse((now, r, i | 1 << 40)));
                continue;
            } else {
                q.push(t, i);
                reference.push(std::cmp::Reverse((t, seq, i)));
            }
            let pops = if filling { rng.next_u32() % 2 } else { 3 };
            for _ in 0..pops {
                let Some(std::cmp::Reverse((t, _, id))) = reference.pop() else {
                    break;
                };
                assert_eq!(q.peek_time(), Some(t));
                assert_eq!(q.pop(), Some((t, id)));
                if let Some(k) = stream_of.remove(&id) {
                    pending[k] = false;
                }
                now = t;
            }
        }
        assert!(to_radix >= 2 && streamed > 10_000, "{to_radix}, {streamed}");
        while let Some(std::cmp::Reverse((t, _, id))) = reference.pop() {
            assert_eq!(q.peek_time(), Some(t));
            assert_eq!(q.pop(), Some((t, id)));
        }
        assert_eq!((q.pop(), q.len()), (None, 0));
    }

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
