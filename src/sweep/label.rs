//! The labels of swept values: what a value shows as in `param_` columns, legends,
//! check tables and the report. A value may carry its own (`{ label = "no retries",
//! value = [...] }`, or `[sweep.labels]`); a number, string or boolean shows as
//! written; a table or array without one gets a short label derived from what tells it
//! apart from the key's other values (`budget=token_bucket`, `no budget`,
//! `max_attempts=1; attempt_timeout=1s`), instead of its whole inline TOML.
//!
//! The derivation flattens each value into its leaves (`budget.kind` =
//! `"token_bucket"`), keeps the leaves that differ between values, and picks greedily
//! the leaf that tells the most pairs of values apart (ties: the shallower, then the
//! first written) until every pair is told apart, or [`MAX_PICKED`] leaves are picked
//! (one more when the last brings its `kind`; pairs are counted per class of values
//! still alike, so the work is linear in the leaves, never in the pairs); the `kind`
//! beside a picked leaf comes
//! along when it differs too, since a variant's other fields mean little without it.
//! A value then shows its picked leaves in the order written, joined by `; `:
//! `name=value`, or `no name` when it lacks the leaf. Labels that still coincide get `#n` appended.

use super::plan::render_value;

/// A swept value beside others (legends, check tables): `key=value`, or the label
/// alone when it names itself (`no retries`, `budget=token_bucket`: a space or `=`).
pub(crate) fn with_key(short: &str, label: &str) -> String {
    if label.contains([' ', '=']) {
        label.to_string()
    } else {
        format!("{short}={label}")
    }
}

/// One leaf of a value: its dotted path inside the value and its rendering.
type Leaf = (String, String);

/// The leaves of `v` in the order written; an empty table or array is no leaf.
fn leaves(v: &toml::Value, prefix: &str, out: &mut Vec<Leaf>) {
    let join = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match v {
        toml::Value::Table(t) => {
            for (k, x) in t {
                leaves(x, &join(k), out);
            }
        }
        toml::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                leaves(x, &join(&i.to_string()), out);
            }
        }
        scalar => out.push((prefix.to_string(), render_value(scalar))),
    }
}

/// How a leaf path is shown: without a final `.kind` (`budget=token_bucket`), the
/// swept key's last part for a top-level `kind` (`backoff=none`) or a path that
/// starts with an index (`outages.0.start`).
fn shown(path: &str, key_tail: &str) -> String {
    let p = path.strip_suffix(".kind").unwrap_or(path);
    if p == "kind" {
        return key_tail.to_string();
    }
    if p.split('.')
        .next()
        .is_some_and(|s| s.parse::<usize>().is_ok())
    {
        return format!("{key_tail}.{p}");
    }
    p.to_string()
}

/// Most leaves a derivation picks (one more when the last brings its `kind`): past
/// them, values still alike are told apart by `#n` alone, so the labels and the work
/// of picking stay linear in the values.
pub(crate) const MAX_PICKED: usize = 8;

/// `n · (n − 1) / 2`: the pairs among `n` values.
fn pairs(n: usize) -> u64 {
    let n = n as u64;
    n * n.saturating_sub(1) / 2
}

/// The values' leaves indexed by path: what [`derive`] picks from.
struct Leaves<'a> {
    /// Every leaf path, in the order first written.
    paths: Vec<String>,
    /// Per path, the values that have it with their rendering, in value order (a
    /// value's first leaf of that path).
    occ: Vec<Vec<(usize, &'a str)>>,
}

impl<'a> Leaves<'a> {
    fn of(per: &'a [Vec<Leaf>]) -> Leaves<'a> {
        let mut id: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        let mut paths = Vec::new();
        let mut occ: Vec<Vec<(usize, &str)>> = Vec::new();
        for (i, l) in per.iter().enumerate() {
            for (p, v) in l {
                let k = *id.entry(p.as_str()).or_insert_with(|| {
                    paths.push(p.clone());
                    occ.push(Vec::new());
                    paths.len() - 1
                });
                if occ[k].last().is_none_or(|&(j, _)| j != i) {
                    occ[k].push((i, v.as_str()));
                }
            }
        }
        Leaves { paths, occ }
    }

    /// Whether path `k` does not read the same in every value (one lacks it, or two
    /// values differ).
    fn differs(&self, k: usize, n: usize) -> bool {
        let o = &self.occ[k];
        o.len() < n || o.iter().any(|&(_, v)| v != o[0].1)
    }

    /// Path `k` per value (`None` where a value lacks it).
    fn column(&self, k: usize, n: usize) -> Vec<Option<&'a str>> {
        let mut col = vec![None; n];
        for &(i, v) in &self.occ[k] {
            col[i] = Some(v);
        }
        col
    }
}

/// The values no picked leaf tells apart yet, as classes: each value's class and each
/// class's size, with the counters [`Classes::told`] reuses.
struct Classes<'a> {
    of: Vec<usize>,
    size: Vec<usize>,
    /// Per class, the values of it that have the path being counted (0 between calls).
    having: Vec<usize>,
    /// Per class and rendering, the values of it with the path so (empty between calls).
    same: std::collections::HashMap<(usize, &'a str), usize>,
    /// The classes whose `having` is not 0.
    touched: Vec<usize>,
}

impl<'a> Classes<'a> {
    fn new(n: usize) -> Classes<'a> {
        Classes {
            of: vec![0; n],
            size: vec![n],
            having: vec![0],
            same: std::collections::HashMap::new(),
            touched: Vec::new(),
        }
    }

    /// The pairs of values in one class that path `occ` tells apart: per class, its
    /// pairs less those within the group lacking the path and within each value's
    /// group. Work in proportion to `occ`, not to the values.
    fn told(&mut self, occ: &[(usize, &'a str)]) -> u64 {
        for &(i, v) in occ {
            let c = self.of[i];
            if self.having[c] == 0 {
                self.touched.push(c);
            }
            self.having[c] += 1;
            *self.same.entry((c, v)).or_default() += 1;
        }
        let mut told = 0;
        for c in self.touched.drain(..) {
            told += pairs(self.size[c]) - pairs(self.size[c] - self.having[c]);
            self.having[c] = 0;
        }
        for &(i, v) in occ {
            if let Some(m) = self.same.remove(&(self.of[i], v)) {
                told -= pairs(m);
            }
        }
        told
    }

    /// Splits every class by the values of a picked path.
    fn refine(&mut self, col: &[Option<&str>]) {
        let mut id: std::collections::HashMap<(usize, Option<&str>), usize> =
            std::collections::HashMap::new();
        let mut size = Vec::new();
        for (i, c) in self.of.iter_mut().enumerate() {
            let k = *id.entry((*c, col[i])).or_insert_with(|| {
                size.push(0);
                size.len() - 1
            });
            size[k] += 1;
            *c = k;
        }
        self.having = vec![0; size.len()];
        self.size = size;
    }
}

/// Short distinct labels of a swept key's values (`key` is its dotted path). Scalars
/// show as written; tables and arrays by the leaves that tell them apart. Time and
/// memory grow linearly with the values' leaves: at most [`MAX_PICKED`] picks, each
/// one pass over the leaves.
pub(crate) fn derive(key: &str, values: &[toml::Value]) -> Vec<String> {
    let key_tail = key
        .rsplit('.')
        .find(|p| p.parse::<usize>().is_err())
        .unwrap_or(key);
    let n = values.len();
    let composed = |v: &toml::Value| match v {
        toml::Value::Table(t) => !t.is_empty(),
        toml::Value::Array(a) => !a.is_empty(),
        _ => false,
    };
    if !values.iter().any(composed) {
        // Scalars (and empty tables and lists) show as written: nothing to pick.
        let mut labels: Vec<String> = values.iter().map(render_value).collect();
        number_twins(&mut labels);
        return labels;
    }
    let per: Vec<Vec<Leaf>> = values
        .iter()
        .map(|v| {
            let mut l = Vec::new();
            leaves(v, "", &mut l);
            l
        })
        .collect();
    let leaves = Leaves::of(&per);
    let index: std::collections::HashMap<&str, usize> = leaves
        .paths
        .iter()
        .enumerate()
        .map(|(k, p)| (p.as_str(), k))
        .collect();
    let depth = |k: usize| leaves.paths[k].matches('.').count();
    let candidates: Vec<usize> = (0..leaves.paths.len())
        .filter(|&k| leaves.differs(k, n))
        .collect();
    let mut classes = Classes::new(n);
    let mut picked = vec![false; leaves.paths.len()];
    let mut picks = 0;
    while picks < MAX_PICKED {
        // Most pairs told apart, then the shallower, then the first written.
        let mut best: Option<(u64, usize)> = None;
        for &k in candidates.iter().filter(|&&k| !picked[k]) {
            let told = classes.told(&leaves.occ[k]);
            let better = best.is_none_or(|(t, b)| (told, depth(b)) > (t, depth(k)));
            if told > 0 && better {
                best = Some((told, k));
            }
        }
        let Some((_, k)) = best else { break };
        let mut add = vec![k];
        // The variant beside a picked field, when it varies.
        let p = &leaves.paths[k];
        let kind = match p.rsplit_once('.') {
            Some((parent, _)) => format!("{parent}.kind"),
            None => "kind".to_string(),
        };
        if let Some(&q) = index.get(kind.as_str()) {
            if q != k && leaves.differs(q, n) && !picked[q] {
                add.push(q);
            }
        }
        for q in add {
            classes.refine(&leaves.column(q, n));
            picked[q] = true;
            picks += 1;
        }
    }
    // The picked paths in the order first written, each with its values.
    let shown_paths: Vec<(String, Vec<Option<&str>>)> = (0..leaves.paths.len())
        .filter(|&k| picked[k])
        .map(|k| (shown(&leaves.paths[k], key_tail), leaves.column(k, n)))
        .collect();
    let mut labels: Vec<String> = values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            if composed(v) {
                compose(i, &shown_paths, key_tail)
            } else {
                render_value(v)
            }
        })
        .collect();
    number_twins(&mut labels);
    labels
}

/// Identical labels (identical values, or leaves beyond the pick) get ` #1`, ` #2`...
/// in value order: each value in turn, when others share its label, renames them all
/// (a renamed label may meet one written so, which is then renamed in its turn).
fn number_twins(labels: &mut [String]) {
    use std::collections::{BTreeSet, HashMap, HashSet};
    let mut distinct = HashSet::with_capacity(labels.len());
    if labels.iter().all(|l| distinct.insert(l.as_str())) {
        return;
    }
    let mut at: HashMap<String, BTreeSet<usize>> = HashMap::new();
    for (i, l) in labels.iter().enumerate() {
        at.entry(l.clone()).or_default().insert(i);
    }
    for i in 0..labels.len() {
        if at.get(&labels[i]).is_none_or(|s| s.len() < 2) {
            continue;
        }
        let same = at.remove(&labels[i]).unwrap_or_default();
        for (k, j) in same.into_iter().enumerate() {
            labels[j] = format!("{} #{}", labels[j], k + 1);
            at.entry(labels[j].clone()).or_default().insert(j);
        }
    }
}

/// Value `i`'s label from the picked paths (as shown, with every value's rendering),
/// in the order the paths were first written.
fn compose(i: usize, picked: &[(String, Vec<Option<&str>>)], key_tail: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    for (name, col) in picked {
        let part = match col[i] {
            Some(v) => format!("{name}={v}"),
            // A missing field says so once for its whole table (`no budget`).
            None => format!("no {}", name.split('.').next().unwrap_or(name)),
        };
        if !parts.contains(&part) {
            parts.push(part);
        }
    }
    if parts.is_empty() {
        // Nothing picked differs: the values are all alike (the #n below tells them
        // apart) or there is a single one.
        return key_tail.to_string();
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(text: &str) -> Vec<toml::Value> {
        let t: toml::Table = toml::from_str(&format!("v = {text}")).unwrap();
        t["v"].as_array().unwrap().clone()
    }

    /// The labels as derived before picking was linear: every pair of values held in
    /// a list, each candidate counted against all of them (and no cap on the picks).
    /// Short distinct labels of a swept key's values (`key` is its dotted path). Scalars
    /// show as written; tables and arrays by the leaves that tell them apart.
    fn reference(key: &str, values: &[toml::Value]) -> Vec<String> {
        let key_tail = key
            .rsplit('.')
            .find(|p| p.parse::<usize>().is_err())
            .unwrap_or(key);
        let per: Vec<Vec<Leaf>> = values
            .iter()
            .map(|v| {
                let mut l = Vec::new();
                leaves(v, "", &mut l);
                l
            })
            .collect();
        // Every leaf path, in the order first written.
        let mut paths: Vec<String> = Vec::new();
        for l in &per {
            for (p, _) in l {
                if !paths.contains(p) {
                    paths.push(p.clone());
                }
            }
        }
        let get = |i: usize, p: &str| per[i].iter().find(|(q, _)| q == p).map(|(_, v)| v.as_str());
        let n = values.len();
        let differs = |p: &str| (1..n).any(|i| get(i, p) != get(0, p));
        // The pairs of values no picked leaf tells apart yet.
        let mut untold: Vec<(usize, usize)> = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .collect();
        let mut picked: Vec<String> = Vec::new();
        let candidates: Vec<&String> = paths.iter().filter(|p| differs(p)).collect();
        loop {
            let best = candidates
                .iter()
                .filter(|p| !picked.contains(p))
                .map(|p| {
                    let told = untold
                        .iter()
                        .filter(|&&(i, j)| get(i, p) != get(j, p))
                        .count();
                    (told, p)
                })
                .filter(|(told, _)| *told > 0)
                // Most pairs, then the shallower, then the first written (max_by keeps
                // the last of equals: compare reversed depth and position).
                .max_by(|a, b| {
                    let depth = |p: &str| p.matches('.').count();
                    a.0.cmp(&b.0)
                        .then(depth(b.1).cmp(&depth(a.1)))
                        .then(std::cmp::Ordering::Greater)
                });
            let Some((_, p)) = best else { break };
            let mut add = vec![(*p).clone()];
            // The variant beside a picked field, when it varies.
            let kind = match p.rsplit_once('.') {
                Some((parent, _)) => format!("{parent}.kind"),
                None => "kind".to_string(),
            };
            if kind != **p && differs(&kind) && !picked.contains(&kind) {
                add.push(kind);
            }
            for q in add {
                untold.retain(|&(i, j)| get(i, &q) == get(j, &q));
                picked.push(q);
            }
        }
        let mut labels: Vec<String> = values
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                toml::Value::Table(t) if !t.is_empty() => {
                    reference_compose(&per[i], &picked, &paths, key_tail)
                }
                toml::Value::Array(a) if !a.is_empty() => {
                    reference_compose(&per[i], &picked, &paths, key_tail)
                }
                other => render_value(other),
            })
            .collect();
        // Identical values (or leaves beyond the pick) still need distinct names.
        for i in 0..n {
            let same: Vec<usize> = (0..n).filter(|&j| labels[j] == labels[i]).collect();
            if same.len() > 1 {
                for (k, j) in same.into_iter().enumerate() {
                    labels[j] = format!("{} #{}", labels[j], k + 1);
                }
            }
        }
        labels
    }

    /// A value's label from the picked leaves, in the order the paths were first written.
    fn reference_compose(
        leaves: &[Leaf],
        picked: &[String],
        paths: &[String],
        key_tail: &str,
    ) -> String {
        let parts: Vec<String> = paths
            .iter()
            .filter(|p| picked.contains(p))
            .map(|p| {
                let name = shown(p, key_tail);
                match leaves.iter().find(|(q, _)| q == p) {
                    Some((_, v)) => format!("{name}={v}"),
                    // A missing field says so once for its whole table (`no budget`).
                    None => format!("no {}", name.split('.').next().unwrap_or(&name)),
                }
            })
            .fold(Vec::new(), |mut acc, s| {
                if !acc.contains(&s) {
                    acc.push(s);
                }
                acc
            });
        if parts.is_empty() {
            // Nothing picked differs: the values are all alike (the #n below tells them
            // apart) or there is a single one.
            return key_tail.to_string();
        }
        parts.join("; ")
    }

    /// A small random value from `seed`: scalars, tables of a few keys (a `kind`
    /// among them), nested tables and arrays, so that leaves are missing, shared,
    /// twinned and variant.
    fn random_value(seed: &mut u64, depth: u32) -> toml::Value {
        fn next(seed: &mut u64) -> u64 {
            *seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = *seed;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        let pick = next(seed) % 10;
        let scalar = |r: u64| match r % 4 {
            0 => toml::Value::Integer((r / 4 % 3) as i64),
            1 => toml::Value::String(["p", "q", "p #1"][(r / 4 % 3) as usize].into()),
            2 => toml::Value::Boolean((r / 4).is_multiple_of(2)),
            _ => toml::Value::Integer(1),
        };
        match pick {
            0 | 1 => scalar(next(seed)),
            2 if depth < 2 => {
                let len = next(seed) % 3;
                toml::Value::Array((0..len).map(|_| random_value(seed, depth + 1)).collect())
            }
            _ => {
                let mut t = toml::Table::new();
                for key in ["kind", "a", "b", "t"] {
                    if next(seed).is_multiple_of(2) {
                        continue;
                    }
                    let v = match key {
                        "kind" => toml::Value::String(["x", "y"][(next(seed) % 2) as usize].into()),
                        "t" if depth < 2 => random_value(seed, depth + 1),
                        _ => scalar(next(seed)),
                    };
                    t.insert(key.into(), v);
                }
                toml::Value::Table(t)
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn the_linear_derivation_gives_the_labels_the_pairwise_one_gave(
            seeds in proptest::collection::vec(proptest::prelude::any::<u64>(), 1..9),
        ) {
            let values: Vec<toml::Value> = seeds
                .iter()
                .map(|&s| random_value(&mut s.clone(), 0))
                .collect();
            for key in ["fleets.0.layers.0", "x", "outages"] {
                proptest::prop_assert_eq!(derive(key, &values), reference(key, &values));
            }
        }
    }

    /// 50,000 values: the pairs of values alone were 1.25 · 10⁹ (20 GB as a list);
    /// linear, they take milliseconds. The bound is far above that, far below quadratic.
    #[test]
    fn fifty_thousand_values_are_labelled_in_linear_time() {
        let n = 50_000i64;
        let table = |pairs: &[(&str, toml::Value)]| {
            toml::Value::Table(
                pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.clone()))
                    .collect(),
            )
        };
        let ints: Vec<toml::Value> = (0..n).map(toml::Value::Integer).collect();
        let tables: Vec<toml::Value> = (0..n)
            .map(|i| {
                table(&[
                    ("a", toml::Value::Integer(i)),
                    ("b", toml::Value::Integer(1)),
                    ("kind", toml::Value::String("x".into())),
                ])
            })
            .collect();
        // Each value its own field: at most MAX_PICKED picks, then #n.
        let own: Vec<toml::Value> = (0..n)
            .map(|i| table(&[(&format!("f{i}"), toml::Value::Integer(1))]))
            .collect();
        let start = std::time::Instant::now();
        let l = derive("k", &ints);
        assert_eq!((l[0].as_str(), l[49_999].as_str()), ("0", "49999"));
        let l = derive("k", &tables);
        assert_eq!((l[0].as_str(), l[49_999].as_str()), ("a=0", "a=49999"));
        let l = derive("k", &own);
        assert_eq!(
            l[0],
            "f0=1; no f1; no f2; no f3; no f4; no f5; no f6; no f7"
        );
        assert_eq!(
            l[9],
            "no f0; no f1; no f2; no f3; no f4; no f5; no f6; no f7 #2"
        );
        let distinct: std::collections::HashSet<&String> = l.iter().collect();
        assert_eq!(distinct.len(), l.len());
        // Tens of milliseconds in a release build; the quadratic derivation took 34 s
        // for 8,000 values, so this many would take over 20 minutes.
        let took = start.elapsed();
        assert!(took < std::time::Duration::from_secs(20), "{took:?}");
    }

    #[test]
    fn scalars_show_as_written() {
        assert_eq!(
            derive("a.b", &vals("[1, 2.5, \"x\", true]")),
            ["1", "2.5", "x", "true"]
        );
    }

    #[test]
    fn tables_show_the_leaves_that_tell_them_apart() {
        let budgets = vals(
            r#"[
  { name = "client", max_attempts = 4, backoff = { kind = "exponential", base = "20ms" } },
  { name = "client", max_attempts = 4, backoff = { kind = "exponential", base = "20ms" }, budget = { kind = "token_bucket", max_tokens = 10, token_ratio = 0.1 } },
  { name = "client", max_attempts = 4, backoff = { kind = "exponential", base = "20ms" }, budget = { kind = "ratio", percent = 10 } },
  { name = "client", max_attempts = 4, backoff = { kind = "exponential", base = "20ms" }, budget = { kind = "aws_standard" } },
]"#,
        );
        assert_eq!(
            derive("fleets.0.layers.0", &budgets),
            [
                "no budget",
                "budget=token_bucket",
                "budget=ratio",
                "budget=aws_standard"
            ]
        );
        let collapse = vals(
            r#"[
  { name = "client", max_attempts = 1, attempt_timeout = "1s" },
  { name = "client", max_attempts = 1, attempt_timeout = "100ms" },
  { name = "client", max_attempts = 3, attempt_timeout = "100ms", backoff = { kind = "exponential", base = "10ms" } },
]"#,
        );
        assert_eq!(
            derive("fleets.0.layers.0", &collapse),
            [
                "max_attempts=1; attempt_timeout=1s",
                "max_attempts=1; attempt_timeout=100ms",
                "max_attempts=3; attempt_timeout=100ms"
            ]
        );
        let backoffs = vals(
            r#"[
  { kind = "none" },
  { kind = "fixed", delay = "100ms" },
  { kind = "exponential", base = "100ms", cap = "5s", jitter = "none" },
  { kind = "exponential", base = "100ms", cap = "5s", jitter = "full" },
]"#,
        );
        assert_eq!(
            derive("fleets.0.layers.0.backoff", &backoffs),
            [
                "backoff=none; no jitter",
                "backoff=fixed; no jitter",
                "backoff=exponential; jitter=none",
                "backoff=exponential; jitter=full"
            ]
        );
    }

    #[test]
    fn arrays_empty_values_and_twins_get_distinct_labels() {
        let outages = vals(r#"[[], [{ start = "24s", end = "36s" }]]"#);
        assert_eq!(derive("outages", &outages), ["[]", "outages.0.start=24s"]);
        let twins = vals("[{ a = 1 }, { a = 1 }, { a = 2 }]");
        assert_eq!(derive("x", &twins), ["a=1 #1", "a=1 #2", "a=2"]);
        assert_eq!(derive("x", &vals("[{ a = 1 }]")), ["x"]);
    }
}
