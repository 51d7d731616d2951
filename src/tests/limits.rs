//! How many calls and attempts one logical request holds at once
//! ([`nodes_per_request`]), what the run's node cap is made of: scenarios written as
//! text, loaded as the command line loads them (the model knows nothing of files, so
//! these tests live here rather than beside `model::limits`).

use crate::model::config::Scenario;
use crate::model::limits::{
    bytes_per_node, bytes_per_request, bytes_per_request_with_nodes, nodes_per_request, Caps,
};

fn scenario(text: &str) -> Scenario {
    let text = format!("duration = '10s'\n{text}");
    crate::load_scenario_text("t.toml", &text, &crate::Overrides::default())
        .unwrap()
        .scenario
}

fn layers(table: &str, n: usize) -> String {
    format!("[[{table}]]\nmax_attempts = 2\n").repeat(n)
}

fn fleet(name: &str, target: &str, n: usize) -> String {
    format!(
        "[[fleets]]\nname = '{name}'\narrival = {{ kind = 'poisson', rate = 10 }}\n{target}{}",
        layers("fleets.layers", n)
    )
}

fn service(name: &str) -> String {
    format!("[[services]]\nname = '{name}'\nservers = 4\nservice_time = '1ms'\n")
}

fn call(to: &str, n: usize) -> String {
    format!(
        "[[services.calls]]\nto = {to}\n{}",
        layers("services.calls.layers", n)
    )
}

#[test]
fn one_dependency_holds_the_deepest_stack_and_its_attempt() {
    let dep = "[dependency]\nservers = 1\nservice_time = '1ms'\n";
    let scn = scenario(&format!("{dep}{}{}", fleet("a", "", 3), fleet("b", "", 5)));
    assert_eq!(nodes_per_request(&scn), 6);
    assert_eq!(Caps::new(&scn, 0).max_nodes(), 6 * scn.limits.max_in_flight);
    let scn = scenario(&format!("{dep}{}", fleet("a", "", 0)));
    assert_eq!(nodes_per_request(&scn), 1);
    assert_eq!(bytes_per_request(4), bytes_per_request_with_nodes(5));
    assert_eq!(
        bytes_per_request_with_nodes(7) - bytes_per_request_with_nodes(5),
        2 * bytes_per_node()
    );
}

#[test]
fn the_bytes_of_a_request_saturate_instead_of_wrapping_around() {
    assert_eq!(bytes_per_request_with_nodes(u64::MAX), u64::MAX);
    assert_eq!(bytes_per_request_with_nodes(u64::MAX / 2), u64::MAX);
}

#[test]
fn a_hedging_layer_holds_each_copy_and_all_below_it() {
    // fleet layers [hedging 3 copies, plain]: 1 + 3 × (1 + (1 + 0)) = 7.
    let dep = "[dependency]\nservers = 1\nservice_time = '1ms'\n";
    let text = format!(
        "{dep}[[fleets]]\nname = 'a'\narrival = {{ kind = 'poisson', rate = 1 }}\n\
         [[fleets.layers]]\nmax_attempts = 1\nhedging = {{ max_attempts = 3 }}\n\
         [[fleets.layers]]\nmax_attempts = 2\n"
    );
    assert_eq!(nodes_per_request(&scenario(&text)), 7);
}

#[test]
fn a_three_tier_chain_holds_every_tier_at_once() {
    // fleet 2 layers → front, 1 layer → backend, 3 layers → db:
    // (2 + 1) + (1 + 1) + (3 + 1) = 9.
    let scn = scenario(&format!(
        "{}{}{}{}{}{}",
        service("front"),
        call("'backend'", 1),
        service("backend"),
        call("'db'", 3),
        service("db"),
        fleet("f", "", 2)
    ));
    assert_eq!(nodes_per_request(&scn), 9);
    assert_eq!(Caps::new(&scn, 0).max_nodes(), 9 * scn.limits.max_in_flight);
}

#[test]
fn a_fan_out_holds_each_callee_and_calls_in_turn_hold_the_largest() {
    // front: call 0 to [a, b] through 2 layers, then call 1 to c through 1; a calls
    // d through 1 layer. Call 0 holds (2 + 1 + (1 + 1)) + (2 + 1) = 8, call 1
    // holds 2: front holds 8 below, and fleet f (1 layer) 1 + 1 + 8 = 10; fleet g
    // calls c straight through 4 layers: 5.
    let scn = scenario(&format!(
        "{}{}{}{}{}{}{}{}{}{}",
        service("front"),
        call("['a', 'b']", 2),
        call("'c'", 1),
        service("a"),
        call("'d'", 1),
        service("b"),
        service("c"),
        service("d"),
        fleet("f", "target = 'front'\n", 1),
        fleet("g", "target = 'c'\n", 4),
    ));
    assert_eq!(nodes_per_request(&scn), 10);
    // Alone, fleet g holds its own stack.
    let scn_g = scenario(&format!(
        "{}{}{}",
        service("c"),
        service("x"),
        fleet("g", "target = 'c'\n", 4)
    ));
    assert_eq!(nodes_per_request(&scn_g), 5);
}
