//! The phase portrait's trajectory: a run as points (inbound load, success rate), one
//! per bucket, in time order, cut into branches so the way out can be told from the
//! way back: before, during and after the outages when there are outages; otherwise,
//! when the offered load moves (a load profile swept up then down), while the load
//! rises and while it falls. The `phase` chart draws them; so does the playground.

use super::series::RunSeries;

/// Smoothed offered load must move by this factor to count as a load profile.
const PROFILE_RATIO: f64 = 1.25;

/// A labelled trajectory.
#[derive(Debug, Clone, PartialEq)]
pub struct Branch {
    /// Legend label.
    pub label: String,
    /// Points `(inbound/s, success rate)` in time order.
    pub points: Vec<(f64, f64)>,
}

/// Cuts a run's trajectory into branches (see the module docs); every branch but the
/// first starts at the last point of the one before, so the path stays joined.
pub(crate) fn branches(s: &RunSeries) -> Vec<Branch> {
    let n = s.t.len();
    let point = |i: usize| match (s.inbound[i], s.success_rate[i]) {
        (Some(x), Some(y)) => Some((x, y)),
        _ => None,
    };
    let in_outage: Vec<bool> = (0..n).map(|i| s.outage[i].unwrap_or(0.0) > 0.0).collect();
    // Branch index of each bucket.
    let (labels, branch_of): (Vec<&str>, Vec<usize>) = if let (Some(first), Some(last)) = (
        in_outage.iter().position(|b| *b),
        in_outage.iter().rposition(|b| *b),
    ) {
        (
            vec!["before the outage", "during the outage", "after the outage"],
            (0..n)
                .map(|i| {
                    if i < first {
                        0
                    } else if i <= last {
                        1
                    } else {
                        2
                    }
                })
                .collect(),
        )
    } else if let Some(peak) = load_peak(&s.offered) {
        (
            vec!["load rising", "load falling"],
            (0..n).map(|i| usize::from(i > peak)).collect(),
        )
    } else {
        (vec!["trajectory"], vec![0; n])
    };
    let mut out: Vec<Branch> = labels
        .iter()
        .map(|l| Branch {
            label: (*l).to_string(),
            points: Vec::new(),
        })
        .collect();
    let mut last: Option<(usize, (f64, f64))> = None;
    for (i, &b) in branch_of.iter().enumerate() {
        let Some(p) = point(i) else { continue };
        if let Some((lb, lp)) = last {
            if lb != b && out[b].points.is_empty() {
                out[b].points.push(lp);
            }
        }
        out[b].points.push(p);
        last = Some((b, p));
    }
    out.retain(|b| !b.points.is_empty());
    out
}

/// The bucket where a moving load peaks, when the smoothed offered load rises by
/// [`PROFILE_RATIO`] to the peak and falls by it after (a load swept up then down).
fn load_peak(offered: &[Option<f64>]) -> Option<usize> {
    let n = offered.len();
    if n < 5 {
        return None;
    }
    let w = (n / 20).clamp(1, 5);
    let smooth: Vec<Option<f64>> = (0..n)
        .map(|i| {
            let lo = i.saturating_sub(w);
            let hi = (i + w + 1).min(n);
            let xs: Vec<f64> = offered[lo..hi].iter().flatten().copied().collect();
            (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
        })
        .collect();
    let (peak, top) = smooth
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.map(|v| (i, v)))
        .fold(None, |m: Option<(usize, f64)>, (i, v)| match m {
            Some((_, mv)) if mv >= v => m,
            _ => Some((i, v)),
        })?;
    let min_before = smooth[..=peak]
        .iter()
        .flatten()
        .copied()
        .fold(f64::MAX, f64::min);
    let min_after = smooth[peak..]
        .iter()
        .flatten()
        .copied()
        .fold(f64::MAX, f64::min);
    let moves = |m: f64| m > 0.0 && top / m >= PROFILE_RATIO;
    (moves(min_before) && moves(min_after)).then_some(peak)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(offered: &[f64], outage: &[f64]) -> RunSeries {
        let n = offered.len();
        RunSeries {
            t: (0..n).map(|i| i as f64).collect(),
            offered: offered.iter().map(|v| Some(*v)).collect(),
            inbound: offered.iter().map(|v| Some(*v)).collect(),
            success_rate: vec![Some(1.0); n],
            outage: outage.iter().map(|v| Some(*v)).collect(),
            ..RunSeries::default()
        }
    }

    #[test]
    fn an_outage_cuts_the_trajectory_into_three_joined_branches() {
        let s = series(&[1.0; 6], &[0.0, 0.0, 1.0, 1.0, 0.0, 0.0]);
        let b = branches(&s);
        let labels: Vec<&str> = b.iter().map(|b| b.label.as_str()).collect();
        assert_eq!(
            labels,
            ["before the outage", "during the outage", "after the outage"]
        );
        assert_eq!(b[0].points.len(), 2);
        // Each later branch starts where the one before ended.
        assert_eq!(b[1].points.len(), 3);
        assert_eq!(b[2].points.len(), 3);
    }

    #[test]
    fn a_load_swept_up_then_down_gives_rising_and_falling_branches() {
        let up: Vec<f64> = (0..20).map(|i| 100.0 + 50.0 * i as f64).collect();
        let mut load = up.clone();
        load.extend(up.iter().rev());
        let s = series(&load, &vec![0.0; load.len()]);
        let b = branches(&s);
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].label, "load rising");
        assert_eq!(b[1].label, "load falling");
    }

    #[test]
    fn a_steady_load_is_one_trajectory() {
        let s = series(&[700.0, 690.0, 710.0, 705.0, 695.0, 700.0], &[0.0; 6]);
        let b = branches(&s);
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].label, "trajectory");
    }
}
