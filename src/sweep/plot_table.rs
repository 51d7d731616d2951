//! The `[plot]` table of the manifest of a folder of a plan
//! ([`crate::export::manifest::Plot`]): what its charts and report need beyond its CSV
//! files, worked out from the plan when the folder is written, so `retrysim plot`
//! never reads the scenario again.

use crate::check::{resolve, Expectation};
use crate::export::manifest::{
    cell_worst_case, shapes_attempts, Expect, ExpectPer, FolderKind, GraphShape, Plot,
    MAX_WORST_CASE_CELLS,
};
use crate::scenario::file::Per;
use crate::scenario::ScenarioError;

use super::Plan;

/// The `[plot]` table of a `kind` folder of `plan`: a sweep's grid, its N^L per cell
/// (when a key shapes the retry stack, every cell of a grid of at most
/// [`MAX_WORST_CASE_CELLS`] is built) and its expectations; a run folder's expectations (those
/// that select sweep cells left out and counted) and, for a service graph, its shape.
pub(crate) fn of(plan: &Plan, kind: FolderKind) -> Result<Plot, ScenarioError> {
    let mut p = Plot {
        labels: plan.axes.iter().map(|a| a.labels.clone()).collect(),
        ..Plot::default()
    };
    match kind {
        // N^L only for the chart that draws it: when a key shapes the retry stack,
        // and the grid is small enough to build every cell of.
        FolderKind::Sweep if plan.axes.iter().any(|a| shapes_attempts(&a.key)) => {
            if plan.cells.len() <= MAX_WORST_CASE_CELLS {
                p.worst_case_attempts = plan.map_cells(|l| cell_worst_case(&l.scenario))?;
            } else {
                p.worst_case_cells = plan.cells.len() as u64;
            }
        }
        FolderKind::Sweep => {}
        FolderKind::Run => {
            let scn = &plan.base.scenario;
            p.graph = scn.graph.then(|| GraphShape::of(scn));
        }
    }
    // A run folder has no grid: its expectations that select cells are left out, and
    // the rest are resolved (and named in errors) as the list without them.
    // (A sweep's plan is used as it is: a clone would copy its every cell.)
    let all = plan.base.file.expect.len();
    let mut original: Vec<usize> = (0..all).collect();
    let run_plan;
    let kept = if kind == FolderKind::Run {
        let mut k = plan.clone();
        original.retain(|&i| plan.base.file.expect[i].where_.is_none());
        k.base.file.expect.retain(|e| e.where_.is_none());
        p.expect_skipped = (all - original.len()) as u64;
        run_plan = k;
        &run_plan
    } else {
        plan
    };
    match resolve(kept) {
        Ok(resolved) => {
            p.expect = resolved
                .iter()
                .map(|e| record(plan, e, original[e.index]))
                .collect();
        }
        Err(e) => p.expect_error = Some(e.to_string()),
    }
    Ok(p)
}

/// The record of a resolved expectation, `index` in the scenario's list: the cells
/// it selects as the labels of each swept key's selected values, a key whose every
/// value is selected left out (the cells resolved are a product over the keys).
fn record(plan: &Plan, e: &Expectation, index: usize) -> Expect {
    let mut select = toml::Table::new();
    for (a, axis) in plan.axes.iter().enumerate() {
        let mut picked = vec![false; axis.values.len()];
        for &c in &e.cells {
            picked[plan.cells[c].picks[a]] = true;
        }
        if picked.iter().all(|p| *p) {
            continue;
        }
        let labels = axis
            .labels
            .iter()
            .zip(&picked)
            .filter(|(_, p)| **p)
            .map(|(l, _)| toml::Value::String(l.clone()))
            .collect();
        select.insert(axis.key.clone(), toml::Value::Array(labels));
    }
    Expect {
        index: index as u64,
        metric: e.metric.clone(),
        min: e.min,
        max: e.max,
        per: match e.per {
            Per::Cell => ExpectPer::Cell,
            Per::Run => ExpectPer::Run,
        },
        select,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::manifest::Limit;
    use crate::scenario::{load, Source};
    use crate::sweep::plan::plan;

    const BASE: &str = "duration = \"1s\"\nreplications = 2\n[dependency]\nservers = 2\nservice_time = \"10ms\"\n[[fleets]]\nname = \"a\"\narrival = { kind = \"poisson\", rate = 10 }\n[[fleets.layers]]\nmax_attempts = 3\n";

    fn plan_of(text: &str) -> Plan {
        let src = Source {
            path: "s.toml".into(),
            stem: "s".into(),
            text: format!("{BASE}{text}"),
        };
        plan(load(src, &[]).expect("loads")).expect("plans")
    }

    #[test]
    fn a_sweep_records_its_grid_each_cell_s_worst_case_and_each_expectation_s_cells() {
        let p = plan_of(
            "[sweep]\n\"fleets.0.layers.0.max_attempts\" = [1, { label = \"five\", value = 5 }, \"unlimited\"]\n\"fleets.0.arrival.rate\" = [10, 20]\n\
             [[expect]]\nmetric = \"amplification\"\nmax = 2\nper = \"run\"\nwhere = { \"fleets.0.layers.0.max_attempts\" = 5 }\n\
             [[expect]]\nmetric = \"success_fraction\"\nmin = 0.5\nwhere = { \"fleets.0.arrival.rate\" = 20, \"fleets.0.layers.0.max_attempts\" = \"five\" }\n\
             [[expect]]\nmetric = \"success_fraction\"\nmin = 0.1\n",
        );
        let t = of(&p, FolderKind::Sweep).unwrap();
        assert_eq!(
            t.labels,
            vec![vec!["1", "five", "unlimited"], vec!["10", "20"]]
        );
        let f = Limit::Finite;
        assert_eq!(
            t.worst_case_attempts,
            vec![
                f(1.0),
                f(1.0),
                f(5.0),
                f(5.0),
                Limit::Unlimited,
                Limit::Unlimited
            ]
        );
        assert_eq!(t.expect.len(), 3);
        let labels = |e: &Expect, k: &str| e.select.get(k).map(ToString::to_string);
        let (k0, k1) = ("fleets.0.layers.0.max_attempts", "fleets.0.arrival.rate");
        assert_eq!(t.expect[0].per, ExpectPer::Run);
        assert_eq!(labels(&t.expect[0], k0).as_deref(), Some("[\"five\"]"));
        assert_eq!(labels(&t.expect[0], k1), None);
        assert_eq!(labels(&t.expect[1], k0).as_deref(), Some("[\"five\"]"));
        assert_eq!(labels(&t.expect[1], k1).as_deref(), Some("[\"20\"]"));
        assert!(t.expect[2].select.is_empty());
        assert_eq!(
            (t.expect[2].index, t.expect[2].min, t.expect[2].max),
            (2, Some(0.1), None)
        );
        assert_eq!((t.expect_error, t.expect_skipped, t.graph), (None, 0, None));
    }

    #[test]
    fn a_run_folder_leaves_out_and_counts_the_expectations_that_select_cells() {
        let p = plan_of(
            "[[expect]]\nmetric = \"amplification\"\nmax = 2\nwhere = { \"x\" = 1 }\n\
             [[expect]]\nmetric = \"success_fraction\"\nmin = 0.5\n",
        );
        let t = of(&p, FolderKind::Run).unwrap();
        assert!(t.labels.is_empty() && t.worst_case_attempts.is_empty());
        assert_eq!(t.expect_skipped, 1);
        assert_eq!(t.expect.len(), 1);
        // Its index in the scenario's list, not in the list of those kept.
        assert_eq!(t.expect[0].index, 1);
        assert_eq!(t.expect[0].metric, "success_fraction");
        // Not a service graph: no shape.
        assert_eq!(t.graph, None);
    }

    #[test]
    fn an_expectation_that_does_not_resolve_is_recorded_as_check_words_it() {
        let p = plan_of("[[expect]]\nmetric = \"nope\"\nmax = 1\n");
        let t = of(&p, FolderKind::Run).unwrap();
        let e = t.expect_error.unwrap();
        assert!(
            e.starts_with("scenario 's.toml': expect[0].metric: no summary column 'nope'"),
            "{e}"
        );
        assert_eq!(e, resolve(&p).unwrap_err().to_string());
        assert!(t.expect.is_empty());
    }
}
