//! Layer stacks: the retry layers between a caller and the service it calls.
//!
//! A fleet's layers are one stack, whose index is the fleet's. In a service graph each
//! callee of each `[[services.calls]]` entry gets a stack of its own, a copy of the
//! call's layers (their budgets, breakers and limiters are per callee, as a client
//! library keeps them per destination). A node knows its stack; its depth indexes the
//! stack's layers, and depth = the stack's length is the attempt at the stack's
//! target service.

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
                    guards: &crate::model::config::Guards| {
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
                    )
                })
                .collect();
            per_call.push(branches);
        }
        calls.push(per_call);
    }
    (stacks, calls, index)
}
