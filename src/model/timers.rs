//! Timer lanes: fixed-delay timers (a layer's attempt timeouts, a fleet's deadlines)
//! kept in FIFO order outside the event queue, cancelled lazily.
//!
//! Timers of one lane are armed in time order, so a ring buffer holds them sorted.
//! Only the lane's front timer has an event in the queue; when it fires, the model
//! skips the fronts that went stale meanwhile (the attempt answered, the request
//! finished) without an event each, and arms the next live one. Each timer keeps the
//! sequence number reserved when it was set, so it fires in exactly the `(time,
//! sequence)` order a queue event set at that moment would.
//!
//! [`Lanes`] are the world's lanes: one per layer (its attempt timeouts, for nodes)
//! and one per fleet (its deadlines, for requests).

use std::collections::VecDeque;

use crate::engine::{Nanos, Scheduler};

use super::event::{Event, Packed};
use super::request::{Arena, NodeState};

/// One timer: due at `at`, ordered by `seq`, for object `id` in generation `gen`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Timer {
    /// When it is due.
    pub at: Nanos,
    /// Sequence number reserved when it was set.
    pub seq: u64,
    /// The node or request it is for.
    pub id: u32,
    /// That object's generation when it was set.
    pub gen: u32,
}

/// A FIFO of timers with one event in the queue for its front (the *armed* timer).
#[derive(Debug, Default)]
pub(crate) struct TimerLane {
    q: VecDeque<Timer>,
    /// Sequence number of the timer whose event is in the queue.
    armed: Option<u64>,
}

impl TimerLane {
    /// Adds a timer. Returns true when the lane was idle: the caller must then schedule
    /// the lane's event for this timer.
    #[inline]
    pub(crate) fn push(&mut self, t: Timer) -> bool {
        debug_assert!(self.q.back().is_none_or(|b| (b.at, b.seq) < (t.at, t.seq)));
        self.q.push_back(t);
        if self.armed.is_none() {
            self.armed = Some(t.seq);
            true
        } else {
            false
        }
    }

    /// Drops stale timers from the front, so the lane holds little more than the live
    /// ones. The armed timer may go too: its event stays in the queue and, when it
    /// fires, finds it gone and arms the new front (which is due no earlier).
    #[inline(always)]
    pub(crate) fn compact(&mut self, live: impl Fn(&Timer) -> bool) {
        while self.q.front().is_some_and(|f| !live(f)) {
            self.q.pop_front();
        }
    }

    /// The lane's event for `seq` fires: takes the front timer if it is the one the
    /// event was armed for (`None` when compaction dropped it). The lane is then idle
    /// until [`next_live`](Self::next_live) arms it again.
    #[inline]
    pub(crate) fn fire(&mut self, seq: u64) -> Option<Timer> {
        debug_assert_eq!(self.armed, Some(seq));
        self.armed = None;
        if self.q.front().is_some_and(|f| f.seq == seq) {
            self.q.pop_front()
        } else {
            None
        }
    }

    /// Drops stale fronts and returns the next live timer, which the caller must
    /// schedule (the lane is armed for it); `None` leaves the lane idle.
    #[inline]
    pub(crate) fn next_live(&mut self, live: impl Fn(&Timer) -> bool) -> Option<Timer> {
        while let Some(f) = self.q.front() {
            if live(f) {
                self.armed = Some(f.seq);
                return Some(*f);
            }
            self.q.pop_front();
        }
        self.armed = None;
        None
    }

    /// Timers held, live or stale.
    pub(crate) fn len(&self) -> usize {
        self.q.len()
    }
}

/// The world's timer lanes: layers' timeout lanes first (by global layer index), then
/// one deadline lane per fleet.
#[derive(Debug)]
pub(crate) struct Lanes {
    lanes: Vec<TimerLane>,
    /// Lanes below this index are timeout lanes.
    timeouts: usize,
}

impl Lanes {
    /// Lanes for `layers` layers and `fleets` fleets.
    pub(crate) fn new(layers: usize, fleets: usize) -> Lanes {
        Lanes {
            lanes: (0..layers + fleets).map(|_| TimerLane::default()).collect(),
            timeouts: layers,
        }
    }

    /// The timeout lane of a layer, by global layer index.
    #[inline]
    pub(crate) fn timeout_lane(global: u16) -> usize {
        usize::from(global)
    }

    /// The deadline lane of fleet `fleet`.
    #[inline]
    pub(crate) fn deadline_lane(&self, fleet: usize) -> usize {
        self.timeouts + fleet
    }

    /// Whether `lane` holds timeouts (of nodes) rather than deadlines (of requests).
    #[inline]
    pub(crate) fn is_timeout(&self, lane: usize) -> bool {
        lane < self.timeouts
    }

    /// Sets a fixed-delay timer in `lane` for object `id` of generation `gen`.
    #[inline(always)]
    pub(crate) fn set(
        &mut self,
        lane: usize,
        at: Nanos,
        id: u32,
        gen: u32,
        arena: &Arena,
        s: &mut Scheduler<Packed>,
    ) {
        let timeout = self.is_timeout(lane);
        self.lanes[lane].compact(|t| live(arena, timeout, t));
        let seq = s.reserve_seq();
        if self.lanes[lane].push(Timer { at, seq, id, gen }) {
            s.at_seq(
                at,
                seq,
                Event::Lane {
                    lane: lane as u32,
                    seq,
                },
            );
        }
    }

    /// The armed timer of `lane` is due: the timer, if it is still there and still
    /// matters. The caller handles it, then calls [`rearm`](Self::rearm).
    #[inline]
    pub(crate) fn fire(&mut self, lane: usize, seq: u64, arena: &Arena) -> Option<Timer> {
        let timeout = self.is_timeout(lane);
        // The timer is gone when compaction dropped it; either way, the next is armed.
        self.lanes[lane]
            .fire(seq)
            .filter(|t| live(arena, timeout, t))
    }

    /// Arms the next live timer of `lane`, after the fired one was handled.
    #[inline]
    pub(crate) fn rearm(&mut self, lane: usize, arena: &Arena, s: &mut Scheduler<Packed>) {
        let timeout = self.is_timeout(lane);
        let next = self.lanes[lane].next_live(|t| live(arena, timeout, t));
        if let Some(n) = next {
            s.at_seq(
                n.at,
                n.seq,
                Event::Lane {
                    lane: lane as u32,
                    seq: n.seq,
                },
            );
        }
    }

    /// Timers held over all lanes, live or stale.
    pub(crate) fn held(&self) -> u64 {
        self.lanes.iter().map(|l| l.len() as u64).sum()
    }
}

/// Whether a timer still matters: for a timeout, the node still waits on the same
/// attempt; for a deadline, the request is still going.
#[inline]
fn live(arena: &Arena, timeout: bool, t: &Timer) -> bool {
    if timeout {
        let n = &arena.nodes[t.id as usize];
        n.gen == t.gen && n.state == NodeState::Waiting
    } else {
        let r = &arena.reqs[t.id as usize];
        r.gen == t.gen && !r.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(at: Nanos, id: u32) -> Timer {
        Timer {
            at,
            seq: at,
            id,
            gen: 0,
        }
    }

    #[test]
    fn only_an_idle_lane_asks_to_be_armed_and_stale_fronts_are_skipped() {
        let mut l = TimerLane::default();
        assert!(l.push(t(10, 1)));
        assert!(!l.push(t(20, 2)));
        assert!(!l.push(t(30, 3)));
        assert_eq!(l.fire(10), Some(t(10, 1)));
        // 2 went stale: the next live one is 3.
        assert_eq!(l.next_live(|x| x.id != 2), Some(t(30, 3)));
        assert_eq!(l.fire(30), Some(t(30, 3)));
        assert_eq!(l.next_live(|_| true), None);
        assert!(l.push(t(40, 4)), "idle again: the next push arms it");
        assert_eq!(l.len(), 1);
    }

    #[test]
    fn compacting_away_the_armed_timer_leaves_its_event_to_arm_the_next() {
        let mut l = TimerLane::default();
        assert!(l.push(t(10, 1)));
        l.push(t(20, 2));
        l.push(t(30, 3));
        // 1 and 2 are stale: compaction drops them, the armed one among them.
        l.compact(|x| x.id == 3);
        assert_eq!(l.len(), 1);
        assert!(!l.push(t(40, 4)), "still armed: its event is pending");
        assert_eq!(l.fire(10), None, "the event finds its timer gone");
        assert_eq!(l.next_live(|_| true), Some(t(30, 3)));
        assert_eq!(l.fire(30), Some(t(30, 3)));
    }
}
