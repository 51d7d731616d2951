//! Where the service graph's boxes and arrows go: a column per depth (fleets in column
//! 0, a service one column right of its deepest caller), boxes stacked in a column in
//! the order the calls reach them, and arrows routed level through the gaps of the
//! columns they cross.

/// Widest and tallest a box is drawn, pixels.
const BOX_W: i32 = 170;
const BOX_H: i32 = 72;

/// The column of every service: 1 for one no service calls, else one more than its
/// deepest caller. `calls[s]` are the callees of `s`; a cycle (which validation
/// refuses) cannot push a column past the number of services.
pub(crate) fn columns(calls: &[Vec<usize>]) -> Vec<usize> {
    let n = calls.len();
    let mut col = vec![1usize; n];
    for _ in 0..n {
        let mut changed = false;
        for s in 0..n {
            for &c in &calls[s] {
                if c < n && col[c] < col[s] + 1 && col[s] < n {
                    col[c] = col[s] + 1;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    col
}

/// The services in the order the calls reach them, breadth first from `roots` (the
/// fleets' targets, in fleet order); services no call reaches come last, in order.
pub(crate) fn reach_order(roots: &[usize], calls: &[Vec<usize>]) -> Vec<usize> {
    let n = calls.len();
    let mut seen = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut next = 0;
    for &r in roots.iter().chain(&(0..n).collect::<Vec<_>>()) {
        if r >= n || seen[r] {
            continue;
        }
        seen[r] = true;
        order.push(r);
        while next < order.len() {
            for &c in &calls[order[next]] {
                if c < n && !seen[c] {
                    seen[c] = true;
                    order.push(c);
                }
            }
            next += 1;
        }
    }
    order
}

/// A box in pixels: `[x0, x1) × [y0, y1)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rect {
    /// Left.
    pub x0: i32,
    /// Top.
    pub y0: i32,
    /// Right (exclusive).
    pub x1: i32,
    /// Bottom (exclusive).
    pub y1: i32,
}

impl Rect {
    /// Whether the two boxes share a pixel.
    #[cfg(test)]
    pub(crate) fn overlaps(&self, o: &Rect) -> bool {
        self.x0 < o.x1 && o.x0 < self.x1 && self.y0 < o.y1 && o.y0 < self.y1
    }

    pub(crate) fn mid_y(&self) -> i32 {
        (self.y0 + self.y1) / 2
    }
}

/// The boxes of nodes in `columns` (drawing order) on a `w` × `h` area: the columns
/// share the width equally, a column's boxes its height, each box centred in its slot
/// and smaller than it (at most 60% of its width and 80% of its height), so no two
/// boxes touch and an arrow between columns has room for its label.
pub(crate) fn layout(columns: &[usize], w: i32, h: i32) -> Vec<Rect> {
    let ncol = columns.iter().max().map_or(1, |m| m + 1) as i32;
    let slot_w = (w / ncol).max(1);
    let bw = BOX_W.min(slot_w * 3 / 5);
    let mut count = vec![0i32; ncol as usize];
    for &c in columns {
        count[c] += 1;
    }
    let mut seen = vec![0i32; ncol as usize];
    columns
        .iter()
        .map(|&c| {
            let k = count[c];
            let i = seen[c];
            seen[c] += 1;
            let slot_h = (h / k).max(1);
            let bh = BOX_H.min(slot_h * 4 / 5);
            let x0 = c as i32 * slot_w + (slot_w - bw) / 2;
            let y0 = i * slot_h + (slot_h - bh) / 2;
            Rect {
                x0,
                y0,
                x1: x0 + bw,
                y1: y0 + bh,
            }
        })
        .collect()
}

/// The path of an arrow from `start` (a box of column `span.0`) to `tip` (one of
/// column `span.1`): straight between neighbouring columns; across the columns in
/// between, through the gap of each (between two of its boxes, or above or below
/// them, `h` the area's height) nearest the straight line, passed level.
pub(crate) fn route(
    start: (i32, i32),
    tip: (i32, i32),
    columns: &[usize],
    rects: &[Rect],
    span: (usize, usize),
    h: i32,
) -> Vec<(i32, i32)> {
    let mut path = vec![start];
    for c in span.0 + 1..span.1 {
        let boxes: Vec<&Rect> = columns
            .iter()
            .zip(rects)
            .filter(|(k, _)| **k == c)
            .map(|(_, r)| r)
            .collect();
        let (Some(top), Some(bottom)) = (boxes.first(), boxes.last()) else {
            continue;
        };
        let (x0, x1) = (top.x0 - 4, top.x1 + 4);
        // Where the straight line crosses the column.
        let xm = (top.x0 + top.x1) / 2;
        let along = f64::from(xm - start.0) / f64::from((tip.0 - start.0).max(1));
        let ym = start.1 + (along * f64::from(tip.1 - start.1)) as i32;
        let mut gaps = vec![top.y0 / 2, (bottom.y1 + h) / 2];
        gaps.extend(boxes.windows(2).map(|p| (p[0].y1 + p[1].y0) / 2));
        let y = gaps
            .into_iter()
            .min_by_key(|g| (g - ym).abs())
            .unwrap_or(ym);
        path.push((x0, y));
        path.push((x1, y));
    }
    path.push(tip);
    path
}

/// Where an arrow leaves or enters a box: spread over the box's side when several do.
pub(crate) fn port(r: &Rect, i: usize, of: usize) -> i32 {
    if of <= 1 {
        return r.mid_y();
    }
    let spread = ((r.y1 - r.y0) / (of as i32 + 1)).min(14);
    r.mid_y() + ((2 * i as i32 - (of as i32 - 1)) * spread) / 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_sits_one_column_right_of_its_deepest_caller() {
        // 0 → 1 → 2 and 0 → 2: 2 is at the depth of its longest path.
        let calls = vec![vec![1, 2], vec![2], vec![]];
        assert_eq!(columns(&calls), vec![1, 2, 3]);
        // A cycle stops at the number of services.
        let cyc = vec![vec![1], vec![0]];
        assert!(columns(&cyc).iter().all(|c| *c <= 2));
    }

    #[test]
    fn services_are_ordered_as_the_calls_reach_them() {
        // frontend(0) fans out to 3, 1, 2; 4 is reached by nobody.
        let calls = vec![vec![3, 1, 2], vec![], vec![], vec![], vec![]];
        assert_eq!(reach_order(&[0], &calls), vec![0, 3, 1, 2, 4]);
    }

    #[test]
    fn boxes_are_laid_out_by_column_with_fan_out_callees_stacked() {
        // Two fleets, a frontend, a three-way fan-out, then a db.
        let cols = [0, 0, 1, 2, 2, 2, 3];
        let r = layout(&cols, 800, 500);
        // Columns of 200 px, boxes 120 wide (60%) centred in them.
        assert_eq!(
            r[0],
            Rect {
                x0: 40,
                y0: 89,
                x1: 160,
                y1: 161
            }
        );
        assert_eq!(
            r[1],
            Rect {
                x0: 40,
                y0: 339,
                x1: 160,
                y1: 411
            }
        );
        assert_eq!(
            r[2],
            Rect {
                x0: 240,
                y0: 214,
                x1: 360,
                y1: 286
            }
        );
        // The fan-out: one column, three slots of 166 px, top to bottom in order.
        assert_eq!(
            r[3],
            Rect {
                x0: 440,
                y0: 47,
                x1: 560,
                y1: 119
            }
        );
        assert_eq!(
            r[4],
            Rect {
                x0: 440,
                y0: 213,
                x1: 560,
                y1: 285
            }
        );
        assert_eq!(
            r[5],
            Rect {
                x0: 440,
                y0: 379,
                x1: 560,
                y1: 451
            }
        );
        assert_eq!(r[6].x0, 640);
        for (i, a) in r.iter().enumerate() {
            assert!(
                a.x0 >= 0 && a.y0 >= 0 && a.x1 <= 800 && a.y1 <= 500,
                "{a:?}"
            );
            for b in &r[i + 1..] {
                assert!(!a.overlaps(b), "{a:?} overlaps {b:?}");
            }
        }
    }

    #[test]
    fn crowded_columns_shrink_their_boxes_and_never_overlap() {
        let mut cols = vec![0];
        cols.extend(std::iter::repeat_n(1, 20));
        cols.extend(std::iter::repeat_n(2, 7));
        let r = layout(&cols, 700, 400);
        // 20 slots of 20 px: boxes 16 px tall.
        assert_eq!(r[1].y1 - r[1].y0, 16);
        for (i, a) in r.iter().enumerate() {
            assert!(a.y1 <= 400 && a.x1 <= 700);
            for b in &r[i + 1..] {
                assert!(!a.overlaps(b), "{a:?} overlaps {b:?}");
            }
        }
    }

    #[test]
    fn an_arrow_across_a_column_passes_through_a_gap_between_its_boxes() {
        // A fleet, a service, three stacked callees, a db called from the service too.
        let cols = [0, 1, 2, 2, 2, 3];
        let r = layout(&cols, 800, 500);
        let (start, tip) = ((r[1].x1, r[1].mid_y()), (r[5].x0 - 1, r[5].mid_y()));
        let path = route(start, tip, &cols, &r, (1, 3), 500);
        // Level through the gap under the middle box (the middles are in one line).
        let y = (r[3].y1 + r[4].y0) / 2;
        assert_eq!(
            path,
            vec![start, (r[2].x0 - 4, y), (r[2].x1 + 4, y), tip],
            "{r:?}"
        );
        for b in &r[2..5] {
            assert!(y < b.y0 || y >= b.y1, "{y} inside {b:?}");
        }
        // Neighbouring columns: a straight line.
        assert_eq!(route(start, tip, &cols, &r, (1, 2), 500), vec![start, tip]);
    }
}
