//! Optional column groups: the columns a mechanism (a queue fleet, bulkheads, pools,
//! hedging, a service graph, several fleets) adds to the results files only when a
//! scenario, or a cell of a sweep, uses it.
//!
//! A group is one [`Group`] value, defined beside the mechanism's columns, and one line
//! of [`GROUPS`]. Everything that lays out, fills, lists or reads these columns loops
//! over that table: the summary header and its union over a sweep
//! ([`Layout`](crate::metrics::summary::Layout)), the summary row
//! ([`Summary::build`](crate::metrics::summary::Summary::build)), the `timeseries.csv`
//! header and rows, the dictionary ([`dictionary`](super::dictionary())) and the
//! catalog lookup the readers use ([`summary_column`](super::summary_column)).

use super::*;
use crate::metrics::summary::Cell;
use crate::metrics::RunMetrics;
use crate::model::config::Scenario;

/// How many times a group's columns are written, and under which names.
#[derive(Debug, Clone, Copy)]
pub enum Instances {
    /// Once, each column under its own name, when the scenario uses the mechanism.
    Once(fn(&Scenario) -> bool),
    /// Once per name `names` gives (a fleet's, a service's; none when the scenario does
    /// not use the group), each column as `<prefix><name>_<column>`.
    Named {
        /// The start of every column's name (`fleet_`).
        prefix: &'static str,
        /// The names of the scenario's instances, in order.
        names: fn(&Scenario) -> Vec<String>,
    },
    /// Once per name `names` gives (none when the scenario does not use the group),
    /// each column as `<column>_<name>` (`success_fraction_critical`).
    Suffixed {
        /// The names of the scenario's instances, in order.
        names: fn(&Scenario) -> Vec<String>,
        /// What the dictionary writes for the name without a scenario (`<class>`).
        template: &'static str,
    },
}

/// A results file a group brings with it (`services.csv`), or the columns it adds to
/// one another group brings: the file's header is the columns of every group used
/// that names it, in [`GROUPS`] order, and the first of them opens it.
#[derive(Debug, Clone, Copy)]
pub struct GroupFile {
    /// Its name.
    pub name: &'static str,
    /// Its columns, in order.
    pub columns: &'static [Column],
    /// Pushes the cells of one row, one per column (empty cells when the run's
    /// scenario does not use the group).
    pub cells: fn(&RunMetrics, &FileRow, &mut Vec<Cell>),
}

/// Which row of a group's file is written: one per run, bucket and service.
#[derive(Debug, Clone, Copy)]
pub struct FileRow<'a> {
    /// The run.
    pub run: u64,
    /// Its replication.
    pub replication: u32,
    /// The bucket's index.
    pub bucket: usize,
    /// The bucket's start, seconds.
    pub t: f64,
    /// The service's index in `[[services]]`.
    pub service: usize,
    /// The service's name.
    pub name: &'a str,
}

/// One optional column group: its columns in each file and how a run fills them.
#[derive(Debug, Clone, Copy)]
pub struct Group {
    /// Its name (`hedging`), unique in [`GROUPS`].
    pub name: &'static str,
    /// Whether, and how many times, a scenario writes it.
    pub instances: Instances,
    /// Its `summary.csv` columns, in order (for [`Instances::Named`], the part after
    /// `<prefix><name>_`).
    pub summary: &'static [Column],
    /// Pushes the summary cells of instance `name` (`""` for [`Instances::Once`]) of a
    /// run of the scenario, one per [`Group::summary`] column. A group written
    /// [`Instances::Once`] is asked only when the run's scenario uses it (its cells
    /// are empty otherwise); a named one for each name of the layout, which the run's
    /// scenario may not have.
    pub cells: fn(&RunMetrics, &Scenario, &str, &mut Vec<Cell>),
    /// Its `timeseries.csv` columns, after the fixed ones and those of the groups
    /// before it (only for [`Instances::Once`]).
    pub series: &'static [Column],
    /// Pushes the `timeseries.csv` cells of bucket `i` of a run whose scenario uses
    /// the group, one per [`Group::series`] column.
    pub series_cells: fn(&RunMetrics, usize, &mut Vec<Cell>),
    /// A results file written only with the group, listed after
    /// `attempts_by_ordinal.csv`.
    pub file: Option<GroupFile>,
    /// What the dictionary adds to each column's description when it lists templates
    /// (`queue fleets only`), or `""`.
    pub note: &'static str,
}

/// Every optional column group, in the order their columns come in each file.
///
/// A new group is one line here, and a [`Group`] beside its mechanism's columns.
pub(crate) const GROUPS: [&Group; 18] = [
    &FLEET_GROUP,
    &GRAPH_GROUP,
    &SERVICE_GROUP,
    &QUEUE_GROUP,
    &BULKHEAD_GROUP,
    &POOL_GROUP,
    &HEDGE_GROUP,
    &ADMISSION_GROUP,
    &TIER_ADMISSION_GROUP,
    &REJECT_GROUP,
    &TIER_REJECT_GROUP,
    &CRITICALITY_GROUP,
    &ADMISSION_DELAY_GROUP,
    &TIER_ADMISSION_DELAY_GROUP,
    &CODEL_GROUP,
    &TIER_CODEL_GROUP,
    &LIMIT_GROUP,
    &TIER_LIMIT_GROUP,
];

/// For a group without `timeseries.csv` columns.
pub(crate) fn no_series(_: &RunMetrics, _: usize, _: &mut Vec<Cell>) {}

impl Group {
    /// The instances of the group scenario `scn` writes: its names, `[""]` for a group
    /// written once, none when `scn` does not use it.
    pub fn instances_of(&self, scn: &Scenario) -> Vec<String> {
        match self.instances {
            Instances::Once(used) => {
                if used(scn) {
                    vec![String::new()]
                } else {
                    Vec::new()
                }
            }
            Instances::Named { names, .. } | Instances::Suffixed { names, .. } => names(scn),
        }
    }

    /// Whether scenario `scn` uses the group.
    pub fn used_by(&self, scn: &Scenario) -> bool {
        match self.instances {
            Instances::Once(used) => used(scn),
            Instances::Named { names, .. } | Instances::Suffixed { names, .. } => {
                !names(scn).is_empty()
            }
        }
    }

    /// The header name of column `c` of instance `name`.
    pub fn column(&self, name: &str, c: &Column) -> String {
        match self.instances {
            Instances::Once(_) => c.name.to_string(),
            Instances::Named { prefix, .. } => format!("{prefix}{name}_{}", c.name),
            Instances::Suffixed { .. } => format!("{}_{name}", c.name),
        }
    }

    /// The instance the dictionary lists without a scenario: `<name>`, or `""`.
    pub fn template(&self) -> &'static str {
        match self.instances {
            Instances::Once(_) => "",
            Instances::Named { .. } => "<name>",
            Instances::Suffixed { template, .. } => template,
        }
    }

    /// The summary cells of instance `name` of a run of `scn`, laid out on
    /// [`Group::summary`], pushed onto `out`.
    pub fn summary_cells(&self, m: &RunMetrics, scn: &Scenario, name: &str, out: &mut Vec<Cell>) {
        let start = out.len();
        match self.instances {
            Instances::Once(used) if !used(scn) => {
                out.resize(start + self.summary.len(), Cell::Empty);
            }
            _ => (self.cells)(m, scn, name, out),
        }
        assert_eq!(
            out.len() - start,
            self.summary.len(),
            "group {}: one cell per column",
            self.name
        );
    }

    /// The catalog entry of summary column `name` if it is one of this group's.
    pub fn find(&self, name: &str) -> Option<&'static Column> {
        match self.instances {
            Instances::Once(_) => self.summary.iter().find(|c| c.name == name),
            Instances::Named { prefix, .. } => {
                let rest = name.strip_prefix(prefix)?;
                self.summary.iter().find(|c| {
                    rest.strip_suffix(c.name)
                        .is_some_and(|f| f.len() > 1 && f.ends_with('_'))
                })
            }
            Instances::Suffixed { .. } => self.summary.iter().find(|c| {
                name.strip_prefix(c.name)
                    .is_some_and(|r| r.len() > 1 && r.starts_with('_'))
            }),
        }
    }
}

/// The index in [`GROUPS`] of the group named like `g`.
pub(crate) fn group_index(g: &Group) -> usize {
    GROUPS
        .iter()
        .position(|x| x.name == g.name)
        .unwrap_or_else(|| unreachable!("group {} is not in GROUPS", g.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_have_unique_names_their_columns_resolve_and_only_plain_ones_have_series() {
        for (i, g) in GROUPS.iter().enumerate() {
            assert!(
                GROUPS[i + 1..].iter().all(|o| o.name != g.name),
                "{}",
                g.name
            );
            assert_eq!(group_index(g), i);
            if !matches!(g.instances, Instances::Once(_)) {
                assert!(g.series.is_empty(), "{}", g.name);
            }
            for c in g.summary {
                let name = g.column(g.template(), c);
                assert!(
                    summary_column(&name).is_some_and(|f| f == c),
                    "{}: {name}",
                    g.name
                );
            }
        }
    }
}
