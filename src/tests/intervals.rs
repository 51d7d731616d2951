//! `aggregate.csv` and `aggregate_long.csv`: no interval leaves its metric's domain,
//! every interval holds its mean, and the long table says the same as the wide one.

use std::collections::BTreeMap;
use std::path::Path;

use crate::metrics::columns::{summary_column, unit, Kind};
use crate::metrics::summary::Cell;

use crate::tests::common::ok;

/// Short runs, 2 replications, where every request succeeds (error_rate 0), most do,
/// or none does (error_rate 1): the raw t interval of success_fraction would leave [0, 1].
const SCN: &str = r#"
name = "edges"
duration = "2s"
replications = 2
[dependency]
servers = 2
service_time = "10ms"
[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 20 }
[[fleets.layers]]
max_attempts = 2
[sweep]
"dependency.error_rate" = [0.0, 0.3, 1.0]
"#;

/// A CSV file as its header and rows of fields.
fn table(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).unwrap();
    let h = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|x| x.unwrap().iter().map(String::from).collect())
        .collect();
    (h, rows)
}

fn is_fraction(metric: &str) -> bool {
    unit(metric) == "fraction" || summary_column(metric).is_some_and(|c| c.kind == Kind::Flag)
}

/// Checks one folder's aggregate tables against its summary.csv; returns the
/// `(cell, metric) → [n, mean, low, high]` of aggregate_long.csv.
fn check_folder(dir: &Path, replications: usize) -> BTreeMap<(usize, String), Vec<String>> {
    let (sh, summary) = table(&dir.join("summary.csv"));
    let (ah, agg) = table(&dir.join("aggregate.csv"));
    let (lh, long) = table(&dir.join("aggregate_long.csv"));
    assert_eq!(lh, ["cell", "metric", "n", "mean", "ci_low", "ci_high"]);
    let metrics: Vec<String> = ah
        .iter()
        .filter_map(|c| c.strip_suffix("_mean"))
        .map(String::from)
        .collect();
    assert!(metrics.len() > 30, "{metrics:?}");
    assert_eq!(agg.len(), summary.len() / replications);
    assert_eq!(long.len(), agg.len() * metrics.len());
    let at = |h: &[String], name: &str| h.iter().position(|c| c == name).unwrap();
    let mut by_key = BTreeMap::new();
    for (cell, row) in agg.iter().enumerate() {
        let runs = &summary[cell * replications..(cell + 1) * replications];
        for (j, m) in metrics.iter().enumerate() {
            let f = |s: &str| row[at(&ah, &format!("{m}{s}"))].clone();
            let (mean, lo, hi) = (f("_mean"), f("_ci_low"), f("_ci_high"));
            // The long row says the same, in summary column order.
            let l = &long[cell * metrics.len() + j];
            assert_eq!((&l[0], &l[1]), (&cell.to_string(), m));
            assert_eq!(l[3..], [mean.clone(), lo.clone(), hi.clone()], "{m}");
            by_key.insert((cell, m.clone()), l[2..].to_vec());
            let with_value = runs.iter().filter(|r| !r[at(&sh, m)].is_empty()).count();
            if mean.is_empty() {
                assert!(lo.is_empty() && hi.is_empty() && with_value == 0, "{m}");
                continue;
            }
            let [mean, lo, hi] = [&mean, &lo, &hi].map(|s| s.parse::<f64>().unwrap());
            assert!(
                0.0 <= lo && lo <= mean && mean <= hi,
                "cell {cell} {m}: {lo} {mean} {hi}"
            );
            if is_fraction(m) {
                assert!(hi <= 1.0, "cell {cell} {m}: high {hi}");
            }
            // A pooled fraction's n is its pooled denominator (checked below for one).
            if crate::metrics::columns::pooled_counts(m, |_| true).is_none() {
                assert_eq!(l[2], with_value.to_string(), "{m}");
            }
        }
        // success_fraction is Σsucceeded / Σlogical over the cell's runs, n = Σlogical.
        let sum = |c: &str| -> u64 {
            runs.iter()
                .map(|r| r[at(&sh, c)].parse::<u64>().unwrap())
                .sum()
        };
        let (k, n) = (sum("succeeded"), sum("logical"));
        let sf = &by_key[&(cell, "success_fraction".to_string())];
        assert_eq!(sf[0], n.to_string());
        assert_eq!(sf[1], Cell::float(k as f64 / n as f64).render());
    }
    by_key
}

#[test]
fn intervals_stay_in_their_domain_and_the_long_table_agrees() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::write(p.join("e.toml"), SCN).unwrap();
    ok(p, &["sweep", "e.toml", "--no-plots", "-q", "--out", "s"]);
    let long = check_folder(&p.join("s"), 2);
    let sf = |cell: usize| long[&(cell, "success_fraction".to_string())].clone();
    // All succeeded: mean 1 and high 1, the Wilson low below it; none: the mirror.
    let (all, none) = (sf(0), sf(2));
    assert_eq!((&*all[1], &*all[3]), ("1", "1"));
    assert!(all[2].parse::<f64>().unwrap() < 1.0);
    assert_eq!((&*none[1], &*none[2]), ("0", "0"));
    assert!(none[3].parse::<f64>().unwrap() > 0.0);
    let manifest = std::fs::read_to_string(p.join("s/manifest.toml")).unwrap();
    assert!(manifest.contains("\"aggregate_long.csv\""), "{manifest}");

    // A run folder with replications has both tables, vouched for: a rerun may
    // replace them.
    for _ in 0..2 {
        ok(
            p,
            &[
                "run",
                "e.toml",
                "--no-plots",
                "-q",
                "--force",
                "--out",
                "r",
                "--set",
                "dependency.error_rate=1.0",
            ],
        );
    }
    check_folder(&p.join("r"), 2);
    let manifest = std::fs::read_to_string(p.join("r/manifest.toml")).unwrap();
    assert!(manifest.contains("\"aggregate_long.csv\""), "{manifest}");
}
