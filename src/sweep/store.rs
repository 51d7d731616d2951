//! Finished runs on disk, one folder each (`runs/000042/`), written atomically: the
//! files go to a temporary folder that is then renamed. A sweep that is killed leaves
//! whole runs or nothing; running it again skips the runs already there. The final
//! tables are the runs' rows concatenated in plan order, so they are the same bytes
//! whatever order the runs finished in, and whichever shard ran them.

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};

use crate::export::csv::{
    dictionary, herd_rows, ordinal_rows, record, services_rows, spreadsheet_safe, summary_row,
    timeseries_header, timeseries_rows_laid, ATTEMPTS_BY_ORDINAL_COLUMNS, HERD_COLUMNS,
};
use crate::export::AtomicFile;
use crate::metrics::columns::{param_column, TRUNCATED};
use crate::metrics::columns::{COLUMNS_FILE, SERVICES_FILE, SERVICE_GROUP};
use crate::metrics::summary::{Cell, Summary};
use crate::run::RunResult;
use crate::scenario::Scenario;

use super::aggregate::{Aggregator, CellLines};
use super::plan::{render_value, Plan};

/// Folder of finished runs inside a sweep folder.
pub(crate) const RUNS_DIR: &str = "runs";

/// The rows one run contributes to each table.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Chunk {
    /// Its `summary.csv` row.
    pub summary: String,
    /// Its `timeseries.csv` rows.
    pub timeseries: String,
    /// Its `herd.csv` rows.
    pub herd: String,
    /// Its `attempts_by_ordinal.csv` rows.
    pub ordinals: String,
    /// Its `services.csv` rows (empty unless the scenario is a service graph).
    pub services: String,
}

/// Renders the rows of a finished run of `plan`, whose cell's scenario is `scn`.
pub(crate) fn render_chunk(plan: &Plan, r: &RunResult, scn: &Scenario) -> Chunk {
    Chunk {
        summary: summary_row(&summary_of(plan, r), &plan.columns),
        timeseries: timeseries_rows_laid(
            r,
            scn.dependency.servers,
            &plan.layout.series_groups(scn),
        ),
        herd: herd_rows(r),
        ordinals: ordinal_rows(r),
        services: if scn.graph {
            let names: Vec<String> = scn.services.iter().map(|s| s.name.clone()).collect();
            services_rows(r, &names, &plan.layout.file_groups(SERVICES_FILE))
        } else {
            String::new()
        },
    }
}

/// The summary of a finished run of `plan` with its cell's `param_` columns: the
/// cells of its `summary.csv` row.
pub(crate) fn summary_of(plan: &Plan, r: &RunResult) -> Summary {
    let ci = plan.spec(r.run).cell;
    let cell = &plan.cells[ci];
    let mut s = r.summary.clone();
    for ((a, v), label) in plan.axes.iter().zip(&cell.values).zip(plan.labels(ci)) {
        let text = label.to_string();
        // A swept string or a label is text the user wrote: a spreadsheet must not
        // run it.
        let written = (v.is_integer() || v.is_float() || v.is_bool()) && text == render_value(v);
        let text = if written {
            text
        } else {
            spreadsheet_safe(text)
        };
        s.push(param_column(&a.key), Cell::Text(text));
    }
    s
}

/// Whether a run's summary row says it stopped at a limit (`truncated = true`).
pub(crate) fn truncated(plan: &Plan, c: &Chunk) -> bool {
    let Some(i) = plan.columns.iter().position(|col| col == TRUNCATED.name) else {
        return false;
    };
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(c.summary.as_bytes())
        .records()
        .next()
        .and_then(Result::ok)
        .is_some_and(|r| r.get(i) == Some("true"))
}

/// What a finished run of a cell writes besides its summary row: its time-series rows
/// (`ceil(duration / bucket)`, fewer only for a run stopped at a limit) and its
/// `services.csv` rows (that many per service of a service graph).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    /// Time-series rows.
    pub series: u64,
    /// Services of a service graph (0 without one).
    pub services: u64,
}

impl Shape {
    /// The shape of a run of `scn`.
    pub(crate) fn of(scn: &Scenario) -> Shape {
        Shape {
            series: scn.duration.div_ceil(scn.bucket.max(1)),
            services: if scn.graph {
                scn.services.len() as u64
            } else {
                0
            },
        }
    }
}

/// The records of one of a run's files: each must be whole (the file ends with a line
/// end), have `width` fields and start with the run's index. Returns how many.
fn records(file: &str, text: &str, width: usize, run: u64) -> Result<u64, String> {
    if !text.is_empty() && !text.ends_with('\n') {
        return Err(format!(
            "{file} is cut short: its last line has no line end"
        ));
    }
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let want = run.to_string();
    let mut n = 0;
    for rec in rdr.records() {
        n += 1;
        let rec = rec.map_err(|e| format!("{file}, row {n}: not CSV ({e})"))?;
        if rec.len() != width {
            return Err(format!(
                "{file}, row {n}: {} fields, expected {width} (the row is cut short or not this sweep's)",
                rec.len()
            ));
        }
        if rec.get(0) != Some(want.as_str()) {
            return Err(format!(
                "{file}, row {n}: run '{}', expected {run}",
                crate::scenario::error::shown(rec.get(0).unwrap_or(""))
            ));
        }
    }
    Ok(n)
}

/// Fields of a header line.
fn width(header: &str) -> usize {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(header.as_bytes())
        .records()
        .next()
        .and_then(Result::ok)
        .map_or(0, |r| r.len())
}

/// Checks that run `run` of `plan`, whose cell's runs have `shape`, wrote whole files:
/// its one summary row (with its run index), the expected number of time-series and
/// services rows, and whole rows of this run in every file. The error names the file
/// and what is wrong with it.
pub(crate) fn check_chunk(plan: &Plan, run: u64, shape: Shape, c: &Chunk) -> Result<(), String> {
    let rows = records("summary.csv", &c.summary, plan.columns.len(), run)?;
    if rows != 1 {
        return Err(format!("summary.csv has {rows} rows, expected 1"));
    }
    let stopped = truncated(plan, c);
    let expect = |file: &str, found: u64, want: u64| {
        if found == want || (stopped && found <= want && (found > 0 || want == 0)) {
            Ok(())
        } else if stopped {
            Err(format!(
                "{file} has {found} rows, expected 1 to {want} (the run stopped at a limit)"
            ))
        } else {
            Err(format!("{file} has {found} rows, expected {want}"))
        }
    };
    let series = records(
        "timeseries.csv",
        &c.timeseries,
        width(&timeseries_header_of(plan)),
        run,
    )?;
    expect(
        "timeseries.csv (one row per bucket: duration / bucket)",
        series,
        shape.series,
    )?;
    records("herd.csv", &c.herd, HERD_COLUMNS.len(), run)?;
    records(
        "attempts_by_ordinal.csv",
        &c.ordinals,
        ATTEMPTS_BY_ORDINAL_COLUMNS.len(),
        run,
    )?;
    let services = records(SERVICES_FILE, &c.services, services_width(plan), run)?;
    expect(
        "services.csv (one row per bucket and service)",
        services,
        shape.series * shape.services,
    )
}

/// The columns of `services.csv` in a run of `plan`.
fn services_width(plan: &Plan) -> usize {
    plan.layout
        .file_groups(SERVICES_FILE)
        .iter()
        .map(|g| g.columns.len())
        .sum()
}

/// The folder of run `run`.
pub(crate) fn chunk_dir(dir: &Path, run: u64) -> PathBuf {
    dir.join(RUNS_DIR).join(format!("{run:06}"))
}

/// Writes a run's rows atomically: into a `.tmp-*` folder, renamed `runs/NNNNNN` when
/// whole.
pub(crate) fn write_chunk(dir: &Path, run: u64, c: &Chunk) -> io::Result<()> {
    let runs = dir.join(RUNS_DIR);
    std::fs::create_dir_all(&runs)?;
    let tmp = runs.join(crate::export::atomic::tmp_name(&format!("{run:06}")));
    std::fs::create_dir(&tmp)?;
    for (name, text) in [
        ("summary.csv", &c.summary),
        ("timeseries.csv", &c.timeseries),
        ("herd.csv", &c.herd),
        ("attempts_by_ordinal.csv", &c.ordinals),
    ] {
        std::fs::write(tmp.join(name), text)?;
    }
    if !c.services.is_empty() {
        std::fs::write(tmp.join(SERVICES_FILE), &c.services)?;
    }
    let fin = chunk_dir(dir, run);
    match std::fs::rename(&tmp, &fin) {
        Ok(()) => Ok(()),
        Err(_) if fin.exists() => std::fs::remove_dir_all(&tmp),
        Err(e) => Err(e),
    }
}

/// Reads a run's rows: regular files only, each of at most
/// [`MAX_TABLE_BYTES`](crate::export::read::MAX_TABLE_BYTES); an error names the file
/// from the sweep's folder on (`runs/000004/summary.csv: ...`).
pub(crate) fn read_chunk(dir: &Path, run: u64) -> io::Result<Chunk> {
    use crate::export::read;
    let d = chunk_dir(dir, run);
    let read = |n: &str| {
        read::read_to_string(&d.join(n), read::MAX_TABLE_BYTES)
            .map_err(|e| io::Error::new(e.kind(), format!("{RUNS_DIR}/{run:06}/{n}: {e}")))
    };
    Ok(Chunk {
        summary: read("summary.csv")?,
        timeseries: read("timeseries.csv")?,
        herd: read("herd.csv")?,
        ordinals: read("attempts_by_ordinal.csv")?,
        services: match read(SERVICES_FILE) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e),
        },
    })
}

/// Whether a run's files could not be read because they are not whole: one missing,
/// one that is not text, a run folder that is not a folder.
pub(crate) fn unfinished(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::InvalidData | io::ErrorKind::NotADirectory
    )
}

/// What is wrong with the files of run `run` in `dir` (`None` when they are whole):
/// see [`check_chunk`].
pub(crate) fn check_run(
    dir: &Path,
    plan: &Plan,
    run: u64,
    shape: Shape,
) -> io::Result<Option<String>> {
    match read_chunk(dir, run) {
        Ok(c) => Ok(check_chunk(plan, run, shape, &c).err()),
        Err(e) if unfinished(&e) => Ok(Some(format!("cannot read it: {e}"))),
        Err(e) => Err(e),
    }
}

/// Removes the folder of a run whose files are not whole, so that it runs again: it
/// is renamed to a temporary name first (a leftover is removed at the next start).
pub(crate) fn discard_chunk(dir: &Path, run: u64) -> io::Result<()> {
    let d = chunk_dir(dir, run);
    let tmp = dir
        .join(RUNS_DIR)
        .join(crate::export::atomic::tmp_name(&format!("{run:06}")));
    std::fs::rename(&d, &tmp)?;
    std::fs::remove_dir_all(&tmp)
}

/// The runs finished in a folder (leftover temporary folders are removed).
pub(crate) fn done_runs(dir: &Path) -> io::Result<BTreeSet<u64>> {
    let mut done = BTreeSet::new();
    let runs = dir.join(RUNS_DIR);
    if !runs.exists() {
        return Ok(done);
    }
    for e in std::fs::read_dir(&runs)? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        if crate::export::owner::is_tmp_name(&name) {
            let _ = std::fs::remove_dir_all(e.path());
        } else if let Ok(n) = name.parse::<u64>() {
            done.insert(n);
        }
    }
    Ok(done)
}

/// The files a folder's tables are, with its manifest ([`Tables`] writes the rest);
/// `aggregate.csv` and `aggregate_long.csv` when `aggregate`, `services.csv` when
/// `graph`.
pub(crate) fn table_files(aggregate: bool, graph: bool) -> Vec<String> {
    let mut f: Vec<&str> = vec![
        "manifest.toml",
        "summary.csv",
        "timeseries.csv",
        "herd.csv",
        "attempts_by_ordinal.csv",
        COLUMNS_FILE,
    ];
    if graph {
        f.push(SERVICES_FILE);
    }
    if aggregate {
        f.extend(["aggregate.csv", "aggregate_long.csv"]);
    }
    f.into_iter().map(String::from).collect()
}

/// The header line of the `timeseries.csv` of a folder of `plan`'s runs.
pub(crate) fn timeseries_header_of(plan: &Plan) -> String {
    timeseries_header(&plan.layout)
}

/// The header line of `herd.csv`.
pub(crate) fn herd_header() -> String {
    record(HERD_COLUMNS)
}

/// The tables of a folder being written, a run's rows at a time in plan order, so
/// memory does not grow with the number of runs or the horizon. Committed whole, or
/// not at all.
#[derive(Debug)]
pub(crate) struct Tables {
    summary: AtomicFile,
    timeseries: AtomicFile,
    herd: AtomicFile,
    ordinals: AtomicFile,
    services: Option<AtomicFile>,
    columns: AtomicFile,
    aggregate: Option<Aggregate>,
}

/// `aggregate.csv` and `aggregate_long.csv` being written, and their cell's state.
#[derive(Debug)]
struct Aggregate {
    wide: AtomicFile,
    long: AtomicFile,
    cells: Aggregator,
}

impl Aggregate {
    fn create(dir: &Path, plan: &Plan) -> io::Result<Aggregate> {
        let cells = Aggregator::new(&plan.columns, plan.replications as usize);
        let mut wide = AtomicFile::create(&dir.join("aggregate.csv"))?;
        let mut long = AtomicFile::create(&dir.join("aggregate_long.csv"))?;
        wide.write_all(cells.header().as_bytes())?;
        long.write_all(cells.long_header().as_bytes())?;
        Ok(Aggregate { wide, long, cells })
    }

    fn write(&mut self, lines: Option<CellLines>) -> io::Result<()> {
        if let Some(l) = lines {
            self.wide.write_all(l.wide.as_bytes())?;
            self.long.write_all(l.long.as_bytes())?;
        }
        Ok(())
    }
}

impl Tables {
    /// Starts the tables of `plan` in `dir`; `aggregate.csv` and `aggregate_long.csv`
    /// too when `aggregate`.
    pub(crate) fn create(dir: &Path, plan: &Plan, aggregate: bool) -> io::Result<Tables> {
        let mut summary = AtomicFile::create(&dir.join("summary.csv"))?;
        let mut timeseries = AtomicFile::create(&dir.join("timeseries.csv"))?;
        let mut herd = AtomicFile::create(&dir.join("herd.csv"))?;
        summary.write_all(record(&plan.columns).as_bytes())?;
        timeseries.write_all(timeseries_header_of(plan).as_bytes())?;
        herd.write_all(herd_header().as_bytes())?;
        let mut ordinals = AtomicFile::create(&dir.join("attempts_by_ordinal.csv"))?;
        ordinals.write_all(record(ATTEMPTS_BY_ORDINAL_COLUMNS).as_bytes())?;
        let services = if !plan.layout.uses(&SERVICE_GROUP) {
            None
        } else {
            let mut f = AtomicFile::create(&dir.join(SERVICES_FILE))?;
            let header: Vec<&str> = plan
                .layout
                .file_groups(SERVICES_FILE)
                .iter()
                .flat_map(|g| g.columns.iter().map(|c| c.name))
                .collect();
            f.write_all(record(&header).as_bytes())?;
            Some(f)
        };
        // The dictionary of exactly these tables.
        let mut columns = AtomicFile::create(&dir.join(COLUMNS_FILE))?;
        columns.write_all(dictionary(&plan.dictionary(aggregate)).as_bytes())?;
        let aggregate = if aggregate {
            Some(Aggregate::create(dir, plan)?)
        } else {
            None
        };
        Ok(Tables {
            summary,
            timeseries,
            herd,
            ordinals,
            services,
            columns,
            aggregate,
        })
    }

    /// Appends the rows of the next run.
    pub(crate) fn push(&mut self, c: &Chunk) -> io::Result<()> {
        self.summary.write_all(c.summary.as_bytes())?;
        self.timeseries.write_all(c.timeseries.as_bytes())?;
        self.herd.write_all(c.herd.as_bytes())?;
        self.ordinals.write_all(c.ordinals.as_bytes())?;
        if let Some(f) = &mut self.services {
            f.write_all(c.services.as_bytes())?;
        }
        if let Some(a) = &mut self.aggregate {
            let mut rdr = csv::ReaderBuilder::new()
                .has_headers(false)
                .from_reader(c.summary.as_bytes());
            for rec in rdr.records() {
                let rec = rec.map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                let fields: Vec<String> = rec.iter().map(str::to_string).collect();
                let lines = a.cells.push(&fields);
                a.write(lines)?;
            }
        }
        Ok(())
    }

    /// Renames every table into place.
    pub(crate) fn commit(self) -> io::Result<()> {
        self.summary.commit()?;
        self.timeseries.commit()?;
        if let Some(f) = self.services {
            f.commit()?;
        }
        self.herd.commit()?;
        self.ordinals.commit()?;
        self.columns.commit()?;
        if let Some(mut a) = self.aggregate {
            let lines = a.cells.finish();
            a.write(lines)?;
            a.wide.commit()?;
            a.long.commit()?;
        }
        Ok(())
    }
}

/// Writes the tables of `runs` (in the order given) into `dir`, streaming: one run's
/// rows at a time come from `chunk`. `aggregate.csv` and `aggregate_long.csv` are
/// written when `aggregate` is set.
pub(crate) fn write_tables(
    dir: &Path,
    plan: &Plan,
    runs: &[u64],
    mut chunk: impl FnMut(u64) -> io::Result<Chunk>,
    aggregate: bool,
) -> io::Result<()> {
    let mut t = Tables::create(dir, plan, aggregate)?;
    for &run in runs {
        t.push(&chunk(run)?)?;
    }
    t.commit()
}
