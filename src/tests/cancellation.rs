//! `cancel_on_timeout` cancels the whole call below (MODEL.md §3), however many
//! attempts that call has made: against exact counts from deterministic timings.
//!
//! Every scenario here: a burst of `N` requests at 0, a dependency with unlimited
//! servers that fails every attempt after exactly 10 ms, and inner layers that retry
//! after a fixed 5 ms. An inner call's attempt k is at the dependency from 15(k-1) ms
//! to 15(k-1) + 10 ms, then sleeps 5 ms.

use crate::tests::common;

use crate::metrics::ordinal::End;
use crate::model::outcome::Class;
use crate::run::RunResult;
use common::{col, count, run};

/// Logical requests of each scenario.
const N: u64 = 4;

const ERROR: End = End::Class(Class::Error);
const TIMEOUT: End = End::Class(Class::Timeout);
const DEADLINE: End = End::Class(Class::DeadlineExceeded);
const CANCELLED: End = End::Cancelled;

/// One layer of the stack: max attempts, attempt timeout (ms), cancel on timeout.
type Layer = (u32, Option<u64>, bool);

/// The scenario of the module docs with `layers`, top first, and an optional fleet
/// deadline (ms).
fn stack(layers: &[Layer], deadline: Option<u64>) -> String {
    let mut s = format!(
        r#"
duration = "1s"
[dependency]
servers = "unlimited"
service_time = {{ kind = "deterministic", value = "10ms" }}
error_rate = 1.0
[[fleets]]
name = "f"
arrival = {{ kind = "burst", at = "0s", count = {N} }}
"#
    );
    if let Some(d) = deadline {
        s.push_str(&format!("deadline = \"{d}ms\"\n"));
    }
    for (i, &(n, timeout, cancel)) in layers.iter().enumerate() {
        s.push_str(&format!(
            "[[fleets.layers]]\nname = \"l{i}\"\nmax_attempts = {n}\n\
             backoff = {{ kind = \"fixed\", delay = \"5ms\" }}\ncancel_on_timeout = {cancel}\n"
        ));
        if let Some(t) = timeout {
            s.push_str(&format!("attempt_timeout = \"{t}ms\"\n"));
        }
    }
    s
}

/// A row of attempts_by_ordinal.csv: (layer, ordinal, end, count).
type Row = (usize, u32, End, u64);

/// What a run of [`stack`] shows.
struct Seen {
    /// The rows of attempts_by_ordinal.csv.
    rows: Vec<Row>,
    /// Attempts that reached the dependency.
    attempts: u64,
    /// Attempts that timed out.
    timeouts: u64,
    /// The run.
    run: RunResult,
}

/// Runs [`stack`] with `layers` and `deadline`.
fn seen(layers: &[Layer], deadline: Option<u64>) -> Seen {
    let r = run(&stack(layers, deadline), &[]);
    assert_eq!(count(&r, "logical"), N);
    assert_eq!(count(&r, "in_flight"), 0);
    // Every dependency attempt runs to its end, cancelled or not.
    assert_eq!(count(&r, "served"), count(&r, "attempts"));
    assert_eq!(count(&r, "errors"), count(&r, "attempts"));
    Seen {
        rows: r.metrics.ordinals.rows().collect(),
        attempts: count(&r, "attempts"),
        timeouts: count(&r, "timeouts"),
        run: r,
    }
}

#[test]
fn the_outer_timeout_cancels_an_inner_call_past_its_first_attempt() {
    // The outer attempt times out at 35 ms, while the inner call's 3rd attempt is in
    // service (30-40 ms): that attempt is cancelled (its service runs on), and the
    // inner call makes no 4th.
    let x = seen(&[(1, Some(35), true), (10, None, false)], None);
    assert_eq!(
        x.attempts,
        3 * N,
        "the inner call stops at the outer timeout"
    );
    assert_eq!(x.timeouts, N);
    assert_eq!(
        x.rows,
        vec![
            (0, 1, TIMEOUT, N),
            (1, 1, ERROR, N),
            (1, 2, ERROR, N),
            (1, 3, CANCELLED, N),
        ]
    );
}

#[test]
fn without_cancel_the_inner_call_retries_on_as_an_orphan() {
    // The control: the same stack without cancel_on_timeout makes all ten inner
    // attempts.
    let x = seen(&[(1, Some(35), false), (10, None, false)], None);
    assert_eq!(x.attempts, 10 * N);
    let mut expected = vec![(0, 1, TIMEOUT, N)];
    expected.extend((1..=10).map(|k| (1, k, ERROR, N)));
    assert_eq!(x.rows, expected);
}

#[test]
fn an_inner_call_cancelled_in_its_backoff_makes_no_next_attempt() {
    // At 28 ms the inner call sleeps after its 2nd attempt (25-30 ms): it ends with
    // no attempt in flight, so no row is cancelled, and it never makes its 3rd.
    let x = seen(&[(1, Some(28), true), (10, None, false)], None);
    assert_eq!(x.attempts, 2 * N);
    assert_eq!(
        x.rows,
        vec![(0, 1, TIMEOUT, N), (1, 1, ERROR, N), (1, 2, ERROR, N)]
    );
}

#[test]
fn a_cancel_reaches_down_through_every_layer_past_their_first_attempts() {
    // l1 times out at 35 ms after each of its attempts starts and retries 5 ms later:
    // its attempts start at 0, 40 and 80 ms. Its first two cancel their l2 call on
    // its 3rd attempt (in service 30-40 ms after the l2 call began). At 100 ms the top
    // layer times out while l1 is on its 3rd attempt and that attempt's l2 call on its
    // 2nd (95-105 ms): both are cancelled.
    let x = seen(
        &[(1, Some(100), true), (5, Some(35), true), (10, None, false)],
        None,
    );
    assert_eq!(x.attempts, (3 + 3 + 2) * N);
    assert_eq!(x.timeouts, 3 * N);
    assert_eq!(
        x.rows,
        vec![
            (0, 1, TIMEOUT, N),
            (1, 1, TIMEOUT, N),
            (1, 2, TIMEOUT, N),
            (1, 3, CANCELLED, N),
            (2, 1, ERROR, 3 * N),
            (2, 2, ERROR, 2 * N),
            (2, 2, CANCELLED, N),
            (2, 3, CANCELLED, 2 * N),
        ]
    );
}

#[test]
fn the_deadline_cancels_an_inner_call_past_its_first_attempt() {
    // The request's deadline passes at 35 ms, before the outer attempt's timeout:
    // the outer attempt ends with deadline_exceeded and, with cancel_on_timeout,
    // cancels the inner call on its 3rd attempt. Left alone, that call would see the
    // attempt's error at 40 ms and give up its 4th with deadline_exceeded instead.
    let x = seen(&[(1, Some(1000), true), (10, None, false)], Some(35));
    assert_eq!(x.attempts, 3 * N);
    assert_eq!(
        x.rows,
        vec![
            (0, 1, DEADLINE, N),
            (1, 1, ERROR, N),
            (1, 2, ERROR, N),
            (1, 3, CANCELLED, N),
        ]
    );
    assert_eq!(
        count(&x.run, "deadline_exceeded"),
        N,
        "counted once, at the request"
    );
    assert_eq!(col(&x.run, "attempts_layer_1"), 3.0);
}
