//! Bounded drawing: a series with more points than its plot has pixel columns is cut
//! to a few points per column before it is drawn, so a chart costs O(points) to
//! prepare and a bounded number of points to draw, whatever the number of buckets.
//!
//! Per pixel column a line keeps its first, lowest, highest and last point, in their
//! order in the series ([`PER_COLUMN`] at most), so every spike, the global minimum
//! and maximum and the line's ends stay visible: at one pixel per column, the drawn
//! line covers the same pixels' extent as the full one. A series that already fits
//! (no more points than columns) is returned unchanged, so small runs draw exactly as
//! before. A trajectory (the phase portrait, not ordered in x) keeps the first move
//! between each two pixel cells instead: [`thin_trajectory`]. Shaded spans closer
//! than a column are merged: [`merge_spans`]. Only the columns' membership is hashed:
//! every output is in series order, so it does not depend on hashing.

use super::canvas::segments;

/// Points a decimated line keeps per pixel column at most: first, lowest, highest, last.
#[cfg(test)]
pub(crate) const PER_COLUMN: usize = 4;

/// Equal columns: maps x in `[lo, hi]` to one of `width` columns `0..width` (values
/// outside are clamped); the charts use their own pixel mapping instead.
#[cfg(test)]
pub(crate) fn equal_columns(lo: f64, hi: f64, width: usize) -> impl Fn(f64) -> i64 {
    let last = width.max(1) as i64 - 1;
    let span = hi - lo;
    let scale = if span.is_finite() && span > 0.0 {
        width.max(1) as f64 / span
    } else {
        0.0
    };
    move |x| {
        // `as` saturates, and NaN goes to column 0.
        (((x - lo) * scale).floor() as i64).clamp(0, last)
    }
}

/// The points of one column seen so far: `(order, point)` of the first, lowest,
/// highest and last.
#[derive(Debug, Clone, Copy)]
struct Bin {
    column: i64,
    first: (usize, (f64, f64)),
    low: (usize, (f64, f64)),
    high: (usize, (f64, f64)),
    last: (usize, (f64, f64)),
}

impl Bin {
    fn new(column: i64, i: usize, p: (f64, f64)) -> Bin {
        Bin {
            column,
            first: (i, p),
            low: (i, p),
            high: (i, p),
            last: (i, p),
        }
    }

    fn add(&mut self, i: usize, p: (f64, f64)) {
        if p.1 < self.low.1 .1 {
            self.low = (i, p);
        }
        if p.1 > self.high.1 .1 {
            self.high = (i, p);
        }
        self.last = (i, p);
    }

    /// Appends the kept points to `out` in series order, each once.
    fn emit(&self, out: &mut Vec<(f64, f64)>) {
        let mut kept = [self.first, self.low, self.high, self.last];
        kept.sort_by_key(|k| k.0);
        let mut prev = None;
        for (i, p) in kept {
            if prev != Some(i) {
                out.push(p);
                prev = Some(i);
            }
        }
    }
}

/// Cuts a line whose points are in x order to at most [`PER_COLUMN`] points per
/// column, `column` mapping x to its column (see the module docs); unchanged when it
/// has at most `width`, the number of columns, points.
pub(crate) fn decimate(
    points: &[(f64, f64)],
    width: usize,
    column: impl Fn(f64) -> i64,
) -> Vec<(f64, f64)> {
    if points.len() <= width {
        return points.to_vec();
    }
    reduce(points.iter().map(|p| Some(*p)), column)
        .into_iter()
        .flatten()
        .collect()
}

/// The lines of a series with gaps (`None` breaks the line, as [`segments`]), each cut
/// as by [`decimate`]: at most [`PER_COLUMN`] points and one line start per column.
/// Unchanged ([`segments`]) when the series has at most `width` present points; else a
/// gap narrower than a column is not drawn (a pixel could not show it).
pub(crate) fn decimate_gapped(
    xs: &[f64],
    ys: &[Option<f64>],
    width: usize,
    column: impl Fn(f64) -> i64,
) -> Vec<Vec<(f64, f64)>> {
    if ys.iter().flatten().count() <= width {
        return segments(xs, ys);
    }
    reduce(xs.iter().zip(ys).map(|(x, y)| y.map(|y| (*x, y))), column)
}

/// Groups present points into columns; a gap between the last point of one column and
/// the first of the next starts a new line.
fn reduce(
    items: impl Iterator<Item = Option<(f64, f64)>>,
    column: impl Fn(f64) -> i64,
) -> Vec<Vec<(f64, f64)>> {
    let mut lines: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut cur: Vec<(f64, f64)> = Vec::new();
    let mut bin: Option<Bin> = None;
    let mut gap = false;
    for (i, item) in items.enumerate() {
        let Some(p) = item else {
            gap = true;
            continue;
        };
        let c = column(p.0);
        match &mut bin {
            Some(b) if b.column == c => b.add(i, p),
            _ => {
                if let Some(b) = bin.take() {
                    b.emit(&mut cur);
                }
                if gap && !cur.is_empty() {
                    lines.push(std::mem::take(&mut cur));
                }
                bin = Some(Bin::new(c, i, p));
            }
        }
        gap = false;
    }
    if let Some(b) = bin {
        b.emit(&mut cur);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

/// Cuts a trajectory (points in time order, any x and y) to at most
/// [`SEGMENTS_PER_COLUMN`] × `width` segments, drawn as lines in time order; `pixel`
/// maps a point to its pixel. Unchanged (one line) when it has at most `width` points.
///
/// The plane is cut into square cells of 1 pixel, else 2, 4, ... (the smallest that
/// fits the bound), and a move from one cell to another is drawn the first time only:
/// later moves between the same two cells, and moves inside a cell, would draw over
/// what is drawn already, to within a cell. Every cell the trajectory visits keeps a
/// point, so a lone excursion stays visible; the first and last points are kept.
pub(crate) fn thin_trajectory(
    points: &[(f64, f64)],
    width: usize,
    pixel: impl Fn((f64, f64)) -> (i64, i64),
) -> Vec<Vec<(f64, f64)>> {
    if points.len() <= width {
        return vec![points.to_vec()];
    }
    let pixels: Vec<(i64, i64)> = points.iter().map(|p| pixel(*p)).collect();
    let bound = SEGMENTS_PER_COLUMN * width.max(1);
    let mut cell = 1i64;
    loop {
        if let Some(lines) = moves(points, &pixels, cell, bound) {
            return lines;
        }
        // A cell as large as the plane holds every point: one cell, no move.
        cell *= 2;
    }
}

/// Segments a thinned trajectory keeps per pixel column of the plot at most.
pub(crate) const SEGMENTS_PER_COLUMN: usize = 2;

/// The first move between each two cells of side `cell` pixels, as lines; `None` when
/// there are more than `bound` of them.
fn moves(
    points: &[(f64, f64)],
    pixels: &[(i64, i64)],
    cell: i64,
    bound: usize,
) -> Option<Vec<Vec<(f64, f64)>>> {
    let of = |i: usize| (pixels[i].0.div_euclid(cell), pixels[i].1.div_euclid(cell));
    let mut seen: std::collections::HashSet<((i64, i64), (i64, i64))> =
        std::collections::HashSet::new();
    let mut lines: Vec<Vec<(f64, f64)>> = vec![vec![points[0]]];
    // The point standing for where the trajectory is (the last one that left a cell).
    let mut at = 0usize;
    let last = points.len() - 1;
    for i in 1..points.len() {
        let (from, to) = (of(at), of(i));
        if from == to && i < last {
            continue;
        }
        if seen.insert((from, to)) || i == last {
            if seen.len() > bound {
                return None;
            }
            let line = lines.last_mut().expect("one line at least");
            if line.last() == Some(&points[at]) {
                line.push(points[i]);
            } else {
                lines.push(vec![points[at], points[i]]);
            }
        }
        at = i;
    }
    Some(lines)
}

/// Merges spans `[a, b)` (in order) that are less than one of `width` columns over
/// `[lo, hi]` apart, so at most about `width` shaded spans are drawn; unchanged when
/// there are at most `width` spans. Every span stays covered.
pub(crate) fn merge_spans(spans: &[(f64, f64)], lo: f64, hi: f64, width: usize) -> Vec<(f64, f64)> {
    if spans.len() <= width {
        return spans.to_vec();
    }
    let column = (hi - lo) / width.max(1) as f64;
    let mut out: Vec<(f64, f64)> = Vec::new();
    for &(a, b) in spans {
        match out.last_mut() {
            Some(last) if a - last.1 < column => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A noisy series of `n` points in x order over `[0, n)` with spikes at `spikes`.
    fn noisy(n: usize, spikes: &[(usize, f64)]) -> Vec<(f64, f64)> {
        let mut state = 12345u64;
        let mut pts: Vec<(f64, f64)> = (0..n)
            .map(|i| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let noise = (state >> 33) as f64 / (1u64 << 31) as f64;
                (i as f64, 100.0 + 10.0 * noise)
            })
            .collect();
        for &(i, v) in spikes {
            pts[i].1 = v;
        }
        pts
    }

    #[test]
    fn a_long_line_is_cut_to_a_few_points_per_column() {
        let n = 100_000;
        let width = 700;
        let pts = noisy(n, &[]);
        let d = decimate(&pts, width, equal_columns(0.0, n as f64, width));
        assert!(d.len() <= PER_COLUMN * width, "{} points", d.len());
        assert!(d.len() >= 2 * width, "{} points", d.len());
        // Still in x order, every point one of the input's.
        assert!(d.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(d.iter().all(|p| pts[p.0 as usize] == *p));
        assert_eq!(d.first(), pts.first());
        assert_eq!(d.last(), pts.last());
    }

    #[test]
    fn the_global_extremes_and_every_spike_survive() {
        let n = 100_000;
        let spikes = [(17, 1e6), (50_001, -5.0), (50_002, 9e5), (99_998, 7e5)];
        let pts = noisy(n, &spikes);
        let d = decimate(&pts, 650, equal_columns(0.0, n as f64, 650));
        for (i, v) in spikes {
            assert!(d.contains(&(i as f64, v)), "spike at {i} lost");
        }
        let max = |s: &[(f64, f64)]| s.iter().map(|p| p.1).fold(f64::MIN, f64::max);
        let min = |s: &[(f64, f64)]| s.iter().map(|p| p.1).fold(f64::MAX, f64::min);
        assert_eq!(max(&d), max(&pts));
        assert_eq!(min(&d), min(&pts));
        // Per column, the kept points span the same range as the input's.
        let cols = equal_columns(0.0, n as f64, 650);
        for c in [0, 1, 325, 649] {
            let of = |s: &[(f64, f64)]| -> Vec<(f64, f64)> {
                s.iter().copied().filter(|p| cols(p.0) == c).collect()
            };
            assert_eq!(max(&of(&d)), max(&of(&pts)), "column {c}");
            assert_eq!(min(&of(&d)), min(&of(&pts)), "column {c}");
        }
    }

    #[test]
    fn a_line_that_fits_is_unchanged() {
        let pts = noisy(700, &[(3, 1e9)]);
        assert_eq!(decimate(&pts, 700, equal_columns(0.0, 700.0, 700)), pts);
        let xs: Vec<f64> = (0..10).map(f64::from).collect();
        let ys = [Some(1.0), None, Some(2.0), Some(3.0), None, None, Some(4.0)];
        assert_eq!(
            decimate_gapped(&xs, &ys, 5, equal_columns(0.0, 10.0, 5)),
            segments(&xs, &ys)
        );
        let traj = vec![(3.0, 1.0), (1.0, 0.5), (2.0, 0.25)];
        assert_eq!(thin_trajectory(&traj, 3, plane), vec![traj]);
        let spans = vec![(0.0, 1.0), (1.5, 2.0)];
        assert_eq!(merge_spans(&spans, 0.0, 10.0, 2), spans);
    }

    #[test]
    fn gaps_wider_than_a_column_still_break_the_line() {
        let n = 10_000;
        let xs: Vec<f64> = (0..n).map(|i| i as f64).collect();
        // Present except [4000, 6000) and every other point inside the column
        // [8000, 8100).
        let ys: Vec<Option<f64>> = (0..n)
            .map(|i| {
                let hole = (4000..6000).contains(&i) || ((8000..8099).contains(&i) && i % 2 == 1);
                (!hole).then_some(i as f64 % 7.0)
            })
            .collect();
        let lines = decimate_gapped(&xs, &ys, 100, equal_columns(0.0, n as f64, 100));
        // The wide gap breaks the line; the one-point gaps inside columns do not.
        assert_eq!(lines.len(), 2);
        assert!(lines[0].last().unwrap().0 < 4000.0);
        assert!(lines[1].first().unwrap().0 >= 6000.0);
        let total: usize = lines.iter().map(Vec::len).sum();
        assert!(total <= PER_COLUMN * 100, "{total}");
    }

    #[test]
    fn alternating_gaps_give_at_most_one_line_per_column() {
        let n = 100_000;
        let xs: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let ys: Vec<Option<f64>> = (0..n).map(|i| (i % 2 == 0).then_some(1.0)).collect();
        let lines = decimate_gapped(&xs, &ys, 500, equal_columns(0.0, n as f64, 500));
        assert!(lines.len() <= 500, "{} lines", lines.len());
        let total: usize = lines.iter().map(Vec::len).sum();
        assert!(total <= PER_COLUMN * 500, "{total}");
    }

    /// Pixels of a 700 × 500 plot over x in [0, 10000], y in [0, 1].
    fn plane(p: (f64, f64)) -> (i64, i64) {
        (
            (p.0 / 10_000.0 * 700.0).floor() as i64,
            ((1.0 - p.1) * 500.0).floor() as i64,
        )
    }

    #[test]
    fn a_long_noisy_trajectory_is_bounded_and_keeps_its_ends_and_excursions() {
        let n = 100_000;
        let mut state = 7u64;
        let mut rnd = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as f64 / (1u64 << 31) as f64
        };
        let mut pts: Vec<(f64, f64)> = (0..n)
            .map(|_| (1000.0 + 3000.0 * rnd(), 0.6 + 0.4 * rnd()))
            .collect();
        pts[70_000] = (9000.0, 0.01);
        let lines = thin_trajectory(&pts, 700, plane);
        let total: usize = lines.iter().map(Vec::len).sum();
        assert!(total <= 2 * SEGMENTS_PER_COLUMN * 700 + 2, "{total} points");
        assert_eq!(lines[0][0], pts[0]);
        assert_eq!(lines.last().unwrap().last(), pts.last());
        assert!(lines.iter().flatten().any(|p| *p == (9000.0, 0.01)));
    }

    #[test]
    fn a_trajectory_on_a_few_points_keeps_each_point_it_visits() {
        // Counts per small bucket take few values: 10^5 steps over a handful of
        // points, one of them visited once.
        let lattice = [(0.0, 1.0), (2000.0, 1.0), (2000.0, 0.0), (4000.0, 1.0)];
        let mut pts: Vec<(f64, f64)> = (0..100_000).map(|i| lattice[(i * 7 + i / 3) % 4]).collect();
        pts[55_555] = (3000.0, 0.5);
        let lines = thin_trajectory(&pts, 700, plane);
        let total: usize = lines.iter().map(Vec::len).sum();
        assert!(total < 100, "{total} points");
        for p in lattice.iter().chain([&(3000.0, 0.5)]) {
            assert!(lines.iter().flatten().any(|q| q == p), "{p:?} lost");
        }
        // Every move drawn is one of the trajectory's.
        for l in &lines {
            for w in l.windows(2) {
                assert!(pts.windows(2).any(|v| v == w), "{w:?} is not a move");
            }
        }
    }

    #[test]
    fn many_spans_merge_to_about_one_per_column() {
        // A breaker flapping every other bucket for 100,000 buckets.
        let spans: Vec<(f64, f64)> = (0..50_000)
            .map(|i| (2.0 * i as f64, 2.0 * i as f64 + 1.0))
            .chain([(100_500.0, 100_500.5)])
            .collect();
        let m = merge_spans(&spans, 0.0, 101_000.0, 700);
        assert!(m.len() <= 701, "{} spans", m.len());
        assert_eq!(m.first().unwrap().0, 0.0);
        // An isolated short span stays, as it was.
        assert_eq!(*m.last().unwrap(), (100_500.0, 100_500.5));
        for s in &spans {
            assert!(
                m.iter().any(|m| m.0 <= s.0 && s.1 <= m.1),
                "{s:?} uncovered"
            );
        }
    }
}
