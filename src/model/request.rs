//! In-flight state in index arenas: logical requests and call nodes, slots reused.
//!
//! A *node* is one call into a retry layer, or one attempt at the dependency. Nodes
//! form a chain per attempt: a layer's current attempt is a child node one level down.
//! Every node carries a generation that bumps whenever its current attempt ends or
//! the slot is freed; events and children hold the generation they were made with,
//! so a stale event or an orphaned child is recognised by a mismatch, with no search.
//! A generation names one attempt of a node, not the node: a call's own generation
//! moves on with each of its attempts, so its caller knows it as the child whose
//! `parent` and `parent_gen` point back at the caller's attempt (see `cancel` in
//! [`super::call`]).

use crate::engine::Nanos;

use super::outcome::Outcome;

/// "No node": the parent of a top-level node.
pub(crate) const NONE: u32 = u32::MAX;

/// A logical request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Request {
    /// Generation of the slot (for deadline events).
    pub gen: u32,
    /// Fleet index.
    pub fleet: u16,
    /// Client index within the fleet.
    pub client: u32,
    /// Arrival time.
    pub arrival: Nanos,
    /// Absolute deadline (`Nanos::MAX` when none).
    pub deadline: Nanos,
    /// Whether it is a non-idempotent write.
    pub is_write: bool,
    /// Times the write was applied.
    pub applied: u32,
    /// Whether the logical request has completed.
    pub done: bool,
    /// Live nodes that belong to it.
    pub refs: u32,
}

/// Lifecycle of a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NodeState {
    /// Slot unused.
    Free,
    /// Travelling to its layer or to the dependency.
    InTransit,
    /// A layer call waiting for its current attempt.
    Waiting,
    /// A layer call sleeping before its next attempt.
    Sleeping,
    /// An attempt waiting in the dependency's queue.
    Queued,
    /// An attempt being served.
    InService,
    /// A request at a service of a graph, waiting for its downstream calls.
    Calling,
    /// A layer call waiting for a bulkhead slot or a pooled connection before its
    /// next attempt (see `super::guard`).
    Acquiring,
}

/// One call into a layer, or one attempt at the dependency.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Node {
    /// Generation (see the module docs).
    pub gen: u32,
    /// Owning request slot.
    pub req: u32,
    /// Parent node, or [`NONE`].
    pub parent: u32,
    /// Parent's generation when this node was issued.
    pub parent_gen: u32,
    /// Current (or last) attempt's child node, or [`NONE`]; it is still this node's
    /// attempt while its `parent` and `parent_gen` point back here.
    pub child: u32,
    /// Layer depth in its stack; equal to the stack's layer count for an attempt at
    /// the stack's service.
    pub depth: u8,
    /// The layer stack the node belongs to: a fleet's (its index), or a service
    /// call's (see `super::stack`).
    pub stack: u16,
    /// Whether an outside breaker admitted this call (it must record the outcome).
    pub outside_admitted: bool,
    /// Whether the inside breaker admitted the current attempt.
    pub inside_admitted: bool,
    /// What the call holds or waits for at its stack's guards (bits of
    /// `super::guard`; 0 without guards).
    pub guard: u8,
    /// Its request class (a [`crate::model::criticality::Criticality`] as a byte): its
    /// maker's, lowered for a layer's retries (in the node's padding: no bigger).
    pub crit: u8,
    /// Lifecycle.
    pub state: NodeState,
    /// Attempts made by this call.
    pub attempts: u32,
    /// Layer instance the call uses.
    pub instance: u32,
    /// What the last retry took from an AWS-style budget (0 = no retry yet).
    pub retry_cost: u64,
    /// What the node keeps between its events (which depends on what it is).
    pub memo: Memo,
}

/// What a node keeps between its events: a layer call its backoff state, an attempt
/// at the dependency what its service decided. One field for the three meanings; its
/// words are [`Halves`], so the enum's tag shares a word with the outcome and a node
/// stays 56 bytes (the memory caps count bytes per node).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Memo {
    /// Nothing yet: a node on its way.
    Empty,
    /// An attempt waiting in the dependency's queue: when it joined it.
    Queued(Halves),
    /// A layer call: the backoff's state, the previous decorrelated-jitter wait
    /// (see [`crate::model::backoff::next_wait`]).
    Backoff(Halves),
    /// An attempt in service: how long it takes, and its outcome, decided when the
    /// service started.
    Service {
        /// Service time.
        time: Halves,
        /// Outcome at the end of the service.
        outcome: Outcome,
    },
    /// An OCC attempt between its read and its conditional write: the record's
    /// version it read.
    Read(Halves),
    /// A request at a service making its downstream calls: its slot in the
    /// service's visit table (see `super::service`).
    Visit(Halves),
}

impl Memo {
    /// The backoff state of a layer call.
    #[inline]
    pub(crate) fn backoff(self) -> Nanos {
        match self {
            Memo::Backoff(prev) => prev.get(),
            other => unreachable!("a layer call's memo is its backoff state, not {other:?}"),
        }
    }
}

/// A `u64` kept as two `u32` halves: aligned to 4 bytes, so it packs with smaller
/// fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Halves([u32; 2]);

impl Halves {
    /// Splits `v`.
    #[inline]
    pub(crate) const fn new(v: u64) -> Halves {
        Halves([v as u32, (v >> 32) as u32])
    }

    /// The value.
    #[inline]
    pub(crate) const fn get(self) -> u64 {
        (self.0[0] as u64) | ((self.0[1] as u64) << 32)
    }
}

impl Node {
    const EMPTY: Node = Node {
        gen: 0,
        req: NONE,
        parent: NONE,
        parent_gen: 0,
        child: NONE,
        depth: 0,
        stack: 0,
        outside_admitted: false,
        inside_admitted: false,
        guard: 0,
        crit: crate::model::criticality::DEFAULT_CLASS,
        state: NodeState::Free,
        attempts: 0,
        instance: 0,
        retry_cost: 0,
        memo: Memo::Empty,
    };
}

/// Arena of nodes and requests with free lists.
#[derive(Debug, Default)]
pub(crate) struct Arena {
    /// Node slots.
    pub nodes: Vec<Node>,
    free_nodes: Vec<u32>,
    /// Request slots.
    pub reqs: Vec<Request>,
    free_reqs: Vec<u32>,
    live_reqs: u64,
}

impl Arena {
    /// Allocates a request slot.
    pub(crate) fn alloc_req(&mut self, mut r: Request) -> u32 {
        self.live_reqs += 1;
        if let Some(i) = self.free_reqs.pop() {
            r.gen = self.reqs[i as usize].gen.wrapping_add(1);
            self.reqs[i as usize] = r;
            i
        } else {
            r.gen = 0;
            self.reqs.push(r);
            (self.reqs.len() - 1) as u32
        }
    }

    /// Request slots in use (requests not done, or with live nodes).
    pub(crate) fn live_requests(&self) -> u64 {
        self.live_reqs
    }

    /// Node slots in use: calls and attempts in flight, orphans included.
    #[inline]
    pub(crate) fn live_nodes(&self) -> u64 {
        (self.nodes.len() - self.free_nodes.len()) as u64
    }

    /// Frees the request if it is done and no node refers to it.
    #[inline]
    pub(crate) fn maybe_free_req(&mut self, r: u32) {
        let q = &mut self.reqs[r as usize];
        if q.done && q.refs == 0 {
            q.gen = q.gen.wrapping_add(1);
            self.free_reqs.push(r);
            self.live_reqs -= 1;
        }
    }

    /// Allocates a node for request `req` at `depth` of layer stack `stack`, of the
    /// default class (see [`crate::model::criticality`] for who sets another).
    #[inline(always)]
    pub(crate) fn alloc_node(
        &mut self,
        req: u32,
        depth: u8,
        stack: u16,
        parent: u32,
        parent_gen: u32,
    ) -> u32 {
        self.reqs[req as usize].refs += 1;
        let n = Node {
            req,
            parent,
            parent_gen,
            depth,
            stack,
            state: NodeState::InTransit,
            ..Node::EMPTY
        };
        if let Some(i) = self.free_nodes.pop() {
            let gen = self.nodes[i as usize].gen;
            self.nodes[i as usize] = Node { gen, ..n };
            i
        } else {
            self.nodes.push(n);
            (self.nodes.len() - 1) as u32
        }
    }

    /// Frees a node: bumps its generation so every event and child that refers to it
    /// becomes stale.
    #[inline(always)]
    pub(crate) fn free_node(&mut self, i: u32) {
        let n = &mut self.nodes[i as usize];
        debug_assert!(n.state != NodeState::Free);
        n.gen = n.gen.wrapping_add(1);
        n.state = NodeState::Free;
        let r = n.req;
        self.free_nodes.push(i);
        self.reqs[r as usize].refs -= 1;
        self.maybe_free_req(r);
    }

    /// Whether the result of node `i` can still reach its logical request: every
    /// ancestor still waits on this chain and the request is not done.
    pub(crate) fn useful(&self, mut i: u32, now: Nanos) -> bool {
        loop {
            let n = &self.nodes[i as usize];
            if n.parent == NONE {
                let r = &self.reqs[n.req as usize];
                return !r.done && now < r.deadline;
            }
            let p = &self.nodes[n.parent as usize];
            if p.gen != n.parent_gen || !matches!(p.state, NodeState::Waiting | NodeState::Calling)
            {
                return false;
            }
            i = n.parent;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_keeps_its_size() {
        // The memory caps count bytes per node (`limits::bytes_per_node`): the memo
        // keeps the node at the size the book states (reference/robustness.md).
        assert_eq!(std::mem::size_of::<Node>(), 56);
        assert_eq!(std::mem::size_of::<Memo>(), 12);
        for v in [0, 1, u64::from(u32::MAX), u64::from(u32::MAX) + 1, u64::MAX] {
            assert_eq!(Halves::new(v).get(), v);
        }
    }
}
