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
//! first written) until every pair is told apart; the `kind` beside a picked leaf comes
//! along when it differs too, since a variant's other fields mean little without it.
//! A value then shows its picked leaves in the order written, joined by `; `:
//! `name=value`, or `no name` when it lacks the leaf. Labels that still coincide get `#n` appended.

use super::plan::render_value;

/// A swept value beside others (legends, check tables): `key=value`, or the label
/// alone when it names itself (`no retries`, `budget=token_bucket`: a space or `=`).
pub fn with_key(short: &str, label: &str) -> String {
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

/// Short distinct labels of a swept key's values (`key` is its dotted path). Scalars
/// show as written; tables and arrays by the leaves that tell them apart.
pub fn derive(key: &str, values: &[toml::Value]) -> Vec<String> {
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
            toml::Value::Table(t) if !t.is_empty() => compose(&per[i], &picked, &paths, key_tail),
            toml::Value::Array(a) if !a.is_empty() => compose(&per[i], &picked, &paths, key_tail),
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
fn compose(leaves: &[Leaf], picked: &[String], paths: &[String], key_tail: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(text: &str) -> Vec<toml::Value> {
        let t: toml::Table = toml::from_str(&format!("v = {text}")).unwrap();
        t["v"].as_array().unwrap().clone()
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
