//! The columns of a service graph (scenarios written with `[[services]]`): the
//! `overloaded` count and the per-service templates of `summary.csv`, and
//! `services.csv`, one row per run, bucket and service.

use super::*;
use crate::metrics::summary::Cell;
use crate::metrics::RunMetrics;
use crate::model::config::Scenario;
use crate::model::outcome::Class;

/// `overloaded`.
pub(crate) const OVERLOADED: Column = count(
    "overloaded",
    "attempts at the first service answered overloaded (service graphs only)",
);

/// `attempts_per_request` of `service_<name>_attempts_per_request`.
pub(crate) const SERVICE_ATTEMPTS_PER_REQUEST: Column = measure(
    "attempts_per_request",
    PER_REQUEST,
    FRACTION,
    "attempts that reached the service / logical requests",
);
/// `rejected` of `service_<name>_rejected`.
pub(crate) const SERVICE_REJECTED: Column = count(
    "rejected",
    "requests the service refused for capacity (queue full)",
);
/// `shed` of `service_<name>_shed`.
pub(crate) const SERVICE_SHED: Column = count(
    "shed",
    "requests the service dropped: their propagated deadline had passed (or nobody waited, with drop_expired)",
);
/// `utilisation_peak` of `service_<name>_utilisation_peak`.
pub(crate) const SERVICE_UTILISATION_PEAK: Column = measure(
    "utilisation_peak",
    "fraction",
    FRACTION,
    "the busiest bucket's mean busy threads / servers",
);

/// Per-service summary columns `service_<name>_<column>`, in `[[services]]` order.
pub(crate) const SERVICE_COLUMNS: [Column; 4] = [
    SERVICE_ATTEMPTS_PER_REQUEST,
    SERVICE_REJECTED,
    SERVICE_SHED,
    SERVICE_UTILISATION_PEAK,
];

/// The name of service `service`'s column `c` (one of [`SERVICE_COLUMNS`]).
pub(crate) fn service_column(service: &str, c: &Column) -> String {
    SERVICE_GROUP.column(service, c)
}

/// The `overloaded` column of a service graph.
pub(crate) const GRAPH_GROUP: Group = Group {
    name: "graph",
    instances: Instances::Once(is_graph),
    summary: &[OVERLOADED],
    cells: overloaded_cells,
    series: &[],
    series_cells: no_series,
    file: None,
    note: "",
};

fn is_graph(scn: &Scenario) -> bool {
    scn.graph && !scn.services.is_empty()
}

fn overloaded_cells(m: &RunMetrics, _: &Scenario, _: &str, out: &mut Vec<Cell>) {
    out.push(Cell::Int(m.totals.outcomes[Class::Overloaded as usize]));
}

/// The per-service columns `service_<name>_<column>` of a service graph, and
/// `services.csv`.
pub(crate) const SERVICE_GROUP: Group = Group {
    name: "services",
    instances: Instances::Named {
        prefix: "service_",
        names: service_names,
    },
    summary: &SERVICE_COLUMNS,
    cells: service_cells,
    series: &[],
    series_cells: no_series,
    file: Some(GroupFile {
        name: SERVICES_FILE,
        columns: &SERVICES,
        cells: service_row,
    }),
    note: "service graphs only",
};

fn service_names(scn: &Scenario) -> Vec<String> {
    if scn.graph {
        scn.services.iter().map(|s| s.name.clone()).collect()
    } else {
        Vec::new()
    }
}

/// A service the run's scenario lacks has empty cells.
fn service_cells(m: &RunMetrics, scn: &Scenario, name: &str, out: &mut Vec<Cell>) {
    let i = scn.services.iter().position(|s| s.name == name);
    match i.zip(m.services.as_ref()) {
        Some((i, s)) => {
            let t = &s.services[i].totals;
            out.extend([
                Cell::ratio(t.inbound as f64, m.totals.logical as f64),
                Cell::Int(t.rejected),
                Cell::Int(t.shed),
                s.utilisation_peak(i).map_or(Cell::Empty, Cell::float),
            ]);
        }
        None => out.extend([Cell::Empty, Cell::Empty, Cell::Empty, Cell::Empty]),
    }
}

/// The `services.csv` cells of one bucket of one service.
fn service_row(m: &RunMetrics, row: &FileRow, out: &mut Vec<Cell>) {
    let (k, i) = (row.service, row.bucket);
    out.extend([
        Cell::Int(row.run),
        Cell::Int(u64::from(row.replication)),
        Cell::float(row.t),
        Cell::Text(row.name.to_string()),
    ]);
    let Some(sv) = m.services.as_ref() else {
        out.extend(std::iter::repeat_n(Cell::Empty, SERVICES.len() - 4));
        return;
    };
    let b = &sv.services[k].rows[i];
    out.extend([
        Cell::Int(b.inbound),
        Cell::Int(b.served),
        Cell::Int(b.rejected),
        Cell::Int(b.shed),
        Cell::Int(b.goodput),
        Cell::float(sv.queue_mean(k, i)),
        sv.utilisation(k, i).map_or(Cell::Empty, Cell::float),
        Cell::float(sv.threads_busy(k, i)),
        Cell::Int(b.wasted),
        m.reject_busy
            .as_ref()
            .map_or(Cell::Float(0.0), |rb| Cell::float(rb.rejecting(k, i))),
    ]);
}

/// The file of the per-service series.
pub(crate) const SERVICES_FILE: &str = "services.csv";

/// `services.csv`, in order.
pub(crate) const SERVICES: [Column; 14] = [
    RUN,
    REPLICATION,
    id("t", "s", "start of the bucket"),
    id("service", "name", "the service"),
    count("inbound", "attempts that reached the service in the bucket"),
    count(
        "served",
        "requests the service answered (success or failure) in the bucket",
    ),
    count("rejected", "requests refused for capacity in the bucket"),
    count(
        "shed",
        "requests dropped in the bucket: deadline passed, or nobody waited",
    ),
    count(
        "goodput",
        "successful answers somebody still waited for, in the bucket",
    ),
    measure(
        "queue_mean",
        "requests",
        AMOUNT,
        "time-averaged queue length",
    ),
    measure(
        "utilisation",
        "fraction",
        FRACTION,
        "time-averaged busy threads / servers (empty with unlimited servers)",
    ),
    measure(
        "threads_busy",
        "threads",
        AMOUNT,
        "time-averaged busy threads (held through downstream calls with hold_threads)",
    ),
    count(
        "wasted",
        "answers nobody waited for any more, in the bucket",
    ),
    measure(
        "rejecting",
        "threads",
        AMOUNT,
        "time-averaged threads busy rejecting (reject_cost; 0 when rejections are free)",
    ),
];

/// The header of `services.csv`.
pub(crate) const SERVICES_COLUMNS: [&str; 14] = names(&SERVICES);
