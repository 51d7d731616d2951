//! Layer stacks: the retry layers between a caller and the service it calls.
//!
//! A fleet's layers are one stack, whose index is the fleet's. In a service graph each
//! callee of each `[[services.calls]]` entry gets a stack of its own, a copy of the
//! call's layers (their budgets, breakers and limiters are per callee, as a client
//! library keeps them per destination). A node knows its stack; its depth indexes the
//! stack's layers, and depth = the stack's length is the attempt at the stack's
//! target service.

use crate::engine::Nanos;
use crate::model::config::Scenario;

use super::guard::StackGuards;
use super::layer::Layer;

/// One stack of layers and where it leads.
pub(super) struct Stack {
    /// The layers, outermost first.
    pub(super) layers: Vec<Layer>,
    /// The service the last layer (or, without layers, the caller) sends to.
    pub(super) target: u16,
    /// Whether an attempt carries the time its caller gives up on it (the remaining
    /// deadline) to the service.
    pub(super) propagate: bool,
    /// The bulkhead and pool around the innermost layer's attempts, if any.
    pub(super) guards: Option<Box<StackGuards>>,
    /// A fleet's stack: the class byte of its requests' first nodes (a service
    /// call's first nodes take their visit's).
    pub(super) crit: u8,
}

impl Stack {
    /// The deadline a node made at `depth` of this stack knows: the one rule for every
    /// maker of a node (a layer's attempt, a hedged copy, a request's or a service's
    /// first call). A call node (`depth` below the stack's length) knows its caller's
    /// `deadline`, the request's or its service's; the attempt at the stack's service
    /// knows when its maker gives up on it (`gives_up`: the first of the deadline, the
    /// call's `total_timeout` and the attempt timeout) if the stack propagates
    /// deadlines, else none (`Nanos::MAX`).
    #[inline]
    pub(super) fn child_deadline(&self, depth: usize, deadline: Nanos, gives_up: Nanos) -> Nanos {
        if depth < self.layers.len() {
            deadline
        } else if self.propagate {
            gives_up
        } else {
            Nanos::MAX
        }
    }
}

/// The stack of each callee of each call of each service: `[service][call][callee]`.
pub(super) type CallStacks = Vec<Vec<Vec<u16>>>;

/// Every stack of `scn` with random streams from `seed`: the fleets' first (stack `i`
/// is fleet `i`'s, and its counts are the whole-run columns), then per
/// service, call and callee. Returns the stacks, the stack of each (service, call,
/// callee) and the (stack, depth) of each global layer index.
pub(super) fn build(scn: &Scenario, seed: u64) -> (Vec<Stack>, CallStacks, Vec<(u16, u8)>) {
    let mut stacks = Vec::new();
    let mut index: Vec<(u16, u8)> = Vec::new();
    let mut push = |stacks: &mut Vec<Stack>,
                    owner: &str,
                    layers: &[crate::model::config::LayerConfig],
                    target: u16,
                    propagate: bool,
                    guards: &crate::model::config::Guards,
                    crit: u8| {
        let st = stacks.len() as u16;
        let layers = layers
            .iter()
            .enumerate()
            .map(|(li, l)| {
                let global = index.len() as u16;
                index.push((st, li as u8));
                Layer::new(l, owner, li, seed, global)
            })
            .collect();
        stacks.push(Stack {
            layers,
            target,
            propagate,
            guards: StackGuards::new(guards),
            crit,
        });
        st
    };
    for f in &scn.fleets {
        push(
            &mut stacks,
            &f.name,
            &f.layers,
            f.target,
            f.propagate_deadline,
            &f.guards,
            f.class() as u8,
        );
    }
    let mut calls = Vec::with_capacity(scn.services.len());
    for svc in &scn.services {
        let mut per_call = Vec::with_capacity(svc.calls.len());
        for (ci, call) in svc.calls.iter().enumerate() {
            let branches = call
                .to
                .iter()
                .map(|&to| {
                    // Streams named by the call, so adding a service elsewhere does not
                    // move them.
                    let owner = format!("{}/{ci}/{}", svc.name, scn.services[to as usize].name);
                    push(
                        &mut stacks,
                        &owner,
                        &call.layers,
                        to,
                        call.propagate_deadline,
                        &call.guards,
                        crate::model::criticality::DEFAULT_CLASS,
                    )
                })
                .collect();
            per_call.push(branches);
        }
        calls.push(per_call);
    }
    (stacks, calls, index)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stacks of a scenario with one fleet of `layers` layers.
    fn stacks(layers: usize, propagate: bool) -> Vec<Stack> {
        stacks_of(
            &"[[fleets.layers]]\nmax_attempts = 2\n".repeat(layers),
            propagate,
        )
    }

    /// The stacks of a scenario with one fleet whose layers are `layers` (TOML).
    fn stacks_of(layers: &str, propagate: bool) -> Vec<Stack> {
        let text = format!(
            "duration = '10s'\n[dependency]\nservers = 1\nservice_time = '1ms'\n\
             [[fleets]]\nname = 'f'\narrival = {{ kind = 'poisson', rate = 10 }}\n\
             deadline = '1s'\npropagate_deadline = {propagate}\n{layers}"
        );
        let source = crate::scenario::Source {
            path: "t.toml".into(),
            stem: "t".into(),
            text,
        };
        let scn = crate::scenario::from_table(&source, source.table().unwrap())
            .unwrap()
            .scenario;
        build(&scn, 1).0
    }

    #[test]
    fn a_call_node_knows_its_callers_deadline_and_the_attempt_at_the_service_when_it_is_given_up() {
        let (deadline, gives_up) = (1_000, 700);
        for propagate in [false, true] {
            let st = &stacks(2, propagate)[0];
            // The layers below the first: call nodes, whatever the stack propagates.
            assert_eq!(st.child_deadline(0, deadline, gives_up), deadline);
            assert_eq!(st.child_deadline(1, deadline, gives_up), deadline);
            // The attempt at the service: when its maker gives up, or nothing.
            let at_service = if propagate { gives_up } else { Nanos::MAX };
            assert_eq!(st.child_deadline(2, deadline, gives_up), at_service);
        }
        // Without layers the request's first node is the attempt at the service.
        assert_eq!(
            stacks(0, true)[0].child_deadline(0, deadline, deadline),
            deadline
        );
        assert_eq!(
            stacks(0, false)[0].child_deadline(0, deadline, deadline),
            Nanos::MAX
        );
    }

    #[test]
    fn an_attempt_gives_up_at_its_timeout_or_at_its_calls_end_whichever_is_first() {
        let st = &stacks_of(
            "[[fleets.layers]]\nmax_attempts = 2\nattempt_timeout = '100ms'\n",
            true,
        )[0];
        let ms = 1_000_000;
        let layer = &st.layers[0];
        assert_eq!(layer.gives_up(0, 500 * ms), 100 * ms);
        assert_eq!(layer.gives_up(450 * ms, 500 * ms), 500 * ms);
        let untimed = &stacks(1, true)[0].layers[0];
        assert_eq!(untimed.gives_up(450 * ms, 500 * ms), 500 * ms);
    }
}
