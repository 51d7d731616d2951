//! The columns of request classes: written only when a scenario (or a cell of a
//! sweep) uses them (a fleet's `criticality`, a layer's `retry_criticality` or a
//! tier's `shed_by_criticality`), once per class its requests and retries are sent
//! at, as `<column>_<class>`.

use crate::metrics::columns::{count, no_series, Column, Group, Instances, Kind};
use crate::metrics::summary::Cell;
use crate::metrics::RunMetrics;
use crate::model::config::Scenario;

use super::Criticality;

/// `success_fraction_<class>`.
pub(crate) const CLASS_SUCCESS_FRACTION: Column = Column {
    name: "success_fraction",
    unit: "fraction",
    kind: Kind::Measure,
    compared: true,
    floor: 0.01,
    description: "succeeded / logical requests of the fleets whose criticality is the class; empty when no fleet's is (only with criticality)",
};
/// `priority_shed_<class>`.
pub(crate) const CLASS_PRIORITY_SHED: Column = count(
    "priority_shed",
    "attempts of the class the tiers shed by criticality (answered priority_shed, 503), summed over the tiers; a lowered retry counts in its lowered class (only with criticality)",
);
/// The per-class summary columns.
pub(crate) const CRITICALITY_COLUMNS: [Column; 2] = [CLASS_SUCCESS_FRACTION, CLASS_PRIORITY_SHED];

/// The columns of request classes.
pub(crate) const CRITICALITY_GROUP: Group = Group {
    name: "criticality",
    instances: Instances::Suffixed {
        names: class_names,
        template: "<class>",
    },
    summary: &CRITICALITY_COLUMNS,
    cells: class_cells,
    series: &[],
    series_cells: no_series,
    file: None,
    note: "",
};

fn class_names(scn: &Scenario) -> Vec<String> {
    scn.criticality_classes()
        .into_iter()
        .map(|c| c.name().to_string())
        .collect()
}

/// A class the run's scenario lacks has empty cells.
fn class_cells(m: &RunMetrics, scn: &Scenario, name: &str, out: &mut Vec<Cell>) {
    let Some(class) = Criticality::ALL.into_iter().find(|c| c.name() == name) else {
        out.extend([Cell::Empty, Cell::Empty]);
        return;
    };
    let (mut logical, mut succeeded) = (0u64, 0u64);
    for (f, t) in scn.fleets.iter().zip(&m.totals.fleets) {
        if f.class() == class {
            logical += t.logical;
            succeeded += t.succeeded;
        }
    }
    let present = scn.criticality_classes().contains(&class);
    out.extend([
        Cell::ratio(succeeded as f64, logical as f64),
        if present {
            Cell::Int(m.priority_shed[class as usize])
        } else {
            Cell::Empty
        },
    ]);
}
