//! `retrysim search`: the capacity answer. The smallest (or largest) value of one
//! scenario key for which every `[[expect]]` holds, found by bisection.
//!
//! ```text
//! Request ─► prepare: load (with --set, --seed), [sweep] removed, the key and range
//!            checked, both ends built and their expectations resolved   (exit 2)
//!         ─► bisect: the end that must hold, the other end, then midpoints; each value
//!            evaluated as `check` evaluates a scenario (check::check_plan on its
//!            replications, run in memory)
//!         ─► Outcome: the answer and its neighbour (one step past it), with their rows
//! ```
//!
//! # What it assumes
//!
//! Bisection assumes monotonicity: for the smallest value, that once the expectations
//! hold at some value they hold at every larger one (more servers, more headroom); for
//! `--largest`, that they hold up to some value and fail above it (more load). It
//! checks the ends first: when the end that must hold fails, no value in the range
//! does (exit 1); when the other end already holds, it is the answer. Every value runs
//! with the same seeds (common random numbers), so the expectation values vary smoothly
//! with the key and the search is deterministic: same file, same seed, same answer.
//!
//! # The value
//!
//! The value is set as `--set KEY=VALUE` would set it, after the user's `--set`s, on
//! the scenario's base point: a `[sweep]` is removed (as `run` does), unless it sweeps
//! the searched key, which is refused. Integer keys are searched to one step (the
//! neighbour is `answer − 1`, or `+ 1` with `--largest`); float keys to `--tolerance`
//! (the neighbour is within the tolerance of the answer).

use std::path::PathBuf;

use crate::check::{check_plan, resolve, short_keys, CheckRow};
use crate::error::{Error, Truncation};
use crate::metrics::format::shortest;
use crate::scenario::{from_table, load_file, overrides, Loaded, Overrides, ScenarioError};
use crate::sweep::{self, Plan};

/// A value of the searched key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Point {
    /// A whole number (an integer key).
    Int(i64),
    /// A float (a float key).
    Float(f64),
}

impl Point {
    /// The TOML value set at the key.
    pub fn value(self) -> toml::Value {
        match self {
            Point::Int(i) => toml::Value::Integer(i),
            Point::Float(f) => toml::Value::Float(f),
        }
    }

    /// The value as printed: `17`, `0.5`.
    pub fn render(self) -> String {
        match self {
            Point::Int(i) => i.to_string(),
            Point::Float(f) => shortest(f),
        }
    }
}

/// The values searched: whole numbers from `low` to `high`, or floats to a tolerance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Domain {
    /// `low..=high`, one step apart.
    Int {
        /// Lowest value.
        low: i64,
        /// Highest value.
        high: i64,
    },
    /// `[low, high]`, searched until the passing and failing values are within
    /// `tolerance`.
    Float {
        /// Lowest value.
        low: f64,
        /// Highest value.
        high: f64,
        /// Width of the last interval.
        tolerance: f64,
    },
}

impl Domain {
    fn ends(self) -> (Point, Point) {
        match self {
            Domain::Int { low, high } => (Point::Int(low), Point::Int(high)),
            Domain::Float { low, high, .. } => (Point::Float(low), Point::Float(high)),
        }
    }

    /// A value strictly between `a` and `b`, or `None` when they are one step (or the
    /// tolerance) apart.
    fn between(self, a: Point, b: Point) -> Option<Point> {
        match (self, a, b) {
            (Domain::Int { .. }, Point::Int(a), Point::Int(b)) => {
                let (lo, hi) = (i128::from(a.min(b)), i128::from(a.max(b)));
                (hi - lo > 1).then(|| Point::Int((lo + (hi - lo) / 2) as i64))
            }
            (Domain::Float { tolerance, .. }, Point::Float(a), Point::Float(b)) => {
                let (lo, hi) = (a.min(b), a.max(b));
                let mid = lo + (hi - lo) / 2.0;
                (hi - lo > tolerance && mid > lo && mid < hi).then_some(Point::Float(mid))
            }
            _ => None,
        }
    }
}

/// What a bisection found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bisection {
    /// The answer, and the value one step past it that fails (none when the answer is
    /// the far end of the range).
    Found {
        /// The smallest (largest) value that holds.
        answer: Point,
        /// The failing value one step (or the tolerance) below (above) it.
        neighbour: Option<Point>,
    },
    /// The end of the range that must hold does not: no value in the range holds.
    NoneHolds {
        /// That end.
        at: Point,
    },
}

/// Bisects `domain` for the smallest value (the largest with `largest`) at which
/// `holds` is true, assuming it is true from some value on (up to some value).
///
/// ```
/// use retrysim::search::{bisect, Bisection, Domain, Point};
/// let mut tried = vec![];
/// let found = bisect(Domain::Int { low: 1, high: 200 }, false, |p| {
///     tried.push(p);
///     Ok::<_, ()>(matches!(p, Point::Int(c) if c >= 17))
/// });
/// assert_eq!(found, Ok(Bisection::Found { answer: Point::Int(17), neighbour: Some(Point::Int(16)) }));
/// assert_eq!(tried[..2], [Point::Int(200), Point::Int(1)]);
/// ```
pub fn bisect<E>(
    domain: Domain,
    largest: bool,
    mut holds: impl FnMut(Point) -> Result<bool, E>,
) -> Result<Bisection, E> {
    let (low, high) = domain.ends();
    // `near`: the end that must hold; `far`: the answer when it holds too.
    let (near, far) = if largest { (low, high) } else { (high, low) };
    if !holds(near)? {
        return Ok(Bisection::NoneHolds { at: near });
    }
    if near == far || holds(far)? {
        return Ok(Bisection::Found {
            answer: far,
            neighbour: None,
        });
    }
    let (mut pass, mut fail) = (near, far);
    while let Some(mid) = domain.between(pass, fail) {
        if holds(mid)? {
            pass = mid;
        } else {
            fail = mid;
        }
    }
    Ok(Bisection::Found {
        answer: pass,
        neighbour: Some(fail),
    })
}

/// What to search.
#[derive(Debug, Clone)]
pub struct Request {
    /// The scenario file.
    pub scenario: PathBuf,
    /// `--set` overrides and `--seed`, applied before the searched value.
    pub overrides: Overrides,
    /// The dotted key searched (`dependency.servers`).
    pub key: String,
    /// The range as typed: `1..200`, `0.5..2.0`.
    pub range: String,
    /// The tolerance of a float key.
    pub tolerance: Option<f64>,
    /// Search for the largest value instead of the smallest.
    pub largest: bool,
    /// Worker threads for the replications (`None` = all cores).
    pub jobs: Option<usize>,
}

/// A search validated before anything runs.
#[derive(Debug)]
pub struct Search {
    /// The scenario with the user's overrides, its `[sweep]` removed.
    pub base: Loaded,
    /// The key searched.
    pub key: String,
    /// The values searched.
    pub domain: Domain,
    /// Searching for the largest value.
    pub largest: bool,
    /// Replications per value.
    pub replications: u32,
    /// Expectations of the scenario.
    pub expectations: usize,
    /// A `[sweep]` was removed.
    pub sweep_removed: bool,
    /// The cell label of a value: `servers=17`.
    short: String,
    jobs: Option<usize>,
}

/// One value tried, and what the expectations found there.
#[derive(Debug, Clone)]
pub struct Probe {
    /// The value.
    pub point: Point,
    /// Whether every expectation holds.
    pub pass: bool,
    /// The check rows (their cell is `servers=17`, or `run 2 (servers=17)`).
    pub rows: Vec<CheckRow>,
}

/// What a search found.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The answer's probe (`None`: no value in the range holds).
    pub answer: Option<Probe>,
    /// The probe one step past the answer (or the failing end when none holds).
    pub neighbour: Option<Probe>,
    /// Every value tried, in order.
    pub probes: Vec<Probe>,
    /// Runs in all (values tried × replications).
    pub runs: u64,
}

fn bad(message: String) -> Error {
    Error::bad_input(message)
}

/// Whether two dotted keys name the same value or one holds the other (`*` matches any
/// segment).
fn overlaps(a: &str, b: &str) -> bool {
    a.split('.')
        .zip(b.split('.'))
        .all(|(x, y)| x == y || x == "*" || y == "*")
}

/// Checks the request against its scenario: every error names the flag or field.
pub fn prepare(req: &Request) -> Result<Search, Error> {
    let key = req.key.trim().to_string();
    if key.is_empty() || key.contains('*') {
        return Err(bad(format!(
            "--key '{key}': name one scenario key by its dotted path, without '*' (e.g. dependency.servers)"
        )));
    }
    for s in &req.overrides.sets {
        if let Ok((k, _)) = overrides::parse_set(s) {
            if overlaps(&k, &key) {
                return Err(bad(format!(
                    "--set {s}: sets the searched key '{key}' (--key): search sets it to each value tried; drop this --set"
                )));
            }
        }
    }
    let mut base = load_file(Some(&req.scenario), &req.overrides)?;
    let path = base.source.path.clone();
    if base.file.expect.is_empty() {
        return Err(bad(format!(
            "scenario '{path}' has no [[expect]]: search finds the value for which every [[expect]] holds (add one, e.g. [[expect]] metric = \"blocking_fraction\" max = 0.01)"
        )));
    }
    for (i, e) in base.file.expect.iter().enumerate() {
        if e.where_.is_some() {
            return Err(bad(format!(
                "scenario '{path}': expect[{i}].where: search runs the base point without its [sweep], so `where` selects nothing (remove it to search)"
            )));
        }
    }
    let sweep_removed = match &base.file.sweep {
        Some(s) => {
            if let Some(swept) = s.keys().find(|k| overlaps(k, &key)) {
                return Err(bad(format!(
                    "scenario '{path}': [sweep] sweeps '{swept}', which --key '{key}' searches: remove it from the [sweep] (or search another key)"
                )));
            }
            true
        }
        None => false,
    };
    base.table.remove("sweep");
    base = from_table(&base.source, base.table.clone())?;
    let found = overrides::get(&base.table, &key).or_else(|| overrides::get(&base.resolved, &key));
    let int = match found {
        Some(toml::Value::Integer(_)) => true,
        Some(toml::Value::Float(_)) => false,
        Some(other) => {
            return Err(bad(format!(
                "--key '{key}': scenario '{path}' holds a {} there ({}), not a number: search varies a numeric key",
                other.type_str(),
                crate::sweep::plan::render_value(other)
            )))
        }
        None => return Err(bad(missing_key(&base, &key))),
    };
    let domain = parse_domain(&req.range, &key, int, req.tolerance)?;
    let short = short_keys(std::slice::from_ref(&key)).remove(0);
    let search = Search {
        replications: base.scenario.replications,
        expectations: base.file.expect.len(),
        base,
        key,
        domain,
        largest: req.largest,
        sweep_removed,
        short,
        jobs: req.jobs,
    };
    // Both ends are valid scenarios (and so, presumably, everything between).
    let (low, high) = domain.ends();
    for (end, p) in [("low", low), ("high", high)] {
        let plan = search.plan(p).map_err(|e| {
            bad(format!(
                "--range {}: the {end} end {} = {}: {e}",
                req.range.trim(),
                search.key,
                p.render()
            ))
        })?;
        resolve(&plan)?;
    }
    Ok(search)
}

/// The message for a key the scenario does not hold: the keys next to it.
fn missing_key(base: &Loaded, key: &str) -> String {
    let path = &base.source.path;
    let (parent, _) = key.rsplit_once('.').unwrap_or(("", key));
    let siblings = if parent.is_empty() {
        Some(&base.resolved)
    } else {
        overrides::get(&base.resolved, parent).and_then(|v| v.as_table())
    };
    let known = siblings.map(|t| {
        let numeric: Vec<&str> = t
            .iter()
            .filter(|(_, v)| v.is_integer() || v.is_float())
            .map(|(k, _)| k.as_str())
            .collect();
        if numeric.is_empty() {
            String::new()
        } else {
            format!(
                " (numeric keys {}: {})",
                if parent.is_empty() {
                    "at the top level".to_string()
                } else {
                    format!("of {parent}")
                },
                numeric.join(", ")
            )
        }
    });
    format!(
        "--key '{key}': scenario '{path}' has no such key{}; give it a value in the file (or with --set) to search it",
        known.unwrap_or_default()
    )
}

/// Reads `--range LOW..HIGH` for an integer or a float key, with its `--tolerance`.
fn parse_domain(
    range: &str,
    key: &str,
    int: bool,
    tolerance: Option<f64>,
) -> Result<Domain, Error> {
    let range = range.trim();
    let Some((lo, hi)) = range.split_once("..") else {
        return Err(bad(format!(
            "--range '{range}': expected LOW..HIGH (e.g. 1..200, or 0.5..2.0 for a float key)"
        )));
    };
    let (lo, hi) = (lo.trim(), hi.trim());
    let domain = if int {
        if tolerance.is_some() {
            return Err(bad(format!(
                "--tolerance: '{key}' is an integer key, searched to one step: drop --tolerance (or write the key as a float, e.g. --set {key}=100.0, to search it to a tolerance)"
            )));
        }
        let whole = |s: &str| {
            s.parse::<i64>().map_err(|_| {
                bad(format!(
                    "--range '{range}': '{key}' is an integer key: both ends must be whole numbers (found '{s}')"
                ))
            })
        };
        let (low, high) = (whole(lo)?, whole(hi)?);
        if low > high {
            return Err(bad(format!(
                "--range '{range}': the low end must be at most the high end (found {low} > {high})"
            )));
        }
        Domain::Int { low, high }
    } else {
        let Some(tolerance) = tolerance else {
            return Err(bad(format!(
                "--tolerance: '{key}' is a float key: give the width to search it to (e.g. --tolerance 0.01)"
            )));
        };
        let number = |s: &str| match s.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(x),
            _ => Err(bad(format!(
                "--range '{range}': both ends must be finite numbers (found '{s}')"
            ))),
        };
        let (low, high) = (number(lo)?, number(hi)?);
        if low > high {
            return Err(bad(format!(
                "--range '{range}': the low end must be at most the high end (found {} > {})",
                shortest(low),
                shortest(high)
            )));
        }
        Domain::Float {
            low,
            high,
            tolerance,
        }
    };
    Ok(domain)
}

/// Reads `--tolerance`: a positive finite number.
pub fn parse_tolerance(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(format!(
            "must be a positive number, the width of the last interval of a float key (found '{}')",
            crate::scenario::error::shown(s)
        )),
    }
}

impl Search {
    /// The plan of one value: the base point with the value set at the key.
    fn plan(&self, p: Point) -> Result<Plan, ScenarioError> {
        let mut table = self.base.table.clone();
        overrides::apply(&mut table, &self.key, p.value()).map_err(|message| {
            ScenarioError::Override {
                path: self.base.source.path.clone(),
                key: self.key.clone(),
                message,
            }
        })?;
        sweep::plan(from_table(&self.base.source, table)?)
    }

    /// Runs the replications at `p` and checks the expectations there.
    fn evaluate(&self, p: Point, pool: Option<&rayon::ThreadPool>) -> Result<Probe, Error> {
        let plan = self.plan(p)?;
        let expectations = resolve(&plan)?;
        let results = sweep::install(pool, || sweep::run_in_memory(&plan))?;
        let stopped = crate::run::stopped_at_limits(&results);
        if let Some(t) = Truncation::of(
            format!(
                "scenario '{}' at {} = {}",
                self.base.source.path,
                self.key,
                p.render()
            ),
            results.len() as u64,
            stopped,
            "the summary is incomplete, so the search cannot go on (raise [limits] or shorten the scenario)".into(),
        ) {
            return Err(Error::Stopped(t));
        }
        let label = format!("{}={}", self.short, p.render());
        let mut rows = check_plan(&plan, &expectations, &results);
        for r in &mut rows {
            r.cell = if r.cell == "-" {
                label.clone()
            } else {
                format!("{} ({label})", r.cell)
            };
        }
        Ok(Probe {
            point: p,
            pass: !rows.is_empty() && rows.iter().all(|r| r.pass),
            rows,
        })
    }

    /// Bisects; `on_probe` is told of each value tried when its runs are checked.
    pub fn run(&self, on_probe: &mut dyn FnMut(&Probe)) -> Result<Outcome, Error> {
        let pool = sweep::pool(self.jobs)?;
        let mut probes: Vec<Probe> = Vec::new();
        let found = bisect(self.domain, self.largest, |p| {
            let probe = self.evaluate(p, pool.as_ref())?;
            on_probe(&probe);
            let pass = probe.pass;
            probes.push(probe);
            Ok::<_, Error>(pass)
        })?;
        let at = |p: Point| probes.iter().find(|q| q.point == p).cloned();
        let (answer, neighbour) = match found {
            Bisection::Found { answer, neighbour } => (at(answer), neighbour.and_then(at)),
            Bisection::NoneHolds { at: end } => (None, at(end)),
        };
        Ok(Outcome {
            answer,
            neighbour,
            runs: probes.len() as u64 * u64::from(self.replications),
            probes,
        })
    }

    /// The cell label of the searched key (`servers`).
    pub fn short_key(&self) -> &str {
        &self.short
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn threshold(domain: Domain, largest: bool, t: f64) -> (Bisection, Vec<Point>) {
        let mut tried = vec![];
        let b = bisect(domain, largest, |p| {
            tried.push(p);
            let x = match p {
                Point::Int(i) => i as f64,
                Point::Float(f) => f,
            };
            Ok::<_, ()>(if largest { x <= t } else { x >= t })
        })
        .unwrap();
        (b, tried)
    }

    #[test]
    fn integer_bisection_finds_the_threshold_and_its_neighbour() {
        let d = Domain::Int { low: 1, high: 200 };
        for t in [2, 17, 100, 199, 200] {
            let (b, tried) = threshold(d, false, t as f64);
            assert_eq!(
                b,
                Bisection::Found {
                    answer: Point::Int(t),
                    neighbour: Some(Point::Int(t - 1))
                }
            );
            assert!(tried.len() <= 2 + 8, "{t}: {tried:?}");
            let (b, _) = threshold(d, true, t as f64 - 1.0);
            assert_eq!(
                b,
                Bisection::Found {
                    answer: Point::Int(t - 1),
                    neighbour: Some(Point::Int(t))
                }
            );
        }
    }

    #[test]
    fn the_ends_are_checked_first() {
        let d = Domain::Int { low: 5, high: 9 };
        assert_eq!(
            threshold(d, false, 3.0),
            (
                Bisection::Found {
                    answer: Point::Int(5),
                    neighbour: None
                },
                vec![Point::Int(9), Point::Int(5)]
            )
        );
        assert_eq!(
            threshold(d, false, 10.0),
            (
                Bisection::NoneHolds { at: Point::Int(9) },
                vec![Point::Int(9)]
            )
        );
        assert_eq!(
            threshold(d, true, 4.0).0,
            Bisection::NoneHolds { at: Point::Int(5) }
        );
        assert_eq!(
            threshold(d, true, 20.0).0,
            Bisection::Found {
                answer: Point::Int(9),
                neighbour: None
            }
        );
        let one = Domain::Int { low: 7, high: 7 };
        assert_eq!(threshold(one, false, 7.0).1, vec![Point::Int(7)]);
        let wide = Domain::Int {
            low: i64::MIN,
            high: i64::MAX,
        };
        let (b, tried) = threshold(wide, false, 12345.0);
        assert_eq!(
            b,
            Bisection::Found {
                answer: Point::Int(12345),
                neighbour: Some(Point::Int(12344))
            }
        );
        assert!(tried.len() <= 2 + 64);
    }

    #[test]
    fn float_bisection_stops_within_the_tolerance() {
        let d = Domain::Float {
            low: 0.5,
            high: 2.0,
            tolerance: 0.01,
        };
        for largest in [false, true] {
            let (b, _) = threshold(d, largest, 1.234);
            let Bisection::Found {
                answer: Point::Float(a),
                neighbour: Some(Point::Float(n)),
            } = b
            else {
                panic!("{b:?}")
            };
            assert!((a - n).abs() <= 0.01, "{a} {n}");
            if largest {
                assert!(a <= 1.234 && n > 1.234);
            } else {
                assert!(a >= 1.234 && n < 1.234);
            }
        }
        // A tolerance below the floats' resolution still ends.
        let tiny = Domain::Float {
            low: 1.0,
            high: 2.0,
            tolerance: 1e-300,
        };
        let (_, tried) = threshold(tiny, false, 1.5);
        assert!(tried.len() < 100);
    }

    #[test]
    fn ranges_and_tolerances_are_checked_against_the_key() {
        let err = |r: &str, int: bool, tol: Option<f64>| {
            parse_domain(r, "k", int, tol).unwrap_err().to_string()
        };
        assert_eq!(
            parse_domain(" 1..200 ", "k", true, None).unwrap(),
            Domain::Int { low: 1, high: 200 }
        );
        assert_eq!(
            parse_domain("1..2.5", "k", false, Some(0.1)).unwrap(),
            Domain::Float {
                low: 1.0,
                high: 2.5,
                tolerance: 0.1
            }
        );
        assert!(err("1-200", true, None).contains("expected LOW..HIGH"));
        assert!(err("0.5..2", true, None).contains("whole numbers (found '0.5')"));
        assert!(err("9..3", true, None).contains("at most the high end (found 9 > 3)"));
        assert!(err("1..2", true, Some(0.1)).starts_with("--tolerance: 'k' is an integer key"));
        assert!(err("1..2", false, None).starts_with("--tolerance: 'k' is a float key"));
        assert!(err("1..inf", false, Some(0.1)).contains("finite numbers (found 'inf')"));
        assert!(parse_tolerance("0").is_err() && parse_tolerance("-1").is_err());
        assert_eq!(parse_tolerance("0.01"), Ok(0.01));
        assert!(overlaps("fleets.*.arrival", "fleets.0.arrival.rate"));
        assert!(!overlaps("fleets.1.arrival.rate", "fleets.0.arrival.rate"));
    }
}
